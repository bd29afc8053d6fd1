#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "core/reorient.hpp"

using namespace penumbra;

namespace {

Mat3 fromColumns(std::array<double, 9> colMajor) {
  return Mat3::fromColumns({colMajor[0], colMajor[1], colMajor[2]},
                           {colMajor[3], colMajor[4], colMajor[5]},
                           {colMajor[6], colMajor[7], colMajor[8]});
}

struct NamedDirection {
  const char* name;
  Mat3 direction;
};

/// Directions of axis-aligned series the importer accepts (columns: i, j, k in LPS), plus
/// permutations that swap index axes (sagittal/coronal acquisitions).
std::vector<NamedDirection> signedPermutations() {
  return {
      {"identity (HFS)", fromColumns({1, 0, 0, 0, 1, 0, 0, 0, 1})},
      {"feet-first supine [-1,0,0,0,1,0]", fromColumns({-1, 0, 0, 0, 1, 0, 0, 0, -1})},
      {"head-first prone [-1,0,0,0,-1,0]", fromColumns({-1, 0, 0, 0, -1, 0, 0, 0, 1})},
      {"feet-first prone [1,0,0,0,-1,0]", fromColumns({1, 0, 0, 0, -1, 0, 0, 0, -1})},
      {"sagittal [0,1,0,0,0,-1]", fromColumns({0, 1, 0, 0, 0, -1, -1, 0, 0})},
      {"coronal [1,0,0,0,0,-1]", fromColumns({1, 0, 0, 0, 0, -1, 0, 1, 0})},
      {"decubitus [0,-1,0,1,0,0]", fromColumns({0, -1, 0, 1, 0, 0, 0, 0, 1})},
  };
}

Volume<std::int16_t> randomVolume(const Mat3& direction, std::mt19937& rng) {
  Grid g;
  g.dims = {5, 4, 3};  // all different, so a wrong permutation cannot go unnoticed
  g.spacing = {0.75, 1.5, 2.5};
  g.origin = {-12.5, 33.0, 101.25};
  g.direction = direction;
  Volume<std::int16_t> v(g);
  std::uniform_int_distribution<int> hu(-1024, 3000);
  for (auto& x : v.data) x = std::int16_t(hu(rng));
  return v;
}

}  // namespace

TEST(Reorient, EveryVoxelKeepsItsLpsPositionAndValue) {
  std::mt19937 rng(20261121);
  for (const auto& d : signedPermutations()) {
    SCOPED_TRACE(d.name);
    const auto src = randomVolume(d.direction, rng);
    const auto dst = reorientToIdentity(src);
    EXPECT_TRUE(dst.grid.isAxisAligned(0));
    ASSERT_EQ(dst.data.size(), src.data.size());
    ASSERT_EQ(dst.grid.voxelCount(), src.grid.voxelCount());
    const auto& n = src.grid.dims;
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) {
          const Vec3 p = src.grid.indexToWorld({double(i), double(j), double(k)});
          const Vec3 c = dst.grid.worldToIndex(p);
          std::array<int, 3> ijk{};
          ASSERT_TRUE(dst.grid.worldToNearestIndex(p, ijk)) << i << " " << j << " " << k;
          for (int a = 0; a < 3; ++a) ASSERT_NEAR(c[a], ijk[a], 1e-9);  // lands on a voxel centre
          const Vec3 q = dst.grid.indexToWorld({double(ijk[0]), double(ijk[1]), double(ijk[2])});
          for (int a = 0; a < 3; ++a) ASSERT_NEAR(q[a], p[a], 1e-9);
          ASSERT_EQ(dst.at(ijk[0], ijk[1], ijk[2]), src.at(i, j, k)) << i << " " << j << " " << k;
        }
  }
}

TEST(Reorient, IdentityGridCoversTheSameBoxWithPositiveAxes) {
  std::mt19937 rng(7);
  for (const auto& d : signedPermutations()) {
    SCOPED_TRACE(d.name);
    const auto src = randomVolume(d.direction, rng);
    const auto dst = reorientToIdentity(src);
    Vec3 lo0, hi0, lo1, hi1;
    src.grid.worldBounds(lo0, hi0);
    dst.grid.worldBounds(lo1, hi1);
    for (int a = 0; a < 3; ++a) {
      EXPECT_NEAR(lo0[a], lo1[a], 1e-9);
      EXPECT_NEAR(hi0[a], hi1[a], 1e-9);
      EXPECT_GT(dst.grid.spacing[a], 0);
    }
    // The origin is the corner voxel with the smallest x, y and z.
    EXPECT_NEAR(dst.grid.origin.x, lo0.x + dst.grid.spacing.x / 2, 1e-9);
    EXPECT_NEAR(dst.grid.origin.y, lo0.y + dst.grid.spacing.y / 2, 1e-9);
    EXPECT_NEAR(dst.grid.origin.z, lo0.z + dst.grid.spacing.z / 2, 1e-9);
  }
}

TEST(Reorient, FeetFirstSupineMapsFirstSliceToTheTop) {
  // FFS: i runs to patient right (-x), slices are stacked towards the feet (-z).
  Grid g;
  g.dims = {2, 1, 3};
  g.origin = {10, 0, 50};
  g.direction = fromColumns({-1, 0, 0, 0, 1, 0, 0, 0, -1});
  Mask m(g);
  m.at(0, 0, 0) = 1;  // x = 10, z = 50: patient-left-most voxel of the most superior slice
  const Mask r = reorientToIdentity(m);
  EXPECT_DOUBLE_EQ(r.grid.origin.x, 9);
  EXPECT_DOUBLE_EQ(r.grid.origin.z, 48);
  EXPECT_EQ(r.at(1, 0, 2), 1);
  EXPECT_EQ(r.at(0, 0, 0), 0);
}

TEST(Reorient, RecognisesSignedPermutationsOnly) {
  AxisPermutation p;
  EXPECT_TRUE(signedPermutationOf(fromColumns({0, 0, -1, 1, 0, 0, 0, 1, 0}), p));
  EXPECT_EQ(p.lpsAxis, (std::array<int, 3>{2, 0, 1}));
  EXPECT_EQ(p.sign, (std::array<int, 3>{-1, 1, 1}));
  EXPECT_TRUE(signedPermutationOf(Mat3{}, p));
  EXPECT_TRUE(p.isIdentity());
  // Two index axes along the same LPS axis, and a rotation: not permutations.
  EXPECT_FALSE(signedPermutationOf(fromColumns({1, 0, 0, -1, 0, 0, 0, 0, 1}), p));
  const double c = std::cos(0.3), s = std::sin(0.3);
  const Mat3 rot = fromColumns({c, s, 0, -s, c, 0, 0, 0, 1});
  EXPECT_FALSE(signedPermutationOf(rot, p));

  Grid g;
  g.dims = {2, 2, 2};
  g.direction = rot;
  const Volume<float> oblique(g, 1.0f);
  try {
    (void)reorientToIdentity(oblique);
    FAIL() << "an oblique grid must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  }
}
