#pragma once
/// The arithmetic of one row of the dose-deposition matrix, header-only and host/device so that
/// the CPU reference (cpu/dose_matrix.cpp, double, glibc exp) and the CUDA build
/// (cuda/dose_matrix_kernels.cu, double, CUDA exp) evaluate the same IEEE operations in the same
/// order: with FMA contraction off on both sides (-ffp-contract=off, --fmad=false), every
/// intermediate agrees bit for bit and only exp() may differ (by at most one ulp, see
/// docs/design.md), so the matrices agree in structure and, but for rare last-bit cases, in value.
///
/// Entry (v, s) for dose voxel v and spot s of one beam is the engine's dose map, trilinear BEV
/// interpolation of the spot's Gaussian term (pencil_beam_math.hpp):
///   D(v, s) = sum over the 8 BEV corners c of v with r2_c < cutIso2_c of
///             (wt_c amp_c) exp(-r2_c expo_c),
/// amp, expo, cutIso2 from the layer's tables at the corner's WEPL (DepthTerms), r2_c the squared
/// iso-plane distance from the corner's ray to the spot. Corners c = di + 2 dj + 4 dk share the
/// lateral position (a[di], b[dj]) with their depth partner, so a spot needs 4 distances.
#include <cstdint>

#include "proton/pencil_beam_math.hpp"

#ifndef __CUDA_ARCH__
#include <cmath>
#include <cstring>
#endif

namespace penumbra::proton::pb {

PENUMBRA_HD_INLINE double expD(double x) {
#ifdef __CUDA_ARCH__
  return ::exp(x);
#else
  return std::exp(x);
#endif
}

/// Where one dose voxel falls in one beam's BEV grid: its cell, held compactly (the GPU keeps
/// this across all layers of the beam; corner indices and weights are recomputed per layer with
/// bevCorners' own integer steps and products, so they are the same numbers).
struct VoxelCorners {
  long long idx0;     ///< BEV sample of corner 0
  long long step[3];  ///< index step to the upper corner along i, j, k (0 on a 1-sample axis)
  double t[3];        ///< trilinear fractions along i, j, k
  double a[2], b[2];  ///< iso-plane position [mm] of the rays i, i1 and j, j1
  double scale2[2];   ///< (d / SAD)^2 of the planes k, k1
  int tile;           ///< BEV tile of corner 0 (whose spot lists the row uses)

  /// BEV sample of corner c = di + 2 dj + 4 dk.
  PENUMBRA_HD_INLINE long long index(int c) const {
    return idx0 + ((c & 1) ? step[0] : 0) + ((c & 2) ? step[1] : 0) + ((c & 4) ? step[2] : 0);
  }
};

/// False where the voxel at (px, py, pz) [mm] lies outside the beam's BEV grid.
PENUMBRA_HD_INLINE bool voxelCorners(const BevGeometry& g, int tilesA, double px, double py,
                                     double pz, VoxelCorners& v) {
  BevCell cell;
  if (!bevCell(g, px, py, pz, cell)) return false;
  const long long nA = g.nA, nAB = (long long)g.nA * g.nB;
  v.idx0 = (long long)cell.k * nAB + (long long)cell.j * nA + cell.i;
  v.step[0] = cell.i1 - cell.i;
  v.step[1] = (long long)(cell.j1 - cell.j) * nA;
  v.step[2] = (long long)(cell.k1 - cell.k) * nAB;
  for (int q = 0; q < 3; ++q) v.t[q] = cell.t[q];
  v.tile = (cell.j / kTile) * tilesA + cell.i / kTile;
  for (int h = 0; h < 2; ++h) {
    v.a[h] = g.a0 + double(h ? cell.i1 : cell.i) * g.da;
    v.b[h] = g.b0 + double(h ? cell.j1 : cell.j) * g.db;
    const double d = g.d0 + double(h ? cell.k1 : cell.k) * g.dd;
    v.scale2[h] = (d / g.sad) * (d / g.sad);
  }
  return true;
}

/// One energy layer's folded terms at the 8 corners; a corner without dose has cut = -1 (no
/// squared distance is below it) and wa = expo = 0.
struct CornerTerms {
  double wa[8];    ///< trilinear weight x amp [Gy per unit weight]
  double expo[8];  ///< [1/mm^2]
  double cut[8];   ///< iso-plane squared cut-off radius [mm^2], or -1
};

/// Corner c's terms of one layer (tables idd, sigma: n entries, 1/step invDz) at its WEPL
/// (wepl: the beam's BEV array [mm]). Returns false where the corner gets no dose (then
/// wa = expo = 0, cut = -1). Indices are selected, not computed into arrays, so that a GPU loop
/// over c need not keep the cell in local memory.
PENUMBRA_HD_INLINE bool cornerTerm(const double* idd, const double* sigma, int n, double invDz,
                                   const double* wepl, const VoxelCorners& v, int c, double cut2,
                                   double normK, double& wa, double& expo, double& cut) {
  const double wt = cornerWeight(v.t, c);
  DepthTerms<double> d{0, 0, 0};
  const double scale2 = (c & 4) ? v.scale2[1] : v.scale2[0];
  const bool on = wt > 0 && depthTerms(idd, sigma, n, invDz, wepl[v.index(c)], scale2, cut2, normK, d);
  // (wt amp) exp(...) is the CPU's left-to-right wt * amp * exp(...): folding wt into amp
  // here changes no bit.
  wa = on ? wt * d.amp : 0.0;
  expo = on ? d.expo : 0.0;
  cut = on ? d.cutIso2 : -1.0;
  return on;
}

/// All 8 corners (the CPU's form). Returns false when no corner gets dose from this layer.
inline bool cornerTerms(const double* idd, const double* sigma, int n, double invDz,
                        const double* wepl, const VoxelCorners& v, double cut2, double normK,
                        CornerTerms& t) {
  bool any = false;
  for (int c = 0; c < 8; ++c)
    if (cornerTerm(idd, sigma, n, invDz, wepl, v, c, cut2, normK, t.wa[c], t.expo[c], t.cut[c]))
      any = true;
  return any;
}

/// Squared iso-plane distances from the voxel's 4 corner rays to the spot at (sa, sb) [mm^2].
PENUMBRA_HD_INLINE void spotDistances(const VoxelCorners& v, double sa, double sb, double r2[4]) {
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int q = 0; q < 4; ++q) {
    const double dx = v.a[q & 1] - sa, dy = v.b[q >> 1] - sb;
    r2[q] = dx * dx + dy * dy;
  }
}

