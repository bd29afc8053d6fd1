// csr_spmv_sliced_offset8's warp algorithm without a GPU: run by the warp emulator
// (warp_emulator.hpp) on the SpMV test matrices and the awkward shapes, at 1, 4 and 8 chunks per
// task (at 1, most rows longer than 32 entries are cut between tasks), against the CPU reference:
// relative error below 1e-12 on random values, bit for bit on small-integer values (every partial
// sum exact), every row written, no gather or stream load outside its array. The cases that must
// exercise segmented slices and rows cut between tasks assert that they did.
#include <gtest/gtest.h>

#include <cstring>

#include "spmv/sliced_offset8.hpp"
#include "spmv/spmv.hpp"
#include "spmv/synthetic.hpp"
#include "spmv_test_matrices.hpp"
#include "warp_emulator.hpp"

namespace penumbra::spmv {
namespace {

using namespace spmv::test;

struct Seen {
  std::int64_t segmented = 0, split = 0;
};

void expectEmulationMatches(const HalfCsr& m, const std::string& name,
                            const SlicedOffset8Options& o, Seen* seen = nullptr) {
  const SlicedOffset8 s = encodeSlicedOffset8(m, o);
  const EmulationInputs in(m);
  const SlicedOffset8 si = encodeSlicedOffset8(in.mi, o);
  if (seen) {
    seen->segmented += s.segmentedSlices;
    seen->split += std::int64_t(s.splitRows.size());
  }
  std::vector<double> y(std::size_t(m.rows));
  const std::string what = name + " (" + std::to_string(o.chunksPerTask) + " chunks per task, " +
                           std::to_string(o.offsetBits) + "-bit offsets, " +
                           (s.rowBuffer ? "row buffer, " : "") +
                           std::to_string(s.tasks.size()) + " tasks, " +
                           std::to_string(s.segmentedSlices) + " segmented slices, " +
                           std::to_string(s.splitRows.size()) + " split rows)";
  ASSERT_EQ(emulateSlicedOffset8(s, in.x.data(), y.data()), 0) << what << ": reads outside the arrays";
  const Comparison c = compareToReference(y, in.ref);
  EXPECT_EQ(c.nonFinite, 0u) << what << ": rows left unwritten";
  EXPECT_LT(c.relError, 1e-12) << what;
  ASSERT_EQ(emulateSlicedOffset8(si, in.xi.data(), y.data()), 0) << what;
  for (std::size_t r = 0; r < y.size(); ++r)
    ASSERT_EQ(y[r], in.refi[r]) << what << ": integer-valued, row " << r;
}

/// The same at 12- and 16-bit offsets (the wide kernels' instantiations).
void expectWideMatches(const HalfCsr& m, const std::string& name, SlicedOffset8Options o,
                       Seen* seen = nullptr) {
  for (int bits : {12, 16}) {
    o.offsetBits = bits;
    expectEmulationMatches(m, name, o, seen);
  }
}

TEST(SpmvSlicedOffset8Emulated, SpmvTestMatrices) {
  Seen seen;
  for (const auto& [name, m] : existingTestMatrices()) {
    if (m.nnz() > 400000) continue;  // the emulation switches fibers at every shuffle
    for (int c : {1, 8}) expectEmulationMatches(m, name, {c, 2, 4, c == 8 ? 8 : -1}, &seen);
    expectWideMatches(m, name, {4, 2});
  }
  EXPECT_GT(seen.segmented, 0);
  EXPECT_GT(seen.split, 0);
}

TEST(SpmvSlicedOffset8Emulated, SmallTasksCutRowsBetweenTasks) {
  const HalfCsr m = randomCsr(600, 5000, 900, 31, true, 0.3);
  Seen seen;
  for (int c : {1, 2, 4, 8}) expectEmulationMatches(m, "random 600x5000", {c, 2}, &seen);
  expectEmulationMatches(transpose(m), "random 600x5000^T", {1, 2, 4, 8}, &seen);
  expectWideMatches(transpose(m), "random 600x5000^T", {1, 2, 4, 8});
  EXPECT_GT(seen.split, 10);
  EXPECT_GT(seen.segmented, 10);  // 5000 columns, ~1 in 6 taken: 32 entries span ~190 +- 35 columns
}

TEST(SpmvSlicedOffset8Emulated, AwkwardShapes) {
  for (const auto& [name, m] : awkwardMatrices()) {
    if (m.cols >= (std::int64_t(1) << 30)) continue;  // columnGaps: refused (sliced_offset8_test)
    for (int c : {1, 4}) expectEmulationMatches(m, name, {c, 2});
    expectWideMatches(m, name, {4, 2});
  }
  // Gaps of 254..65536 (4095 / 4096: the 12-bit limit) and beyond 2^24 within 2^25 columns; a
  // row with entries at 0 and 2^24 + 5.
  std::vector<std::vector<std::int32_t>> rows = {{3}, {}, {3}};
  for (std::int32_t gap : {254, 255, 256, 4095, 4096, 65535, 65536, (1 << 24) + 3, 14, 15, 1, 16})
    rows[0].push_back(rows[0].back() + gap);
  rows[2] = rows[0];
  rows.push_back({(1 << 25) - 1});
  rows.push_back({0, (1 << 24) + 5});
  Seen seen;
  for (int c : {1, 8})
    expectEmulationMatches(fromRows(1 << 25, rows), "gaps in 2^25 columns", {c, 2}, &seen);
  EXPECT_GT(seen.segmented, 0);
  expectWideMatches(fromRows(1 << 25, rows), "gaps in 2^25 columns", {1, 2});
  // Every entry far from the previous: every entry its own segment (slices of 4).
  std::vector<std::int32_t> sparse;
  for (int k = 0; k < 300; ++k) sparse.push_back(k * 1000);
  expectEmulationMatches(fromRows(300000, {sparse, sparse, {}, sparse}), "every entry its own segment",
                         {1, 2});
  expectWideMatches(fromRows(300000, {sparse, sparse, {}, sparse}), "entries 1000 apart", {1, 2});
  // Rows all shorter than a slice (one slice each, many rows per chunk).
  expectEmulationMatches(randomCsr(3000, 500, 31, 41, true, 0.2), "rows shorter than 32", {1, 2});
}

// Layouts without segmented slices and without the row buffer (blocks of 8 warps, or rowBuffer
// 0) sum their row ends two at a time (sumPair): a row that ends
// waits for the next one, and a task's last waiting row pairs with the row still open at its end
// or is summed alone. prostate-1/256 (short rows of narrow spans, as the synthetic dose matrices)
// at 1, 2 and 8 chunks a task must take every branch; the counts from the headers say it did.
TEST(SpmvSlicedOffset8Emulated, RowEndsSummedInPairs) {
  const HalfCsr m = makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 256));
  std::int64_t oddOpen = 0, oddClosed = 0, manyEnds = 0;
  for (int c : {1, 2, 8}) {
    const SlicedOffset8Options o{c, 2, 4, -1, 0, 0, 0};  // without the row buffer
    const SlicedOffset8 s = encodeSlicedOffset8(m, o);
    ASSERT_EQ(s.segmentedSlices, 0) << "the pairing path is the one without segments";
    ASSERT_EQ(s.rowBuffer, 0);
    for (std::size_t t = 0; t < s.tasks.size(); ++t) {
      const std::int64_t first = std::int64_t(t) * c * SlicedOffset8::kChunk;
      const std::int64_t last = std::min<std::int64_t>(s.nSlices, first + c * SlicedOffset8::kChunk);
      int ends = 0;
      for (std::int64_t sl = first; sl < last; ++sl) ends += int(s.headers[std::size_t(sl)] >> 31);
      const bool closed = (s.headers[std::size_t(last - 1)] >> 31) != 0;
      if (ends % 2) ++(closed ? oddClosed : oddOpen);
    }
    for (std::int64_t ch = 0; ch < s.nChunks; ++ch) {
      int ends = 0;
      for (int j = 0; j < SlicedOffset8::kChunk; ++j)
        ends += int(s.headers[std::size_t(ch * SlicedOffset8::kChunk + j)] >> 31);
      manyEnds += ends >= 3;
    }
    expectEmulationMatches(m, "prostate-1/256", o);
  }
  expectWideMatches(m, "prostate-1/256", {2, 2, 4, -1, 0, 0, 0});
  EXPECT_GT(oddOpen, 10);
  EXPECT_GT(oddClosed, 10);
  EXPECT_GT(manyEnds, 10);
}

