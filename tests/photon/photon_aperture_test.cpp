// Beam field of the photon engine (engines/photon/aperture.cpp): the open-fraction map of jaws and
// aperture polygons, the collimator rotation (IEC 61217), and the target-conformal aperture.
// No beam data needed: these are geometry only.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "photon/photon_backend.hpp"

namespace penumbra::photon {
namespace {

using detail::PreparedBeam;

PreparedBeam prepared(const PhotonBeam& b) {
  PreparedBeam pb;
  pb.beam = b;
  detail::beamAxes(b, pb.source, pb.u, pb.v, pb.w);
  pb.sadMm = b.sadMm;
  detail::rasteriseOpenField(pb);
  return pb;
}

double mapArea(const PreparedBeam& pb) {
  double s = 0;
  for (float f : pb.openFraction) s += f;
  return s * pb.mapPitch * pb.mapPitch;
}

TEST(PhotonField, OpenFractionMapIntegratesToTheJawArea) {
  PhotonBeam b;
  b.x1Mm = -37.3, b.x2Mm = 52.9, b.y1Mm = -20.05, b.y2Mm = 61.7;
  const PreparedBeam pb = prepared(b);
  const double area = (b.x2Mm - b.x1Mm) * (b.y2Mm - b.y1Mm);
  // Sub-pixel sampling: the error is at most the perimeter x half a sample spacing (0.0625 mm).
  EXPECT_NEAR(mapArea(pb), area, 2 * (90.2 + 81.75) * 0.0625);
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 0, 0), 1.0);
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 52.9 + 1, 0), 0.0);
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 0, -20.05 - 1), 0.0);
  EXPECT_NEAR(detail::openFractionAt(pb, 52.9, 10), 0.5, 0.13);  // on the edge
}

TEST(PhotonField, AperturePolygonIsClippedByTheJaws) {
  PhotonBeam b;
  b.x1Mm = -50, b.x2Mm = 50, b.y1Mm = -50, b.y2Mm = 20;
  b.aperture = {{{-40, -40}, {40, -40}, {0, 40}}};  // triangle, apex cut by y2 = 20
  const PreparedBeam pb = prepared(b);
  // Triangle area 3200 minus the part above v = 20 (height 20, base 20): 3200 - 200 = 3000.
  EXPECT_NEAR(mapArea(pb), 3000.0, 10.0);
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 0, 0), 1.0);
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 35, 30), 0.0);  // outside the triangle
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 0, 30), 0.0);   // inside it, above the jaw
}

/// The map as the definition says, sample by sample: per 0.5-mm pixel the fraction of its 4 x 4
/// sample points (sample spacing p/4, the first a half spacing in) that lie inside the jaws and
/// inside at least one polygon (even-odd crossing test at the point).
std::vector<float> sampleBySampleMap(const PreparedBeam& pb) {
  const PhotonBeam& b = pb.beam;
  const int k = 4;
  const double p = pb.mapPitch, ds = p / k;
  std::vector<float> map(std::size_t(pb.mapNu) * std::size_t(pb.mapNv), 0.f);
  auto inside = [&](const std::vector<std::array<double, 2>>& poly, double x, double y) {
    bool in = false;
    for (std::size_t e = 0, n = poly.size(); e < n; ++e) {
      const auto& a = poly[e];
      const auto& c = poly[(e + 1) % n];
      if ((a[1] > y) != (c[1] > y) && x < a[0] + (y - a[1]) * (c[0] - a[0]) / (c[1] - a[1])) in = !in;
    }
    return in;
  };
  for (int j = 0; j < pb.mapNv; ++j)
    for (int i = 0; i < pb.mapNu; ++i)
      for (int sj = 0; sj < k; ++sj)
        for (int si = 0; si < k; ++si) {
          const double x = pb.mapU0 + (i - 0.5) * p + (si + 0.5) * ds;
          const double y = pb.mapV0 + (j - 0.5) * p + (sj + 0.5) * ds;
          if (x < b.x1Mm || x > b.x2Mm || y < b.y1Mm || y > b.y2Mm) continue;
          bool in = b.aperture.empty();
          for (const auto& poly : b.aperture) in = in || inside(poly, x, y);
          if (in) map[std::size_t(j) * std::size_t(pb.mapNu) + std::size_t(i)] += 1.f / 16;
        }
  return map;
}

