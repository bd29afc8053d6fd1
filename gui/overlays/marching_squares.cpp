#include "gui/overlays/marching_squares.hpp"

#include <algorithm>

namespace penumbra::gui {

MaskBounds maskBounds(const Mask& mask) {
  MaskBounds b;
  const auto& d = mask.grid.dims;
  if (mask.data.size() != mask.grid.voxelCount()) return b;
  b.lo = {d[0], d[1], d[2]};
  b.hi = {-1, -1, -1};
  std::size_t idx = 0;
  for (int k = 0; k < d[2]; ++k)
    for (int j = 0; j < d[1]; ++j)
      for (int i = 0; i < d[0]; ++i, ++idx)
        if (mask.data[idx]) {
          b.lo = {std::min(b.lo[0], i), std::min(b.lo[1], j), std::min(b.lo[2], k)};
          b.hi = {std::max(b.hi[0], i), std::max(b.hi[1], j), std::max(b.hi[2], k)};
        }
  if (b.hi[0] < 0) b = MaskBounds{};
  return b;
}

std::vector<Segment2> maskSliceContour(const Mask& mask, const MaskBounds& bounds, int normalAxis,
                                       int slice) {
  std::vector<Segment2> out;
  if (bounds.empty() || slice < bounds.lo[normalAxis] || slice > bounds.hi[normalAxis]) return out;
  const int ua = normalAxis == 0 ? 1 : 0;
  const int va = normalAxis == 2 ? 1 : 2;
  // Work on the bounding box plus a one-voxel rim of zeros so every contour closes.
  const int u0 = bounds.lo[ua] - 1, u1 = bounds.hi[ua] + 1;
  const int v0 = bounds.lo[va] - 1, v1 = bounds.hi[va] + 1;
  const int nu = u1 - u0 + 1, nv = v1 - v0 + 1;
  std::vector<std::uint8_t> s(std::size_t(nu) * nv, 0);
  for (int v = bounds.lo[va]; v <= bounds.hi[va]; ++v)
    for (int u = bounds.lo[ua]; u <= bounds.hi[ua]; ++u) {
      std::array<int, 3> ijk{};
      ijk[ua] = u;
      ijk[va] = v;
      ijk[normalAxis] = slice;
      s[std::size_t(v - v0) * nu + (u - u0)] = mask.at(ijk[0], ijk[1], ijk[2]) ? 1 : 0;
    }

  // Cell corners c0=(u,v) c1=(u+1,v) c2=(u+1,v+1) c3=(u,v+1); edges e0=c0c1 e1=c1c2 e2=c2c3
  // e3=c3c0, crossed at their midpoints (binary data). Saddles (5, 10) keep the inside
  // corners separate, which matches the 6-connected voxel picture.
  static constexpr float kEdge[4][2] = {{0.5f, 0.f}, {1.f, 0.5f}, {0.5f, 1.f}, {0.f, 0.5f}};
  static constexpr int kSeg[16][4] = {
      {-1, -1, -1, -1}, {3, 0, -1, -1}, {0, 1, -1, -1}, {3, 1, -1, -1},
      {1, 2, -1, -1},   {3, 0, 1, 2},   {0, 2, -1, -1}, {3, 2, -1, -1},
      {2, 3, -1, -1},   {0, 2, -1, -1}, {0, 1, 2, 3},   {1, 2, -1, -1},
      {1, 3, -1, -1},   {0, 1, -1, -1}, {3, 0, -1, -1}, {-1, -1, -1, -1}};
  for (int v = 0; v + 1 < nv; ++v)
    for (int u = 0; u + 1 < nu; ++u) {
      const std::size_t r0 = std::size_t(v) * nu + u, r1 = r0 + nu;
      const int c = s[r0] | (s[r0 + 1] << 1) | (s[r1 + 1] << 2) | (s[r1] << 3);
      for (int e = 0; e < 4 && kSeg[c][e] >= 0; e += 2) {
        const float* a = kEdge[kSeg[c][e]];
        const float* b = kEdge[kSeg[c][e + 1]];
        out.push_back({float(u0 + u) + a[0], float(v0 + v) + a[1], float(u0 + u) + b[0],
                       float(v0 + v) + b[1]});
      }
    }
  return out;
}

}  // namespace penumbra::gui
