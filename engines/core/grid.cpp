#include "core/grid.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.hpp"

namespace penumbra {

void requireDoseGridSpacing(const Grid& g, const std::string& who) {
  for (int a = 0; a < 3; ++a) {
    const double s = g.spacing[a];
    if (s >= kMinDoseGridSpacingMm && s <= kMaxDoseGridSpacingMm) continue;  // NaN fails too
    char buf[160];
    std::snprintf(buf, sizeof buf, "dose grid spacing %g mm (axis %d) is outside [%g, %g] mm", s,
                  a + 1, kMinDoseGridSpacingMm, kMaxDoseGridSpacingMm);
    PENUMBRA_THROW(InvalidArgument, who + ": " + buf);
  }
}

bool Grid::worldToNearestIndex(Vec3 p, std::array<int, 3>& ijk) const {
  const Vec3 c = worldToIndex(p);
  for (int a = 0; a < 3; ++a) {
    const double r = std::floor(c[a] + 0.5);
    if (r < 0 || r >= dims[a]) return false;
    ijk[a] = int(r);
  }
  return true;
}

void Grid::worldBounds(Vec3& lo, Vec3& hi) const {
  const double inf = std::numeric_limits<double>::infinity();
  lo = {inf, inf, inf};
  hi = {-inf, -inf, -inf};
  for (int corner = 0; corner < 8; ++corner) {
    const Vec3 c{(corner & 1) ? dims[0] - 0.5 : -0.5, (corner & 2) ? dims[1] - 0.5 : -0.5,
                 (corner & 4) ? dims[2] - 0.5 : -0.5};
    const Vec3 w = indexToWorld(c);
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], w[a]);
      hi[a] = std::max(hi[a], w[a]);
    }
  }
}

bool Grid::isOrthonormal(double tol) const {
  for (int a = 0; a < 3; ++a) {
    const Vec3 ca = direction.column(a);
    if (std::abs(norm(ca) - 1.0) > tol) return false;
    for (int b = a + 1; b < 3; ++b)
      if (std::abs(dot(ca, direction.column(b))) > tol) return false;
  }
  return true;
}

bool Grid::isAxisAligned(double tol) const {
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      if (std::abs(direction.m[i][j] - (i == j ? 1.0 : 0.0)) > tol) return false;
  return true;
}

bool Grid::sameGeometry(const Grid& o, double tolMm) const {
  if (dims != o.dims) return false;
  for (int a = 0; a < 3; ++a) {
    if (std::abs(spacing[a] - o.spacing[a]) > tolMm) return false;
    if (std::abs(origin[a] - o.origin[a]) > tolMm) return false;
    for (int b = 0; b < 3; ++b)
      if (std::abs(direction.m[a][b] - o.direction.m[a][b]) > 1e-6) return false;
  }
  return true;
}

}  // namespace penumbra
