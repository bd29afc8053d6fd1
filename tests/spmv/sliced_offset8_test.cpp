// SlicedOffset8 (engines/spmv/sliced_offset8.hpp) without a GPU: exact round trips of every matrix
// of the SpMV tests and of the awkward shapes at several task sizes; the layout's invariants
// (interleaving, padding, segments exactly where a column is 256 or more past its segment's
// first, the areas of segment bases, row ends, tasks, split rows, the task order); slices cut at
// 32 entries and before a fifth segment; the CPU reference on the encoding equal to multiplyCpu
// bit for bit; thread-count independence; and the bytes per non-zero it stores.
#include "spmv/sliced_offset8.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "spmv/spmv.hpp"
#include "spmv/synthetic.hpp"
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
  ASSERT_TRUE(s.offsetBits == 8 || s.offsetBits == 12 || s.offsetBits == 16);
  ASSERT_EQ(s.offsetsLo.size(), s.offsetBits != 16 ? std::size_t(s.nChunks * 256) : 0u);
  ASSERT_EQ(s.offsetsHi.size(), s.offsetBits == 12 ? std::size_t(s.nChunks * 32) : 0u);
  ASSERT_EQ(s.offsets16.size(), s.offsetBits == 16 ? std::size_t(s.nChunks * 256) : 0u);
  if (s.offsetBits != 8) {
    ASSERT_EQ(s.segmentedSlices, 0);  // a slice ends where one would start
  }
  const std::uint32_t span = std::uint32_t(S8::segmentSpan(s.offsetBits));
  auto offsetAt = [&](std::size_t i) { return s.offsetAt(std::int64_t(i)); };
  ASSERT_EQ(s.headers.size(), std::size_t(s.nChunks * 8));
  ASSERT_GE(s.segs.size(), 32u);
  for (std::size_t k = s.segs.size() - 32; k < s.segs.size(); ++k) ASSERT_EQ(s.segs[k], 0u);
  std::int64_t segmented = 0, chunksWithArea = 0, ends = 0;
  std::size_t area = 0;
  std::vector<std::size_t> areaOfChunk;
  for (std::int64_t c = 0; c < s.nChunks; ++c) {
    areaOfChunk.push_back(area);
    bool any = false;
    for (int j = 0; j < 8; ++j) any |= (s.headers[std::size_t(c * 8 + j)] & S8::kSegmented) != 0;
    std::size_t at = area + 8;  // the chunk's next segment base
    for (int j = 0; j < 8; ++j) {
      const std::int64_t k = c * 8 + j;
      const std::uint32_t h = s.headers[std::size_t(k)];
      const std::uint32_t mask = any ? s.segs[area + std::size_t(j)] : 0u;
      ASSERT_EQ(mask != 0, (h & S8::kSegmented) != 0) << "slice " << k << ": flag and mask";
      ASSERT_EQ(mask & 1u, 0u) << "slice " << k << ": position 0 starts the first segment";
      ASSERT_LE(std::popcount(mask), S8::kMaxSegments - 1) << "slice " << k;
      if (k >= s.nSlices) {  // padding slices of the last chunk
        ASSERT_EQ(h, 0u);
        for (int l = 0; l < 32; ++l) ASSERT_EQ(s.values[std::size_t(S8::at(k, l))], 0);
        continue;
      }
      std::uint32_t segBase = h & S8::kBaseMask, col = segBase;
      bool padding = false;
      for (int l = 0; l < 32; ++l) {
        const std::size_t i = std::size_t(S8::at(k, l));
        const bool starts = (mask >> l) & 1u;
        if (l > 0 && !starts && offsetAt(i) == 0) padding = true;
        if (padding) {
          ASSERT_FALSE(starts) << "slice " << k << " position " << l << ": a segment in padding";
          ASSERT_EQ(offsetAt(i), 0u) << "slice " << k << " position " << l;
          ASSERT_EQ(s.values[i], 0) << "slice " << k << " position " << l;
          continue;
        }
        if (starts) {  // greedy: a new segment only where the column is `span` past the last base
          ASSERT_LT(at, s.segs.size() - 32);
          ASSERT_GE(s.segs[at], segBase + span) << "slice " << k << " position " << l;
          segBase = s.segs[at++];
          ASSERT_EQ(offsetAt(i), 0u) << "slice " << k << " position " << l;
        }
        ASSERT_LT(offsetAt(i), span) << "slice " << k << " position " << l;
        const std::uint32_t next = segBase + offsetAt(i);
        if (l > 0) {
          ASSERT_GT(next, col) << "slice " << k << " position " << l;
        }
        col = next;
      }
    }
    if (any) {
      ++chunksWithArea;
      ASSERT_LE(at - area, 32u) << "chunk " << c << ": the area takes more than a load";
      area = at;
    }
    for (int j = 0; j < 8 && c * 8 + j < s.nSlices; ++j) {
      segmented += (s.headers[std::size_t(c * 8 + j)] & S8::kSegmented) != 0;
      ends += (s.headers[std::size_t(c * 8 + j)] & S8::kLast) != 0;
    }
  }
  ASSERT_EQ(area + 32, s.segs.size());
  ASSERT_EQ(segmented, s.segmentedSlices);
  ASSERT_EQ(chunksWithArea, s.segmentedChunks);
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
      ASSERT_EQ(t.segBegin, areaOfChunk[std::size_t(k / 8)]) << "task " << k / taskSlices;
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
  // Task order: none, or every task once, by (group of rows, first column).
  if (s.taskOrder.empty()) return;
  ASSERT_GT(s.taskGroupRows, 0);
  ASSERT_EQ(s.taskOrder.size(), s.tasks.size());
  std::vector<bool> seen(s.tasks.size(), false);
  auto key = [&](std::uint32_t t) {
    return std::pair(s.tasks[t].ordBegin / std::uint32_t(s.taskGroupRows),
                     s.headers[std::size_t(std::int64_t(t) * taskSlices)] & S8::kBaseMask);
  };
  for (std::size_t i = 0; i < s.taskOrder.size(); ++i) {
    const std::uint32_t t = s.taskOrder[i];
    ASSERT_LT(t, s.tasks.size());
    ASSERT_FALSE(seen[t]) << "task " << t << " listed twice";
    seen[t] = true;
    if (i > 0) {
      ASSERT_LE(key(s.taskOrder[i - 1]), key(t)) << "order position " << i;
    }
  }
}

