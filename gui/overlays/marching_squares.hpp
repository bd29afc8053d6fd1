#pragma once
/// Iso-lines of a binary mask slice by marching squares (no VTK, no Qt), so structure
/// contours come from the masks and agree in all three orientations.
#include <array>
#include <cstdint>
#include <vector>

#include "core/volume.hpp"

namespace penumbra::gui {

/// One line segment in continuous in-plane index coordinates (u, v), voxel centres at integers.
struct Segment2 {
  float u0, v0, u1, v1;
};

/// Inclusive voxel bounding box of a mask's non-zero voxels; empty when lo > hi.
struct MaskBounds {
  std::array<int, 3> lo{0, 0, 0}, hi{-1, -1, -1};
  bool empty() const { return lo[0] > hi[0]; }
};
MaskBounds maskBounds(const Mask& mask);

/// Segments of the 0.5 iso-line of `mask` on slice `slice` normal to grid axis `normalAxis`,
/// with in-plane axes u < v. Voxels outside the grid count as 0, so contours are closed.
/// `bounds` (from maskBounds) limits the work to the structure's box.
std::vector<Segment2> maskSliceContour(const Mask& mask, const MaskBounds& bounds, int normalAxis,
                                       int slice);

}  // namespace penumbra::gui
