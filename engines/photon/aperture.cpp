// The open field of a photon beam at the isocentre plane: jaws and aperture polygons
// rasterised with sub-pixel sampling into the beam's open-fraction map, the TERMA's lookup of
// it over a voxel's footprint, and the target-conformal aperture (target projected from the
// source, grown by a margin, traced back to polygons).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

#include "core/error.hpp"
#include "photon/photon_backend.hpp"
#include "core/beam_geometry.hpp"

namespace penumbra::photon {

namespace detail {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kSubSamples = 4;  // per pixel and axis: 16 samples per 0.5-mm pixel

using Polygon = std::vector<std::array<double, 2>>;

/// Open intervals (even-odd rule) of polygon `poly` on the line v = y, appended to out.
void polygonIntervals(const Polygon& poly, double y, std::vector<std::pair<double, double>>& out) {
  std::vector<double> xs;
  const std::size_t n = poly.size();
  for (std::size_t e = 0; e < n; ++e) {
    const auto& p = poly[e];
    const auto& q = poly[(e + 1) % n];
    if ((p[1] > y) != (q[1] > y)) xs.push_back(p[0] + (y - p[1]) * (q[0] - p[0]) / (q[1] - p[1]));
  }
  std::sort(xs.begin(), xs.end());
  for (std::size_t i = 0; i + 1 < xs.size(); i += 2) out.push_back({xs[i], xs[i + 1]});
}

}  // namespace

void beamAxes(const PhotonBeam& beam, Vec3& source, Vec3& u, Vec3& v, Vec3& w) {
  const BeamFrame f = makeBeamFrame(beam.gantryDeg, beam.couchDeg, beam.isocenter, beam.sadMm);
  // IEC 61217: the beam limiting device system is rotated by the collimator angle about Z_g,
  // which points from the isocentre to the source; positive angles turn the jaws
  // counter-clockwise as seen from the source (u towards v).
  const double c = std::cos(beam.collimatorDeg * kPi / 180),
               s = std::sin(beam.collimatorDeg * kPi / 180);
  source = f.source;
  u = c * f.u + s * f.v;
  v = -s * f.u + c * f.v;
  w = f.w;
}

void rasteriseOpenField(PreparedBeam& b) {
  const PhotonBeam& beam = b.beam;
  double lo[2] = {beam.x1Mm, beam.y1Mm}, hi[2] = {beam.x2Mm, beam.y2Mm};
  if (!beam.aperture.empty()) {
    double alo[2] = {1e300, 1e300}, ahi[2] = {-1e300, -1e300};
    for (const Polygon& poly : beam.aperture)
      for (const auto& q : poly)
        for (int a = 0; a < 2; ++a) {
          alo[a] = std::min(alo[a], q[a]);
          ahi[a] = std::max(ahi[a], q[a]);
        }
    for (int a = 0; a < 2; ++a) {
      lo[a] = std::max(lo[a], alo[a]);
      hi[a] = std::min(hi[a], ahi[a]);
    }
  }
  const double p = b.mapPitch > 0 ? b.mapPitch : 0.5;
  b.mapPitch = p;
  if (!(lo[0] < hi[0] && lo[1] < hi[1])) {  // aperture entirely outside the jaws: closed
    b.mapNu = b.mapNv = 0;
    b.openFraction.clear();
    return;
  }
  // Pixel centres from half a pixel outside the open region's box: the outermost pixels are
  // closed, so the bilinear lookup ramps to 0 across the edge.
  b.mapU0 = lo[0] - 0.5 * p;
  b.mapV0 = lo[1] - 0.5 * p;
  b.mapNu = int(std::ceil((hi[0] - lo[0]) / p)) + 2;
  b.mapNv = int(std::ceil((hi[1] - lo[1]) / p)) + 2;
  b.openFraction.assign(std::size_t(b.mapNu) * std::size_t(b.mapNv), 0.0f);
  // Per pixel, the number of its kSubSamples^2 sample points inside the field (jaws and the
  // union of the polygons). Counted per sample row from the merged runs of inside samples
  // (whole pixels at once), not sample by sample: the map of a 10 x 10 cm^2 field has 650 000
  // samples and took ~1 ms per dose call that way. The counts, and so the map, are the same.
  const int su = b.mapNu * kSubSamples;
  std::vector<int> count(static_cast<std::size_t>(b.mapNu));
  std::vector<std::pair<double, double>> intervals;
  std::vector<std::pair<int, int>> runs;  // inclusive sample index ranges
  const double dSub = p / kSubSamples;
  const double u0 = b.mapU0 - 0.5 * p + 0.5 * dSub;  // first sample's u
  for (int j = 0; j < b.mapNv; ++j) {
    std::fill(count.begin(), count.end(), 0);
    for (int sj = 0; sj < kSubSamples; ++sj) {
      const double y = b.mapV0 + (j - 0.5) * p + (sj + 0.5) * dSub;
      if (y < beam.y1Mm || y > beam.y2Mm) continue;
      intervals.clear();
      if (beam.aperture.empty())
        intervals.push_back({beam.x1Mm, beam.x2Mm});
      else
        for (const Polygon& poly : beam.aperture) polygonIntervals(poly, y, intervals);
      runs.clear();
      for (const auto& [a0, a1] : intervals) {
        const double x0 = std::max(a0, beam.x1Mm), x1 = std::min(a1, beam.x2Mm);
        if (!(x0 < x1)) continue;
        // Samples with u in [x0, x1].
        const int s0 = std::max(0, int(std::ceil((x0 - u0) / dSub)));
        const int s1 = std::min(su - 1, int(std::floor((x1 - u0) / dSub)));
        if (s0 <= s1) runs.push_back({s0, s1});
      }
      // Overlapping polygons: a sample inside two of them counts once.
      std::sort(runs.begin(), runs.end());
      for (std::size_t r = 0; r < runs.size();) {
        int s0 = runs[r].first, s1 = runs[r].second;
        for (++r; r < runs.size() && runs[r].first <= s1 + 1; ++r) s1 = std::max(s1, runs[r].second);
        const int p0 = s0 / kSubSamples, p1 = s1 / kSubSamples;
        if (p0 == p1) {
          count[std::size_t(p0)] += s1 - s0 + 1;
          continue;
        }
        count[std::size_t(p0)] += kSubSamples - s0 % kSubSamples;
        for (int q = p0 + 1; q < p1; ++q) count[std::size_t(q)] += kSubSamples;
        count[std::size_t(p1)] += s1 % kSubSamples + 1;
      }
    }
    float* out = b.openFraction.data() + std::size_t(j) * std::size_t(b.mapNu);
    for (int q = 0; q < b.mapNu; ++q) out[q] = float(count[std::size_t(q)]);
  }
  const float norm = 1.0f / float(kSubSamples * kSubSamples);
  for (float& f : b.openFraction) f *= norm;
}

double openFractionAt(const PreparedBeam& b, double a, double bb) {
  if (b.mapNu <= 0 || b.mapNv <= 0) return 0;
  const double x = (a - b.mapU0) / b.mapPitch, y = (bb - b.mapV0) / b.mapPitch;
  if (!(x > -1 && y > -1 && x < b.mapNu && y < b.mapNv)) return 0;
  const int i0 = int(std::floor(x)), j0 = int(std::floor(y));
  const double fx = x - i0, fy = y - j0;
  auto at = [&](int i, int j) -> double {
    if (i < 0 || j < 0 || i >= b.mapNu || j >= b.mapNv) return 0;
    return b.openFraction[std::size_t(j) * std::size_t(b.mapNu) + std::size_t(i)];
  };
  return (1 - fy) * ((1 - fx) * at(i0, j0) + fx * at(i0 + 1, j0)) +
         fy * ((1 - fx) * at(i0, j0 + 1) + fx * at(i0 + 1, j0 + 1));
}

void voxelFootprint(const PreparedBeam& b, const Grid& g, double& footU, double& footV) {
  footU = footV = 0;
  for (int a = 0; a < 3; ++a) {
    const Vec3 axis = g.direction.column(a);
    footU += std::abs(dot(b.u, axis)) * g.spacing[a];
    footV += std::abs(dot(b.v, axis)) * g.spacing[a];
  }
}

double voxelOpenFraction(const PreparedBeam& b, const Vec3& p, double footU, double footV) {
  const Vec3 rel = p - b.source;
  const double d = dot(rel, b.w);
  if (d <= 0) return 0;
  const double scale = b.sadMm / d;
  const double a = dot(rel, b.u) * scale, bb = dot(rel, b.v) * scale;
  // Sub-points at the centres of the thirds of the footprint.
  const double du = footU * scale / 3, dv = footV * scale / 3;
  double sum = 0;
  for (int j = -1; j <= 1; ++j)
    for (int i = -1; i <= 1; ++i) sum += openFractionAt(b, a + i * du, bb + j * dv);
  return sum / 9;
}

}  // namespace detail

