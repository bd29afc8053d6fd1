#pragma once
/// Exact re-indexing of a volume whose direction matrix is a signed permutation (an
/// axis-aligned but non-identity series: feet-first, prone, decubitus) onto the grid of
/// identity direction that covers the same voxels. No interpolation: every voxel keeps its
/// value and its patient (LPS) position; only the order in memory changes. Used by the GUI
/// to display in plain LPS, and by engines that want to work on an axis-aligned grid.
#include <array>
#include <cmath>
#include <cstddef>

#include "core/error.hpp"
#include "core/volume.hpp"

namespace penumbra {

/// How the index axes of a grid with signed-permutation direction map onto LPS axes:
/// source index axis c runs along LPS axis lpsAxis[c], increasing (sign +1) or decreasing
/// (sign -1) in LPS.
struct AxisPermutation {
  std::array<int, 3> lpsAxis{0, 1, 2};
  std::array<int, 3> sign{1, 1, 1};

  bool isIdentity() const {
    return lpsAxis == std::array<int, 3>{0, 1, 2} && sign == std::array<int, 3>{1, 1, 1};
  }
};

/// True (and `out` set) when `direction` is a signed permutation matrix within `tol`.
inline bool signedPermutationOf(const Mat3& direction, AxisPermutation& out, double tol = 1e-4) {
  AxisPermutation p;
  std::array<bool, 3> used{false, false, false};
  for (int c = 0; c < 3; ++c) {
    int found = -1;
    for (int r = 0; r < 3; ++r) {
      const double v = direction.m[r][c];
      if (std::abs(std::abs(v) - 1.0) <= tol) {
        if (found >= 0) return false;
        found = r;
        p.sign[c] = v > 0 ? 1 : -1;
      } else if (std::abs(v) > tol) {
        return false;
      }
    }
    if (found < 0 || used[found]) return false;
    used[found] = true;
    p.lpsAxis[c] = found;
  }
  out = p;
  return true;
}

/// The identity-direction grid holding the same voxel centres as `g` (whose direction is
/// described by `p`): dims and spacing permuted, origin at the LPS position of the voxel
/// with the smallest x, y and z.
inline Grid identityGridOf(const Grid& g, const AxisPermutation& p) {
  Grid out;
  Vec3 firstIjk;
  for (int c = 0; c < 3; ++c) {
    const int a = p.lpsAxis[c];
    out.dims[a] = g.dims[c];
    out.spacing[a] = g.spacing[c];
    firstIjk[c] = p.sign[c] > 0 ? 0.0 : double(g.dims[c] - 1);
  }
  out.origin = g.indexToWorld(firstIjk);
  out.direction = Mat3{};
  return out;
}

/// `v` re-indexed onto identityGridOf(v.grid): for every voxel, the value at a given LPS
/// position is unchanged. A volume that is already identity is copied unchanged. Throws
/// Unsupported when the direction is not a signed permutation (oblique series need
/// resampling, which this function never does).
template <typename T>
Volume<T> reorientToIdentity(const Volume<T>& v) {
  v.validate();
  AxisPermutation p;
  PENUMBRA_REQUIRE(signedPermutationOf(v.grid.direction, p), Unsupported,
                   "reorientToIdentity: direction is not a signed permutation (oblique grid)");
  Volume<T> out(identityGridOf(v.grid, p));
  out.grid.direction = Mat3{};
  if (p.isIdentity()) {
    out.data = v.data;
    return out;
  }
  const auto& sd = v.grid.dims;
  const auto& dd = out.grid.dims;
  // Destination linear stride of each destination axis, then the signed stride and start
  // offset that one step along each *source* axis makes in the destination.
  const std::array<std::ptrdiff_t, 3> dstStride{1, std::ptrdiff_t(dd[0]),
                                                std::ptrdiff_t(dd[0]) * dd[1]};
  std::array<std::ptrdiff_t, 3> step{};
  std::ptrdiff_t start = 0;
  for (int c = 0; c < 3; ++c) {
    const std::ptrdiff_t s = dstStride[p.lpsAxis[c]];
    step[c] = p.sign[c] * s;
    if (p.sign[c] < 0) start += std::ptrdiff_t(sd[c] - 1) * s;
  }
  std::size_t src = 0;
  for (int k = 0; k < sd[2]; ++k)
    for (int j = 0; j < sd[1]; ++j) {
      std::ptrdiff_t dst = start + k * step[2] + j * step[1];
      for (int i = 0; i < sd[0]; ++i, ++src, dst += step[0]) out.data[std::size_t(dst)] = v.data[src];
    }
  return out;
}

}  // namespace penumbra
