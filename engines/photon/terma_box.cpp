#include "photon/terma_box.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <vector>

namespace penumbra::photon {
namespace {

/// n.x + c >= 0 in index space.
struct HalfSpace {
  double n[3];
  double c;
  double at(const double x[3]) const { return n[0] * x[0] + n[1] * x[1] + n[2] * x[2] + c; }
};

double dot(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/// rel(x).q + extra >= 0 as a half-space in index space, for rel(x) = origin - source + M x
/// with M[a][b] = toLocal[b][a] spacing[b] (how terma_kernel.cu places voxel centres).
HalfSpace relDot(const TermaBoxInput& in, const double q[3], double extra) {
  HalfSpace h{};
  double o[3];
  for (int a = 0; a < 3; ++a) o[a] = in.geo.origin[a] - in.source[a];
  h.c = dot(o, q) + extra;
  for (int b = 0; b < 3; ++b) {
    double s = 0;
    for (int a = 0; a < 3; ++a) s += in.geo.toLocal[b][a] * in.geo.spacing[b] * q[a];
    h.n[b] = s;
  }
  return h;
}

double det3(const double m[3][3]) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
         m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

/// The point on all three planes (Cramer), false when they are (nearly) parallel.
bool intersect(const HalfSpace& p, const HalfSpace& q, const HalfSpace& r, double x[3]) {
  const double a[3][3] = {
      {p.n[0], p.n[1], p.n[2]}, {q.n[0], q.n[1], q.n[2]}, {r.n[0], r.n[1], r.n[2]}};
  const double b[3] = {-p.c, -q.c, -r.c};
  const double d = det3(a);
  double scale = 0;
  for (const auto& row : a)
    scale = std::max(scale, std::fabs(row[0]) + std::fabs(row[1]) + std::fabs(row[2]));
  if (!(std::fabs(d) > 1e-12 * scale * scale * scale)) return false;
  for (int k = 0; k < 3; ++k) {
    double m[3][3];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) m[i][j] = j == k ? b[i] : a[i][j];
    x[k] = det3(m) / d;
  }
  return std::isfinite(x[0]) && std::isfinite(x[1]) && std::isfinite(x[2]);
}

}  // namespace

bool termaIndexBox(const TermaBoxInput& in, int lo[3], int hi[3]) {
  for (int a = 0; a < 3; ++a) lo[a] = INT_MAX, hi[a] = INT_MIN;
  if (in.openLo[0] > in.openHi[0] || in.openLo[1] > in.openHi[1]) return false;
  for (int a = 0; a < 3; ++a)
    if (in.geo.dims[a] < 1) return false;
  std::vector<HalfSpace> planes;
  for (int a = 0; a < 3; ++a) {  // the grid's box of voxel centres
    HalfSpace l{}, h{};
    l.n[a] = 1, l.c = 0;
    h.n[a] = -1, h.c = double(in.geo.dims[a] - 1);
    planes.push_back(l);
    planes.push_back(h);
  }
  // x + ex >= openLo <=> rel.u - kLo rel.w + |foot|/3 >= 0, kLo = (U0 + pitch (openLo - 2))/sad;
  // x - ex <= openHi <=> kHi rel.w - rel.u + |foot|/3 >= 0, kHi = (U0 + pitch (openHi + 2))/sad.
  auto addPair = [&](const double* axis, double map0, double foot, int openLo, int openHi) {
    const double kLo = (map0 + in.mapPitch * (openLo - 2)) / in.sad;
    const double kHi = (map0 + in.mapPitch * (openHi + 2)) / in.sad;
    double qLo[3], qHi[3];
    for (int a = 0; a < 3; ++a) {
      qLo[a] = axis[a] - kLo * in.w[a];
      qHi[a] = kHi * in.w[a] - axis[a];
    }
    planes.push_back(relDot(in, qLo, std::fabs(foot) / 3));
    planes.push_back(relDot(in, qHi, std::fabs(foot) / 3));
  };
  addPair(in.u, in.mapU0, in.footU, in.openLo[0], in.openHi[0]);
  addPair(in.v, in.mapV0, in.footV, in.openLo[1], in.openHi[1]);
  planes.push_back(relDot(in, in.w, 0.0));  // in front of the source
  double bmin[3] = {INFINITY, INFINITY, INFINITY}, bmax[3] = {-INFINITY, -INFINITY, -INFINITY};
  const std::size_t np = planes.size();
  for (std::size_t i = 0; i < np; ++i)
    for (std::size_t j = i + 1; j < np; ++j)
      for (std::size_t k = j + 1; k < np; ++k) {
        double x[3];
        if (!intersect(planes[i], planes[j], planes[k], x)) continue;
        bool inside = true;
        for (const HalfSpace& h : planes) {
          const double tol = 1e-9 * (std::fabs(h.n[0] * x[0]) + std::fabs(h.n[1] * x[1]) +
                                     std::fabs(h.n[2] * x[2]) + std::fabs(h.c) + 1);
          if (h.at(x) < -tol) {
            inside = false;
            break;
          }
        }
        if (!inside) continue;
        for (int a = 0; a < 3; ++a)
          bmin[a] = std::min(bmin[a], x[a]), bmax[a] = std::max(bmax[a], x[a]);
      }
  if (!(bmin[0] <= bmax[0])) return false;  // no vertex: the polytope is empty
  for (int a = 0; a < 3; ++a) {
    lo[a] = std::max(0, int(std::floor(bmin[a])) - 1);
    hi[a] = std::min(in.geo.dims[a] - 1, int(std::ceil(bmax[a])) + 1);
  }
  return lo[0] <= hi[0] && lo[1] <= hi[1] && lo[2] <= hi[2];
}

}  // namespace penumbra::photon