void expectRoundTrip(const HalfCsr& m, const std::string& name, const SlicedOffset8Options& o) {
  const std::string what = name + " (" + std::to_string(o.chunksPerTask) + " chunks per task, " +
                           std::to_string(o.offsetBits) + "-bit offsets)";
  const S8 s = encodeSlicedOffset8(m, o);
  checkLayout(s, m, what);
  ASSERT_NO_FATAL_FAILURE(expectSameCsr(decodeSlicedOffset8(s), m, what));
  ASSERT_NO_FATAL_FAILURE(expectProductBitForBit(
      m, [&](const double* x, double* y) { multiplySlicedOffset8Cpu(s, x, y, 3); }, what));
}

void expectRoundTrips(const HalfCsr& m, const std::string& name) {
  for (int c : {1, 4, 8}) expectRoundTrip(m, name, {c, 2});
  for (int c : {1, 8})
    for (int bits : {12, 16}) {
      SlicedOffset8Options o{c, 2};
      o.offsetBits = bits;
      expectRoundTrip(m, name, o);
    }
}

/// Gaps around the segment threshold (255 / 256) and beyond 2^24 in 2^24 + 100 columns: row 0
/// {0, 2^24 + 5} (two segments), row 2 {0, 255}, row 3 {0, 256}, row 4 a run of 40 neighbours
/// (32 + 8), row 5 {7, 7 + 2^24 - 1}, row 6 five segments {0, 300, 600, 900, 1200, 1201} (a slice
/// of four, then one of two).
HalfCsr gapsIn2p24() {
  const std::int32_t far = (1 << 24) + 5;
  std::vector<std::int32_t> run;
  for (int k = 0; k < 40; ++k) run.push_back(1000 + k);
  return fromRows((1 << 24) + 100, {{0, far}, {}, {0, 255}, {0, 256}, run, {7, 7 + (1 << 24) - 1},
                                    {0, 300, 600, 900, 1200, 1201}});
}

