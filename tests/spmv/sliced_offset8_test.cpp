// SlicedOffset8 (engines/spmv/sliced_offset8.hpp) without a GPU: exact round trips of every matrix
// of the SpMV tests and of the awkward shapes at several task sizes; the layout's invariants
// (interleaving, padding, wide flags exactly where the span needs them, row ends, tasks, split
// rows); slices cut at 32 entries and at spans of 2^24; the CPU reference on the encoding equal to
// multiplyCpu bit for bit; thread-count independence; and the bytes per non-zero it stores.
#include "spmv/sliced_offset8.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "spmv/spmv.hpp"
#include "layout_round_trip.hpp"
#include "spmv_test_matrices.hpp"

namespace penumbra::spmv {
namespace {

using namespace spmv::test;
using S8 = SlicedOffset8;

/// Invariants of the layout that the kernel relies on.
void checkLayout(const S8& s, const HalfCsr& m, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(s.nChunks, (s.nSlices + 7) / 8);
  ASSERT_EQ(s.values.size(), std::size_t(s.nChunks * 256));
  ASSERT_EQ(s.offsetsLo.size(), std::size_t(s.nChunks * 256));
  ASSERT_EQ(s.headers.size(), std::size_t(s.nChunks * 8));
  ASSERT_EQ(s.chunkWideBase.size(), std::size_t(s.nChunks));
  ASSERT_EQ(s.high.size(), std::size_t(s.wideSlices * 32));
  std::int64_t wide = 0, ends = 0;
  for (std::int64_t k = 0; k < s.nChunks * 8; ++k) {
    const std::uint32_t h = s.headers[std::size_t(k)];
    if (k % 8 == 0) {
      ASSERT_EQ(s.chunkWideBase[std::size_t(k / 8)], std::uint32_t(wide)) << "chunk " << k / 8;
    }
    if (k >= s.nSlices) {  // padding slices of the last chunk
      ASSERT_EQ(h, 0u);
      for (int l = 0; l < 32; ++l) ASSERT_EQ(s.values[std::size_t(S8::at(k, l))], 0);
      continue;
    }
    std::uint32_t last = 0;
    bool padding = false;
    for (int l = 0; l < 32; ++l) {
      const std::size_t i = std::size_t(S8::at(k, l));
      const std::uint32_t off =
          s.offsetsLo[i] +
          ((h & S8::kWide) ? std::uint32_t(s.high[std::size_t(wide * 32 + l)]) << 8 : 0u);
      ASSERT_LT(off, 1u << 24);
      if (l > 0 && off == 0) padding = true;
      if (padding) {
        ASSERT_EQ(off, 0u) << "slice " << k << " position " << l;
        ASSERT_EQ(s.values[i], 0) << "slice " << k << " position " << l;
      } else {
        if (l > 0) {
          ASSERT_GT(off, last);
        }
        last = off;
      }
    }
    ASSERT_EQ((h & S8::kWide) != 0, last >= 256) << "slice " << k << ": wide flag and span";
    wide += (h & S8::kWide) != 0;
    ends += (h & S8::kLast) != 0;
  }
  ASSERT_EQ(wide, s.wideSlices);
  ASSERT_EQ(ends, s.nonEmptyRows());
  // Tasks: chunksPerTask chunks each; the first slice's row and whether it started before.
  const std::int64_t taskSlices = std::int64_t(s.chunksPerTask) * 8;
  ASSERT_EQ(std::int64_t(s.tasks.size()), (s.nChunks + s.chunksPerTask - 1) / s.chunksPerTask);
  std::uint32_t ord = 0;
  bool rowStart = true;
  std::size_t split = 0;
  for (std::int64_t k = 0; k < s.nSlices; ++k) {
    if (k % taskSlices == 0) {
      const Offset8Task& t = s.tasks[std::size_t(k / taskSlices)];
      ASSERT_EQ(t.ordBegin, ord) << "task " << k / taskSlices;
      ASSERT_EQ(t.startedBefore, rowStart ? 0u : 1u) << "task " << k / taskSlices;
      if (!rowStart) {  // a row cut here is listed once, with the tasks it spans
        ASSERT_LT(split, s.splitRows.size());
        const SplitRow& r = s.splitRows[split];
        ASSERT_EQ(r.row, s.nonEmptyRow[ord]);
        ASSERT_LE(r.firstTask, std::uint32_t(k / taskSlices) - 1);
        ASSERT_GE(r.lastTask, std::uint32_t(k / taskSlices));
        if (r.lastTask == std::uint32_t(k / taskSlices)) ++split;
      }
    }
    rowStart = (s.headers[std::size_t(k)] & S8::kLast) != 0;
    ord += rowStart;
  }
  ASSERT_EQ(split, s.splitRows.size());
  std::int64_t empty = 0;
  for (const EmptyRun& r : s.emptyRuns) empty += r.count;
  ASSERT_EQ(empty + s.nonEmptyRows(), m.rows);
}

void expectRoundTrip(const HalfCsr& m, const std::string& name, const SlicedOffset8Options& o) {
  const std::string what = name + " (" + std::to_string(o.chunksPerTask) + " chunks per task)";
  const S8 s = encodeSlicedOffset8(m, o);
  checkLayout(s, m, what);
  ASSERT_NO_FATAL_FAILURE(expectSameCsr(decodeSlicedOffset8(s), m, what));
  ASSERT_NO_FATAL_FAILURE(expectProductBitForBit(
      m, [&](const double* x, double* y) { multiplySlicedOffset8Cpu(s, x, y, 3); }, what));
}

void expectRoundTrips(const HalfCsr& m, const std::string& name) {
  for (int c : {1, 4, 8}) expectRoundTrip(m, name, {c, 2});
}

/// Gaps around the wide threshold (255 / 256) and the slice cut (2^24 - 1 / 2^24 + 5) in 2^24 + 100
/// columns: row 0 {0, 2^24 + 5} (two slices), row 2 {0, 255}, row 3 {0, 256}, row 4 a run of 40
/// neighbours (32 + 8), row 5 {7, 7 + 2^24 - 1} (one wide slice).
HalfCsr gapsIn2p24() {
  const std::int32_t far = (1 << 24) + 5;
  std::vector<std::int32_t> run;
  for (int k = 0; k < 40; ++k) run.push_back(1000 + k);
  return fromRows((1 << 24) + 100, {{0, far}, {}, {0, 255}, {0, 256}, run, {7, 7 + (1 << 24) - 1}});
}

TEST(SpmvSlicedOffset8, RoundTripsEveryMatrixOfTheSpmvTests) {
  std::int64_t wide = 0, split = 0;
  for (const auto& [name, m] : existingTestMatrices()) {
    expectRoundTrips(m, name);
    const S8 s = encodeSlicedOffset8(m, {1, 2});
    wide += s.wideSlices;
    split += std::int64_t(s.splitRows.size());
  }
  EXPECT_GT(wide, 0) << "no wide slice: the high stream went untested";
  EXPECT_GT(split, 0) << "no row cut between tasks";
}

TEST(SpmvSlicedOffset8, RoundTripsAwkwardShapes) {
  for (const auto& [name, m] : awkwardMatrices()) {
    if (m.cols >= (std::int64_t(1) << 30)) {  // columnGaps: refused, with the reason
      try {
        encodeSlicedOffset8(m);
        ADD_FAILURE() << name << ": 2^31 columns accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("2^30"), std::string::npos) << e.what();
      }
      continue;
    }
    expectRoundTrips(m, name);
  }
  expectRoundTrips(gapsIn2p24(), "gaps in 2^24 + 100 columns");
  expectRoundTrip(hugeRow(1000000), "one row of 1e6", {8, 0});
  std::vector<std::vector<std::int32_t>> rows = {{3}, {}, {3}};  // the StepCsr tests' gaps
  for (std::int32_t gap : {254, 255, 256, 65535, 65536, (1 << 24) + 3, 14, 15, 1, 16})
    rows[0].push_back(rows[0].back() + gap);
  rows[2] = rows[0];
  rows.push_back({(1 << 25) - 1});
  rows.push_back({0});
  expectRoundTrips(fromRows(1 << 25, rows), "gaps in 2^25 columns");
}

TEST(SpmvSlicedOffset8, RoundTripsTheProtonEngineMatrix) {
  const HalfCsr d = protonPhantomMatrix();
  expectRoundTrips(d, "proton random phantom");
  expectRoundTrips(transpose(d), "proton random phantom^T");
}

TEST(SpmvSlicedOffset8, SlicesEndAt32EntriesAndAtSpansOf2p24) {
  const S8 s = encodeSlicedOffset8(gapsIn2p24(), {1, 1});
  // Row 0: two slices ({0}, {2^24 + 5}); rows 2, 3: one each; row 4: 32 + 8; row 5: one.
  ASSERT_EQ(s.nSlices, 7);
  ASSERT_EQ(s.nonEmptyRows(), 5);
  EXPECT_EQ(s.headers[0], 0u);                                        // base 0, not last
  EXPECT_EQ(s.headers[1], std::uint32_t((1 << 24) + 5) | S8::kLast);  // base 2^24 + 5
  EXPECT_EQ(s.headers[2], 0u | S8::kLast);                            // {0, 255}: not wide
  EXPECT_EQ(s.headers[3], 0u | S8::kWide | S8::kLast);                // {0, 256}: wide
  EXPECT_EQ(s.headers[4], 1000u);                                     // 32 neighbours, not last
  EXPECT_EQ(s.headers[5], 1032u | S8::kLast);
  EXPECT_EQ(s.headers[6], 7u | S8::kWide | S8::kLast);  // span 2^24 - 1: one slice
  EXPECT_EQ(s.wideSlices, 2);
  EXPECT_EQ(s.offsetsLo[std::size_t(S8::at(2, 1))], 255);
  EXPECT_EQ(s.offsetsLo[std::size_t(S8::at(3, 1))], 0);  // 256 = 0 + (1 << 8)
  EXPECT_EQ(s.high[1], 1);
  EXPECT_EQ(s.high[32 + 1], 0xFFFF);  // 2^24 - 1 = 0xFF + (0xFFFF << 8)
  EXPECT_EQ(s.offsetsLo[std::size_t(S8::at(6, 1))], 0xFF);
  EXPECT_EQ(s.nonEmptyRow, (std::vector<std::int32_t>{0, 2, 3, 4, 5}));
  ASSERT_EQ(s.emptyRuns.size(), 1u);
  EXPECT_EQ(s.emptyRuns[0].first, 1);
}

TEST(SpmvSlicedOffset8, RowsShorterThanASliceTakeOneSliceEach) {
  const HalfCsr m = randomCsr(3000, 500, 31, 41, true, 0.2);
  const S8 s = encodeSlicedOffset8(m, {1, 2});
  EXPECT_EQ(s.nSlices, s.nonEmptyRows());
  for (std::int64_t k = 0; k < s.nSlices; ++k)
    ASSERT_TRUE(s.headers[std::size_t(k)] & S8::kLast) << k;
  EXPECT_TRUE(s.splitRows.empty());  // a row of one slice cannot be cut
  expectRoundTrips(m, "rows shorter than 32");
}

TEST(SpmvSlicedOffset8, LongRowsAreCutBetweenTasks) {
  const HalfCsr huge = hugeRow(100000);  // row 39: 3125 slices; rows 0..38 and 40..69 empty
  const S8 s = encodeSlicedOffset8(huge, {8, 0});
  EXPECT_EQ(s.nSlices, 3125);
  EXPECT_EQ(s.tasks.size(), 49u);  // ceil(391 chunks / 8)
  ASSERT_EQ(s.splitRows.size(), 1u);
  EXPECT_EQ(s.splitRows[0].row, 39);
  EXPECT_EQ(s.splitRows[0].firstTask, 0u);
  EXPECT_EQ(s.splitRows[0].lastTask, 48u);
  EXPECT_EQ(s.tasks[0].startedBefore, 0u);
  for (std::size_t t = 1; t < s.tasks.size(); ++t) EXPECT_EQ(s.tasks[t].startedBefore, 1u) << t;
  EXPECT_EQ(s.emptyRuns.size(), 2u);
  // The gap of 3 in the middle of the row makes no slice wide.
  EXPECT_EQ(s.wideSlices, 0);
}

TEST(SpmvSlicedOffset8, EncodingIgnoresThreads) {
  const HalfCsr dose = transpose(makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 50), 2));
  const S8 a = encodeSlicedOffset8(dose, {4, 1}), b = encodeSlicedOffset8(dose, {4, 5});
  EXPECT_GT(a.wideSlices, 0);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.offsetsLo, b.offsetsLo);
  EXPECT_EQ(a.headers, b.headers);
  EXPECT_EQ(a.high, b.high);
  EXPECT_EQ(a.chunkWideBase, b.chunkWideBase);
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  EXPECT_EQ(0, std::memcmp(a.tasks.data(), b.tasks.data(), a.tasks.size() * sizeof(Offset8Task)));
}

