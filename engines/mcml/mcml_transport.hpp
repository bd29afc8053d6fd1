#pragma once
/// One MCML step of one photon packet, written once for both backends (Real = double on the CPU,
/// float on the GPU). Follows Wang, Jacques and Zheng (1995): dimensionless step sizes (s_left
/// carried across boundaries), all-or-none Fresnel reflection decided by a random number, Snell
/// refraction, partial-weight absorption w * mua / mut at the interaction site, Henyey-Greenstein
/// scattering and roulette. The step returns what it must tally instead of tallying, so the CUDA
/// kernel can reach a warp-uniform point before the (possibly collective) tally.
///
/// The control flow (hop, boundary, drop, spin, roulette, what is tallied) is this one function
/// for both backends. The arithmetic that a backend may do its own way comes in through the
/// `Math` policy: ReferenceMath below (the CPU reference, and the default) computes exactly as
/// MCML does; the CUDA engine passes cuda::FastMath (cuda/mcml_fast_math.cuh: approximate
/// division, square root and logarithm, Fresnel and Henyey-Greenstein on precomputed per-layer
/// constants), which changes results only by rounding, so the two backends agree in statistics.
///
/// Random numbers: step k of packet p uses the Philox block (seed, p, k): u0 step length,
/// u1 cos(theta) or the Fresnel decision, u2 azimuth, u3 roulette.
#include <cmath>
#include <cstdint>

#include "mcml/mcml.hpp"
#include "mcml/philox.hpp"

namespace penumbra::mcml {

template <typename Real>
struct LayerParams {
  Real z0, z1;   ///< top and bottom [cm]
  Real n, mua, mus, g;
  Real invMut;   ///< 1 / (mua + mus); 0 for glass
  Real albedo;   ///< mus / (mua + mus): w' = w * albedo after a drop (1 for glass)
  /// The factor of the weight split at a drop that is >= 1/2: albedo where mus >= mua, else
  /// the absorbed fraction mua / (mua + mus). See dropWeight.
  Real splitFactor;
  int splitIsAbsorbed;  ///< 1 where splitFactor is the absorbed fraction (albedo < 1/2)
  Real cosCrit0, cosCrit1;  ///< cosines of the critical angles at the top and bottom
  int glass;
};

template <typename Real>
struct TransportSetup {
  LayerParams<Real> layer[kMaxLayers + 2];  ///< 0: above, 1..numLayers, numLayers+1: below
  int numLayers;
  Real invDz, invDr, invDa;
  int nz, nr, na;
  Real weightThreshold, chance, invChance;
  Real launchWeight;  ///< 1 - Rsp
  int startLayer;     ///< 1, or 2 behind a glass first layer (MCML LaunchPhoton)
  Real startZ;
  std::uint64_t seed;
};

template <typename Real>
struct Photon {
  Real x, y, z, ux, uy, uz, w, sleft;
  int layer;
  std::uint32_t step;
  std::uint64_t packet;
  bool alive;
};

enum class EventKind : int { None = 0, Absorb = 1, Reflect = 2, Transmit = 3 };

template <typename Real>
struct StepEvent {
  EventKind kind;
  int index;           ///< A_rz: ir * nz + iz; Rd_ra / Tt_ra: ir * na + ia
  Real weight;
  double rouletteGain; ///< weight added by roulette in this step (negative when killed)
  int ir, ib;          ///< the two bin indices of `index` (ib: iz or ia), so no one divides
};

template <typename Real> PENUMBRA_HD Real cosZero();
template <> PENUMBRA_HD double cosZero<double>() { return 1.0 - 1.0e-12; }
template <> PENUMBRA_HD float cosZero<float>() { return 1.0f - 1.0e-6f; }

template <typename Real>
PENUMBRA_HD void launchPhoton(const TransportSetup<Real>& s, std::uint64_t packet, Photon<Real>& p) {
  p.x = p.y = Real(0);
  p.z = s.startZ;
  p.ux = p.uy = Real(0);
  p.uz = Real(1);
  p.w = s.launchWeight;
  p.sleft = Real(0);
  p.layer = s.startLayer;
  p.step = 0;
  p.packet = packet;
  p.alive = true;
}

/// MCML RFresnel: reflectance for cosine of incidence ca1 from n1 into n2; *ca2 = cos transmitted.
template <typename Real>
PENUMBRA_HD Real fresnel(Real n1, Real n2, Real ca1, Real* ca2) {
  if (n1 == n2) {
    *ca2 = ca1;
    return Real(0);
  }
  if (ca1 > cosZero<Real>()) {
    *ca2 = ca1;
    const Real r = (n2 - n1) / (n2 + n1);
    return r * r;
  }
  if (ca1 < Real(1.0e-6)) {
    *ca2 = Real(0);
    return Real(1);
  }
  const Real sa1 = sqrt(Real(1) - ca1 * ca1);
  const Real sa2 = n1 * sa1 / n2;
  if (sa2 >= Real(1)) {
    *ca2 = Real(0);
    return Real(1);
  }
  const Real c2 = sqrt(Real(1) - sa2 * sa2);
  *ca2 = c2;
  const Real cap = ca1 * c2 - sa1 * sa2, cam = ca1 * c2 + sa1 * sa2;
  const Real sap = sa1 * c2 + ca1 * sa2, sam = sa1 * c2 - ca1 * sa2;
  return Real(0.5) * sam * sam * (cam * cam + cap * cap) / (sap * sap * cam * cam);
}

/// Products and differences that the compiler may not fuse into an FMA (a fused w - w * f is
/// not the difference of the rounded product, and the weight split below relies on that).
template <typename Real>
PENUMBRA_HD Real mulRn(Real a, Real b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Real) == 4) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
template <typename Real>
PENUMBRA_HD Real subRn(Real a, Real b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Real) == 4) return __fsub_rn(a, b);
  else return __dsub_rn(a, b);