TEST(SpmvSlicedOffset8, RoundTripsEveryMatrixOfTheSpmvTests) {
  std::int64_t segmented = 0, split = 0;
  for (const auto& [name, m] : existingTestMatrices()) {
    expectRoundTrips(m, name);
    const S8 s = encodeSlicedOffset8(m, {1, 2});
    segmented += s.segmentedSlices;
    split += std::int64_t(s.splitRows.size());
  }
  EXPECT_GT(segmented, 0) << "no segmented slice: the areas went untested";
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

TEST(SpmvSlicedOffset8, SegmentsStartAtJumpsOf256AndSlicesEndBeforeAFifth) {
  const S8 s = encodeSlicedOffset8(gapsIn2p24(), {1, 1});
  // One slice a row but row 4 (32 + 8) and row 6 (4 segments + 1).
  ASSERT_EQ(s.nSlices, 8);
  ASSERT_EQ(s.nonEmptyRows(), 6);
  ASSERT_EQ(s.nChunks, 1);
  EXPECT_EQ(s.headers[0], 0u | S8::kSegmented | S8::kLast);  // {0, 2^24 + 5}
  EXPECT_EQ(s.headers[1], 0u | S8::kLast);                    // {0, 255}: one segment
  EXPECT_EQ(s.headers[2], 0u | S8::kSegmented | S8::kLast);   // {0, 256}: two
  EXPECT_EQ(s.headers[3], 1000u);                             // 32 neighbours, not last
  EXPECT_EQ(s.headers[4], 1032u | S8::kLast);
  EXPECT_EQ(s.headers[5], 7u | S8::kSegmented | S8::kLast);
  EXPECT_EQ(s.headers[6], 0u | S8::kSegmented);  // {0, 300, 600, 900}: 4 segments, then cut
  EXPECT_EQ(s.headers[7], 1200u | S8::kLast);    // {1200, 1201}
  EXPECT_EQ(s.segmentedSlices, 4);
  EXPECT_EQ(s.segmentedChunks, 1);
  // The chunk's area: 8 masks, then the first columns of the later segments, slice by slice.
  const std::vector<std::uint32_t> area = {0b10, 0, 0b10, 0, 0, 0b10, 0b1110, 0,
                                           (1 << 24) + 5, 256, 7 + (1 << 24) - 1, 300, 600, 900};
  ASSERT_EQ(s.segs.size(), area.size() + 32);
  for (std::size_t k = 0; k < area.size(); ++k) EXPECT_EQ(s.segs[k], area[k]) << "word " << k;
  EXPECT_EQ(s.offsetsLo[std::size_t(S8::at(1, 1))], 255);
  EXPECT_EQ(s.offsetsLo[std::size_t(S8::at(2, 1))], 0);  // 256 starts a segment
  EXPECT_EQ(s.offsetsLo[std::size_t(S8::at(7, 1))], 1);
  EXPECT_EQ(s.nonEmptyRow, (std::vector<std::int32_t>{0, 2, 3, 4, 5, 6}));
  ASSERT_EQ(s.emptyRuns.size(), 1u);
  EXPECT_EQ(s.emptyRuns[0].first, 1);
}

TEST(SpmvSlicedOffset8, SixteenBitOffsetsNeedNoSegmentsBelow65536AndCutSlicesAbove) {
  SlicedOffset8Options o{1, 1};
  o.offsetBits = 16;
  const S8 s = encodeSlicedOffset8(gapsIn2p24(), o);
  EXPECT_EQ(s.segmentedSlices, 0);
  EXPECT_EQ(s.segmentedChunks, 0);
  EXPECT_EQ(s.segs.size(), std::size_t(S8::kAreaWords));  // only the zeros after the last area
  // Row 0 {0, 2^24 + 5}: two slices; rows 2, 3 {0, 255} {0, 256}: one each (offsets 255 and
  // 256); row 4 (40 entries): 32 + 8; row 5: two; row 6 (spans 1201): one slice of six.
  ASSERT_EQ(s.nSlices, 2 + 1 + 1 + 2 + 2 + 1);
  EXPECT_TRUE(s.offsetsLo.empty());
  EXPECT_EQ(s.offsets16[std::size_t(S8::at(3, 1))], 256);  // row 3, column 256
  EXPECT_EQ(s.offsets16[std::size_t(S8::at(2, 1))], 255);
  EXPECT_EQ(s.offsets16[std::size_t(S8::at(8, 5))], 1201);
  const SlicedOffset8Bytes b8 = slicedOffset8Bytes(encodeSlicedOffset8(gapsIn2p24(), {1, 1})),
                           b16 = slicedOffset8Bytes(s);
  EXPECT_EQ(b16.offsets, 2.0 * double(s.nChunks) * S8::kChunkEntries);
  EXPECT_EQ(b16.segments, 0.0);
  EXPECT_GT(b8.segments, 0.0);
  o.offsetBits = 10;
  EXPECT_THROW(encodeSlicedOffset8(gapsIn2p24(), o), Error);
}

TEST(SpmvSlicedOffset8, TwelveBitOffsetsSplitIntoLowBytesAndHighNibbles) {
  SlicedOffset8Options o{1, 1};
  o.offsetBits = 12;
  const S8 s = encodeSlicedOffset8(gapsIn2p24(), o);
  EXPECT_EQ(s.segmentedSlices, 0);
  EXPECT_EQ(s.segs.size(), std::size_t(S8::kAreaWords));
  // As at 16 bits: no column is 4096 past a slice's first.
  ASSERT_EQ(s.nSlices, 2 + 1 + 1 + 2 + 2 + 1);
  EXPECT_TRUE(s.offsets16.empty());
  ASSERT_EQ(s.offsetsHi.size(), std::size_t(2 * 32));
  // Row 3 {0, 256}: slice 3, position 1: low byte 0, nibble 1 (word 32 * 0 + 1, bits 12..15).
  EXPECT_EQ(s.offsetsLo[std::size_t(S8::at(3, 1))], 0);
  EXPECT_EQ((s.offsetsHi[1] >> 12) & 0xFu, 1u);
  EXPECT_EQ(s.offsetAt(S8::at(3, 1)), 256u);
  // Row 6's slice (slice 8: chunk 1, slice 0), position 5: 1201 = 0x4B1.
  EXPECT_EQ(s.offsetsLo[std::size_t(S8::at(8, 5))], 0xB1);
  EXPECT_EQ(s.offsetsHi[32 + 5] & 0xFu, 4u);
  EXPECT_EQ(slicedOffset8Bytes(s).offsets, 1.5 * double(s.nChunks) * S8::kChunkEntries);
  // Columns 4095 and 4096 past a slice's first: the largest offset, then a new slice.
  const S8 t = encodeSlicedOffset8(fromRows(9000, {{0, 4095, 4096, 8191, 8192}}), o);
  ASSERT_EQ(t.nSlices, 3);
  EXPECT_EQ(t.headers[0] & S8::kBaseMask, 0u);
  EXPECT_EQ(t.headers[1] & S8::kBaseMask, 4096u);
  EXPECT_EQ(t.headers[2] & S8::kBaseMask, 8192u);
  EXPECT_EQ(t.offsetsLo[std::size_t(S8::at(0, 1))], 0xFF);
  EXPECT_EQ((t.offsetsHi[1] >> 0) & 0xFu, 0xFu);  // slice 0, position 1
  EXPECT_EQ(t.offsetAt(S8::at(1, 1)), 4095u);
  EXPECT_NO_FATAL_FAILURE(expectSameCsr(decodeSlicedOffset8(t), fromRows(9000, {{0, 4095, 4096, 8191, 8192}}), "4095 / 4096"));
}

TEST(SpmvSlicedOffset8, WideOffsetsChosenForSegmentedMatricesOnBandwidthRichGpus) {
  const HalfCsr d = makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 64), 2);
  const HalfCsr dt = transpose(d);
  for (const HalfCsr* m : {&d, &dt}) {
    const S8 s = encodeSlicedOffset8(*m, {4, 2});
    EXPECT_EQ(s.offsetBits, 8);  // the encoder alone takes 8
    SlicedOffset8Options o{4, 2};
    o.offsetBits = 16;
    const SliceCounts c = countSlices(*m, 3);
    EXPECT_EQ(c.slices8, s.nSlices);
    EXPECT_EQ(c.segmented8, s.segmentedSlices);
    EXPECT_EQ(c.slices16, encodeSlicedOffset8(*m, o).nSlices);
    o.offsetBits = 12;
    EXPECT_EQ(c.slices12, encodeSlicedOffset8(*m, o).nSlices);
  }
  const SliceCounts cd = countSlices(d), cdt = countSlices(dt);
  EXPECT_LE(10 * cd.segmented8, cd.slices8);  // a dose matrix's voxel rows: narrow spans
  EXPECT_GT(2 * cdt.segmented8, cdt.slices8);  // its spot rows: jumps between voxel lines
  // prostate-1's transpose: 12 bits cut 4 % more slices than 16 (counted: 50676 / 48828), and
  // save 0.5 B an entry.
  EXPECT_LT(25 * cdt.slices12, 26 * cdt.slices16);
  EXPECT_EQ(chooseOffsetBits(18.4, cdt), 12);  // H200 (theoretical bytes per SM clock)
  EXPECT_EQ(chooseOffsetBits(18.4, cd), 8);
  // liver-1's transpose: 12 bits would cut a fifth more slices than 16 (the voxels of its spots'
  // rows lie farther apart); 16 takes fewer bytes.
  const SliceCounts cl =
      countSlices(transpose(makeSyntheticDoseMatrix(scaled(liver1Spec(), 1.0 / 64), 2)));
  EXPECT_GT(20 * cl.slices12, 23 * cl.slices16);  // counted: 910274 / 755494
  EXPECT_EQ(chooseOffsetBits(18.4, cl), 16);
  EXPECT_EQ(chooseOffsetBits(12.8, cdt), 8);   // H100 SXM
  EXPECT_EQ(chooseOffsetBits(0.0, cdt), 8);    // unknown bandwidth
  // Columns 65536 apart: every entry its own segment at 8 bits (slices of four), its own slice at
  // 16: 8 bits, whatever the GPU.
  std::vector<std::int32_t> far;
  for (int k = 0; k < 200; ++k) far.push_back(k * 70000);
  const SliceCounts cf = countSlices(fromRows(200 * 70000, {far, far}));
  EXPECT_EQ(cf.segmented8, cf.slices8);
  EXPECT_EQ(cf.slices16, 400);
  EXPECT_EQ(chooseOffsetBits(18.4, cf), 8);
}