TEST(PhotonField, OpenFractionMapCountsEverySampleInsideTheFieldOnce) {
  // Jaws alone, then overlapping and disjoint random polygons (a sample inside two counts
  // once); the map must equal the sample-by-sample definition in every pixel (random corners:
  // no sample lies exactly on an edge).
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uni(-1, 1);
  for (int trial = 0; trial < 6; ++trial) {
    PhotonBeam b;
    b.x1Mm = -40 + 5 * uni(rng), b.x2Mm = 35 + 5 * uni(rng);
    b.y1Mm = -30 + 5 * uni(rng), b.y2Mm = 45 + 5 * uni(rng);
    for (int q = 0; q < trial; ++q) {
      std::vector<std::array<double, 2>> poly;
      const double cx = 25 * uni(rng), cy = 25 * uni(rng);
      for (int v = 0; v < 3 + q; ++v) {
        const double a = 2 * 3.14159265358979 * (v + 0.4 * uni(rng)) / (3 + q);
        const double r = 12 + 10 * uni(rng);
        poly.push_back({cx + r * std::cos(a), cy + r * std::sin(a)});
      }
      b.aperture.push_back(poly);
    }
    const PreparedBeam pb = prepared(b);
    ASSERT_GT(pb.mapNu, 0);
    const std::vector<float> ref = sampleBySampleMap(pb);
    ASSERT_EQ(pb.openFraction.size(), ref.size());
    std::size_t differ = 0, open = 0;
    for (std::size_t v = 0; v < ref.size(); ++v) {
      differ += pb.openFraction[v] != ref[v];
      open += ref[v] > 0;
    }
    EXPECT_EQ(differ, 0u) << "trial " << trial;
    EXPECT_GT(open, 100u) << "trial " << trial;
  }
}

TEST(PhotonField, CollimatorRotatesTheJawsCounterClockwiseSeenFromTheSource) {
  // Gantry 0: u = patient left (+x), v = superior (+z), beam along +y (anterior to posterior).
  PhotonBeam b;
  b.x1Mm = -5, b.x2Mm = 5, b.y1Mm = 20, b.y2Mm = 60;  // a slit above the axis along v
  const PreparedBeam p0 = prepared(b);
  EXPECT_NEAR(p0.u.x, 1, 1e-12);
  EXPECT_NEAR(p0.v.z, 1, 1e-12);
  EXPECT_NEAR(p0.w.y, 1, 1e-12);
  const double foot = 1;
  EXPECT_NEAR(detail::voxelOpenFraction(p0, Vec3{0, 0, 40}, foot, foot), 1.0, 1e-12);
  EXPECT_NEAR(detail::voxelOpenFraction(p0, Vec3{40, 0, 0}, foot, foot), 0.0, 1e-12);
  // Collimator 90: u' = v, v' = -u, so the slit (+v') now lies along -u = patient right.
  b.collimatorDeg = 90;
  const PreparedBeam p90 = prepared(b);
  EXPECT_NEAR(detail::voxelOpenFraction(p90, Vec3{0, 0, 40}, foot, foot), 0.0, 1e-12);
  EXPECT_NEAR(detail::voxelOpenFraction(p90, Vec3{-40, 0, 0}, foot, foot), 1.0, 1e-12);
  EXPECT_NEAR(detail::voxelOpenFraction(p90, Vec3{40, 0, 0}, foot, foot), 0.0, 1e-12);
  // Divergence: at 10 cm below the isocentre the field is 10 % wider.
  EXPECT_NEAR(detail::voxelOpenFraction(p0, Vec3{0, 100, 64}, foot, foot), 1.0, 1e-12);
  EXPECT_NEAR(detail::voxelOpenFraction(p0, Vec3{0, -100, 56}, foot, foot), 0.0, 1e-12);
}

/// Sphere of radius r [mm] at the origin on a 2-mm grid.
Mask sphereMask(double r) {
  Grid g;
  g.dims = {61, 61, 61};
  g.spacing = {2, 2, 2};
  g.origin = {-60, -60, -60};
  Mask m(g, 0);
  for (int k = 0; k < 61; ++k)
    for (int j = 0; j < 61; ++j)
      for (int i = 0; i < 61; ++i) {
        const Vec3 p = g.indexToWorld(Vec3{double(i), double(j), double(k)});
        if (norm(p) <= r) m.at(i, j, k) = 1;
      }
  return m;
}