#else
  return a - b;
#endif
}

/// MCML Drop: splits the packet weight w into the absorbed part *dw and the remaining weight
/// *wNew = w * mus / (mua + mus) so that *dw + *wNew == w exactly, for any albedo. The factor
/// f >= 1/2 of the split (the albedo, or the absorbed fraction when the albedo is below 1/2) is
/// applied by one rounded product p = w * f, which lies in [w/2, w]; the other part is w - p,
/// exact by Sterbenz's lemma. So deposit + remaining weight equals the weight before, bit for
/// bit, and energy is conserved by construction in float as in double. (Computing w - w * albedo
/// for albedo < 1/2 would round and lose that; hence the two cases, selected without a branch.)
template <typename Real>
PENUMBRA_HD void dropWeight(const LayerParams<Real>& L, Real w, Real* dw, Real* wNew) {
  const Real prod = mulRn(w, L.splitFactor);
  const Real rest = subRn(w, prod);
  *dw = L.splitIsAbsorbed ? prod : rest;
  *wNew = L.splitIsAbsorbed ? rest : prod;
}

template <typename Real>
PENUMBRA_HD int binIndex(Real value, Real inv, int n) {
  const Real f = value * inv;
  return f >= Real(n - 1) ? n - 1 : int(f);
}

/// Henyey-Greenstein deflection and the MCML direction update (Spin).
template <typename Real>
PENUMBRA_HD void spin(Photon<Real>& p, Real g, Real u1, Real u2) {
  Real cost;
  if (g == Real(0)) {
    cost = Real(2) * u1 - Real(1);
  } else {
    const Real t = (Real(1) - g * g) / (Real(1) - g + Real(2) * g * u1);
    cost = (Real(1) + g * g - t * t) / (Real(2) * g);
    cost = cost < Real(-1) ? Real(-1) : (cost > Real(1) ? Real(1) : cost);
  }
  const Real sint = sqrt(Real(1) - cost * cost);
  const Real psi = Real(6.283185307179586) * u2;
  Real sinp, cosp;
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Real) == 4) __sincosf(psi, &sinp, &cosp);
  else sincos(psi, &sinp, &cosp);
