// StepCsr (engines/spmv/step_csr.hpp) without a GPU: exact round trips of every matrix of the
// SpMV tests and of the awkward shapes, at both step widths and several task sizes; the layout's
// invariants (tasks tile the groups, escapes exactly where the step does not fit, split rows,
// sentinels); the CPU reference on the encoding equal to multiplyCpu bit for bit; thread-count
// independence; and the bytes per non-zero it stores.
#include "spmv/step_csr.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "spmv/spmv.hpp"
#include "layout_round_trip.hpp"
#include "spmv_test_matrices.hpp"

namespace penumbra::spmv {
namespace {

using namespace spmv::test;

/// Invariants of the layout that the kernel relies on.
void checkLayout(const StepCsr& s, const HalfCsr& m, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(s.values.size(), std::size_t((s.groups + StepCsr::kSlackGroups) * 8));
  ASSERT_EQ(s.steps.size(), std::size_t((s.groups + StepCsr::kSlackGroups) * s.stepBits));
  ASSERT_EQ(s.rowFirstGroup.size(), s.rowIndex.size());
  for (int k = 0; k < StepCsr::kSentinels; ++k)
    ASSERT_EQ(s.rowFirstGroup[s.rowFirstGroup.size() - 1 - std::size_t(k)],
              std::uint32_t(s.groups));
  std::uint32_t g = 0, esc = 0;
  for (std::size_t t = 0; t < s.tasks.size(); ++t) {
    const StepTask& task = s.tasks[t];
    ASSERT_EQ(task.groupBegin, g) << "task " << t;
    ASSERT_GT(task.groupEnd, task.groupBegin);
    ASSERT_LE(task.groupEnd - task.groupBegin, s.taskGroups);
    ASSERT_EQ(task.escBegin, esc);
    ASSERT_LE(s.rowFirstGroup[task.ordBegin], task.groupBegin);
    ASSERT_GT(s.rowFirstGroup[task.ordBegin + 1], task.groupBegin);
    g = task.groupEnd;
    // Escapes of the task: codes equal to the escape code.
    for (std::uint32_t q = task.groupBegin; q < task.groupEnd; ++q)
      for (int k = 0; k < 8; ++k) {
        const int code = s.stepBits == 8
                             ? s.steps[q * 8 + std::uint32_t(k)]
                             : (s.steps[q * 4 + std::uint32_t(k / 2)] >> (4 * (k & 1))) & 15;
        esc += code == s.escapeCode();
      }
  }
  ASSERT_EQ(g, std::uint32_t(s.groups));
  ASSERT_EQ(esc, s.escapes.size());
  for (std::uint32_t e : s.escapes) ASSERT_TRUE(e == 0 || e >= std::uint32_t(s.escapeCode())) << e;
  for (const SplitRow& r : s.splitRows) {
    ASSERT_LT(r.firstTask, r.lastTask);
    ASSERT_EQ(s.rowIndex[s.tasks[r.firstTask].ordBegin], r.row);
    for (std::uint32_t t = r.firstTask + 1; t <= r.lastTask; ++t)
      ASSERT_EQ(s.rowIndex[s.tasks[t].ordBegin], r.row);
  }
  std::int64_t empty = 0;
  for (const EmptyRun& r : s.emptyRuns) empty += r.count;
  ASSERT_EQ(empty + s.nonEmptyRows(), m.rows);
}

void expectRoundTrip(const HalfCsr& m, const std::string& name, const StepCsrOptions& o) {
  const std::string what = name + " (bits " + std::to_string(o.stepBits) + ", task " +
                           std::to_string(o.taskGroups) + ")";
  const StepCsr s = encodeStepCsr(m, o);
  if (o.stepBits) {
    ASSERT_EQ(s.stepBits, o.stepBits);
  }
  checkLayout(s, m, what);
  ASSERT_NO_FATAL_FAILURE(expectSameCsr(decodeStepCsr(s), m, what));
  if (m.cols > 10000000) return;  // x would not fit; the decode above is the check
  ASSERT_NO_FATAL_FAILURE(expectProductBitForBit(
      m, [&](const double* x, double* y) { multiplyStepCsrCpu(s, x, y, 3); }, what));
}

void expectRoundTrips(const HalfCsr& m, const std::string& name) {
  for (int bits : {0, 4, 8})
    for (std::int64_t task : {0, 32, 96}) expectRoundTrip(m, name, {bits, task, 2});
}

TEST(SpmvStepCsr, RoundTripsEveryMatrixOfTheSpmvTests) {
  for (const auto& [name, m] : existingTestMatrices()) expectRoundTrips(m, name);
}

TEST(SpmvStepCsr, RoundTripsAwkwardShapes) {
  for (const auto& [name, m] : awkwardMatrices()) expectRoundTrips(m, name);
  const HalfCsr huge = hugeRow(1000000);
  for (int bits : {4, 8}) expectRoundTrip(huge, "one row of 1e6", {bits, 0, 0});
}

TEST(SpmvStepCsr, RoundTripsTheProtonEngineMatrix) {
  const HalfCsr d = protonPhantomMatrix();
  expectRoundTrips(d, "proton random phantom");
  expectRoundTrips(transpose(d), "proton random phantom^T");
}

TEST(SpmvStepCsr, EscapesExactlyWhereTheStepDoesNotFit) {
  // Row 0 of columnGaps(): from column 5, steps 254, 255, 256, 65535, 65536, 2^24 + 3, 14, 15, 1,
  // 13, 16, 2^30, then up to the largest column. Rows restart from their first column, so the
  // jumps between rows (0, backwards, up to 2^31 - 1) cost no escape.
  const HalfCsr m = columnGaps();
  const StepCsr s8 = encodeStepCsr(m, {8, 0, 1}), s4 = encodeStepCsr(m, {4, 0, 1});
  ASSERT_EQ(s8.tasks.size(), 1u);
  const std::uint32_t last =
      std::uint32_t(INT32_MAX) -
      (5u + 254 + 255 + 256 + 65535 + 65536 + (1u << 24) + 3 + 14 + 15 + 1 + 13 + 16 + (1u << 30));
  const std::vector<std::uint32_t> esc8 = {255, 256, 65535, 65536, (1u << 24) + 3, 1u << 30, last};
  EXPECT_EQ(s8.escapes, esc8);
  const std::vector<std::uint32_t> esc4 = {254, 255, 256,      65535, 65536, (1u << 24) + 3,
                                           15,  16,  1u << 30, last,  15};
  EXPECT_EQ(s4.escapes, esc4);  // the last: 30 -> 45 in row 2
  EXPECT_EQ(s8.rowFirstCol[0], 5u);
  EXPECT_EQ(s8.steps[0], 1);    // a row's first code: its first column from rowFirstCol - 1
  EXPECT_EQ(s8.steps[1], 254);  // the largest step that is not escaped
  EXPECT_EQ(s4.steps[0] & 15, 1);
}

TEST(SpmvStepCsr, WidthIsTheOneWithFewerBytesAndEncodingIgnoresThreads) {
  // Dose-like rows (steps 1..3): 4 bits. Random columns over 200 000: 8 bits.
  const HalfCsr dose = makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 50), 2);
  EXPECT_EQ(encodeStepCsr(dose).stepBits, 4);
  EXPECT_EQ(encodeStepCsr(randomCsr(3000, 2000, 300, 9)).stepBits, 8);
  const StepCsr a = encodeStepCsr(dose, {0, 64, 1}), b = encodeStepCsr(dose, {0, 64, 5});
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.escapes, b.escapes);
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  EXPECT_EQ(0, std::memcmp(a.tasks.data(), b.tasks.data(), a.tasks.size() * sizeof(StepTask)));
}

