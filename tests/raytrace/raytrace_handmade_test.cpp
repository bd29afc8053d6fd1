// Hand-checkable cases of the DDA ray tracer: exact voxel sequences and lengths for rays along
// axes, through edges and corners, starting inside, cut by tMax, missing the grid, and the
// radiological path through uniform and two-density phantoms. Every case runs both variants
// and both precisions.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "ray_test_support.hpp"

using namespace penumbra;
using namespace penumbra::test;

namespace {

constexpr DdaPrecision kPrecisions[] = {DdaPrecision::Double, DdaPrecision::Float};

std::vector<VoxelSegment> expectSameForAll(const Grid& g, const Ray& r) {
  // Double: both variants bit for bit. Float: the same voxels, lengths to float rounding.
  const auto ref = traceRay(g, r, DdaVariant::Classic, DdaPrecision::Double);
  for (DdaVariant v : kVariants) {
    EXPECT_EQ(traceRay(g, r, v, DdaPrecision::Double), ref) << toString(v) << "\n"
                                                            << describe(g, r);
    const auto f = traceRay(g, r, v, DdaPrecision::Float);
    std::string why;
    EXPECT_TRUE(sameWithin(f, ref, 1e-5, &why)) << toString(v) << " float: " << why;
  }
  return ref;
}

}  // namespace

TEST(RaytraceHandmade, AlongXThrough4x3x2GridVisitsFourVoxelsOfSpacingLength) {
  const Grid g = makeGrid(4, 3, 2, {2, 3, 4}, {10, 20, 30});
  const Ray r{g.indexToWorld({-3, 1, 1}), {1, 0, 0}};
  for (DdaVariant v : kVariants)
    for (DdaPrecision p : kPrecisions) {
      const auto s = traceRay(g, r, v, p);
      ASSERT_EQ(s.size(), 4u) << toString(v) << " " << toString(p);
      for (int n = 0; n < 4; ++n) {
        EXPECT_EQ(s[n].i, n);
        EXPECT_EQ(s[n].j, 1);
        EXPECT_EQ(s[n].k, 1);
        EXPECT_EQ(s[n].lengthMm, 2.0);  // every operation on these numbers is exact
      }
    }
}

TEST(RaytraceHandmade, AxisParallelRaysInBothSensesVisitARowOfFullVoxels) {
  const Grid g = makeGrid(5, 4, 3, {1.5, 2.5, 4}, {-7, 3, 11});
  for (int axis = 0; axis < 3; ++axis)
    for (double sense : {1.0, -1.0}) {
      Vec3 start{2, 1, 1};
      start[axis] = sense > 0 ? -2.0 : g.dims[axis] + 1.0;
      Vec3 dir{0, 0, 0};
      dir[axis] = sense * 7.0;  // any length
      const Ray r{g.indexToWorld(start), dir};
      const auto s = expectSameForAll(g, r);
      ASSERT_EQ(int(s.size()), g.dims[axis]) << "axis " << axis;
      for (int n = 0; n < g.dims[axis]; ++n) {
        const int expectIdx = sense > 0 ? n : g.dims[axis] - 1 - n;
        const int got[3] = {s[n].i, s[n].j, s[n].k};
        EXPECT_EQ(got[axis], expectIdx);
        EXPECT_NEAR(s[n].lengthMm, g.spacing[axis], 1e-12);
      }
      EXPECT_NEAR(totalLength(s), g.dims[axis] * g.spacing[axis], 1e-12);
    }
}

