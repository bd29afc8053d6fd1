#pragma once
// The CUDA engine's arithmetic policy for the shared step (mcml_transport.hpp): the same physics
// as ReferenceMath, cheaper on the GPU. Measured on one H200 (docs/benchmarks.md, MCML,
// 2026-11-21b), transport of the skin model's 10^8 packets: 349 ms with IEEE arithmetic, 305 ms
// with this policy (203 ms once the layer table sits in shared memory and packets come from a
// pool; 358 ms before all three).
//  - division, square root, reciprocal square root and log2 are the hardware approximations
//    (PTX div/sqrt/rsqrt/lg2 .approx.ftz: one MUFU instruction plus at most one multiply, where
//    IEEE division and square root add a range check and a slow-path call each; ~2 ulp);
//  - Fresnel reflectance is computed branch-free from n(L)/n(N), precomputed per layer and
//    side, and the special cases (total internal reflection, matched indices, normal incidence)
//    are selected afterwards, so a warp whose lanes meet different cases does not split;
//  - Henyey-Greenstein uses per-layer coefficients (no division by 2g), and the direction
//    update multiplies by 1/sqrt(1 - uz^2) once instead of dividing twice by sqrt(1 - uz^2).
// Weights are untouched: the drop's exact split (dropWeight) and the roulette are the shared
// code's, so energy is conserved bit for bit as before. Only directions, step lengths and bin
// positions change, by rounding; tests/mcml/mcml_cuda_test.cpp checks the CUDA results against
// the CPU reference in statistics and against published values.
#include <cuda_runtime.h>

#include <vector>

#include "mcml/mcml.hpp"
#include "mcml/mcml_transport.hpp"

