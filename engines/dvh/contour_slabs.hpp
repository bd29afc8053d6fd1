#pragma once
/// A structure's planar contours as a stack of slabs (internal to engines/dvh).
///
/// Contours are grouped by plane; plane i owns the slab [wLo, wHi] along the plane normal that
/// reaches half way to its neighbours, and the first and last planes get half-slab end caps
/// (Nelms et al. 2015). A neighbour farther than 1.5 x the median plane spacing counts as a
/// gap between two parts of the structure: both sides then get end caps of half the median
/// spacing instead of bridging the gap.
#include <string>
#include <vector>

#include "core/grid.hpp"
#include "core/structure.hpp"

namespace penumbra::dvh::detail {

/// Polygon in the in-plane (u, v) frame of the stack, mm from the stack's anchor.
struct Polygon2 {
  std::vector<double> u, v;
};

struct SlabPlane {
  double w = 0;              ///< plane position along the normal, mm from the anchor
  double wLo = 0, wHi = 0;   ///< slab extent along the normal, mm from the anchor
  double vMin = 0, vMax = 0; ///< in-plane extent along v of all polygons
  std::vector<Polygon2> polys;
  double areaMm2 = 0;        ///< sum of |polygon area| (an upper bound with holes), for budgeting
};

struct SlabStack {
  Vec3 anchor;   ///< patient mm: origin of the (u, v, w) frame
  Vec3 u, v, n;  ///< orthonormal; n is the contour plane normal
  /// True when u, v, n are the dose grid's i, j, k axes and the anchor one of its voxel
  /// corners: then a lattice of step spacing/m starts on dose voxel faces.
  bool alignedWithDoseGrid = false;
  std::vector<SlabPlane> planes;  ///< sorted by w
  std::vector<std::string> warnings;
  double volumeEstimateMm3() const {
    double v = 0;
    for (const auto& p : planes) v += p.areaMm2 * (p.wHi - p.wLo);
    return v;
  }
};

/// Builds the slab stack of `contours` in a frame tied to `doseGrid` (its axes when the
/// contours are parallel to its slices). `singlePlaneThicknessMm` is the slab thickness of a
/// lone plane. Contours with < 3 points or not planar (> 0.05 mm off their plane) are skipped
/// with a warning.
SlabStack buildSlabStack(const std::vector<Contour>& contours, const Grid& doseGrid,
                         double singlePlaneThicknessMm);

/// Even-odd crossings of the row v = const with all polygons of `plane`, sorted: the row is
/// inside on [xs[0], xs[1]], [xs[2], xs[3]], ... Half-open edge rule, so a vertex on the row is
/// counted once.
void rowCrossings(const SlabPlane& plane, double v, std::vector<double>& xs);

}  // namespace penumbra::dvh::detail
