#pragma once
/// Nearest-edge and ray queries on one contour plane's polygons (internal to engines/dvh): a
/// bounding-volume hierarchy over the edges, header-only. Used by the shape-based
/// interpolation (signed distance maps, inradii, correspondence rays).
#include <algorithm>
#include <cmath>
#include <vector>

namespace penumbra::dvh::detail {

class EdgeTree {
public:
  /// Edges of closed polygons given as coordinate lists (u[i], v[i]).
  template <class Polys>
  explicit EdgeTree(const Polys& polys) {
    for (const auto& p : polys)
      for (std::size_t a = 0; a < p.u.size(); ++a) {
        const std::size_t b = (a + 1) % p.u.size();
        segs_.push_back({p.u[a], p.v[a], p.u[b], p.v[b]});
      }
    if (!segs_.empty()) build(0, int(segs_.size()));
  }

  /// Distance from (u, v) to the nearest edge when it is below `limit`, else `limit`; the
  /// nearest point goes to (*qu, *qv) when asked for and found.
  double distance(double u, double v, double limit, double* qu = nullptr,
                  double* qv = nullptr) const {
    if (nodes_.empty()) return limit;
    double best2 = limit * limit;
    int stack[128];
    int sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
      const Node& n = nodes_[std::size_t(stack[--sp])];
      if (box2(n, u, v) >= best2) continue;
      if (n.count > 0) {
        for (int i = n.first; i < n.first + n.count; ++i) {
          const Seg& s = segs_[std::size_t(i)];
          const double ex = s.bx - s.ax, ey = s.by - s.ay, len2 = ex * ex + ey * ey;
          const double t =
              len2 > 0 ? std::clamp(((u - s.ax) * ex + (v - s.ay) * ey) / len2, 0.0, 1.0) : 0.0;
          const double px = s.ax + t * ex, py = s.ay + t * ey;
          const double d2 = (px - u) * (px - u) + (py - v) * (py - v);
          if (d2 < best2) {
            best2 = d2;
            if (qu) *qu = px, *qv = py;
          }
        }
        continue;
      }
      const bool leftFirst = box2(nodes_[std::size_t(n.left)], u, v) <
                             box2(nodes_[std::size_t(n.right)], u, v);
      stack[sp++] = leftFirst ? n.right : n.left;  // nearer child on top
      stack[sp++] = leftFirst ? n.left : n.right;
    }
    return std::sqrt(best2);
  }

  /// Smallest t > 0 at which (u, v) + t (du, dv) meets an edge; -1 when none does.
  double rayHit(double u, double v, double du, double dv) const {
    double best = 1e300;
    if (nodes_.empty()) return -1;
    int stack[128];
    int sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
      const Node& n = nodes_[std::size_t(stack[--sp])];
      if (!rayBox(n, u, v, du, dv, best)) continue;
      if (n.count > 0) {
        for (int i = n.first; i < n.first + n.count; ++i) {
          const Seg& s = segs_[std::size_t(i)];
          const double ex = s.bx - s.ax, ey = s.by - s.ay;
          const double den = du * ey - dv * ex;
          if (den == 0) continue;
          const double wx = s.ax - u, wy = s.ay - v;
          const double t = (wx * ey - wy * ex) / den, l = (wx * dv - wy * du) / den;
          if (t > 1e-12 && l >= 0 && l <= 1 && t < best) best = t;
        }
        continue;
      }
      stack[sp++] = n.left;
      stack[sp++] = n.right;
    }
    return best < 1e300 ? best : -1;
  }

  /// Even-odd inside test over all polygons.
  bool inside(double u, double v) const {
    bool in = false;
    for (const Seg& s : segs_)
      if ((s.ay <= v && v < s.by) || (s.by <= v && v < s.ay))
        if (u < s.ax + (v - s.ay) / (s.by - s.ay) * (s.bx - s.ax)) in = !in;
    return in;
  }

private:
  struct Seg {
    double ax, ay, bx, by;
  };
  struct Node {
    double x0, y0, x1, y1;
    int left = -1, right = -1, first = 0, count = 0;  // leaf: count > 0
  };

  static double box2(const Node& n, double u, double v) {
    const double dx = std::max({n.x0 - u, 0.0, u - n.x1});
    const double dy = std::max({n.y0 - v, 0.0, v - n.y1});
    return dx * dx + dy * dy;
  }
  static bool rayBox(const Node& n, double u, double v, double du, double dv, double tMax) {
    double t0 = 0, t1 = tMax;
    const double o[2] = {u, v}, d[2] = {du, dv}, lo[2] = {n.x0, n.y0}, hi[2] = {n.x1, n.y1};
    for (int k = 0; k < 2; ++k) {
      if (d[k] == 0) {
        if (o[k] < lo[k] || o[k] > hi[k]) return false;
        continue;
      }
      double a = (lo[k] - o[k]) / d[k], b = (hi[k] - o[k]) / d[k];
      if (a > b) std::swap(a, b);
      t0 = std::max(t0, a);
      t1 = std::min(t1, b);
      if (t0 > t1) return false;
    }
    return true;
  }

  int build(int first, int count) {
    Node n;
    n.x0 = n.y0 = 1e300;
    n.x1 = n.y1 = -1e300;
    for (int i = first; i < first + count; ++i) {
      const Seg& s = segs_[std::size_t(i)];
      n.x0 = std::min({n.x0, s.ax, s.bx});
      n.x1 = std::max({n.x1, s.ax, s.bx});
      n.y0 = std::min({n.y0, s.ay, s.by});
      n.y1 = std::max({n.y1, s.ay, s.by});
    }
    const int id = int(nodes_.size());
    nodes_.push_back(n);
    if (count <= 4) {
      nodes_[std::size_t(id)].first = first;
      nodes_[std::size_t(id)].count = count;
      return id;
    }
    // Split at the median of the edge midpoints along the longer side of the box.
    const bool alongX = n.x1 - n.x0 >= n.y1 - n.y0;
    const auto mid = segs_.begin() + first + count / 2;
    std::nth_element(segs_.begin() + first, mid, segs_.begin() + first + count,
                     [alongX](const Seg& a, const Seg& b) {
                       return alongX ? a.ax + a.bx < b.ax + b.bx : a.ay + a.by < b.ay + b.by;
                     });
    const int left = build(first, count / 2);
    const int right = build(first + count / 2, count - count / 2);
    nodes_[std::size_t(id)].left = left;
    nodes_[std::size_t(id)].right = right;
    return id;
  }

  std::vector<Seg> segs_;
  std::vector<Node> nodes_;
};

}  // namespace penumbra::dvh::detail
