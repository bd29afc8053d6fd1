#pragma once
/// The exact gamma search at one reference point, shared by the CPU reference (Real = double)
/// and the CUDA kernel (Real = float): one algorithm, two precisions.
///
/// Coordinates. The search works in the evaluated dose's index space, scaled so that one
/// distance criterion is one unit: u_a = index_a * spacing_a / DTA. The evaluated grid is
/// orthonormal, so |du| is the patient distance in units of DTA. Doses are divided by the dose
/// criterion DD (global: one value; local: DD% of the reference point's dose). Then
///     Gamma^2(x) = |u(x) - u_r|^2 + (T(x) - d_r)^2,
/// with T the evaluated dose's trilinear interpolant: trilinear inside each cell (the box of 8
/// neighbouring voxel centres), defined on the box of all voxel centres. Coordinates are kept
/// relative to the cell holding the reference point, so float loses nothing to large indices.
///
/// Bounds. On any box B inside one cell, T lies between the least and the greatest of its
/// values at B's corners (a trilinear function is a convex combination of them), hence
///     L(B) = dist(u_r, B)^2 + max(0, min_corners T - d_r, d_r - max_corners T)^2
/// bounds Gamma^2 on B from below, and Gamma^2 at any point of B is an upper bound of the
/// minimum sought.
///
/// Search (branch and bound).
///   1. best^2 starts at cap^2 (the reported value when nothing lower exists within reach);
///   2. cells are visited in rings of growing Chebyshev index distance around the reference
///      point's cell; a ring stops the search once its nearest possible distance reaches
///      min(best, search limit), and a cell farther (per axis) than that is skipped;
///   3. inside a cell, boxes are bisected as an octree, depth first, without a stack (the
///      traversal moves to the next sibling or up from the box's own coordinates). Each box
///      evaluates Gamma^2 at its 8 corners and at its point nearest u_r (upper bounds), then is
///      dropped when L(B) >= best^2, or when L(B) >= (best - tol)^2 unless B could still turn a
///      fail into a pass (L(B) < 1 < best^2), which is refined whatever the tolerance says.
/// (The rings and the per-point state machine: gamma_point_search.hpp.)
/// Result: gamma <= gamma_hat <= gamma + tol, and gamma_hat <= 1 exactly when gamma <= 1.
/// The one exception: a box at the depth limit (kMaxLevel bisections, 1/16384 of a cell) that
/// is still undecided; the point is then flagged depth-limited and its gamma_hat is still an
/// upper bound. The result reports how many points were (none in the tests and benches).
#include <cstdint>

#include <cmath>

#if defined(__CUDACC__)
#define PENUMBRA_GAMMA_HD __host__ __device__ __forceinline__
#else
#define PENUMBRA_GAMMA_HD inline
#endif

// SIMT. On the GPU the 32 lanes of a warp search different points in lockstep, and a branch
// that some lanes take and others skip costs the warp both paths: ncu on the persistent search
// (H100, 2026-11-26) counted 6.5 of 32 lanes active on average at an issue rate of 2.75
// instructions a cycle, i.e. divergence, not memory, bounds it. Device code therefore computes a
// box's second bound and probe point whether or not the first bound prunes the box (and uses them
// only where the CPU does: the same boxes, the same values), takes both branches of the bound's
// root finding and selects, defers Best's square root to the prune tests, and bounds the cell
// scan of one step. The CPU skips the work, as a scalar processor should.
#if defined(__CUDA_ARCH__)
#define PENUMBRA_GAMMA_SIMT 1
#else
#define PENUMBRA_GAMMA_SIMT 0
#endif