TEST(RaytraceHandmade, DiagonalThroughCornersStepsOnceAtEachCorner) {
  const Grid g = makeGrid(4, 4, 4, {1, 1, 1});
  const Ray r{{-1.5, -1.5, -1.5}, {1, 1, 1}};  // through the corners (n+0.5, n+0.5, n+0.5)
  for (DdaVariant v : kVariants)
    for (DdaPrecision p : kPrecisions) {
      const auto s = traceRay(g, r, v, p);
      ASSERT_EQ(s.size(), 4u) << toString(v) << " " << toString(p) << "\n" << describe(s);
      for (int n = 0; n < 4; ++n) {
        EXPECT_EQ(s[n].i, n);
        EXPECT_EQ(s[n].j, n);
        EXPECT_EQ(s[n].k, n);
        EXPECT_NEAR(s[n].lengthMm, std::sqrt(3.0), p == DdaPrecision::Double ? 1e-12 : 1e-6);
      }
    }
  // The classic form takes three iterations per corner (two of zero length), DDA-nc one.
  const dda::Geometry geo = makeDdaGeometry(g);
  dda::Start<double> st;
  ASSERT_TRUE(dda::setupRay(geo, makeDdaRay(r), st));
  auto none = [](int, int, int, double) {};
  const dda::Stats classic = dda::traverse<DdaVariant::Classic>(st, geo.dims, none);
  const dda::Stats nc = dda::traverse<DdaVariant::BranchFree>(st, geo.dims, none);
  EXPECT_EQ(classic.segments, 4);
  EXPECT_EQ(nc.segments, 4);
  EXPECT_EQ(classic.iterations - nc.iterations, 6);
}

TEST(RaytraceHandmade, InPlaneDiagonalThroughEdgesVisitsTheDiagonalVoxelsOnly) {
  const Grid g = makeGrid(4, 4, 2, {1, 1, 1});
  const Ray r{{-0.5, -0.5, 1}, {1, 1, 0}};  // starts on the grid's corner edge, z at centres
  const auto s = expectSameForAll(g, r);
  ASSERT_EQ(s.size(), 4u) << describe(s);
  for (int n = 0; n < 4; ++n) {
    EXPECT_EQ(s[n].i, n);
    EXPECT_EQ(s[n].j, n);
    EXPECT_EQ(s[n].k, 1);
    EXPECT_NEAR(s[n].lengthMm, std::sqrt(2.0), 1e-12);
  }
  EXPECT_EQ(traceRay(g, r, DdaVariant::Classic, DdaPrecision::Float).size(), 4u);
}

TEST(RaytraceHandmade, RayStartingInsideCountsOnlyThePartAhead) {
  const Grid g = makeGrid(4, 3, 2, {2, 3, 4});
  const Ray r{g.indexToWorld({1.25, 1, 0}), {1, 0, 0}};
  const auto s = expectSameForAll(g, r);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].i, 1);
  EXPECT_DOUBLE_EQ(s[0].lengthMm, 0.5);  // from index 1.25 to 1.5, 2 mm voxels
  EXPECT_DOUBLE_EQ(s[1].lengthMm, 2.0);
  EXPECT_DOUBLE_EQ(s[2].lengthMm, 2.0);
  EXPECT_EQ(s[2].i, 3);
}

TEST(RaytraceHandmade, TMaxEndsTheRayInsideAVoxel) {
  const Grid g = makeGrid(4, 3, 2, {2, 3, 4});
  Ray r{g.indexToWorld({-3, 1, 1}), {1, 0, 0}};
  r.tMax = 5.0 + 3.0;  // entry after 5 mm, then 3 mm: all of voxel 0, half of voxel 1
  const auto s = expectSameForAll(g, r);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_DOUBLE_EQ(s[0].lengthMm, 2.0);
  EXPECT_DOUBLE_EQ(s[1].lengthMm, 1.0);
  r.tMax = 4.0;  // ends before the grid
  EXPECT_TRUE(traceRay(g, r, DdaVariant::BranchFree).empty());
}

