// countGatherLines (gather_lines.hpp): the x lines and sectors of a warp's gathers, on rows whose
// answer is known by hand, against a direct count of sliced_offset8's slices (32 consecutive
// entries of a row) on seeded random matrices, and the invariants of multi-row slices.
#include "spmv/gather_lines.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "spmv_test_matrices.hpp"
#include "spmv_test_support.hpp"

namespace penumbra::spmv {
namespace {

using namespace spmv::test;

std::vector<std::int32_t> columns(int n, int first, int stride) {
  std::vector<std::int32_t> c(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) c[std::size_t(i)] = first + i * stride;
  return c;
}

TEST(SpmvGatherLines, RowsCountedByHand) {
  // 32 neighbouring doubles: 256 B, 2 lines of 128 B, 8 sectors of 32 B.
  GatherLines g = countGatherLines(fromRows(64, {columns(32, 0, 1)}), 1);
  EXPECT_EQ(g.slices, 1);
  EXPECT_EQ(g.entries, 32);
  EXPECT_EQ(g.lines, 2.0);
  EXPECT_EQ(g.sectors, 8.0);
  EXPECT_EQ(g.fill(), 1.0);
  // Every 4th double: a sector each, 4 entries a line.
  g = countGatherLines(fromRows(200, {columns(32, 0, 4)}), 1);
  EXPECT_EQ(g.lines, 8.0);
  EXPECT_EQ(g.sectors, 32.0);
  // Every 16th (128 B apart), starting mid-line at column 8: still a line and a sector each.
  g = countGatherLines(fromRows(1000, {columns(32, 8, 16)}), 1);
  EXPECT_EQ(g.lines, 32.0);
  EXPECT_EQ(g.sectors, 32.0);
  // 40 entries: a slice of 32 (2 lines) and one of 8 (columns 32..39: 1 line, 2 sectors).
  g = countGatherLines(fromRows(64, {columns(40, 0, 1)}), 1);
  EXPECT_EQ(g.slices, 2);
  EXPECT_EQ(g.lines, 3.0);
  EXPECT_EQ(g.sectors, 10.0);
  EXPECT_DOUBLE_EQ(g.fill(), 40.0 / 64.0);
}

TEST(SpmvGatherLines, NeighbouringRowsShareTheirLines) {
  // Two equal rows of 32 neighbouring columns: one row a slice gathers each line twice; two rows
  // a slice take columns 0..15 of both (one line, 4 sectors), then 16..31.
  const HalfCsr twin = fromRows(64, {columns(32, 0, 1), columns(32, 0, 1)});
  const GatherLines one = countGatherLines(twin, 1), two = countGatherLines(twin, 2);
  EXPECT_EQ(one.linesPer32(), 2.0);
  EXPECT_EQ(one.sectorsPer32(), 8.0);
  EXPECT_EQ(two.slices, 2);
  EXPECT_EQ(two.linesPer32(), 1.0);
  EXPECT_EQ(two.sectorsPer32(), 4.0);
  EXPECT_EQ(two.fill(), 1.0);
  // Rows far apart share nothing: each slice holds one row's 16 entries (half full), a line each.
  const GatherLines apart =
      countGatherLines(fromRows(2000, {columns(16, 0, 1), columns(16, 1024, 1)}), 2);
  EXPECT_EQ(apart.slices, 2);
  EXPECT_EQ(apart.fill(), 0.5);
  EXPECT_EQ(apart.lines, 2.0);
  // An empty row beside a full one, and a last group with fewer rows than a slice holds.
  const GatherLines odd =
      countGatherLines(fromRows(64, {{}, columns(20, 0, 1), columns(3, 0, 1)}), 2);
  EXPECT_EQ(odd.entries, 23);
  EXPECT_EQ(odd.slices, 3);
  EXPECT_THROW(countGatherLines(twin, 3), Error);
  EXPECT_THROW(countGatherLines(twin, 0), Error);
}

/// sliced_offset8's slices counted directly: 32 consecutive entries of a row.
GatherLines directOneRow(const HalfCsr& m) {
  GatherLines g;
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (std::int64_t e = m.rowPtr[std::size_t(r)]; e < m.rowPtr[std::size_t(r) + 1]; e += 32) {
      std::set<std::int64_t> lines, sectors;
      const std::int64_t end = std::min(e + 32, m.rowPtr[std::size_t(r) + 1]);
      for (std::int64_t k = e; k < end; ++k) {
        lines.insert(8 * std::int64_t(m.colIdx[std::size_t(k)]) / 128);
        sectors.insert(8 * std::int64_t(m.colIdx[std::size_t(k)]) / 32);
      }
      ++g.slices;
      g.entries += end - e;
      g.lines += double(lines.size());
      g.sectors += double(sectors.size());
    }
  return g;
}

TEST(SpmvGatherLines, SeededRandomMatrices) {
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const HalfCsr a = randomCsr(700, 5000 + 300 * seed, 400, seed);
    for (const HalfCsr& m : {a, transpose(a)}) {
      const GatherLines direct = directOneRow(m), one = countGatherLines(m, 1, 3);
      EXPECT_EQ(one.slices, direct.slices) << seed;
      EXPECT_EQ(one.entries, direct.entries) << seed;
      EXPECT_EQ(one.lines, direct.lines) << seed;
      EXPECT_EQ(one.sectors, direct.sectors) << seed;
      for (int r : {2, 4, 32}) {
        const GatherLines g = countGatherLines(m, r, 3), g1 = countGatherLines(m, r, 1);
        EXPECT_EQ(g.entries, m.nnz()) << seed << " " << r;
        EXPECT_LE(g.fill(), 1.0);
        EXPECT_LE(g.lines, g.sectors);
        EXPECT_LE(g.sectors, double(g.entries));
        EXPECT_GE(32.0 * double(g.slices), double(m.nnz()));
        EXPECT_EQ(g.slices, g1.slices) << "threads change the count";
        EXPECT_EQ(g.sectors, g1.sectors) << "threads change the count";
      }
    }
  }
}

}  // namespace
}  // namespace penumbra::spmv