TEST(SpmvSlicedOffset8, TasksOfLongRowsAreOrderedByColumnInGroupsOfRows) {
  // A transposed dose matrix: rows (spots) of several tasks each. The encoder's default groups
  // them (32 rows); rows shorter than two tasks keep the index order.
  // prostate-1 / 20: 5090 rows of ~930 entries, tasks of one chunk (256 entries).
  const HalfCsr dose = transpose(makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 20), 2));
  SlicedOffset8Options o{1, 2};
  const S8 grouped = encodeSlicedOffset8(dose, o);
  EXPECT_EQ(grouped.taskGroupRows, 32);
  ASSERT_EQ(grouped.taskOrder.size(), grouped.tasks.size());
  std::size_t moved = 0;
  for (std::size_t i = 0; i < grouped.taskOrder.size(); ++i) moved += grouped.taskOrder[i] != i;
  EXPECT_GT(moved, grouped.tasks.size() / 2) << "the order hardly differs from the index order";
  checkLayout(grouped, dose, "prostate-1/20^T, grouped");
  o.taskGroupRows = 0;
  const S8 plain = encodeSlicedOffset8(dose, o);
  EXPECT_TRUE(plain.taskOrder.empty());
  EXPECT_EQ(plain.values, grouped.values);  // the order is the only difference
  EXPECT_EQ(plain.segs, grouped.segs);
  const S8 shortRows =
      encodeSlicedOffset8(makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 20), 2), {1, 2});
  EXPECT_EQ(shortRows.taskGroupRows, 0);
  EXPECT_TRUE(shortRows.taskOrder.empty());
  // Blocks: 8 warps where the order puts a block's warps on the same lines of x, else 2.
  EXPECT_EQ(grouped.warpsPerBlock, 8);
  EXPECT_EQ(plain.warpsPerBlock, 2);
  EXPECT_EQ(shortRows.warpsPerBlock, 2);
  o.warpsPerBlock = 8;
  EXPECT_EQ(encodeSlicedOffset8(dose, o).warpsPerBlock, 8);
  o.warpsPerBlock = 0;
  o.taskGroupRows = 3;
  expectRoundTrip(dose, "prostate-1/20^T, groups of 3 rows", o);
  // The default task length: 12 chunks where the tasks are ordered (measured faster on long
  // rows), 8 in index order without the row buffer (x of 51500 columns is too large for it).
  // (This matrix's rows, ~930 entries, span two tasks only at one chunk: ordered on request.)
  SlicedOffset8Options byLength{0, 2};
  byLength.taskGroupRows = 32;
  EXPECT_EQ(encodeSlicedOffset8(dose, byLength).chunksPerTask, 12);
  byLength.taskGroupRows = 0;
  const S8 unordered = encodeSlicedOffset8(dose, byLength);
  EXPECT_EQ(unordered.rowBuffer, 0);
  EXPECT_EQ(unordered.chunksPerTask, 8);
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
  // The gap of 3 in the middle of the row makes no slice segmented.
  EXPECT_EQ(s.segmentedSlices, 0);
  EXPECT_EQ(s.segs.size(), 32u);
}