TEST(SpmvSlicedOffset8, RealBytesCountWhatTheKernelReads) {
  const HalfCsr m = randomCsr(3000, 200000, 300, 9, true, 0.4);  // wide slices, empty rows
  const S8 s = encodeSlicedOffset8(m, {4, 2});
  ASSERT_GT(s.wideSlices, 0);
  const SlicedOffset8Bytes b = slicedOffset8Bytes(s);
  EXPECT_EQ(b.values, 512.0 * double(s.nChunks));
  EXPECT_EQ(b.offsets, 256.0 * double(s.nChunks));
  EXPECT_EQ(b.high, 64.0 * double(s.wideSlices));
  EXPECT_GE(b.headers, 32.0 * double(s.nChunks));
  EXPECT_LE(b.headers, 36.0 * double(s.nChunks));
  EXPECT_EQ(b.rows, 4.0 * double(s.nonEmptyRows()));
  EXPECT_EQ(b.vectors, 8.0 * double(m.rows + m.cols));
  EXPECT_GT(b.tasks, 8.0 * double(s.tasks.size()));
  EXPECT_EQ(b.total(), b.matrix() + b.vectors);
  EXPECT_GT(slicedOffset8DeviceBytes(s), b.values + b.offsets + b.high + b.headers + b.rows);
}