#else
  sinp = std::sin(psi);
  cosp = std::cos(psi);
#endif
  const Real ux = p.ux, uy = p.uy, uz = p.uz;
  if (fabs(uz) > cosZero<Real>()) {
    p.ux = sint * cosp;
    p.uy = sint * sinp;
    p.uz = uz >= Real(0) ? cost : -cost;
  } else {
    const Real t = sqrt(Real(1) - uz * uz);
    p.ux = sint * (ux * uz * cosp - uy * sinp) / t + ux * cost;
    p.uy = sint * (uy * uz * cosp + ux * sinp) / t + uy * cost;
    p.uz = -sint * cosp * t + uz * cost;
  }
}

template <typename Real>
PENUMBRA_HD Real negLog(Real u) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Real) == 4) return -__logf(u);
#endif
  return -log(u);
}

/// The arithmetic of the step as MCML does it (IEEE division, square root and logarithm; Fresnel
/// from the two refractive indices). The CPU reference uses it; so does any caller that names
/// no policy. A policy provides the five functions below, for its Real and layer type.
struct ReferenceMath {
  template <typename Real>
  static PENUMBRA_HD Real div(Real a, Real b) { return a / b; }
  template <typename Real>
  static PENUMBRA_HD Real root(Real x) { return sqrt(x); }
  template <typename Real>
  static PENUMBRA_HD Real negLogUniform(Real u) { return negLog(u); }
  /// Reflectance at the boundary of L towards its neighbour N (upwards if `up`) for the cosine
  /// of incidence ca: 1 under total internal reflection; *ca2 = cosine of the transmitted
  /// angle, *ratio = n(L) / n(N), the factor of ux and uy on transmission (Snell).
  template <typename Real, typename Layer>
  static PENUMBRA_HD Real boundaryReflectance(const Layer& L, const Layer& N, bool up, Real ca,
                                              Real* ca2, Real* ratio) {
    *ratio = L.n / N.n;
    return ca <= (up ? L.cosCrit0 : L.cosCrit1) ? Real(1) : fresnel(L.n, N.n, ca, ca2);
  }
  template <typename Real, typename Layer>
  static PENUMBRA_HD void scatter(Photon<Real>& p, const Layer& L, Real u1, Real u2) {
    spin(p, L.g, u1, u2);
  }
};

/// Boundary crossing (MCML CrossUpOrNot / CrossDnOrNot). Lo et al.'s "Reflect" rewrite: the
/// up and down cases differ only in which neighbour and critical angle they use, so a small
/// branch picks those and one common path follows (half the instructions, less divergence).
template <typename Math, typename Real, typename Layer>
PENUMBRA_HD void crossOrNot(const TransportSetup<Real>& s, const Layer* layers, Photon<Real>& p,
                            Real u, StepEvent<Real>& ev) {
  const Layer& L = layers[p.layer];
  const bool up = p.uz < Real(0);
  const int next = up ? p.layer - 1 : p.layer + 1;
  const Real ca = up ? -p.uz : p.uz;
  Real ca2 = Real(0), ratio;
  const Real r = Math::boundaryReflectance(L, layers[next], up, ca, &ca2, &ratio);
  if (u > r) {  // transmitted
    if (next == 0 || next == s.numLayers + 1) {
      const Real rr = Math::root(p.x * p.x + p.y * p.y);
      const int ir = binIndex(rr, s.invDr, s.nr);
      const int ia = binIndex(acos(ca2), s.invDa, s.na);
      ev.kind = up ? EventKind::Reflect : EventKind::Transmit;
      ev.index = ir * s.na + ia;
      ev.ir = ir;
      ev.ib = ia;
      ev.weight = p.w;
      p.alive = false;
      return;
    }
    p.layer = next;
    p.ux *= ratio;
    p.uy *= ratio;
    p.uz = up ? -ca2 : ca2;
  } else {
    p.uz = -p.uz;
  }
}