TEST(SpmvSlicedOffset8, EncodingIgnoresThreads) {
  const HalfCsr dose = transpose(makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 50), 2));
  const S8 a = encodeSlicedOffset8(dose, {4, 1}), b = encodeSlicedOffset8(dose, {4, 5});
  EXPECT_GT(a.segmentedSlices, 0);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.offsetsLo, b.offsetsLo);
  EXPECT_EQ(a.headers, b.headers);
  EXPECT_EQ(a.segs, b.segs);
  EXPECT_EQ(a.taskOrder, b.taskOrder);
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  EXPECT_EQ(0, std::memcmp(a.tasks.data(), b.tasks.data(), a.tasks.size() * sizeof(Offset8Task)));
}

TEST(SpmvSlicedOffset8, RealBytesCountWhatTheKernelReads) {
  const HalfCsr m = randomCsr(3000, 200000, 300, 9, true, 0.4);  // segmented slices, empty rows
  const S8 s = encodeSlicedOffset8(m, {4, 2});
  ASSERT_GT(s.segmentedSlices, 0);
  const SlicedOffset8Bytes b = slicedOffset8Bytes(s);
  EXPECT_EQ(b.values, 512.0 * double(s.nChunks));
  EXPECT_EQ(b.offsets, 256.0 * double(s.nChunks));
  EXPECT_EQ(b.segments, 4.0 * double(s.segs.size() - 32));
  EXPECT_GE(b.segments, 4.0 * (8.0 * double(s.segmentedChunks) + double(s.segmentedSlices)));
  EXPECT_EQ(b.headers, 32.0 * double(s.nChunks));
  EXPECT_EQ(b.rows, 4.0 * double(s.nonEmptyRows()));
  EXPECT_EQ(b.vectors, 8.0 * double(m.rows + m.cols));
  EXPECT_GT(b.tasks, 8.0 * double(s.tasks.size()));
  EXPECT_EQ(b.total(), b.matrix() + b.vectors);
  EXPECT_GT(slicedOffset8DeviceBytes(s), b.values + b.offsets + b.segments + b.headers + b.rows);
}