TEST(ConformalAperture, CoversTheTargetProjectionPlusMarginAndLittleMore) {
  const double r = 30, margin = 5;
  const Mask target = sphereMask(r);
  for (double gantry : {0.0, 70.0}) {
    PhotonBeam b;
    b.gantryDeg = gantry;
    b.collimatorDeg = 15;
    b.x1Mm = b.y1Mm = -100, b.x2Mm = b.y2Mm = 100;
    b.aperture = conformalAperture(b, target, margin);
    ASSERT_FALSE(b.aperture.empty());
    const PreparedBeam pb = prepared(b);
    // Every projected target voxel centre is open within the margin, less the discretisation:
    // 1-mm aperture pixels (0.71 mm), the 0.5-mm open-field map and its bilinear lookup.
    Vec3 S, u, v, w;
    detail::beamAxes(b, S, u, v, w);
    const Grid& g = target.grid;
    for (int k = 0; k < g.dims[2]; k += 3)
      for (int j = 0; j < g.dims[1]; j += 3)
        for (int i = 0; i < g.dims[0]; i += 3) {
          if (!target.at(i, j, k)) continue;
          const Vec3 rel = g.indexToWorld(Vec3{double(i), double(j), double(k)}) - S;
          const double d = dot(rel, w), a = dot(rel, u) * 1000 / d, bb = dot(rel, v) * 1000 / d;
          for (int t = 0; t < 8; ++t) {
            const double reach = margin - 2.2, c = std::cos(t * M_PI / 4),
                         s = std::sin(t * M_PI / 4);
            ASSERT_DOUBLE_EQ(detail::openFractionAt(pb, a + reach * c, bb + reach * s), 1.0);
          }
        }
    // The sphere's silhouette from a source at 1000 mm has radius r / sqrt(1 - (r/SAD)^2) at the
    // isocentre plane. Inside it + margin (less the voxel and pixel discretisation) all is open;
    // beyond it + margin + one voxel diagonal + pixels all is closed.
    const double silhouette = r / std::sqrt(1 - (r / 1000) * (r / 1000));
    for (int a = 0; a < 360; a += 5) {
      const double c = std::cos(a * M_PI / 180), s = std::sin(a * M_PI / 180);
      const double in = silhouette + margin - 3.5, out = silhouette + margin + 5;
      EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, in * c, in * s), 1.0) << "angle " << a;
      EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, out * c, out * s), 0.0) << "angle " << a;
    }
    const double ideal = M_PI * (silhouette + margin) * (silhouette + margin);
    EXPECT_GT(mapArea(pb), ideal);
    EXPECT_LT(mapArea(pb), 1.15 * ideal);
  }
}

TEST(ConformalAperture, FollowsTheTargetAndTheCollimator) {
  // A box target 20 mm wide (x), 80 mm long (z, superior), centred 30 mm superior.
  Grid g;
  g.dims = {40, 40, 60};
  g.spacing = {2.5, 2.5, 2.5};
  g.origin = {-48.75, -48.75, -73.75};
  Mask m(g, 0);
  for (int k = 0; k < 60; ++k)
    for (int j = 0; j < 40; ++j)
      for (int i = 0; i < 40; ++i) {
        const Vec3 p = g.indexToWorld(Vec3{double(i), double(j), double(k)});
        if (std::abs(p.x) < 10 && std::abs(p.y) < 10 && std::abs(p.z - 30) < 40) m.at(i, j, k) = 1;
      }
  PhotonBeam b;
  b.x1Mm = b.y1Mm = -150, b.x2Mm = b.y2Mm = 150;
  b.aperture = conformalAperture(b, m, 0);
  PreparedBeam pb = prepared(b);
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 0, 60), 1.0);  // v = superior
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 60, 0), 0.0);
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 0, -30), 0.0);
  // Collimator +90: the superior end of the target appears at +u'.
  b.collimatorDeg = 90;
  b.aperture = conformalAperture(b, m, 0);
  pb = prepared(b);
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 60, 0), 1.0);
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, 0, 60), 0.0);
  EXPECT_DOUBLE_EQ(detail::openFractionAt(pb, -30, 0), 0.0);
}

TEST(ConformalAperture, RejectsAnEmptyTargetAndABadMargin) {
  PhotonBeam b;
  Mask empty(sphereMask(1).grid, 0);
  try {
    conformalAperture(b, empty, 5);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("target mask is empty"), std::string::npos) << e.what();
  }
  EXPECT_THROW(conformalAperture(b, sphereMask(10), -1), Error);
}

}  // namespace
}  // namespace penumbra::photon