TEST(SpmvStepCsr, LongRowsAreSplitIntoTasksOfAtMostTheTaskSize) {
  const HalfCsr huge = hugeRow(100000);  // row 39: 12 500 groups; rows 0..38 and 40..69 empty
  const StepCsr s = encodeStepCsr(huge, {8, 1024, 0});
  ASSERT_EQ(s.splitRows.size(), 1u);
  EXPECT_EQ(s.splitRows[0].row, 39);
  EXPECT_EQ(s.splitRows[0].firstTask, 0u);
  EXPECT_EQ(s.splitRows[0].lastTask, 12u);  // ceil(12500 / 1024) = 13 pieces
  EXPECT_EQ(s.tasks.size(), 13u);
  EXPECT_EQ(s.emptyRuns.size(), 2u);
  // Every piece restarts the column chain: pieces 1..12 start far from column 0 and so with an
  // escape; the first starts at column 0 (step 1), and the gap of 3 in the middle fits.
  EXPECT_EQ(s.escapes.size(), 12u);
}

TEST(SpmvStepCsr, RealBytesCountWhatTheKernelsRead) {
  const HalfCsr m = randomCsr(3000, 200000, 300, 9, true, 0.4);  // wide delta16 slices, empty rows
  const Delta16Columns cols = buildDelta16Columns(m, 2);
  const RowBins bins = buildRowBins(m, 4096);
  ASSERT_GT(cols.wideSlices(), 0);
  EXPECT_EQ(
      delta16RealBytes(m),
      delta16RealBytes(m.rows, m.cols, m.nnz(), std::int64_t(cols.slices.size()), cols.wideSlices(),
                       std::int64_t(bins.longRows.size() + bins.warpRows.size()),
                       std::int64_t(bins.emptyRuns.size())));
  const StepCsr s = encodeStepCsr(m, {8, 64, 2});
  const StepCsrBytes b = stepCsrBytes(s);
  EXPECT_EQ(b.values, 16.0 * double(s.groups));
  EXPECT_EQ(b.steps, 8.0 * double(s.groups));
  EXPECT_EQ(b.escapes, 4.0 * double(s.escapes.size()));
  EXPECT_EQ(b.rowInfo, 12.0 * double(s.nonEmptyRows()));
  EXPECT_EQ(b.vectors, 8.0 * double(m.rows + m.cols));
  EXPECT_GT(b.tasks, 16.0 * double(s.tasks.size()));
  EXPECT_EQ(b.total(), b.matrix() + b.vectors);
}

}  // namespace
}  // namespace penumbra::spmv
