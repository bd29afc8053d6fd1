// Both DDA variants against the exact Siddon-style reference on thousands of seeded random rays
// through random (rotated, anisotropic) grids, and against each other bit for bit, including
// rays built to pass exactly through voxel edges and corners.
#include <gtest/gtest.h>

#include "ray_test_support.hpp"

using namespace penumbra;
using namespace penumbra::test;

namespace {

struct Case {
  Grid grid;
  Ray ray;
};

std::vector<Case> randomCases(std::uint64_t seed, int grids, int raysPerGrid) {
  std::mt19937_64 rng(seed);
  std::vector<Case> cases;
  for (int n = 0; n < grids; ++n) {
    const Grid g = randomGrid(rng);
    for (int r = 0; r < raysPerGrid; ++r) cases.push_back({g, randomRay(g, rng)});
  }
  return cases;
}

/// Rays that hit edges and corners exactly: power-of-two spacings, integer origin, signed
/// permutation directions, ray origins on lattice points (voxel centres, face centres, edges,
/// corners) that cross the grid, and directions whose index-space components are 0 or +-c for one
/// c, so that plane crossings of different axes coincide exactly in floating point.
std::vector<Case> tieCases(std::uint64_t seed, int count) {
  std::mt19937_64 rng(seed);
  const double pow2[] = {0.5, 1.0, 2.0};
  std::vector<Case> cases;
  while (int(cases.size()) < count) {
    Grid g = makeGrid(int(1 + rng() % 12), int(1 + rng() % 12), int(1 + rng() % 12),
                      {pow2[rng() % 3], pow2[rng() % 3], pow2[rng() % 3]},
                      {double(int(rng() % 200) - 100), double(int(rng() % 200) - 100), 0.0});
    if (rng() & 1) g.direction = Mat3::fromColumns({0, 1, 0}, {0, 0, -1}, {-1, 0, 0});
    Vec3 start, step;
    for (int a = 0; a < 3; ++a) {
      // Lattice point: integer or half-integer index, from 3 voxels before to 3 after.
      start[a] = 0.5 * double(int(rng() % (2 * g.dims[a] + 12)) - 6);
      step[a] = double(int(rng() % 3) - 1) * g.spacing[a];  // -1, 0, +1 voxel per unit
    }
    if (step.x == 0 && step.y == 0 && step.z == 0) continue;
    const Ray r{g.indexToWorld(start), g.direction * step};
    if (siddonReference(g, r).empty()) continue;  // keep the ones that cross the grid
    cases.push_back({g, r});
  }
  return cases;
}

void expectMatchesReference(const std::vector<Case>& cases, DdaPrecision p, double relTol,
                            const char* name) {
  int hit = 0, failures = 0;
  for (std::size_t n = 0; n < cases.size(); ++n) {
    const Case& c = cases[n];
    const auto want = siddonReference(c.grid, c.ray);
    const double tol = relTol * (totalLength(want) + 1.0);
    for (DdaVariant v : kVariants) {
      const auto got = traceRay(c.grid, c.ray, v, p);
      std::string why;
      if (!sameWithin(got, want, tol, &why) && failures++ < 5) {
        ADD_FAILURE() << name << " case " << n << " " << toString(v) << " " << toString(p) << ": "
                      << why << "; dumped to "
                      << dumpCase(std::string(name) + "_" + std::to_string(n), c.grid, c.ray, got,
                                  want);
      }
      EXPECT_NEAR(totalLength(got), totalLength(want), tol) << name << " case " << n;
    }
    hit += !want.empty();
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(hit, int(cases.size()) / 2) << "most rays must hit the grid";
}

}  // namespace

TEST(RaytraceReference, DoubleTraversalMatchesSiddonOnRandomRays) {
  expectMatchesReference(randomCases(12345, 60, 100), DdaPrecision::Double, 1e-9, "random_double");
}

TEST(RaytraceReference, FloatTraversalMatchesSiddonWithinFloatRounding) {
  // Float stepping accumulates T += DeltaT: error grows with the number of steps (<= ~100 here).
  expectMatchesReference(randomCases(777, 40, 100), DdaPrecision::Float, 2e-5, "random_float");
}

TEST(RaytraceReference, EdgeAndCornerRaysMatchSiddon) {
  const auto cases = tieCases(4242, 3000);
  expectMatchesReference(cases, DdaPrecision::Double, 1e-9, "ties_double");
  expectMatchesReference(cases, DdaPrecision::Float, 1e-6, "ties_float");
}

TEST(RaytraceReference, VariantsAgreeBitForBitOnRandomAndTieRays) {
  auto cases = randomCases(2718, 50, 100);
  const auto ties = tieCases(3141, 3000);
  cases.insert(cases.end(), ties.begin(), ties.end());
  long long extraClassicIterations = 0, segments = 0;
  for (std::size_t n = 0; n < cases.size(); ++n) {
    const Case& c = cases[n];
    for (DdaPrecision p : {DdaPrecision::Double, DdaPrecision::Float}) {
      const auto a = traceRay(c.grid, c.ray, DdaVariant::Classic, p);
      const auto b = traceRay(c.grid, c.ray, DdaVariant::BranchFree, p);
      ASSERT_TRUE(identical(a, b))
          << "case " << n << " " << toString(p) << "; dumped to "
          << dumpCase("variants_" + std::to_string(n), c.grid, c.ray, a, b);
      segments += static_cast<long long>(a.size());
    }
    const dda::Geometry g = makeDdaGeometry(c.grid);
    dda::Start<double> s;
    if (!dda::setupRay(g, makeDdaRay(c.ray), s)) continue;
    auto none = [](int, int, int, double) {};
    const dda::Stats sc = dda::traverse<DdaVariant::Classic>(s, g.dims, none);
    const dda::Stats sn = dda::traverse<DdaVariant::BranchFree>(s, g.dims, none);
    EXPECT_EQ(sc.segments, sn.segments);
    EXPECT_GE(sc.iterations, sn.iterations);
    extraClassicIterations += sc.iterations - sn.iterations;
  }
  EXPECT_GT(segments, 100000);
  // The tie rays must really exercise edge/corner steps, where the classic form iterates more.
  EXPECT_GT(extraClassicIterations, 1000);
}
