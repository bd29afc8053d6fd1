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

/// Where one dose voxel falls in one beam's BEV grid.
struct VoxelCorners {
  long long idx[8];  ///< BEV sample of corner c = di + 2 dj + 4 dk
  double wt[8];      ///< trilinear weight of corner c
  double a[2], b[2]; ///< iso-plane position [mm] of the rays i (di = 0), i + 1; j, j + 1
  double scale2[2];  ///< (d / SAD)^2 of the planes k, k + 1
  int tile;          ///< BEV tile of corner 0 (whose spot lists the row uses)
};

/// False where the voxel lies outside the beam's BEV grid.
PENUMBRA_HD_INLINE bool voxelCorners(const BevGeometry& g, int tilesA, double px, double py,
                                     double pz, VoxelCorners& v) {
  if (!bevCorners(g, px, py, pz, v.idx, v.wt)) return false;
  const long long nAB = (long long)g.nA * g.nB;
  const int ci = int(v.idx[0] % g.nA), cj = int((v.idx[0] / g.nA) % g.nB);
  v.tile = (cj / kTile) * tilesA + ci / kTile;
  for (int h = 0; h < 2; ++h) {
    const long long q = v.idx[h ? 7 : 0];  // corner 7 holds i + 1, j + 1, k + 1
    const long long kk = q / nAB, jj = (q / g.nA) % g.nB, ii = q % g.nA;
    v.a[h] = g.a0 + double(ii) * g.da;
    v.b[h] = g.b0 + double(jj) * g.db;
    const double d = g.d0 + double(kk) * g.dd;
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

/// Evaluates the layer's tables (idd, sigma: n entries, 1/step invDz) at the corners' WEPL [mm].
/// Returns false when no corner gets dose from this layer.
PENUMBRA_HD_INLINE bool cornerTerms(const double* idd, const double* sigma, int n, double invDz,
                                    const double wepl[8], const VoxelCorners& v, double cut2,
                                    double normK, CornerTerms& t) {
  bool any = false;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int c = 0; c < 8; ++c) {
    DepthTerms<double> d{0, 0, 0};
    const bool on = v.wt[c] > 0 &&
                    depthTerms(idd, sigma, n, invDz, wepl[c], v.scale2[c >> 2], cut2, normK, d);
    // (wt amp) exp(...) is the CPU's left-to-right wt * amp * exp(...): folding wt into amp
    // here changes no bit.
    t.wa[c] = on ? v.wt[c] * d.amp : 0.0;
    t.expo[c] = on ? d.expo : 0.0;
    t.cut[c] = on ? d.cutIso2 : -1.0;
    any = any || on;
  }
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
PENUMBRA_HD_INLINE bool spotReaches(const CornerTerms& t, const double r2[4]) {
  bool in = false;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int c = 0; c < 8; ++c) in = in || r2[c & 3] < t.cut[c];
  return in;
}

/// The entry [Gy per unit weight], summed over corners in the order c = 0..7.
PENUMBRA_HD_INLINE double spotValue(const CornerTerms& t, const double r2[4]) {
  double v = 0;
#ifdef __CUDA_ARCH__
#pragma unroll
#endif
  for (int c = 0; c < 8; ++c)
    if (r2[c & 3] < t.cut[c]) v += t.wa[c] * expD(-r2[c & 3] * t.expo[c]);
  return v;
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
