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
  std::vector<std::string> warnings;
};

/// Rasterises onto `grid`. A contour belongs to slice k when its mean index-z is within
/// `sliceToleranceFraction` of a slice spacing from k. Contours must lie in planes parallel to
/// the grid's slices (any orientation of the grid itself is fine).
Mask rasterizeContours(const std::vector<Contour>& contours, const Grid& grid,
                       RasterReport* report = nullptr, double sliceToleranceFraction = 0.5);

}  // namespace penumbra
