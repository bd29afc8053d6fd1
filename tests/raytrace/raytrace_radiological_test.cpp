// Path lengths against an independent chord computation (a world-space slab test written here,
// for axis-aligned grids), and radiological paths through uniform and two-density phantoms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ray_test_support.hpp"

using namespace penumbra;
using namespace penumbra::test;

namespace {

/// Entry and exit distances (mm) of a ray through the box of an axis-aligned grid, computed in
/// patient space; false when it misses. Independent of the library's index-space clipping.
bool worldChord(const Grid& g, const Ray& r, double& t0, double& t1) {
  Vec3 lo, hi;
  g.worldBounds(lo, hi);
  const Vec3 u = normalized(r.direction);
  t0 = 0;
  t1 = r.tMax;
  for (int a = 0; a < 3; ++a) {
    if (u[a] == 0) {
      if (r.origin[a] < lo[a] || r.origin[a] > hi[a]) return false;
      continue;
    }
    const double ta = (lo[a] - r.origin[a]) / u[a], tb = (hi[a] - r.origin[a]) / u[a];
    t0 = std::max(t0, std::min(ta, tb));
    t1 = std::min(t1, std::max(ta, tb));
  }
  return t0 < t1;
}

}  // namespace

TEST(RaytraceLengths, SumOfLengthsEqualsTheClippedChord) {
  std::mt19937_64 rng(20240611);
  int hits = 0;
  for (int n = 0; n < 2000; ++n) {
    Grid g = randomGrid(rng, 25);
    g.direction = Mat3{};  // axis-aligned, so the world box is the grid box
    const Ray r = randomRay(g, rng);
    double t0, t1;
    const bool hit = worldChord(g, r, t0, t1);
    for (DdaVariant v : kVariants) {
      const auto s = traceRay(g, r, v);
      if (!hit) {
        EXPECT_LT(totalLength(s), 1e-9) << describe(g, r);
        continue;
      }
      ASSERT_FALSE(s.empty()) << describe(g, r);
      EXPECT_NEAR(totalLength(s), t1 - t0, 1e-9 * (t1 + 1)) << toString(v) << "\n"
                                                            << describe(g, r);
      const auto f = traceRay(g, r, v, DdaPrecision::Float);
      EXPECT_NEAR(totalLength(f), t1 - t0, 2e-5 * (t1 - t0) + 1e-5) << describe(g, r);
    }
    hits += hit;
  }
  EXPECT_GT(hits, 1000);  // the ray generator must mostly hit, or this test proves little
}

TEST(RaytraceRadiological, UniformUnitDensityGivesTheChordLength) {
  const Grid g = makeGrid(30, 20, 10, {1.2, 0.9, 2.5}, {-20, 5, 40});
  const Volume<float> water(g, 1.0f);
  std::mt19937_64 rng(7);
  for (int n = 0; n < 300; ++n) {
    const Ray r = randomRay(g, rng);
    double t0, t1;
    const double chord = worldChord(g, r, t0, t1) ? t1 - t0 : 0.0;
    for (DdaVariant v : kVariants) {
      EXPECT_NEAR(radiologicalPath(water, r, v), chord, 1e-9 * (chord + 1)) << describe(g, r);
      EXPECT_NEAR(radiologicalPath(water, r, v, DdaPrecision::Float), chord, 2e-5 * (chord + 1));
    }
  }
}

TEST(RaytraceRadiological, TwoDensitySlabGivesTheWeightedSum) {
  // Density 1.0 for i < 4 (lung-ish would be lower; any two values do) and 2.5 from i = 4 on:
  // the interface is the plane at index x = 3.5.
  const Grid g = makeGrid(8, 6, 5, {2, 1.5, 3}, {0, 0, 0});
  Volume<float> dens(g, 1.0f);
  for (int k = 0; k < 5; ++k)
    for (int j = 0; j < 6; ++j)
      for (int i = 4; i < 8; ++i) dens.at(i, j, k) = 2.5f;

  // Along x through the middle: 4 voxels x 2 mm x 1.0 + 4 x 2 mm x 2.5 = 8 + 20 = 28.
  const Ray along{g.indexToWorld({-4, 2, 2}), {1, 0, 0}};
  for (DdaVariant v : kVariants) {
    EXPECT_DOUBLE_EQ(radiologicalPath(dens, along, v), 28.0);
    EXPECT_FLOAT_EQ(float(radiologicalPath(dens, along, v, DdaPrecision::Float)), 28.0f);
  }

  // Oblique rays: split the world chord where x crosses the interface plane.
  std::mt19937_64 rng(99);
  const double xInterface = g.indexToWorld({3.5, 0, 0}).x;
  for (int n = 0; n < 500; ++n) {
    const Ray r = randomRay(g, rng);
    double t0, t1;
    double expect = 0;
    if (worldChord(g, r, t0, t1)) {
      const Vec3 u = normalized(r.direction);
      if (u.x == 0) {
        expect = (t1 - t0) * (r.origin.x < xInterface ? 1.0 : 2.5);
      } else {
        const double ts = std::clamp((xInterface - r.origin.x) / u.x, t0, t1);
        expect = u.x > 0 ? (ts - t0) * 1.0 + (t1 - ts) * 2.5 : (ts - t0) * 2.5 + (t1 - ts) * 1.0;
      }
    }
    for (DdaVariant v : kVariants) {
      EXPECT_NEAR(radiologicalPath(dens, r, v), expect, 1e-9 * (expect + 1)) << describe(g, r);
      EXPECT_NEAR(radiologicalPath(dens, r, v), siddonRadiologicalPath(dens, r),
                  1e-9 * (expect + 1));
    }
  }
}

TEST(RaytraceRadiological, BatchedPathsEqualOneRayCallsBitForBit) {
  std::mt19937_64 rng(31337);
  const Grid g = randomGrid(rng, 40);
  Volume<float> dens(g);
  std::uniform_real_distribution<float> d(0.0f, 2.0f);
  for (float& x : dens.data) x = d(rng);
  std::vector<Ray> rays;
  for (int n = 0; n < 3000; ++n) rays.push_back(randomRay(g, rng));
  for (DdaVariant v : kVariants)
    for (DdaPrecision p : {DdaPrecision::Double, DdaPrecision::Float})
      for (int threads : {1, 3, 0}) {
        std::vector<double> out(5, std::numeric_limits<double>::quiet_NaN());  // poisoned
        traceRadiologicalPaths(dens, rays, v, out, p, threads);
        ASSERT_EQ(out.size(), rays.size());
        int nonZero = 0;
        for (std::size_t r = 0; r < rays.size(); ++r) {
          ASSERT_EQ(out[r], radiologicalPath(dens, rays[r], v, p)) << "ray " << r;
          nonZero += out[r] > 0;
        }
        EXPECT_GT(nonZero, 1500);
      }
}

TEST(RaytraceRadiological, CpuTimingReportsAProfile) {
  const Grid g = makeGrid(32, 32, 32, {1, 1, 1});
  const Volume<float> water(g, 1.0f);
  std::mt19937_64 rng(3);
  std::vector<Ray> rays;
  for (int n = 0; n < 500; ++n) rays.push_back(randomRay(g, rng));
  const KernelProfile p =
      timeRadiologicalPathsCpu(water, rays, DdaVariant::BranchFree, DdaPrecision::Float, 3, 1);
  EXPECT_EQ(p.backend, "cpu");
  EXPECT_EQ(p.variant, "dda-nc");
  EXPECT_EQ(p.repetitions, 3);
  EXPECT_GT(p.medianMs, 0);
  EXPECT_GT(p.bytes, 4.0 * 500);
}