// The row buffer (SlicedOffset8Options::rowBuffer, flushRows): a task's finished rows wait in
// 8 slots of shared memory; a chunk whose row ends would not fit flushes the slots first (often
// fewer than 8), and a task's open row takes the last slot as its tail. prostate-1/256 at 1, 2
// and 8 chunks a task and every width; the counts from the headers say that flushes of 8 and of
// fewer, and an open row meeting 8 full slots, all happened.
TEST(SpmvSlicedOffset8Emulated, RowsSummedThroughTheSharedMemoryBuffer) {
  const HalfCsr m = makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 256));
  std::int64_t fullFlush = 0, partialFlush = 0, fullAtEnd = 0;
  for (int c : {1, 2, 8}) {
    SlicedOffset8Options o{c, 2};
    o.rowBuffer = 1;
    const SlicedOffset8 s = encodeSlicedOffset8(m, o);
    ASSERT_EQ(s.rowBuffer, 1);
    for (std::size_t t = 0; t < s.tasks.size(); ++t) {
      const std::int64_t first = std::int64_t(t) * c * SlicedOffset8::kChunk;
      const std::int64_t last =
          std::min<std::int64_t>(s.nSlices, first + c * SlicedOffset8::kChunk);
      int buffered = 0;
      for (std::int64_t ch = first; ch < last; ch += SlicedOffset8::kChunk) {
        int ends = 0;
        for (std::int64_t sl = ch; sl < std::min(last, ch + SlicedOffset8::kChunk); ++sl)
          ends += int(s.headers[std::size_t(sl)] >> 31);
        if (buffered + ends > 8) {
          ++(buffered == 8 ? fullFlush : partialFlush);
          buffered = 0;
        }
        buffered += ends;
      }
      fullAtEnd += buffered == 8 && (s.headers[std::size_t(last - 1)] >> 31) == 0;
    }
    expectEmulationMatches(m, "prostate-1/256", o);
    if (c == 2) expectWideMatches(m, "prostate-1/256", o);
  }
  EXPECT_GT(fullFlush, 10);
  EXPECT_GT(partialFlush, 10);
  EXPECT_GT(fullAtEnd, 0);
  SlicedOffset8Options o{1, 2};
  o.rowBuffer = 1;
  for (const auto& [name, a] : awkwardMatrices()) {
    if (a.cols >= (std::int64_t(1) << 30)) continue;
    expectEmulationMatches(a, name, o);
  }
  expectEmulationMatches(randomCsr(3000, 500, 31, 41, true, 0.2), "rows shorter than 32", o);
  expectWideMatches(randomCsr(3000, 500, 31, 41, true, 0.2), "rows shorter than 32", o);
  // Segmented layouts and blocks of 8 warps keep the butterflies: the option is not taken.
  const SlicedOffset8 segmented =
      encodeSlicedOffset8(transpose(randomCsr(600, 5000, 900, 31, true, 0.3)), {1, 2, 4, 0});
  EXPECT_GT(segmented.segmentedChunks, 0);
  EXPECT_EQ(segmented.warpsPerBlock, 2);
  EXPECT_EQ(segmented.rowBuffer, 0);
  o.warpsPerBlock = 8;
  EXPECT_EQ(encodeSlicedOffset8(m, o).rowBuffer, 0);
  // Nor where x exceeds kRowBufferMaxXBytes (it would lose L1 to the buffers). The default task
  // length: 12 chunks with the buffer, 8 without.
  const SlicedOffset8 chosen = encodeSlicedOffset8(m);
  EXPECT_EQ(chosen.rowBuffer, 1);
  EXPECT_EQ(chosen.chunksPerTask, 12);
  expectEmulationMatches(m, "prostate-1/256 (the encoder's choices)", {});
  std::vector<std::int32_t> run;  // 40 neighbours: no segment
  for (int k = 0; k < 40; ++k) run.push_back(1000 + k);
  const std::int64_t most = kRowBufferMaxXBytes / 8;
  EXPECT_EQ(encodeSlicedOffset8(fromRows(most, {run, {}, run})).rowBuffer, 1);
  const SlicedOffset8 wide = encodeSlicedOffset8(fromRows(most + 1, {run, {}, run}));
  EXPECT_EQ(wide.rowBuffer, 0);
  EXPECT_EQ(wide.chunksPerTask, 8);
}

TEST(SpmvSlicedOffset8Emulated, OneLongRowInManyPieces) {
  Seen seen;
  for (int c : {1, 4}) expectEmulationMatches(hugeRow(20000), "one row of 20000", {c, 2}, &seen);
  expectWideMatches(hugeRow(20000), "one row of 20000", {1, 2}, &seen);
  EXPECT_GT(seen.split, 0);
}

}  // namespace
}  // namespace penumbra::spmv
