#pragma once
/// A structure's planar contours as a stack of planes (internal to engines/dvh), and the 2D
/// geometry that the shape-based interpolation between planes needs.
///
/// Contours are grouped by plane; plane i owns the slab [wLo, wHi] along the plane normal that
/// reaches half way to its neighbours (used by the slab model), and the first and last planes
/// get half-slab end caps (Nelms et al. 2015). A neighbour farther than 1.5 x the median plane
/// spacing counts as a gap between two parts of the structure: both sides then get end caps of
/// half the median spacing instead of bridging the gap (joinBelow / joinAbove are false there).
///
/// Shape-based model (see dvh.hpp): between joined planes a and b the cross-section at
/// fraction t is {p : (1 - s) da(p) + s db(p) < 0}, d the planes' signed distance maps on the
/// in-plane sample lattice and s = morphFraction(t).
#include <cstddef>
#include <string>
#include <vector>

#include "core/grid.hpp"
#include "core/structure.hpp"
#include "dvh/edge_tree.hpp"

namespace penumbra::dvh::detail {

/// Polygon in the in-plane (u, v) frame of the stack, mm from the stack's anchor.
struct Polygon2 {
  std::vector<double> u, v;
};

struct SlabPlane {
  double w = 0;              ///< plane position along the normal, mm from the anchor
  double wLo = 0, wHi = 0;   ///< slab extent along the normal, mm from the anchor
  double vMin = 0, vMax = 0; ///< in-plane extent along v of all polygons
  double uMin = 0, uMax = 0; ///< in-plane extent along u of all polygons
  bool joinBelow = false;    ///< joined to planes[i - 1] (no gap): interpolated, no cap
  bool joinAbove = false;    ///< joined to planes[i + 1]
  double inradius = 0;       ///< radius of the largest inscribed circle (mm), see computeInradii
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

/// Fills every plane's inradius (largest inscribed circle, the plane's linear size): a coarse
/// search over the plane's extent refined by a pattern search to ~1e-4 of the extent.
void computeInradii(SlabStack& st);

/// Signed distance (mm, negative inside, even-odd) of one plane at the centres
/// ((k + 0.5) su, (b + 0.5) sv) of the in-plane lattice cells k0 <= k < k0 + nk,
/// b0 <= b < b0 + nb.
struct DistanceMap {
  long k0 = 0, b0 = 0;
  long nk = 0, nb = 0;
  std::vector<double> d;
  const double* row(long b) const { return d.data() + (b - b0) * nk - k0; }  // index by k
  double* row(long b) { return d.data() + (b - b0) * nk - k0; }
};

/// Distance map of plane i over its own and its joined neighbours' extents plus 2 cells.
/// Exact wherever the morph boundary of an interval through plane i can fall between two
/// lattice cells of a row (near plane i's boundary, and where plane i and a neighbour disagree
/// on inside/outside); elsewhere only the sign matters and the value is clamped to +-1.5 cells.
DistanceMap buildDistanceMap(const SlabStack& st, std::size_t i, const EdgeTree& tree,
                             double su, double sv);

/// Correspondence along rays, for the interval between the planes of A and B (trees ta, tb):
/// in a cell inside one plane's region only, that plane's value becomes minus the distance to
/// its boundary along the ray from the other plane's nearest boundary point through the cell
/// (>= the plain distance). So the morph moves each boundary point along that ray: concentric
/// shapes are unchanged (the ray is the normal), while a flat face across the planes (a
/// straight edge that both contours share, like the base of a cone or the end of a cylinder
/// lying across the planes) keeps its length interpolated instead of being cut back to the
/// shorter contour's edge, which the plain signed-distance morph does.
void rayCorrespond(const EdgeTree& ta, const EdgeTree& tb, DistanceMap& A, DistanceMap& B,
                   double su, double sv);

/// Morph fraction s(t) of the interval planes[a] -> planes[a + 1] at t in [0, 1] (see dvh.hpp):
/// the squared inradius r^2(w) is interpolated by the quadratics through three neighbouring
/// planes (blended (1 - t) Q_left + t Q_right when both exist: exact for quadratic r^2, i.e.
/// spheres, ellipsoids, cylinders across or along the planes, cones), and s is the fraction of
/// the way from r_a to r_b that r(w) has reached (the morph's inradius moves linearly with s
/// for nested shapes). Linear (s = t) when the inradii differ by < 0.1 % or no neighbour exists.
double morphFraction(const SlabStack& st, std::size_t a, double t);

}  // namespace penumbra::dvh::detail