TEST(RaytraceHandmade, RaysMissingTheGridVisitNothing) {
  const Grid g = makeGrid(4, 3, 2, {2, 3, 4});
  Volume<float> dens(g, 1.0f);
  const std::vector<Ray> misses = {
      {g.indexToWorld({-3, 5, 1}), {1, 0, 0}},      // parallel to x, beside the grid
      {g.indexToWorld({-3, 1, 1}), {-1, 0, 0}},     // pointing away
      {g.indexToWorld({-3, -3, 1}), {1, -0.2, 0}},  // oblique, passing below
      {g.indexToWorld({-3, 2.5, 1}), {1, 0, 0}},  // grazing the far y face (outside by convention)
  };
  for (const Ray& r : misses)
    for (DdaVariant v : kVariants)
      for (DdaPrecision p : kPrecisions) {
        EXPECT_TRUE(traceRay(g, r, v, p).empty()) << describe(g, r);
        EXPECT_TRUE(siddonReference(g, r).empty()) << describe(g, r);
        EXPECT_EQ(radiologicalPath(dens, r, v, p), 0.0);
      }
  // Grazing the near y face belongs to the first row, like the reference's midpoint rule.
  const Ray graze{g.indexToWorld({-3, -0.5, 1}), {1, 0, 0}};
  const auto s = expectSameForAll(g, graze);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].j, 0);
  EXPECT_EQ(s, siddonReference(g, graze));
}

TEST(RaytraceHandmade, RotatedGridIsTraversedAlongItsOwnAxes) {
  Grid g = makeGrid(5, 2, 2, {2, 1, 1}, {100, -50, 0});
  // Index axis i points along patient +y, j along patient -x.
  g.direction = Mat3::fromColumns({0, 1, 0}, {-1, 0, 0}, {0, 0, 1});
  const Ray r{g.indexToWorld({-1, 1, 0}), {0, 1, 0}};
  const auto s = expectSameForAll(g, r);
  ASSERT_EQ(s.size(), 5u);
  for (int n = 0; n < 5; ++n) {
    EXPECT_EQ(s[n].i, n);
    EXPECT_EQ(s[n].j, 1);
    EXPECT_NEAR(s[n].lengthMm, 2.0, 1e-12);
  }
}

TEST(RaytraceHandmade, InvalidInputIsRejectedWithInvalidArgument) {
  const Grid g = makeGrid(4, 3, 2, {2, 3, 4});
  auto code = [&](const Grid& grid, const Ray& r) {
    try {
      traceRay(grid, r, DdaVariant::Classic);
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::Internal;
  };
  EXPECT_EQ(code(g, {{0, 0, 0}, {0, 0, 0}}), ErrorCode::InvalidArgument);
  EXPECT_EQ(code(g, {{NAN, 0, 0}, {1, 0, 0}}), ErrorCode::InvalidArgument);
  EXPECT_EQ(code(g, {{0, 0, 0}, {1, 0, 0}, 0.0}), ErrorCode::InvalidArgument);
  EXPECT_EQ(code(g, {{0, 0, 0}, {1, 0, 0}, NAN}), ErrorCode::InvalidArgument);
  Grid bad = g;
  bad.spacing.y = 0;
  EXPECT_EQ(code(bad, {{0, 0, 0}, {1, 0, 0}}), ErrorCode::InvalidArgument);
  bad = g;
  bad.direction.m[0][1] = 0.5;
  EXPECT_EQ(code(bad, {{0, 0, 0}, {1, 0, 0}}), ErrorCode::InvalidArgument);
  EXPECT_TRUE(traceRay(makeGrid(0, 3, 2, {1, 1, 1}), {{0, 0, 0}, {1, 0, 0}}, DdaVariant::BranchFree)
                  .empty());
  EXPECT_EQ(parseDdaVariant("DDA-nc"), DdaVariant::BranchFree);
  EXPECT_EQ(parseDdaVariant("classic"), DdaVariant::Classic);
  EXPECT_STREQ(toString(DdaVariant::BranchFree), "dda-nc");
  EXPECT_THROW(parseDdaVariant("fast"), Error);
}