/// True when some corner lies inside the spot's cut-off: the entry is then evaluated (and is
/// non-zero unless the product underflows). Costs compares only, no exp.
template <typename Terms>
PENUMBRA_HD_INLINE bool spotReachesOf(const Terms& t, const double r2[4]) {
  bool in = false;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int c = 0; c < 8; ++c) in = in || r2[c & 3] < t.cut(c);
  return in;
}

/// The entry [Gy per unit weight], summed over corners in the order c = 0..7. `Terms` is
/// CornerTerms or a type with the same members read through wa(c), expo(c), cut(c) (the GPU
/// keeps wa and expo in shared memory: see dose_matrix_kernels.cu).
///
/// On the GPU the 8 exps run without branches, so that their dependent chains interleave: a
/// warp takes a corner's branch whenever one of its lanes needs it (nearly always), so branches
/// would save no work there. Adding +0 for a corner outside the cut-off leaves v exactly as
/// skipping it does (v >= +0 throughout), so the sum is the CPU's bit for bit.
template <typename Terms>
PENUMBRA_HD_INLINE double spotValueOf(const Terms& t, const double r2[4]) {
  double v = 0;
#ifdef __CUDA_ARCH__
  double e[8];
#pragma unroll
  for (int c = 0; c < 8; ++c) e[c] = expD(-r2[c & 3] * t.expo(c));
#pragma unroll
  for (int c = 0; c < 8; ++c) v += r2[c & 3] < t.cut(c) ? t.wa(c) * e[c] : 0.0;
#else
  for (int c = 0; c < 8; ++c)
    if (r2[c & 3] < t.cut(c)) v += t.wa(c) * expD(-r2[c & 3] * t.expo(c));
#endif
  return v;
}

/// CornerTerms read through the accessors of spotValueOf.
struct CornerTermsRef {
  const CornerTerms& t;
  PENUMBRA_HD_INLINE double wa(int c) const { return t.wa[c]; }
  PENUMBRA_HD_INLINE double expo(int c) const { return t.expo[c]; }
  PENUMBRA_HD_INLINE double cut(int c) const { return t.cut[c]; }
};

PENUMBRA_HD_INLINE double spotValue(const CornerTerms& t, const double r2[4]) {
  return spotValueOf(CornerTermsRef{t}, r2);
}

/// float -> IEEE binary16 bits, round to nearest even: the same integer steps as
/// spmv::floatToHalfBits (which the CPU build uses and whose exhaustive test covers the logic),
/// usable on the device. Values of the matrix are finite and >= 0; inf and NaN are handled like
/// the host function anyway.
PENUMBRA_HD_INLINE std::uint16_t floatToHalfRne(float value) {
#ifdef __CUDA_ARCH__
  const std::uint32_t x = __float_as_uint(value);
#else
  std::uint32_t x;
  std::memcpy(&x, &value, sizeof x);
#endif
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t absx = x & 0x7FFFFFFFu;
  if (absx >= 0x7F800000u) {
    if (absx == 0x7F800000u) return sign | 0x7C00u;
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((absx >> 13) & 0x03FFu));
  }
  if (absx >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 rounds to inf
  const int exp = static_cast<int>(absx >> 23) - 127;
  if (exp >= -14) {
    const std::uint32_t mant = absx & 0x007FFFFFu;
    std::uint32_t h = (static_cast<std::uint32_t>(exp + 15) << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  if (exp < -25) return sign;
  const std::uint32_t full = (absx & 0x007FFFFFu) | 0x00800000u;
  const int shift = -exp - 14 + 13;
  std::uint32_t h = full >> shift;
  const std::uint32_t rest = full & ((1u << shift) - 1u);
  const std::uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (h & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

/// The stored value of an entry: fp16 of float(v) / scale, in the CPU's two roundings (v to
/// float when the entry is made, then float(v) x (1/scale) in double back to float).
PENUMBRA_HD_INLINE std::uint16_t entryHalf(float v, double invScale) {
  return floatToHalfRne(float(double(v) * invScale));
}

}  // namespace penumbra::proton::pb
