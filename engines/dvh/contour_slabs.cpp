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
    p.joinBelow = joinBelow;
    p.joinAbove = joinAbove;
    breaks += i + 1 < st.planes.size() && !joinAbove;
    p.vMin = p.uMin = 1e300;
    p.vMax = p.uMax = -1e300;
    for (const auto& poly : p.polys)
      for (std::size_t a = 0; a < poly.u.size(); ++a) {
        p.vMin = std::min(p.vMin, poly.v[a]);
        p.vMax = std::max(p.vMax, poly.v[a]);
        p.uMin = std::min(p.uMin, poly.u[a]);
        p.uMax = std::max(p.uMax, poly.u[a]);
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

// ---- shape-based interpolation: nearest edges, distance maps, inradii, morph schedule -----

void computeInradii(SlabStack& st) {
  for (SlabPlane& p : st.planes) {
    const EdgeTree tree(p.polys);
    const double extent = std::max(p.uMax - p.uMin, p.vMax - p.vMin);
    p.inradius = 0;
    if (!(extent > 0)) continue;
    auto depth = [&](double u, double v) {  // distance to the boundary, < 0 outside
      const double d = tree.distance(u, v, 1e300);
      return tree.inside(u, v) ? d : -d;
    };
    // Candidates: a 24 x 24 lattice over the extent and each polygon's vertex mean.
    const int n = 24;
    const double h = extent / n;
    std::vector<std::pair<double, std::pair<double, double>>> cand;
    for (int j = 0; j <= n; ++j)
      for (int i = 0; i <= n; ++i) {
        const double u = p.uMin + i * h, v = p.vMin + j * h;
        if (u <= p.uMax + h && v <= p.vMax + h) cand.push_back({depth(u, v), {u, v}});
      }
    for (const auto& poly : p.polys) {
      double u = 0, v = 0;
      for (std::size_t a = 0; a < poly.u.size(); ++a) u += poly.u[a], v += poly.v[a];
      u /= double(poly.u.size());
      v /= double(poly.u.size());
      cand.push_back({depth(u, v), {u, v}});
    }
    const std::size_t keep = std::min<std::size_t>(4, cand.size());
    std::partial_sort(cand.begin(), cand.begin() + long(keep), cand.end(),
                      [](const auto& a, const auto& b) { return a.first > b.first; });
    for (std::size_t c = 0; c < keep; ++c) {
      if (cand[c].first <= 0) break;
      // Pattern search: move to the best of 8 neighbours, halve the step when none is better.
      double best = cand[c].first, u = cand[c].second.first, v = cand[c].second.second;
      for (double step = 0.5 * h; step > 1e-4 * extent;) {
        double bu = u, bv = v;
        for (int dj = -1; dj <= 1; ++dj)
          for (int di = -1; di <= 1; ++di) {
            if (di == 0 && dj == 0) continue;
            const double d = depth(u + di * step, v + dj * step);
            if (d > best) best = d, bu = u + di * step, bv = v + dj * step;
          }
        if (bu == u && bv == v) step *= 0.5;
        u = bu;
        v = bv;
      }
      p.inradius = std::max(p.inradius, best);
    }
  }
}

DistanceMap buildDistanceMap(const SlabStack& st, std::size_t i, const EdgeTree& tree,
                             double su, double sv) {
  const SlabPlane& p = st.planes[i];
  std::vector<const SlabPlane*> nbs;
  if (p.joinBelow) nbs.push_back(&st.planes[i - 1]);
  if (p.joinAbove) nbs.push_back(&st.planes[i + 1]);
  double u0 = p.uMin, u1 = p.uMax, v0 = p.vMin, v1 = p.vMax;
  for (const SlabPlane* q : nbs) {
    u0 = std::min(u0, q->uMin);
    u1 = std::max(u1, q->uMax);
    v0 = std::min(v0, q->vMin);
    v1 = std::max(v1, q->vMax);
  }
  DistanceMap m;
  m.k0 = long(std::floor(u0 / su)) - 2;
  m.b0 = long(std::floor(v0 / sv)) - 2;
  m.nk = long(std::ceil(u1 / su)) + 2 - m.k0;
  m.nb = long(std::ceil(v1 / sv)) + 2 - m.b0;
  m.d.resize(std::size_t(m.nk * m.nb));
  const double band = 1.5 * std::max(su, sv);
  std::vector<double> xs;
  std::vector<std::vector<double>> nx(nbs.size());
  std::vector<char> inside(std::size_t(m.nk)), differs(std::size_t(m.nk));
  for (long b = 0; b < m.nb; ++b) {
    const double v = (double(m.b0 + b) + 0.5) * sv;
    rowCrossings(p, v, xs);
    for (std::size_t q = 0; q < nbs.size(); ++q) rowCrossings(*nbs[q], v, nx[q]);
    // Even-odd state along the row by merging with the sorted crossings.
    std::size_t c = 0;
    std::vector<std::size_t> cq(nbs.size(), 0);
    for (long k = 0; k < m.nk; ++k) {
      const double u = (double(m.k0 + k) + 0.5) * su;
      while (c < xs.size() && xs[c] < u) ++c;
      const bool in = c % 2 == 1;
      bool diff = false;
      for (std::size_t q = 0; q < nbs.size(); ++q) {
        while (cq[q] < nx[q].size() && nx[q][cq[q]] < u) ++cq[q];
        diff |= (cq[q] % 2 == 1) != in;
      }
      inside[std::size_t(k)] = in;
      differs[std::size_t(k)] = diff;
    }
    double* row = m.d.data() + b * m.nk;
    double prev = -1;  // exact distance of the previous cell, -1: none
    for (long k = 0; k < m.nk; ++k) {
      const double u = (double(m.k0 + k) + 0.5) * su;
      const bool exact = differs[std::size_t(k)] || (k > 0 && differs[std::size_t(k - 1)]) ||
                         (k + 1 < m.nk && differs[std::size_t(k + 1)]);
      double d;
      if (exact) {
        // 1-Lipschitz: the previous cell's distance + su bounds this one from above.
        d = tree.distance(u, v, prev >= 0 ? prev + su * (1 + 1e-9) + 1e-12 : 1e300);
        prev = d;
      } else {
        d = tree.distance(u, v, band);
        prev = d < band ? d : -1;
      }
      row[k] = inside[std::size_t(k)] ? -d : d;
    }
  }
  return m;
}

void rayCorrespond(const EdgeTree& ta, const EdgeTree& tb, DistanceMap& A, DistanceMap& B,
                   double su, double sv) {
  const long k0 = std::max(A.k0, B.k0), k1 = std::min(A.k0 + A.nk, B.k0 + B.nk);
  const long b0 = std::max(A.b0, B.b0), b1 = std::min(A.b0 + A.nb, B.b0 + B.nb);
  for (long b = b0; b < b1; ++b) {
    double* ra = A.row(b);
    double* rb = B.row(b);
    const double v = (double(b) + 0.5) * sv;
    for (long k = k0; k < k1; ++k) {
      const bool inA = ra[k] < 0, inB = rb[k] < 0;
      if (inA == inB) continue;
      // The cell lies in one plane's region only: walk away from the other plane's nearest
      // boundary point, through the cell, to the boundary of the region it lies in.
      const double u = (double(k) + 0.5) * su;
      double qu = u, qv = v;
      const EdgeTree& other = inA ? tb : ta;
      const EdgeTree& own = inA ? ta : tb;
      const double dq = other.distance(u, v, 1e300, &qu, &qv);
      if (!(dq > 0)) continue;
      const double len = own.rayHit(u, v, (u - qu) / dq, (v - qv) / dq);
      double& value = inA ? ra[k] : rb[k];
      if (len > 0) value = -std::max(len, -value);
    }
  }
}

double morphFraction(const SlabStack& st, std::size_t a, double t) {
  const auto& P = st.planes;
  const double ra = P[a].inradius, rb = P[a + 1].inradius;
  if (std::abs(rb - ra) <= 1e-3 * std::max(ra, rb)) return t;
  const double w = P[a].w + t * (P[a + 1].w - P[a].w);
  // Quadratic through (w, r^2) of planes i, i + 1, i + 2, evaluated at w (Lagrange form).
  auto quad = [&](std::size_t i) {
    double q = 0;
    for (std::size_t j = i; j < i + 3; ++j) {
      double l = P[j].inradius * P[j].inradius;
      for (std::size_t m = i; m < i + 3; ++m)
        if (m != j) l *= (w - P[m].w) / (P[j].w - P[m].w);
      q += l;
    }
    return q;
  };
  const bool left = P[a].joinBelow, right = P[a + 1].joinAbove;
  double q;
  if (left && right) q = (1 - t) * quad(a - 1) + t * quad(a);
  else if (left) q = quad(a - 1);
  else if (right) q = quad(a);
  else return t;
  const double r = std::sqrt(std::max(q, 0.0));
  return std::clamp((r - ra) / (rb - ra), 0.0, 1.0);
}

}  // namespace penumbra::dvh::detail
