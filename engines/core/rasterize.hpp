#pragma once
/// Closed planar contours to a voxel mask: a voxel is inside when its centre is inside the
/// contours of its slice by the even-odd rule over all contours on that slice, so holes
/// drawn as separate contours come out empty (DICOM RT Structure Set semantics).
#include <string>
#include <vector>

#include "core/structure.hpp"

namespace penumbra {

struct RasterReport {
  int contoursUsed = 0;
  int contoursOffGrid = 0;      ///< contours whose plane matches no slice of the grid
  int contoursNotPlanar = 0;    ///< contours not parallel to the slices (skipped)
  int contoursOutOfRange = 0;   ///< contours with a point not finite or > kMaxContourIndex away

  std::vector<std::string> warnings;
};

/// Contour points further than this from the grid's origin, in voxels (continuous index), or
/// not finite, make their contour unusable: skipped and counted, so that no coordinate of a
/// malformed file (1e300 mm) overflows the int voxel indices (found by fuzz_rtstruct).
inline constexpr double kMaxContourIndex = 1e9;

/// Rasterises onto `grid`. A contour belongs to slice k when its mean index-z is within
/// `sliceToleranceFraction` of a slice spacing from k. Contours must lie in planes parallel to
/// the grid's slices (any orientation of the grid itself is fine).
Mask rasterizeContours(const std::vector<Contour>& contours, const Grid& grid,
                       RasterReport* report = nullptr, double sliceToleranceFraction = 0.5);

}  // namespace penumbra
