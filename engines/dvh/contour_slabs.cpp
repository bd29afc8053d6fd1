#include "dvh/contour_slabs.hpp"

#include <algorithm>
#include <cmath>

namespace penumbra::dvh::detail {

namespace {

// Newell's normal of a polygon: robust for non-convex polygons, length = 2 x area.
Vec3 newellNormal(const Contour& c) {
  Vec3 nrm;
  const std::size_t n = c.points.size();
  for (std::size_t a = 0; a < n; ++a) {
    const Vec3& p = c.points[a];
    const Vec3& q = c.points[(a + 1) % n];
    nrm.x += (p.y - q.y) * (p.z + q.z);
    nrm.y += (p.z - q.z) * (p.x + q.x);
    nrm.z += (p.x - q.x) * (p.y + q.y);
  }
  return nrm;
}

double polygonArea(const Polygon2& p) {
  double a = 0;
  const std::size_t n = p.u.size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = (i + 1) % n;
    a += p.u[i] * p.v[j] - p.u[j] * p.v[i];
  }
  return 0.5 * std::abs(a);
}

}  // namespace

SlabStack buildSlabStack(const std::vector<Contour>& contours, const Grid& grid,
                         double singlePlaneThicknessMm) {
  SlabStack st;
  // Plane normal from the contour with the largest area; axial (0, 0, 1) when all degenerate.
  Vec3 normal{0, 0, 1};
  double best = 0;
  for (const auto& c : contours) {
    if (c.points.size() < 3) continue;
    const Vec3 nn = newellNormal(c);
    if (norm(nn) > best) {
      best = norm(nn);
      normal = nn / norm(nn);
    }
  }
  const Vec3 gi = grid.direction.column(0), gj = grid.direction.column(1),
             gk = grid.direction.column(2);
  if (std::abs(dot(normal, gk)) > 1 - 1e-6) {
    // Contours parallel to the dose slices (the usual case): use the grid's own axes and a
    // voxel corner as the anchor, so the sample lattice is aligned with dose voxel faces.
    st.u = gi;
    st.v = gj;
    st.n = gk;
    st.anchor = grid.indexToWorld({-0.5, -0.5, -0.5});
    st.alignedWithDoseGrid = true;
  } else {
    st.n = normal;
    Vec3 u = gi - dot(gi, normal) * normal;
    if (norm(u) < 1e-6) u = gj - dot(gj, normal) * normal;
    st.u = normalized(u);
    st.v = cross(st.n, st.u);
    st.anchor = grid.indexToWorld({-0.5, -0.5, -0.5});
  }

  struct Tmp {
    double w;
    Polygon2 poly;
  };
  std::vector<Tmp> tmp;
  int degenerate = 0, notPlanar = 0;
  for (const auto& c : contours) {
    if (c.points.size() < 3) {
      ++degenerate;
      continue;
    }
    Tmp t;
    double wMin = 1e300, wMax = -1e300, wSum = 0;
    for (const Vec3& p : c.points) {
      const Vec3 d = p - st.anchor;
      t.poly.u.push_back(dot(d, st.u));
      t.poly.v.push_back(dot(d, st.v));
      const double w = dot(d, st.n);
      wMin = std::min(wMin, w);
      wMax = std::max(wMax, w);
      wSum += w;
    }
    if (wMax - wMin > 0.05) {
      ++notPlanar;
      continue;
    }
    t.w = wSum / double(c.points.size());
    tmp.push_back(std::move(t));
  }
  if (degenerate > 0)
    st.warnings.push_back(std::to_string(degenerate) +
                          " contour(s) with fewer than 3 points ignored (points, lines)");
  if (notPlanar > 0)
    st.warnings.push_back(std::to_string(notPlanar) +
                          " contour(s) not parallel to the others were skipped");
  std::sort(tmp.begin(), tmp.end(), [](const Tmp& a, const Tmp& b) { return a.w < b.w; });

  // Contours within 0.01 mm of one plane share it: holes and islands are filled together.
  for (auto& t : tmp) {
    if (st.planes.empty() || t.w - st.planes.back().w > 0.01) {
      SlabPlane p;
      p.w = t.w;
      st.planes.push_back(std::move(p));
    }
    st.planes.back().areaMm2 += polygonArea(t.poly);
    st.planes.back().polys.push_back(std::move(t.poly));
  }
  if (st.planes.empty()) return st;

  std::vector<double> gaps;
  for (std::size_t i = 1; i < st.planes.size(); ++i)
    gaps.push_back(st.planes[i].w - st.planes[i - 1].w);
  double median = 0;
  if (!gaps.empty()) {
    std::vector<double> g = gaps;
    std::nth_element(g.begin(), g.begin() + long(g.size() / 2), g.end());
    median = g[g.size() / 2];
  } else {
    median = singlePlaneThicknessMm > 0 ? singlePlaneThicknessMm : grid.spacing.z;
    if (!st.alignedWithDoseGrid)
      median = singlePlaneThicknessMm > 0
                   ? singlePlaneThicknessMm
                   : std::min({grid.spacing.x, grid.spacing.y, grid.spacing.z});
  }
  int breaks = 0;
  for (std::size_t i = 0; i < st.planes.size(); ++i) {
    SlabPlane& p = st.planes[i];
    const bool joinBelow = i > 0 && gaps[i - 1] <= 1.5 * median;
    const bool joinAbove = i + 1 < st.planes.size() && gaps[i] <= 1.5 * median;
    p.wLo = joinBelow ? p.w - 0.5 * gaps[i - 1] : p.w - 0.5 * median;
    p.wHi = joinAbove ? p.w + 0.5 * gaps[i] : p.w + 0.5 * median;
    breaks += i + 1 < st.planes.size() && !joinAbove;
    p.vMin = 1e300;
    p.vMax = -1e300;
    for (const auto& poly : p.polys)
      for (double v : poly.v) {
        p.vMin = std::min(p.vMin, v);
        p.vMax = std::max(p.vMax, v);
      }
  }
  if (breaks > 0)
    st.warnings.push_back(std::to_string(breaks) +
                          " gap(s) between contour planes wider than 1.5 x the plane spacing: "
                          "the parts on either side get end caps instead of being joined");
  return st;
}

void rowCrossings(const SlabPlane& plane, double v, std::vector<double>& xs) {
  xs.clear();
  for (const auto& p : plane.polys) {
    const std::size_t n = p.u.size();
    for (std::size_t a = 0; a < n; ++a) {
      const std::size_t b = (a + 1) % n;
      const double va = p.v[a], vb = p.v[b];
      if ((va <= v && v < vb) || (vb <= v && v < va)) {
        const double t = (v - va) / (vb - va);
        xs.push_back(p.u[a] + t * (p.u[b] - p.u[a]));
      }
    }
  }
  std::sort(xs.begin(), xs.end());
}

}  // namespace penumbra::dvh::detail
