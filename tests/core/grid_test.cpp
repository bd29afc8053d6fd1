#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/grid.hpp"
#include "core/volume.hpp"

using namespace penumbra;

namespace {
Grid obliqueGrid() {
  Grid g;
  g.dims = {7, 5, 3};
  g.spacing = {0.8, 1.25, 2.5};
  g.origin = {-10, 20, 35};
  // rotation of 30 degrees about z, then 10 degrees about x: orthonormal, not axis aligned
  const double a = M_PI / 6, b = M_PI / 18;
  const Vec3 c0{std::cos(a), std::sin(a), 0};
  const Vec3 c1{-std::sin(a) * std::cos(b), std::cos(a) * std::cos(b), std::sin(b)};
  g.direction = Mat3::fromColumns(c0, c1, cross(c0, c1));
  return g;
}
}  // namespace

TEST(Grid, IdentityIndexToWorldUsesSpacingAndOrigin) {
  Grid g;
  g.dims = {160, 160, 160};
  g.spacing = {3, 3, 3};
  g.origin = {-240, -240, -240};
  const Vec3 w = g.indexToWorld({159, 0, 80});
  EXPECT_DOUBLE_EQ(w.x, 237);
  EXPECT_DOUBLE_EQ(w.y, -240);
  EXPECT_DOUBLE_EQ(w.z, 0);
  EXPECT_EQ(g.voxelCount(), 160u * 160u * 160u);
  EXPECT_TRUE(g.isAxisAligned());
}

TEST(Grid, DirectionCosinesRoundTripOnRandomPoints) {
  const Grid g = obliqueGrid();
  ASSERT_TRUE(g.isOrthonormal());
  EXPECT_FALSE(g.isAxisAligned());
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> u(-50, 50);
  for (int n = 0; n < 1000; ++n) {
    const Vec3 ijk{u(rng), u(rng), u(rng)};
    const Vec3 back = g.worldToIndex(g.indexToWorld(ijk));
    EXPECT_NEAR(back.x, ijk.x, 1e-9);
    EXPECT_NEAR(back.y, ijk.y, 1e-9);
    EXPECT_NEAR(back.z, ijk.z, 1e-9);
  }
}

TEST(Grid, StepAlongIndexAxisFollowsDirectionColumn) {
  const Grid g = obliqueGrid();
  for (int axis = 0; axis < 3; ++axis) {
    Vec3 e{0, 0, 0};
    e[axis] = 1;
    const Vec3 step = g.indexToWorld(e) - g.indexToWorld({0, 0, 0});
    const Vec3 expected = g.direction.column(axis) * g.spacing[axis];
    EXPECT_NEAR(norm(step - expected), 0, 1e-12) << "axis " << axis;
  }
  EXPECT_NEAR(norm(g.sliceNormal() - g.direction.column(2)), 0, 1e-15);
}

TEST(Grid, NearestIndexRejectsOutside) {
  Grid g;
  g.dims = {4, 4, 4};
  std::array<int, 3> ijk{};
  EXPECT_TRUE(g.worldToNearestIndex({3.4, 0.0, 1.6}, ijk));
  EXPECT_EQ(ijk[0], 3);
  EXPECT_EQ(ijk[2], 2);
  EXPECT_FALSE(g.worldToNearestIndex({3.6, 0, 0}, ijk));
  EXPECT_FALSE(g.worldToNearestIndex({-0.6, 0, 0}, ijk));
}

TEST(Grid, WorldBoundsIncludeHalfVoxel) {
  Grid g;
  g.dims = {10, 20, 5};
  g.spacing = {1, 2, 3};
  g.origin = {0, 0, 0};
  Vec3 lo, hi;
  g.worldBounds(lo, hi);
  EXPECT_DOUBLE_EQ(lo.x, -0.5);
  EXPECT_DOUBLE_EQ(hi.y, 39.0);
  EXPECT_DOUBLE_EQ(hi.z, 13.5);
}

TEST(Volume, LinearIndexIsXFastest) {
  Grid g;
  g.dims = {3, 4, 5};
  Volume<int> v(g, 0);
  v.at(2, 1, 3) = 42;
  EXPECT_EQ(v.data[2 + 3 * (1 + 4 * 3)], 42);
  v.data.pop_back();
  EXPECT_THROW(v.validate(), Error);
}
