#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/rasterize.hpp"

using namespace penumbra;

namespace {
Contour rect(double x0, double y0, double x1, double y1, double z) {
  return Contour{{{x0, y0, z}, {x1, y0, z}, {x1, y1, z}, {x0, y1, z}}};
}
std::size_t count(const Mask& m) {
  return std::accumulate(m.data.begin(), m.data.end(), std::size_t(0));
}
Grid grid(std::array<int, 3> dims, Vec3 spacing, Vec3 origin) {
  Grid g;
  g.dims = dims;
  g.spacing = spacing;
  g.origin = origin;
  return g;
}
}  // namespace

TEST(Rasterize, VoxelEdgeSquareFillsExactVoxels) {
  const Grid g = grid({20, 20, 3}, {1, 1, 2}, {0, 0, 0});
  // voxel-edge outline around i=5..9, j=3..10 on slice k=1 (z = 2)
  const Mask m = rasterizeContours({rect(4.5, 2.5, 9.5, 10.5, 2.0)}, g);
  EXPECT_EQ(count(m), 5u * 8u);
  EXPECT_EQ(m.at(5, 3, 1), 1);
  EXPECT_EQ(m.at(9, 10, 1), 1);
  EXPECT_EQ(m.at(4, 3, 1), 0);
  EXPECT_EQ(m.at(5, 3, 0), 0);
}

TEST(Rasterize, EvenOddMakesHoles) {
  const Grid g = grid({20, 20, 1}, {1, 1, 1}, {0, 0, 0});
  const Mask m =
      rasterizeContours({rect(1.5, 1.5, 11.5, 11.5, 0), rect(4.5, 4.5, 7.5, 7.5, 0)}, g);
  EXPECT_EQ(count(m), 100u - 9u);
  EXPECT_EQ(m.at(5, 5, 0), 0);
  EXPECT_EQ(m.at(2, 2, 0), 1);
}

TEST(Rasterize, NonSquarePixelsUseColumnAndRowSpacing) {
  // spacing x = 1.25 mm (columns), y = 0.5 mm (rows): a 10 mm x 4 mm rectangle covers 8 x 8
  const Grid g = grid({30, 20, 1}, {1.25, 0.5, 1}, {0, 0, 0});
  const Mask m = rasterizeContours({rect(0.625, 0.25, 10.625, 4.25, 0)}, g);
  EXPECT_EQ(count(m), 8u * 8u);
  EXPECT_DOUBLE_EQ(double(count(m)) * g.spacing.x * g.spacing.y, 10.0 * 4.0);
}

TEST(Rasterize, ContourOffSlicePlaneIsReported) {
  const Grid g = grid({10, 10, 2}, {1, 1, 3}, {0, 0, 0});
  RasterReport rep;
  const Mask m = rasterizeContours({rect(1.5, 1.5, 4.5, 4.5, 100.0), rect(1.5, 1.5, 4.5, 4.5, 3.0)},
                                   g, &rep);
  EXPECT_EQ(rep.contoursUsed, 1);
  EXPECT_EQ(rep.contoursOffGrid, 1);
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_EQ(count(m), 9u);
  EXPECT_EQ(m.at(2, 2, 1), 1);
}

TEST(Rasterize, DiamondMatchesPointInPolygonAtCentres) {
  // A polygon with slanted edges: every voxel centre's membership must equal the analytic
  // |x - 10| + |y - 10| < 6.3 test (no centre lies on the boundary).
  const Grid g = grid({21, 21, 1}, {1, 1, 1}, {0, 0, 0});
  const Contour diamond{{{16.3, 10, 0}, {10, 16.3, 0}, {3.7, 10, 0}, {10, 3.7, 0}}};
  const Mask m = rasterizeContours({diamond}, g);
  int mismatches = 0, inside = 0;
  for (int j = 0; j < 21; ++j)
    for (int i = 0; i < 21; ++i) {
      const bool expect = std::abs(i - 10.0) + std::abs(j - 10.0) < 6.3;
      inside += expect;
      mismatches += (m.at(i, j, 0) != 0) != expect;
    }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(inside, 60);
}

TEST(Rasterize, ObliqueGridUsesDirectionCosines) {
  // Grid rotated 90 degrees about z: index i runs along patient +y, j along patient -x.
  Grid g = grid({10, 10, 1}, {1, 1, 1}, {0, 0, 0});
  g.direction = Mat3::fromColumns({0, 1, 0}, {-1, 0, 0}, {0, 0, 1});
  // patient rectangle x in (-3.5,-0.5), y in (1.5, 5.5) -> j = -x in 1..3, i = y in 2..5
  const Mask m = rasterizeContours({rect(-3.5, 1.5, -0.5, 5.5, 0)}, g);
  EXPECT_EQ(count(m), 3u * 4u);
  EXPECT_EQ(m.at(2, 1, 0), 1);
  EXPECT_EQ(m.at(5, 3, 0), 1);
  EXPECT_EQ(m.at(1, 1, 0), 0);
}

// Found by fuzz_rtstruct: a contour at x = 1e300 mm from a malformed RT Structure Set reached
// int(std::floor(...)) (undefined behaviour; UBSan "4e+299 is outside the range of ... int").
// Points that are not finite or lie beyond kMaxContourIndex voxels now skip their contour.
TEST(Rasterize, HugeOrNonFiniteCoordinatesAreSkippedAndReported) {
  const Grid g = grid({10, 10, 2}, {1, 1, 3}, {0, 0, 0});
  const double nan = std::nan(""), inf = HUGE_VAL;
  RasterReport rep;
  const Mask m =
      rasterizeContours({rect(1.5, 1.5, 1e300, 4.5, 0.0), rect(1.5, 1.5, 4.5, 4.5, 1e300),
                         rect(-2e9, -2e9, 2e9, 2e9, 0.0), rect(nan, 1.5, 4.5, 4.5, 3.0),
                         rect(-inf, 1.5, inf, 4.5, 3.0), rect(1.5, 1.5, 4.5, 4.5, 3.0)},
                        g, &rep);
  EXPECT_EQ(rep.contoursOutOfRange, 5);
  EXPECT_EQ(rep.contoursUsed, 1);
  EXPECT_EQ(count(m), 9u);
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_NE(rep.warnings[0].find("5 contour(s) have points that are not finite"), std::string::npos)
      << rep.warnings[0];
}