namespace penumbra::compare {

/// Bisection depth limit of the octree inside one cell.
inline constexpr int kGammaMaxLevel = 14;

/// The evaluated dose as the search sees it.
template <typename Real>
struct GammaField {
  const float* dose = nullptr;  ///< Gy, i fastest
  int n[3] = {0, 0, 0};         ///< voxels per axis
  int cells[3] = {0, 0, 0};     ///< cells per axis: n - 1, or 1 for a one-voxel axis
  Real h[3] = {1, 1, 1};        ///< voxel spacing / DTA
  Real w[3] = {1, 1, 1};        ///< cell width in u: h, or 0 along a one-voxel axis
  Real invw[3] = {1, 1, 1};     ///< 1 / w, or 0 along a one-voxel axis
  Real hmin = 1;                ///< smallest h over the axes with more than one voxel
};

template <typename Real>
struct GammaLimits {
  Real cap2 = 4;      ///< cap^2
  Real limit2 = 4;    ///< (search limit / DTA)^2; points beyond are not considered
  Real tol = 1e-3;    ///< tolerance on gamma
};

struct GammaPoint {
  double gamma = 0;
  bool depthLimited = false;
};

namespace detail {

template <typename Real>
PENUMBRA_GAMMA_HD Real lerp(Real a, Real b, Real t) {
  return a + t * (b - a);
}
template <typename Real>
PENUMBRA_GAMMA_HD Real minR(Real a, Real b) {
  // On the GPU fmin is one instruction (FMNMX); a < b ? a : b is a compare and a select, and
  // they were 27 % of the search's instructions (ncu, H200, 2026-11-27). The two differ only
  // for NaN, which the search never meets (doses are checked finite), and in the sign of a zero.
#if defined(__CUDA_ARCH__)
  return fmin(a, b);
#else
  return a < b ? a : b;
#endif
}
template <typename Real>
PENUMBRA_GAMMA_HD Real maxR(Real a, Real b) {
#if defined(__CUDA_ARCH__)
  return fmax(a, b);
#else
  return a > b ? a : b;
#endif
}
template <typename Real>
PENUMBRA_GAMMA_HD Real sqrtR(Real v);
template <>
PENUMBRA_GAMMA_HD float sqrtR<float>(float v) {
#if defined(__CUDA_ARCH__)
  return sqrtf(v);
#else
  return __builtin_sqrtf(v);
#endif
}
template <>
PENUMBRA_GAMMA_HD double sqrtR<double>(double v) {
#if defined(__CUDA_ARCH__)
  return sqrt(v);
#else
  return __builtin_sqrt(v);
#endif
}

/// 2^-level (0 <= level <= 126), exactly, from its exponent bits: no division (a dozen
/// instructions for IEEE division on the GPU) and no loop (the lanes of a warp at different
/// levels looped as long as the deepest).
template <typename Real>
PENUMBRA_GAMMA_HD Real pow2Neg(int level);
template <>
PENUMBRA_GAMMA_HD float pow2Neg<float>(int level) {
  const std::uint32_t bits = std::uint32_t(127 - level) << 23;
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float v;
  __builtin_memcpy(&v, &bits, sizeof v);
  return v;
#endif
}
template <>
PENUMBRA_GAMMA_HD double pow2Neg<double>(int level) {
  const std::uint64_t bits = std::uint64_t(1023 - level) << 52;
#if defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)bits);
#else
  double v;
  __builtin_memcpy(&v, &bits, sizeof v);
  return v;
#endif
}

/// Trilinear value in a cell from its corners c[bit0 = x, bit1 = y, bit2 = z].
template <typename Real>
PENUMBRA_GAMMA_HD Real trilinear(const Real c[8], Real tx, Real ty, Real tz) {
  const Real x00 = lerp(c[0], c[1], tx), x10 = lerp(c[2], c[3], tx);
  const Real x01 = lerp(c[4], c[5], tx), x11 = lerp(c[6], c[7], tx);
  return lerp(lerp(x00, x10, ty), lerp(x01, x11, ty), tz);
}

/// State of one point's search: the best Gamma^2 so far and the thresholds derived from it.
template <typename Real>
struct Best {
  Real g2, prune2;  // best^2 and (best - tol)^2
  Real tol, limit2;
  bool depthLimited = false;
  PENUMBRA_GAMMA_HD void offer(Real d2, Real dv) {
    const Real g = d2 + dv * dv;
#if PENUMBRA_GAMMA_SIMT
    // Beyond the search limit: not a candidate. prune2 follows in prunes().
    g2 = d2 <= limit2 && g < g2 ? g : g2;
#else
    if (d2 > limit2) return;  // beyond the search limit: not a candidate
    if (g < g2) {
      g2 = g;
      const Real b = sqrtR(g) - tol;
      prune2 = b > Real(0) ? b * b : Real(0);
    }
#endif
  }
  /// (best - tol)^2 for the current best: prune2 where offer() keeps it, computed on the GPU
  /// (where offer() does not, so that lanes do not diverge on its square root).
  PENUMBRA_GAMMA_HD Real pruneLevel() const {
#if PENUMBRA_GAMMA_SIMT
    const Real b = maxR(sqrtR(g2) - tol, Real(0));
    return b * b;
#else
    return prune2;
#endif
  }
  /// True when a box with lower bound lb cannot change the result; level: pruneLevel() of the
  /// current best.
  PENUMBRA_GAMMA_HD bool prunesAt(Real lb, Real level) const {
    if (lb >= g2) return true;
    const bool undecided = g2 > Real(1) && lb < Real(1);
    return lb >= level && !undecided;
  }
  PENUMBRA_GAMMA_HD bool prunes(Real lb) const { return prunesAt(lb, pruneLevel()); }
};

template <typename Real>
PENUMBRA_GAMMA_HD Real fabsR(Real v) {
#if defined(__CUDA_ARCH__)
  return fabs(v);  // an operand modifier on the GPU
#else
  return v < Real(0) ? -v : v;
#endif
}

/// Distance^2 from p to the interval [lo, lo + w] along one axis.
template <typename Real>
PENUMBRA_GAMMA_HD Real axisGap2(Real p, Real lo, Real w) {
  // max(lo - p, p - lo - w, 0): the same value where either is positive.
  const Real d = maxR(maxR(lo - p, p - lo - w), Real(0));
  return d * d;
}

/// min over y in the box [lo, hi] of |y|^2 + (a + G.y)^2, exactly. The minimiser is
/// y(l) = clamp(-l G) where l solves phi(l) = l - a - G.y(l) = 0; phi is piecewise linear and
/// strictly increasing (slope >= 1) with a kink where some -l G_i meets lo_i or hi_i, so the
/// root is found from phi at those (at most 6) kinks. Writes the minimiser to y.
template <typename Real>
PENUMBRA_GAMMA_HD Real boxQuadratic(Real a, const Real G[3], const Real lo[3], const Real hi[3],
                                    Real y[3]) {
  auto clampR = [](Real v, Real l, Real h) { return minR(maxR(v, l), h); };  // l <= h
  auto phi = [&](Real l) {
    Real s = l - a;
    for (int i = 0; i < 3; ++i) s -= G[i] * clampR(-l * G[i], lo[i], hi[i]);
    return s;
  };
  bool haveLo = false, haveHi = false;
  Real lamLo = 0, lamHi = 0, pLo = 0, pHi = 0;
  for (int i = 0; i < 3; ++i) {
#if PENUMBRA_GAMMA_SIMT
    const bool axis = G[i] != Real(0);  // no kink along a flat axis (every lane loops alike)
    const Real invG = axis ? Real(1) / G[i] : Real(0);
#else
    if (G[i] == Real(0)) continue;
    const bool axis = true;
    const Real invG = Real(1) / G[i];
#endif
    for (int e = 0; e < 2; ++e) {
      const Real bp = -(e ? hi[i] : lo[i]) * invG;
      const Real p = phi(bp);
      if (axis && p <= Real(0) && (!haveLo || bp > lamLo)) {
        haveLo = true;
        lamLo = bp;
        pLo = p;
      }
      if (axis && p >= Real(0) && (!haveHi || bp < lamHi)) {
        haveHi = true;
        lamHi = bp;
        pHi = p;
      }
    }
  }
  // Between two kinks phi is linear: lam = lamLo - pLo (lamHi - lamLo) / (pHi - pLo). Beyond
  // every kink on one side (or with no kink at all, G = 0) phi is linear too, with slope 1 + the
  // G_i^2 of the axes whose clamp is not active: lam = ref - phi(ref) / slope, where phi at the
  // nearest kink is the pLo or pHi found above and phi(0) = -a.
  const Real ref = haveLo ? lamLo : (haveHi ? lamHi : Real(0));
  const Real pRef = haveLo ? pLo : (haveHi ? pHi : Real(0) - a);
  auto slopeBeyond = [&] {
    const Real probe = haveLo ? ref + Real(1) : (haveHi ? ref - Real(1) : Real(0));
    Real slope = 1;
    for (int i = 0; i < 3; ++i) {
      const Real v = -probe * G[i];
      if (v > lo[i] && v < hi[i]) slope += G[i] * G[i];
    }
    return slope;
  };
  const bool both = haveLo && haveHi;
#if PENUMBRA_GAMMA_SIMT
  // Both cases as one division with its operands selected first (every lane computes one
  // slope and one quotient).
  const Real slope = slopeBeyond();
  const bool spread = pHi > pLo;
  const Real base = both ? lamLo : ref;
  const Real num = both ? (spread ? pLo * (lamHi - lamLo) : Real(0)) : pRef;
  const Real den = both ? (spread ? pHi - pLo : Real(1)) : slope;
  const Real lam = base - num / den;
#else
  Real lam;
  if (both)
    lam = pHi > pLo ? lamLo - pLo * (lamHi - lamLo) / (pHi - pLo) : lamLo;
  else
    lam = ref - pRef / slopeBeyond();
#endif
  Real q = a;
  Real n2 = 0;
  for (int i = 0; i < 3; ++i) {
    y[i] = clampR(-lam * G[i], lo[i], hi[i]);
    q += G[i] * y[i];
    n2 += y[i] * y[i];
  }
  return n2 + q * q;
}

/// Branch and bound inside one cell. lo: the cell's low corner in u (relative to the
/// reference point's cell), w: its widths, c: corner doses (already divided by DD).
///
/// Each box has two lower bounds of Gamma^2. The first is the corner-range bound of the file
/// comment (cheap). The second is second-order tight: in centred box coordinates s in
/// [-1/2, 1/2]^3 the trilinear dose is T = Tc + g.s + (b_xy s_x s_y + b_xz s_x s_z +
/// b_yz s_y s_z) + b_xyz s_x s_y s_z (a Walsh-Hadamard transform of the 8 corners), so
/// |T - l| <= rho = (|b_xy| + |b_xz| + |b_yz|) / 4 + |b_xyz| / 8 for the linear part l, and
/// Gamma^2 >= h = |y|^2 + (|l(y) - d_r| - rho)_+^2, whose minimum over the box is a convex
/// problem solved exactly (boxQuadratic). Without it, the boxes around a minimiser would not
/// be pruned before their size reached the tolerance (the bound's gap shrinks with the box
/// size, the function grows with the square of the distance): thousands of boxes a point.
/// Where the octree traversal of one cell stands: the box at `level` with integer coordinates
/// (ix, iy, iz) in units of the cell's width / 2^level.
struct BoxCursor {
  int level = 0, ix = 0, iy = 0, iz = 0;
};

/// A box's corner doses (order bit0 = x, bit1 = y, bit2 = z), its extent relative to u_r
/// (y = u - u_r) in blo / bhi, its position in the cell (t0, t1), and the first bound's parts:
/// the squared distance from u_r and the corners' dose range.
template <typename Real>
struct BoxFrame {
  Real v[8], blo[3], bhi[3], t0[3], t1[3];
  Real dist2, vmin, vmax;
};

/// Fills fr for box b of the cell with corner doses c at lo (see boxUndecided). Every box's
/// evaluation starts here, so that the pre-test (ruledOut) and the evaluation compute the same
/// values bit for bit.
template <typename Real>
PENUMBRA_GAMMA_HD void frameBox(const Real c[8], const Real lo[3], const GammaField<Real>& f,
                                const Real ur[3], const BoxCursor& b, BoxFrame<Real>& fr) {
  const Real* w = f.w;
  const Real inv = pow2Neg<Real>(b.level);
  const int ib[3] = {b.ix, b.iy, b.iz};
  for (int a = 0; a < 3; ++a) {
    fr.t0[a] = Real(ib[a]) * inv;
    fr.t1[a] = Real(ib[a] + 1) * inv;
  }
  const Real* t0 = fr.t0;
  const Real* t1 = fr.t1;
  // Box corners' doses: lerps along x on the cell's four x-edges, then y, then z.
  Real ex[2][2][2];  // [z][y][x end]
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 2; ++y) {
      const Real a = c[(z << 2) | (y << 1)], e = c[(z << 2) | (y << 1) | 1];
      ex[z][y][0] = lerp(a, e, t0[0]);
      ex[z][y][1] = lerp(a, e, t1[0]);
    }
  // Then along y and z, keeping the corner order bit0 = x, bit1 = y, bit2 = z.
  Real* v = fr.v;
  for (int x = 0; x < 2; ++x) {
    const Real y0z0 = lerp(ex[0][0][x], ex[0][1][x], t0[1]);
    const Real y1z0 = lerp(ex[0][0][x], ex[0][1][x], t1[1]);
    const Real y0z1 = lerp(ex[1][0][x], ex[1][1][x], t0[1]);
    const Real y1z1 = lerp(ex[1][0][x], ex[1][1][x], t1[1]);
    v[x] = lerp(y0z0, y0z1, t0[2]);
    v[x | 2] = lerp(y1z0, y1z1, t0[2]);
    v[x | 4] = lerp(y0z0, y0z1, t1[2]);
    v[x | 6] = lerp(y1z0, y1z1, t1[2]);
  }
  fr.dist2 = 0;
  for (int a = 0; a < 3; ++a) {
    fr.blo[a] = lo[a] + t0[a] * w[a] - ur[a];
    fr.bhi[a] = lo[a] + t1[a] * w[a] - ur[a];
    const Real g = maxR(maxR(fr.blo[a], -fr.bhi[a]), Real(0));  // blo <= bhi
    fr.dist2 += g * g;
  }
  fr.vmin = v[0];
  fr.vmax = v[0];
  for (int k = 1; k < 8; ++k) {
    fr.vmin = minR(fr.vmin, v[k]);
    fr.vmax = maxR(fr.vmax, v[k]);
  }
}

/// The first bound: dist(u_r, B)^2 + the corners' dose range's distance from d_r, squared.
template <typename Real>
PENUMBRA_GAMMA_HD Real rangeBound(const BoxFrame<Real>& fr, Real dr) {
  const Real doseGap = maxR(Real(0), maxR(fr.vmin - dr, dr - fr.vmax));
  return fr.dist2 + doseGap * doseGap;
}

/// True when box b can change nothing: it lies beyond the search limit, or its first bound is
/// at or above best^2. Then every value in it, its corners' included, is at least best^2, so
/// evaluating it (boxUndecided) would neither lower best nor refine it: skipping it leaves the
/// search's result and its later boxes exactly as they were. (The bound is computed as
/// boxUndecided computes it, and a corner's Gamma^2 is at least the bound bit for bit: its
/// distance along each axis is the gap or more, its dose difference the dose gap or more, and
/// rounding is monotone.) On box4-256 at 2 %/2 mm (float search replayed on the CPU,
/// 2026-11-27) 37 % of the cells' first boxes and 80 % of the deeper boxes are ruled out so; on
/// the GPU each would otherwise cost a whole SIMT step (both bounds and the probe, every lane).
template <typename Real>
PENUMBRA_GAMMA_HD bool ruledOut(const Real c[8], const Real lo[3], const GammaField<Real>& f,
                                const Real ur[3], Real dr, const Best<Real>& best,
                                const BoxCursor& b) {
  BoxFrame<Real> fr;
  frameBox(c, lo, f, ur, b, fr);
  return fr.dist2 > best.limit2 || rangeBound(fr, dr) >= best.g2;
}

/// Evaluates the box b of a cell: offers Gamma^2 at its corners and at its probe point to best
/// and returns true when the box must be refined (neither bound rules it out). The search of one
/// point (searchBox) and the GPU's warp-wide search of a long point (gamma_kernels.cuh) both
/// evaluate boxes through it.
template <typename Real>
PENUMBRA_GAMMA_HD bool boxUndecided(const Real c[8], const Real lo[3], const GammaField<Real>& f,
                                    const Real ur[3], Real dr, Best<Real>& best,
                                    const BoxCursor& b) {
  const int level = b.level;
  {
#ifdef PENUMBRA_GAMMA_COUNT
    PENUMBRA_GAMMA_COUNT();
#endif
    BoxFrame<Real> fr;
    frameBox(c, lo, f, ur, b, fr);
    const Real* v = fr.v;
    const Real* t0 = fr.t0;
    const Real* t1 = fr.t1;
    const Real* blo = fr.blo;
    const Real* bhi = fr.bhi;
    // Gamma^2 at the box's corners (upper bounds).
    Real d2[3][2];
    for (int a = 0; a < 3; ++a) {
      d2[a][0] = blo[a] * blo[a];
      d2[a][1] = bhi[a] * bhi[a];
    }
    for (int k = 0; k < 8; ++k)
      best.offer(d2[0][k & 1] + d2[1][(k >> 1) & 1] + d2[2][(k >> 2) & 1], v[k] - dr);
    const Real dist2 = fr.dist2;
    // A box wholly beyond the search limit holds no candidate.
    // best does not change between here and the probe's offer: one prune level for both tests.
    const Real pruneAt = best.pruneLevel();
    bool keep = dist2 <= best.limit2 && !best.prunesAt(rangeBound(fr, dr), pruneAt);
    if (PENUMBRA_GAMMA_SIMT || keep) {
      // Walsh-Hadamard coefficients of the corners (sigma = -1 / +1 per bit), by the fast
      // transform: three rounds of sums and differences along x, y, z (24 additions; the
      // direct sums took 64, ~10 % of a box's instructions on the GPU). After the rounds
      // wh[m] = sum over k of v[k] times the product of sigma over the bits of m.
      Real wh[8];
      for (int k = 0; k < 8; k += 2) {
        wh[k] = v[k] + v[k + 1];
        wh[k + 1] = v[k + 1] - v[k];
      }
      for (int k = 0; k < 8; k += 4)
        for (int j = 0; j < 2; ++j) {
          const Real a = wh[k + j], b = wh[k + j + 2];
          wh[k + j] = a + b;
          wh[k + j + 2] = b - a;
        }
      for (int j = 0; j < 4; ++j) {
        const Real a = wh[j], b = wh[j + 4];
        wh[j] = a + b;
        wh[j + 4] = b - a;
      }
      const Real sum = wh[0], gx = wh[1], gy = wh[2], bxy = wh[3], gz = wh[4], bxz = wh[5],
                 byz = wh[6], bxyz = wh[7];
      const Real rho = (fabsR(bxy) + fabsR(bxz) + fabsR(byz)) * Real(0.125) + fabsR(bxyz) * Real(0.125);
      const Real gs[3] = {gx * Real(0.25), gy * Real(0.25), gz * Real(0.25)};
      Real G[3];
      Real a0 = sum * Real(0.125) - dr;
      const Real scale = Real(1 << level);  // 1 / the box's width in cells, exactly
      for (int a = 0; a < 3; ++a) {
        G[a] = gs[a] * f.invw[a] * scale;  // 0 along a one-voxel axis
        a0 -= G[a] * (Real(0.5) * (blo[a] + bhi[a]));  // linear part at y = 0 (u = u_r)
      }
      Real y[3], y0[3], l0 = a0;
      for (int a = 0; a < 3; ++a) {
        y0[a] = minR(maxR(Real(0), blo[a]), bhi[a]);  // 0 clamped to [blo, bhi]
        l0 += G[a] * y0[a];
      }
      Real h;
#if PENUMBRA_GAMMA_SIMT
      {
        const bool flat = fabsR(l0) <= rho;
        Real yq[3];
        const Real hq = boxQuadratic(l0 > rho ? a0 - rho : a0 + rho, G, blo, bhi, yq);
        h = flat ? dist2 : hq;
        for (int a = 0; a < 3; ++a) y[a] = flat ? y0[a] : yq[a];
      }
#else
      if (fabsR(l0) <= rho) {
        h = dist2;
        for (int a = 0; a < 3; ++a) y[a] = y0[a];
      } else {
        h = boxQuadratic(l0 > rho ? a0 - rho : a0 + rho, G, blo, bhi, y);
      }
#endif
      const bool probe = keep && !best.prunesAt(h, pruneAt);
      keep = probe;
      if (PENUMBRA_GAMMA_SIMT || probe) {
        // Gamma^2 at the bound's minimiser: usually within the tolerance of the box's minimum.
        Real t[3];
        Real yd2 = 0;
        for (int a = 0; a < 3; ++a) {
          t[a] = (y[a] + ur[a] - lo[a]) * f.invw[a];
          t[a] = minR(maxR(t[a], t0[a]), t1[a]);
          yd2 += y[a] * y[a];
        }
        const Real value = trilinear(c, t[0], t[1], t[2]);
        if (probe) {
          best.offer(yd2, value - dr);
          keep = !best.prunes(h);
        }
      }
    }
    return keep;
  }
}

/// Moves b to the next box of the depth-first order of the subtree rooted at level `root`:
/// into b's first child when b is to be refined (at the depth limit the box is flagged instead),
/// else to its next sibling, or up until there is one; false when the subtree is finished.
PENUMBRA_GAMMA_HD bool nextBox(BoxCursor& b, bool refine, int root, bool& depthLimited) {
  int level = b.level, ix = b.ix, iy = b.iy, iz = b.iz;
  if (refine) {
    if (level < kGammaMaxLevel) {
      b.level = level + 1;
      b.ix = ix * 2;
      b.iy = iy * 2;
      b.iz = iz * 2;
      return true;
    }
    depthLimited = true;
  }
  // Next sibling, or up until there is one. The child number is (ix & 1) | (iy & 1) << 1 |
  // (iz & 1) << 2; children are visited in that order.
  for (;;) {
    if (level <= root) return false;
    const int child = (ix & 1) | ((iy & 1) << 1) | ((iz & 1) << 2);
    if (child < 7) {
      const int next = child + 1;
      b.level = level;
      b.ix = (ix & ~1) | (next & 1);
      b.iy = (iy & ~1) | ((next >> 1) & 1);
      b.iz = (iz & ~1) | ((next >> 2) & 1);
      return true;
    }
    --level;
    ix >>= 1;
    iy >>= 1;
    iz >>= 1;
  }
}

/// Processes the box at b and moves b to the next box of the depth-first order of its cell;
/// false when the cell is finished. One box per call, so that a GPU lane can interleave its
/// search with its neighbours' (see GammaSearch).
template <typename Real>
PENUMBRA_GAMMA_HD bool searchBox(const Real c[8], const Real lo[3], const GammaField<Real>& f,
                                 const Real ur[3], Real dr, Best<Real>& best, BoxCursor& b) {
  const bool refine = boxUndecided(c, lo, f, ur, dr, best, b);
  return nextBox(b, refine, 0, best.depthLimited);
}

}  // namespace detail

}  // namespace penumbra::compare
