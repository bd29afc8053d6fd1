// Transport lattices (engines/photon/transport_lattice.hpp): the properties the collapsed-cone
// transport and its energy bookkeeping rest on, checked on every voxel for many directions:
// the lines of one direction cross each voxel with path lengths adding to one slice chord, the
// slice slots are 0..2 and unique per voxel, both DDA variants report the same segments bit for
// bit, and the lines outside the offset range never meet the volume.
#include "photon/transport_lattice.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "core/grid.hpp"

namespace penumbra::photon {
namespace {

struct Seg {
  long long lin;
  double len;
  int slot;
  bool operator==(const Seg& o) const { return lin == o.lin && len == o.len && slot == o.slot; }
};

template <DdaVariant V, typename T>
std::vector<Seg> walk(const TransportLattice& L, const dda::Start<T>& s, int o0, int o1) {
  std::vector<Seg> out;
  auto visit = [&](long long lin, T len, int slot) { out.push_back({lin, double(len), slot}); };
  walkLine<V>(L, s, o0, o1, visit);
  return out;
}

/// Anisotropic grid, optionally with a rotated direction matrix (orthonormal).
Grid testGrid(bool rotated) {
  Grid g;
  g.dims = {17, 23, 13};
  g.spacing = {2.5, 3.0, 2.0};
  g.origin = {-20, 7, 3};
  if (rotated) {
    const double a = 0.3, b = -0.2;
    const Vec3 c0{std::cos(a), std::sin(a), 0};
    const Vec3 c1{-std::sin(a) * std::cos(b), std::cos(a) * std::cos(b), std::sin(b)};
    g.direction = Mat3::fromColumns(c0, c1, cross(c0, c1));
  }
  return g;
}

std::vector<Vec3> testDirections() {
  std::vector<Vec3> dirs = {{1, 0, 0},  {0, 0, -1},     {1, 1, 0},   {1, 1, 1},
                            {-1, 2, 0}, {0.3, -0.2, 5}, {-1, -1, -1}};
  std::mt19937 rng(20240607);
  std::normal_distribution<double> n;
  for (int i = 0; i < 40; ++i) dirs.push_back({n(rng), n(rng), n(rng)});
  return dirs;
}

class LatticeOnGrid : public ::testing::TestWithParam<bool> {};

TEST_P(LatticeOnGrid, LinesTileEveryVoxelOnceWithOneSliceChord) {
  const Grid g = testGrid(GetParam());
  for (const Vec3& d : testDirections()) {
    SCOPED_TRACE("direction " + std::to_string(d.x) + " " + std::to_string(d.y) + " " +
                 std::to_string(d.z));
    const TransportLattice L = makeLattice(g, d);
    EXPECT_NEAR(L.sliceChordMm * L.crossSectionMm2, g.voxelVolumeMm3(), 1e-9);
    dda::Start<double> s;
    ASSERT_TRUE(lineStart(L, s));
    std::vector<double> chord(g.voxelCount(), 0.0);
    std::vector<int> slotUse(3 * g.voxelCount(), 0);
    int maxSlot = 0;
    for (long long li = 0; li < L.lineCount(); ++li) {
      int o0 = 0, o1 = 0;
      L.lineOffsets(li, o0, o1);
      const auto classic = walk<DdaVariant::Classic>(L, s, o0, o1);
      const auto branchFree = walk<DdaVariant::BranchFree>(L, s, o0, o1);
      ASSERT_EQ(classic, branchFree) << "line " << o0 << ", " << o1;
      for (const Seg& q : classic) {
        ASSERT_GE(q.lin, 0);
        ASSERT_LT(q.lin, (long long)g.voxelCount());
        chord[std::size_t(q.lin)] += q.len;
        maxSlot = std::max(maxSlot, q.slot);
        ASSERT_LT(q.slot, kMaxSliceSlots);
        ++slotUse[std::size_t(q.slot) * g.voxelCount() + std::size_t(q.lin)];
      }
    }
    EXPECT_LE(maxSlot, 2);
    double worst = 0;
    for (double c : chord) worst = std::max(worst, std::abs(c - L.sliceChordMm) / L.sliceChordMm);
    EXPECT_LT(worst, 1e-12) << "summed path length per voxel differs from the slice chord";
    for (int u : slotUse) ASSERT_LE(u, 1) << "two lines wrote the same (slot, voxel)";
  }
}

TEST_P(LatticeOnGrid, LinesOutsideTheOffsetRangeMissTheVolume) {
  const Grid g = testGrid(GetParam());
  for (const Vec3& d : testDirections()) {
    const TransportLattice L = makeLattice(g, d);
    dda::Start<double> s;
    ASSERT_TRUE(lineStart(L, s));
    for (int o0 = L.off0Lo - 3; o0 < L.off0Hi + 3; ++o0)
      for (int o1 = L.off1Lo - 3; o1 < L.off1Hi + 3; ++o1) {
        const bool inside = o0 >= L.off0Lo && o0 < L.off0Hi && o1 >= L.off1Lo && o1 < L.off1Hi;
        if (!inside) {
          EXPECT_TRUE((walk<DdaVariant::BranchFree>(L, s, o0, o1).empty()));
        }
      }
  }
}

TEST_P(LatticeOnGrid, FloatWalkKeepsTheSlotsAndTheChordToFloatRounding) {
  const Grid g = testGrid(GetParam());
  for (const Vec3& d : testDirections()) {
    const TransportLattice L = makeLattice(g, d);
    dda::Start<float> s;
    ASSERT_TRUE(lineStart(L, s));
    std::vector<double> chord(g.voxelCount(), 0.0);
    for (long long li = 0; li < L.lineCount(); ++li) {
      int o0 = 0, o1 = 0;
      L.lineOffsets(li, o0, o1);
      const auto classic = walk<DdaVariant::Classic>(L, s, o0, o1);
      ASSERT_EQ(classic, (walk<DdaVariant::BranchFree>(L, s, o0, o1)));
      for (const Seg& q : classic) {
        ASSERT_LT(q.slot, kMaxSliceSlots);
        chord[std::size_t(q.lin)] += q.len;
      }
    }
    for (double c : chord) ASSERT_NEAR(c, L.sliceChordMm, 1e-4 * L.sliceChordMm);
  }
}

INSTANTIATE_TEST_SUITE_P(AxisAlignedAndRotated, LatticeOnGrid, ::testing::Values(false, true));

TEST(TransportLattice, AxisParallelLinesAreVoxelColumns) {
  Grid g;
  g.dims = {4, 5, 6};
  g.spacing = {2, 3, 4};
  const TransportLattice L = makeLattice(g, Vec3{0, 0, -1});
  EXPECT_EQ(L.dominant, 2);
  EXPECT_EQ(L.lateral0, 0);
  EXPECT_EQ(L.lateral1, 1);
  EXPECT_DOUBLE_EQ(L.sliceChordMm, 4.0);
  dda::Start<double> s;
  ASSERT_TRUE(lineStart(L, s));
  const auto segs = walk<DdaVariant::Classic>(L, s, 2 - s.voxel[1], 3 - s.voxel[2]);
  ASSERT_EQ(segs.size(), 6u);
  for (int k = 0; k < 6; ++k) {  // from the top slice down
    EXPECT_EQ(segs[std::size_t(k)].lin, (long long)g.linearIndex(2, 3, 5 - k));
    EXPECT_DOUBLE_EQ(segs[std::size_t(k)].len, 4.0);
    EXPECT_EQ(segs[std::size_t(k)].slot, 0);
  }
}

TEST(TransportLattice, RejectsBadInput) {
  Grid g;
  g.dims = {4, 4, 4};
  EXPECT_THROW(makeLattice(g, Vec3{0, 0, 0}), Error);
  EXPECT_THROW(makeLattice(g, Vec3{std::nan(""), 0, 1}), Error);
  g.spacing = {1, 0, 1};
  EXPECT_THROW(makeLattice(g, Vec3{0, 0, 1}), Error);
}

}  // namespace
}  // namespace penumbra::photon