TEST(SpmvSlicedOffset8, DeviceEstimateBoundsTheLayout) {
  // Check, then run: estimateDeviceBytes() must not promise less than the layout takes, also on
  // the worst shapes (every entry its own segment: slices of 4; rows of one entry, 31 of 32
  // positions padding).
  SpmvLayouts l;
  l.delta16 = false;
  l.offset8 = true;
  std::vector<std::int32_t> sparse;
  for (int k = 0; k < 300; ++k) sparse.push_back(k * 1000);
  std::vector<std::vector<std::int32_t>> single(5000, std::vector<std::int32_t>{3});
  for (const HalfCsr& m : {fromRows(300000, {sparse, sparse, {}, sparse}), fromRows(10, single),
                           randomCsr(3000, 200000, 300, 9, true, 0.4), hugeRow(5000)}) {
    const S8 s = encodeSlicedOffset8(m, {1, 1, 4, 8});  // with a task order
    EXPECT_GE(estimateDeviceBytes(m.rows, m.cols, m.nnz(), l).matrixBytes,
              slicedOffset8DeviceBytes(s))
        << m.rows << " x " << m.cols;
  }
}

TEST(SpmvSlicedOffset8, EngineChecksTheLayoutsFloorBeforeEncodingNotItsWorstCase) {
  // liver-1's size on an 80 GB GPU: the worst case (slices of 4 entries, ~30 B each) would refuse
  // D and D^T that take ~5 GB each; SpmvEngine's early check counts the least the layout can take
  // and CudaSpmvMatrix checks the exact bytes after encoding, before it allocates.
  SpmvLayouts l;
  l.delta16 = false;
  l.offset8 = true;
  const std::int64_t rows = 2970000, cols = 68000, nnz = 1480000000;
  EXPECT_GT(estimateDeviceBytes(rows, cols, nnz, l).total(), 80e9);
  EXPECT_LT(estimateBeforeEncoding(rows, cols, nnz, l).total(), 12e9);
  // A floor: never more than a real layout takes, also where every slice is full.
  std::vector<std::vector<std::int32_t>> dense(64);
  for (auto& r : dense)
    for (int k = 0; k < 256; ++k) r.push_back(k);
  for (const HalfCsr& m : {fromRows(256, dense), randomCsr(3000, 200000, 300, 9, true, 0.4),
                           randomCsr(500, 77, 20, 3, false, 0.1), hugeRow(5000)}) {
    const S8 s = encodeSlicedOffset8(m);
    EXPECT_LE(estimateBeforeEncoding(m.rows, m.cols, m.nnz(), l).matrixBytes,
              slicedOffset8DeviceBytes(s))
        << m.rows << " x " << m.cols;
  }
  // The other layouts keep their estimate.
  SpmvLayouts d;
  d.baseline = true;
  EXPECT_EQ(estimateBeforeEncoding(rows, cols, nnz, d).total(),
            estimateDeviceBytes(rows, cols, nnz, d).total());
}

TEST(SpmvSlicedOffset8, KernelVariantsNotCompiledAreRefused) {
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
  for (int warps : {1, 4, 32}) {
    o.warpsPerBlock = warps;
    try {
      encodeSlicedOffset8(hugeRow(100), o);
      ADD_FAILURE() << warps << " warps per block accepted (no such kernel is compiled)";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("2 or 8 warps per block"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace penumbra::spmv
