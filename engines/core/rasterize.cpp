#include "core/rasterize.hpp"

#include <algorithm>
#include <cmath>

namespace penumbra {

namespace {

struct Polygon2D {
  std::vector<double> x, y;  // continuous in-plane index coordinates
};

// Fills one slice with the even-odd rule: per row of voxel centres, gather the crossings of
// every edge of every polygon on the slice and fill between alternate crossings. Edges use
// the half-open rule y0 <= yc < y1 so a vertex on the scan line is counted exactly once.
void fillSlice(const std::vector<Polygon2D>& polys, const Grid& grid, int k, Mask& mask) {
  const int nx = grid.dims[0], ny = grid.dims[1];
  double ymin = 1e300, ymax = -1e300;
  for (const auto& p : polys)
    for (double y : p.y) {
      ymin = std::min(ymin, y);
      ymax = std::max(ymax, y);
    }
  const int j0 = std::max(0, int(std::ceil(ymin)));
  const int j1 = std::min(ny - 1, int(std::floor(ymax)));
  std::vector<double> xs;
  for (int j = j0; j <= j1; ++j) {
    const double yc = j;
    xs.clear();
    for (const auto& p : polys) {
      const std::size_t n = p.x.size();
      for (std::size_t a = 0; a < n; ++a) {
        const std::size_t b = (a + 1) % n;
        const double ya = p.y[a], yb = p.y[b];
        if ((ya <= yc && yc < yb) || (yb <= yc && yc < ya)) {
          const double t = (yc - ya) / (yb - ya);
          xs.push_back(p.x[a] + t * (p.x[b] - p.x[a]));
        }
      }
    }
    std::sort(xs.begin(), xs.end());
    for (std::size_t c = 0; c + 1 < xs.size(); c += 2) {
      // voxel centres i with xs[c] < i < xs[c+1] are inside
      const int i0 = std::max(0, int(std::floor(xs[c])) + 1);
      const int i1 = std::min(nx - 1, int(std::ceil(xs[c + 1])) - 1);
      for (int i = i0; i <= i1; ++i) mask.at(i, j, k) = 1;
    }
  }
}

}  // namespace

Mask rasterizeContours(const std::vector<Contour>& contours, const Grid& grid,
                       RasterReport* report, double tolFraction) {
  PENUMBRA_REQUIRE(grid.isOrthonormal(), InvalidArgument,
                   "cannot rasterise onto a grid whose direction cosines are not orthonormal");
  Mask mask(grid, 0);
  RasterReport local;
  RasterReport& rep = report ? *report : local;
  std::vector<std::vector<Polygon2D>> perSlice(grid.dims[2]);

  for (const auto& contour : contours) {
    if (contour.points.size() < 3) continue;
    Polygon2D poly;
    double zmin = 1e300, zmax = -1e300, zsum = 0;
    bool inRange = true;
    for (const Vec3& p : contour.points) {
      const Vec3 c = grid.worldToIndex(p);
      // Within +-1e9 every index below converts to int and no difference overflows.
      inRange = inRange && std::abs(c.x) <= kMaxContourIndex && std::abs(c.y) <= kMaxContourIndex &&
                std::abs(c.z) <= kMaxContourIndex;
      poly.x.push_back(c.x);
      poly.y.push_back(c.y);
      zmin = std::min(zmin, c.z);
      zmax = std::max(zmax, c.z);
      zsum += c.z;
    }
    if (!inRange) {  // NaN fails the comparisons too
      ++rep.contoursOutOfRange;
      continue;
    }
    if (zmax - zmin > 0.01) {  // more than 1 % of a slice spacing out of plane
      ++rep.contoursNotPlanar;
      continue;
    }
    const double z = zsum / double(contour.points.size());
    const int k = int(std::floor(z + 0.5));
    if (k < 0 || k >= grid.dims[2] || std::abs(z - k) > tolFraction) {
      ++rep.contoursOffGrid;
      continue;
    }
    perSlice[k].push_back(std::move(poly));
    ++rep.contoursUsed;
  }
  // All polygons of one slice are filled together so that the even-odd rule sees every
  // crossing: a hole contour inside an outer contour toggles its interior back to outside.
  for (int k = 0; k < grid.dims[2]; ++k)
    if (!perSlice[k].empty()) fillSlice(perSlice[k], grid, k, mask);

  if (rep.contoursOffGrid > 0)
    rep.warnings.push_back(std::to_string(rep.contoursOffGrid) +
                           " contour(s) lie on planes without a matching image slice and were "
                           "not rasterised");
  if (rep.contoursOutOfRange > 0)
    rep.warnings.push_back(std::to_string(rep.contoursOutOfRange) +
                           " contour(s) have points that are not finite or lie more than 1e9 "
                           "voxels from the grid, and were skipped");
  if (rep.contoursNotPlanar > 0)
    rep.warnings.push_back(std::to_string(rep.contoursNotPlanar) +
                           " contour(s) are not parallel to the image slices and were skipped");
  return mask;
}

}  // namespace penumbra