std::vector<std::vector<std::array<double, 2>>> conformalAperture(const PhotonBeam& beam,
                                                                  const Mask& target,
                                                                  double marginMm) {
  PENUMBRA_REQUIRE(std::isfinite(marginMm) && marginMm >= 0 && marginMm <= 200, InvalidArgument,
                   "conformal aperture: the margin must be between 0 and 200 mm");
  PENUMBRA_REQUIRE(!target.grid.empty() && target.data.size() == target.grid.voxelCount(),
                   InvalidArgument, "conformal aperture: the target mask has no voxels");
  PENUMBRA_REQUIRE(std::isfinite(beam.sadMm) && beam.sadMm > 0, InvalidArgument,
                   "conformal aperture: the beam needs a positive source-axis distance");
  Vec3 S, u, v, w;
  detail::beamAxes(beam, S, u, v, w);
  const Grid& g = target.grid;
  // Projected bounding box of every target voxel (its 8 corners) at the isocentre plane.
  struct Box {
    double a0, a1, b0, b1;
  };
  std::vector<Box> boxes;
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = 0; i < g.dims[0]; ++i) {
        if (!target.at(i, j, k)) continue;
        Box bx{1e300, -1e300, 1e300, -1e300};
        for (int c = 0; c < 8; ++c) {
          const Vec3 q = g.indexToWorld(Vec3{i + ((c & 1) ? 0.5 : -0.5), j + ((c & 2) ? 0.5 : -0.5),
                                             k + ((c & 4) ? 0.5 : -0.5)});
          const Vec3 rel = q - S;
          const double d = dot(rel, w);
          PENUMBRA_REQUIRE(d > 0, InvalidArgument,
                           "conformal aperture: the target reaches behind the source of beam '" +
                               beam.name + "'");
          const double a = dot(rel, u) * beam.sadMm / d, b = dot(rel, v) * beam.sadMm / d;
          bx.a0 = std::min(bx.a0, a), bx.a1 = std::max(bx.a1, a);
          bx.b0 = std::min(bx.b0, b), bx.b1 = std::max(bx.b1, b);
        }
        lo[0] = std::min(lo[0], bx.a0), hi[0] = std::max(hi[0], bx.a1);
        lo[1] = std::min(lo[1], bx.b0), hi[1] = std::max(hi[1], bx.b1);
        boxes.push_back(bx);
      }
  PENUMBRA_REQUIRE(!boxes.empty(), InvalidArgument, "conformal aperture: the target mask is empty");
  // Pixels of half the smallest voxel size (0.25..1 mm), fewer if the map would be huge.
  double p = std::clamp(0.5 * std::min({g.spacing.x, g.spacing.y, g.spacing.z}), 0.25, 1.0);
  const double span = std::max(hi[0] - lo[0], hi[1] - lo[1]) + 2 * marginMm;
  p = std::max(p, span / 4000);
  const double pad = marginMm + 2 * p;
  const double U0 = lo[0] - pad, V0 = lo[1] - pad;  // lower-left corner of pixel (0, 0)
  const int nu = int(std::ceil((hi[0] - lo[0] + 2 * pad) / p)) + 1;
  const int nv = int(std::ceil((hi[1] - lo[1] + 2 * pad) / p)) + 1;
  std::vector<std::uint8_t> in(std::size_t(nu) * std::size_t(nv), 0);
  auto idx = [nu](int i, int j) { return std::size_t(j) * std::size_t(nu) + std::size_t(i); };
  // Pixels whose centre lies in a voxel's projected box (a conservative cover of the voxel).
  for (const Box& bx : boxes) {
    const int i0 = std::max(0, int(std::ceil((bx.a0 - U0) / p - 0.5)));
    const int i1 = std::min(nu - 1, int(std::floor((bx.a1 - U0) / p - 0.5)));
    const int j0 = std::max(0, int(std::ceil((bx.b0 - V0) / p - 0.5)));
    const int j1 = std::min(nv - 1, int(std::floor((bx.b1 - V0) / p - 0.5)));
    // A box thinner than a pixel still marks the pixel holding its centre.
    const int ia =
        i0 <= i1 ? i0 : std::clamp(int(std::floor((0.5 * (bx.a0 + bx.a1) - U0) / p)), 0, nu - 1);
    const int ib = i0 <= i1 ? i1 : ia;
    const int ja =
        j0 <= j1 ? j0 : std::clamp(int(std::floor((0.5 * (bx.b0 + bx.b1) - V0) / p)), 0, nv - 1);
    const int jb = j0 <= j1 ? j1 : ja;
    for (int j = ja; j <= jb; ++j)
      for (int i = ia; i <= ib; ++i) in[idx(i, j)] = 1;
  }
  // Grow by the margin: a disk around every edge pixel of the projection.
  if (marginMm > 0) {
    const int r = int(std::floor(marginMm / p));
    std::vector<std::uint8_t> grown = in;
    for (int j = 0; j < nv; ++j)
      for (int i = 0; i < nu; ++i) {
        if (!in[idx(i, j)]) continue;
        const bool edge = i == 0 || j == 0 || i == nu - 1 || j == nv - 1 || !in[idx(i - 1, j)] ||
                          !in[idx(i + 1, j)] || !in[idx(i, j - 1)] || !in[idx(i, j + 1)];
        if (!edge) continue;
        for (int dj = -r; dj <= r; ++dj)
          for (int di = -r; di <= r; ++di) {
            if ((di * di + dj * dj) * p * p > marginMm * marginMm) continue;
            const int ii = i + di, jj = j + dj;
            if (ii >= 0 && jj >= 0 && ii < nu && jj < nv) grown[idx(ii, jj)] = 1;
          }
      }
    in.swap(grown);
  }
  // Outline: directed pixel edges with the inside on the left, linked into loops at corners
  // (corner (ci, cj) = lower-left corner of pixel (ci, cj)).
  auto isIn = [&](int i, int j) { return i >= 0 && j >= 0 && i < nu && j < nv && in[idx(i, j)]; };
  struct Edge {
    int x0, y0, x1, y1;
    bool used;
  };
  std::vector<Edge> edges;
  std::map<std::pair<int, int>, std::vector<int>> from;
  auto addEdge = [&](int x0, int y0, int x1, int y1) {
    from[{x0, y0}].push_back(int(edges.size()));
    edges.push_back({x0, y0, x1, y1, false});
  };
  for (int j = 0; j < nv; ++j)
    for (int i = 0; i < nu; ++i) {
      if (!in[idx(i, j)]) continue;
      if (!isIn(i, j - 1)) addEdge(i, j, i + 1, j);
      if (!isIn(i + 1, j)) addEdge(i + 1, j, i + 1, j + 1);
      if (!isIn(i, j + 1)) addEdge(i + 1, j + 1, i, j + 1);
      if (!isIn(i - 1, j)) addEdge(i, j + 1, i, j);
    }
  std::vector<std::vector<std::array<double, 2>>> polygons;
  for (std::size_t e0 = 0; e0 < edges.size(); ++e0) {
    if (edges[e0].used) continue;
    std::vector<std::array<int, 2>> loop;
    int e = int(e0);
    while (!edges[std::size_t(e)].used) {
      Edge& E = edges[std::size_t(e)];
      E.used = true;
      loop.push_back({E.x0, E.y0});
      const int dx = E.x1 - E.x0, dy = E.y1 - E.y0;
      // Next edge from the end corner: left turn first (keeps diagonal pixels apart), then
      // straight on, then right.
      int best = -1, bestRank = 3;
      for (int c : from[{E.x1, E.y1}]) {
        const Edge& C = edges[std::size_t(c)];
        if (C.used && c != int(e0)) continue;
        const int cx = C.x1 - C.x0, cy = C.y1 - C.y0;
        const int turn = dx * cy - dy * cx;
        const int rank = turn > 0 ? 0 : (turn == 0 ? 1 : 2);
        if (rank < bestRank) best = c, bestRank = rank;
      }
      if (best < 0 || best == int(e0)) break;
      e = best;
    }
    // Drop collinear corners; keep outer boundaries (counter-clockwise, positive area) only:
    // holes of the projection are filled, which keeps the cover conservative.
    std::vector<std::array<int, 2>> corners;
    const std::size_t n = loop.size();
    for (std::size_t c = 0; c < n; ++c) {
      const auto& a = loop[(c + n - 1) % n];
      const auto& b = loop[c];
      const auto& d = loop[(c + 1) % n];
      if ((b[0] - a[0]) * (d[1] - b[1]) - (b[1] - a[1]) * (d[0] - b[0]) != 0) corners.push_back(b);
    }
    long long area2 = 0;
    for (std::size_t c = 0; c < corners.size(); ++c) {
      const auto& a = corners[c];
      const auto& b = corners[(c + 1) % corners.size()];
      area2 += (long long)a[0] * b[1] - (long long)b[0] * a[1];
    }
    if (corners.size() < 3 || area2 <= 0) continue;
    std::vector<std::array<double, 2>> poly;
    for (const auto& c : corners) poly.push_back({U0 + c[0] * p, V0 + c[1] * p});
    polygons.push_back(std::move(poly));
  }
  return polygons;
}

}  // namespace penumbra::photon