/// One HopDropSpin + Roulette of MCML. Returns the tally event (at most one per step).
/// `layers` is s.layer or a copy of it (the CUDA engine's copy in shared memory, with the
/// policy's extra per-layer constants); `Math` is the arithmetic policy (ReferenceMath above).
template <typename Math, typename Real, typename Layer>
PENUMBRA_HD StepEvent<Real> mcmlStep(const TransportSetup<Real>& s, const Layer* layers,
                                     Photon<Real>& p) {
  const Philox4 r = packetRandom(s.seed, p.packet, p.step++);
  StepEvent<Real> ev{EventKind::None, 0, Real(0), 0.0, 0, 0};
  const Layer& L = layers[p.layer];
  if (L.glass) {  // HopInGlass: straight to the boundary
    if (p.uz == Real(0)) {
      ev.rouletteGain = -double(p.w);  // MCML drops such a packet; book its weight as lost
      p.alive = false;
      return ev;
    }
    const Real zb = p.uz > Real(0) ? L.z1 : L.z0;
    const Real dl = Math::div(zb - p.z, p.uz);
    p.x += dl * p.ux;
    p.y += dl * p.uy;
    p.z = zb;
    crossOrNot<Math>(s, layers, p, uniformOpen<Real>(r.v[1]), ev);
  } else {
    Real step;
    if (p.sleft == Real(0)) {
      step = Math::negLogUniform(uniformOpen<Real>(r.v[0])) * L.invMut;
    } else {
      step = p.sleft * L.invMut;
      p.sleft = Real(0);
    }
    bool hit = false;
    Real zb = p.z;
    if (p.uz != Real(0)) {
      zb = p.uz > Real(0) ? L.z1 : L.z0;
      const Real dl = Math::div(zb - p.z, p.uz);
      if (step > dl) {
        p.sleft = (step - dl) * (L.mua + L.mus);
        step = dl;
        hit = true;
      }
    }
    p.x += step * p.ux;
    p.y += step * p.uy;
    // On a hit, land exactly on the boundary (MCML's z + s uz can miss it by an ulp, and in
    // float that would give the next step a negative distance to the boundary).
    p.z = hit ? zb : p.z + step * p.uz;
    if (hit) {
      crossOrNot<Math>(s, layers, p, uniformOpen<Real>(r.v[1]), ev);
    } else {
      const int iz = binIndex(p.z, s.invDz, s.nz);
      const int ir = binIndex(Math::root(p.x * p.x + p.y * p.y), s.invDr, s.nr);
      // Deposit + remaining weight == weight before, bit for bit, at any albedo (dropWeight).
      Real dw, wNew;
      dropWeight(L, p.w, &dw, &wNew);
      ev.kind = EventKind::Absorb;
      ev.index = ir * s.nz + iz;
      ev.ir = ir;
      ev.ib = iz;
      ev.weight = dw;
      p.w = wNew;
      Math::scatter(p, L, uniformOpen<Real>(r.v[1]), uniformOpen<Real>(r.v[2]));
    }
  }
  if (p.alive && p.w < s.weightThreshold) {  // Roulette
    if (p.w == Real(0)) {
      p.alive = false;
    } else if (uniformOpen<Real>(r.v[3]) < s.chance) {
      const Real wNew = p.w * s.invChance;
      ev.rouletteGain += double(wNew) - double(p.w);
      p.w = wNew;
    } else {
      ev.rouletteGain -= double(p.w);
      p.alive = false;
    }
  }
  return ev;
}

/// The reference step: MCML's arithmetic on the setup's own layer table.
template <typename Real>
PENUMBRA_HD StepEvent<Real> mcmlStep(const TransportSetup<Real>& s, Photon<Real>& p) {
  return mcmlStep<ReferenceMath>(s, s.layer, p);
}

}  // namespace penumbra::mcml