TEST(SpmvSlicedOffset8, DeviceEstimateBoundsTheLayout) {
  // Check, then run: estimateDeviceBytes() must not promise less than the layout takes, also on
  // the worst shapes (every slice wide; rows of one entry, 31 of 32 positions padding).
  SpmvLayouts l;
  l.delta16 = false;
  l.offset8 = true;
  std::vector<std::int32_t> sparse;
  for (int k = 0; k < 300; ++k) sparse.push_back(k * 1000);
  std::vector<std::vector<std::int32_t>> single(5000, std::vector<std::int32_t>{3});
  for (const HalfCsr& m : {fromRows(300000, {sparse, sparse, {}, sparse}), fromRows(10, single),
                           randomCsr(3000, 200000, 300, 9, true, 0.4), hugeRow(5000)}) {
    const S8 s = encodeSlicedOffset8(m, {1, 1});
    EXPECT_GE(estimateDeviceBytes(m.rows, m.cols, m.nnz(), l).matrixBytes,
              slicedOffset8DeviceBytes(s))
        << m.rows << " x " << m.cols;
  }
}

TEST(SpmvSlicedOffset8, KernelVariantsOtherThan4Or5BlocksAreRefused) {
  SlicedOffset8Options o;
  o.minBlocksPerSm = 6;
  try {
    encodeSlicedOffset8(hugeRow(100), o);
    ADD_FAILURE() << "6 blocks per SM accepted (no such kernel is compiled)";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("4 or 5 blocks per SM, not 6"), std::string::npos) << e.what();
  }
  o.minBlocksPerSm = 4;
  EXPECT_EQ(encodeSlicedOffset8(hugeRow(100), o).minBlocksPerSm, 4);
}

}  // namespace
}  // namespace penumbra::spmv