namespace penumbra::mcml::cuda {

/// A layer as the fast step reads it: the shared step's parameters plus constants derived from
/// them once per run (host side, in double, then rounded).
struct GpuLayer : LayerParams<float> {
  float mut;         ///< mua + mus
  float ratio[2];    ///< n(this) / n(neighbour): [0] the layer above, [1] the layer below
  float rNormal[2];  ///< Fresnel reflectance at normal incidence towards each neighbour
  int sameN[2];      ///< 1 where the neighbour has the same refractive index (no reflection)
  float hgA, hgB, hgC, hgD, hgE;  ///< 1 - g^2, 1 - g, 2g, 1 + g^2, 1 / (2g)
  int isotropic;     ///< g == 0: cos(theta) = 2 u - 1
};

/// The per-layer table of the fast step (layers 0 .. numLayers + 1, as TransportSetup::layer).
inline std::vector<GpuLayer> makeGpuLayers(const TransportSetup<float>& s, const LayeredMedium& m) {
  const int nl = s.numLayers;
  std::vector<GpuLayer> out(std::size_t(nl + 2));
  for (int i = 0; i <= nl + 1; ++i) {
    GpuLayer& L = out[std::size_t(i)];
    static_cast<LayerParams<float>&>(L) = s.layer[i];
    const bool tissue = i >= 1 && i <= nl;
    const double g = tissue ? m.layers[std::size_t(i - 1)].g : 0.0;
    const double mua = tissue ? m.layers[std::size_t(i - 1)].mua : 0.0;
    const double mus = tissue ? m.layers[std::size_t(i - 1)].mus : 0.0;
    L.mut = float(mua + mus);
    L.hgA = float(1 - g * g);
    L.hgB = float(1 - g);
    L.hgC = float(2 * g);
    L.hgD = float(1 + g * g);
    L.hgE = g != 0 ? float(1 / (2 * g)) : 0.0f;
    L.isotropic = g == 0 ? 1 : 0;
    for (int side = 0; side < 2; ++side) {
      L.ratio[side] = 1.0f;
      L.rNormal[side] = 0.0f;
      L.sameN[side] = 1;
      if (!tissue) continue;
      const double ni = i == 0 ? m.nAbove : m.layers[std::size_t(i - 1)].n;
      const int nb = side == 0 ? i - 1 : i + 1;
      const double nt = nb == 0 ? m.nAbove : nb == nl + 1 ? m.nBelow : m.layers[std::size_t(nb - 1)].n;
      L.ratio[side] = float(ni / nt);
      const double r = (nt - ni) / (nt + ni);
      L.rNormal[side] = float(r * r);
      L.sameN[side] = ni == nt ? 1 : 0;
    }
  }
  return out;
}

#if defined(__CUDACC__)
__device__ __forceinline__ float approxDiv(float a, float b) {
  float r;
  asm("div.approx.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}
__device__ __forceinline__ float approxSqrt(float x) {
  float r;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
__device__ __forceinline__ float approxRsqrt(float x) {
  float r;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}

/// The arithmetic policy of the CUDA step (see the file comment).
struct FastMath {
  static __device__ __forceinline__ float div(float a, float b) { return approxDiv(a, b); }
  static __device__ __forceinline__ float root(float x) { return approxSqrt(x); }
  /// -ln(u) = -log2(u) ln 2; u >= 2^-24 (uniformOpen), never denormal.
  static __device__ __forceinline__ float negLogUniform(float u) {
    float l;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(l) : "f"(u));
    return l * -0.693147180559945309f;
  }

  /// ReferenceMath::boundaryReflectance: the same cases in the same order (critical angle,
  /// matched indices, normal incidence, grazing incidence, general Fresnel), the general
  /// formula evaluated for every lane and the cases selected afterwards.
  static __device__ __forceinline__ float boundaryReflectance(const GpuLayer& L, const GpuLayer&,
                                                              bool up, float ca, float* ca2,
                                                              float* ratio) {
    const int side = up ? 0 : 1;
    const float q = L.ratio[side];
    *ratio = q;
    const float sa1 = approxSqrt(fmaxf(1.0f - ca * ca, 0.0f));
    const float sa2 = q * sa1;
    const float c2 = approxSqrt(fmaxf(1.0f - sa2 * sa2, 0.0f));
    const float cap = ca * c2 - sa1 * sa2, cam = ca * c2 + sa1 * sa2;
    const float sap = sa1 * c2 + ca * sa2, sam = sa1 * c2 - ca * sa2;
    const float general = approxDiv(0.5f * sam * sam * (cam * cam + cap * cap), sap * sap * cam * cam);
    if (ca <= (up ? L.cosCrit0 : L.cosCrit1)) {
      *ca2 = 0.0f;
      return 1.0f;
    }
    if (L.sameN[side]) {
      *ca2 = ca;
      return 0.0f;
    }
    if (ca > cosZero<float>()) {
      *ca2 = ca;
      return L.rNormal[side];
    }
    if (ca < 1.0e-6f || sa2 >= 1.0f) {
      *ca2 = 0.0f;
      return 1.0f;
    }
    *ca2 = c2;
    return general;
  }

  /// ReferenceMath::scatter (MCML Spin) with the per-layer Henyey-Greenstein coefficients.
  static __device__ __forceinline__ void scatter(Photon<float>& p, const GpuLayer& L, float u1,
                                                 float u2) {
    float cost;
    if (L.isotropic) {
      cost = 2.0f * u1 - 1.0f;
    } else {
      const float t = approxDiv(L.hgA, L.hgB + L.hgC * u1);
      cost = fminf(fmaxf((L.hgD - t * t) * L.hgE, -1.0f), 1.0f);
    }
    const float sint = approxSqrt(1.0f - cost * cost);
    float sinp, cosp;
    __sincosf(6.283185307179586f * u2, &sinp, &cosp);
    const float ux = p.ux, uy = p.uy, uz = p.uz;
    if (fabsf(uz) > cosZero<float>()) {
      p.ux = sint * cosp;
      p.uy = sint * sinp;
      p.uz = uz >= 0.0f ? cost : -cost;
    } else {
      const float s2 = 1.0f - uz * uz;  // > 2e-6 here
      const float inv = approxRsqrt(s2);
      const float st = sint * inv;
      p.ux = st * (ux * uz * cosp - uy * sinp) + ux * cost;
      p.uy = st * (uy * uz * cosp + ux * sinp) + uy * cost;
      p.uz = -sint * cosp * (s2 * inv) + uz * cost;
    }
  }
};
#endif

}  // namespace penumbra::mcml::cuda
