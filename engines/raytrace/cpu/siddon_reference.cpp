// Exact reference for the DDA traversals (Siddon, Med. Phys. 12 (1985), in the midpoint form of
// Jacobs et al. 1998): no stepping and no incremental sums, every crossing computed directly.
// Deliberately shares no code with dda_traversal.hpp beyond the Grid's own conversions, so that
// a bug in the setup or clipping of the DDA cannot hide in both.
#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra {

std::vector<VoxelSegment> siddonReference(const Grid& grid, const Ray& ray) {
  makeDdaGeometry(grid);  // same validation as the DDA paths
  makeDdaRay(ray);
  std::vector<VoxelSegment> out;
  if (grid.empty()) return out;

  // Parametrise by mm along the unit world direction: p(t) = p0 + t * dIdx in index space.
  const Vec3 u = normalized(ray.direction);
  const Vec3 p0 = grid.worldToIndex(ray.origin);
  const Vec3 local = grid.direction.transposed() * u;
  const Vec3 dIdx{local.x / grid.spacing.x, local.y / grid.spacing.y, local.z / grid.spacing.z};

  std::vector<double> alphas;
  alphas.push_back(0.0);
  double tEnd = ray.tMax;
  for (int a = 0; a < 3; ++a) {
    if (dIdx[a] == 0) continue;
    // Planes at -0.5, 0.5, ..., dims - 0.5.
    for (int m = 0; m <= grid.dims[a]; ++m) {
      const double t = (double(m) - 0.5 - p0[a]) / dIdx[a];
      if (t > 0 && t < tEnd) alphas.push_back(t);
    }
  }
  if (std::isfinite(tEnd)) {
    alphas.push_back(tEnd);
  } else {
    // Beyond the last plane crossing the ray is outside the grid: nothing more to assign.
    tEnd = *std::max_element(alphas.begin(), alphas.end());
  }
  std::sort(alphas.begin(), alphas.end());

  for (std::size_t n = 1; n < alphas.size(); ++n) {
    const double t0 = alphas[n - 1], t1 = alphas[n];
    if (!(t1 > t0)) continue;  // coincident crossings: an edge or corner
    const double tm = 0.5 * (t0 + t1);
    int v[3];
    bool inside = true;
    for (int a = 0; a < 3; ++a) {
      const double c = std::floor(p0[a] + tm * dIdx[a] + 0.5);
      inside = inside && c >= 0 && c < grid.dims[a];
      v[a] = inside ? int(c) : 0;
    }
    if (!inside) continue;
    if (!out.empty() && out.back().i == v[0] && out.back().j == v[1] && out.back().k == v[2])
      out.back().lengthMm += t1 - t0;  // cannot happen with exact crossings; kept for safety
    else
      out.push_back({v[0], v[1], v[2], t1 - t0});
  }
  return out;
}

double siddonRadiologicalPath(const Volume<float>& density, const Ray& ray) {
  density.validate();
  double sum = 0;
  for (const VoxelSegment& s : siddonReference(density.grid, ray))
    sum += s.lengthMm * double(density.at(s.i, s.j, s.k));
  return sum;
}

}  // namespace penumbra
