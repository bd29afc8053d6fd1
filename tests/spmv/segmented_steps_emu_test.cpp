// csr_spmv_segmented_steps' warp algorithm without a GPU: run by the warp emulator
// (warp_emulator.hpp) on the SpMV test matrices and the awkward shapes, at both step widths, with
// one and two lanes per group and with small tasks (many rows cut between tasks), against the CPU
// reference: relative error
// below 1e-12 on random values, bit for bit on small-integer values (every partial sum exact),
// every row written, no gather outside x.
#include <gtest/gtest.h>

#include <cstring>

#include "spmv/spmv.hpp"
#include "spmv/step_csr.hpp"
#include "spmv_test_matrices.hpp"
#include "warp_emulator.hpp"

namespace penumbra::spmv {
namespace {

using namespace spmv::test;

/// Both lane mappings (one or two lanes per group) on the encoding of m with options o.
void expectEmulationMatches(const HalfCsr& m, const std::string& name, const StepCsrOptions& o) {
  const StepCsr s = encodeStepCsr(m, o);
  const EmulationInputs in(m);
  const StepCsr si = encodeStepCsr(in.mi, o);
  std::vector<double> y(std::size_t(m.rows));
  for (int lanes : {1, 2}) {
    const std::string what = name + " (bits " + std::to_string(s.stepBits) + ", task " +
                             std::to_string(s.taskGroups) + ", " + std::to_string(s.tasks.size()) +
                             " tasks, " + std::to_string(s.splitRows.size()) + " split rows, " +
                             std::to_string(lanes) + " lanes per group)";
    ASSERT_EQ(emulateSegmentedSteps(s, in.x.data(), y.data(), lanes), 0)
        << what << ": gathers outside x";
    const Comparison c = compareToReference(y, in.ref);
    EXPECT_EQ(c.nonFinite, 0u) << what << ": rows left unwritten";
    EXPECT_LT(c.relError, 1e-12) << what;
    ASSERT_EQ(emulateSegmentedSteps(si, in.xi.data(), y.data(), lanes), 0) << what;
    for (std::size_t r = 0; r < y.size(); ++r)
      ASSERT_EQ(y[r], in.refi[r]) << what << ": integer-valued, row " << r;
  }
}

TEST(SpmvSegmentedStepsEmulated, SpmvTestMatricesAtBothWidths) {
  for (const auto& [name, m] : existingTestMatrices()) {
    if (m.nnz() > 400000) continue;  // the emulation takes ~ms per block of 256 entries
    for (int bits : {4, 8}) expectEmulationMatches(m, name, {bits, 0, 2});
  }
}

TEST(SpmvSegmentedStepsEmulated, SmallTasksCutRowsBetweenTasks) {
  const HalfCsr m = randomCsr(600, 5000, 900, 31, true, 0.3);
  for (int bits : {4, 8})
    for (std::int64_t task : {32, 33, 64, 100})
      expectEmulationMatches(m, "random 600x5000", {bits, task, 2});
  expectEmulationMatches(transpose(m), "random 600x5000^T", {0, 32, 2});
}

TEST(SpmvSegmentedStepsEmulated, AwkwardShapes) {
  for (const auto& [name, m] : awkwardMatrices()) {
    if (m.cols > 10000000) continue;  // columnGaps: x would not fit; checked on a narrow copy below
    for (int bits : {4, 8}) expectEmulationMatches(m, name, {bits, 32, 2});
  }
  // Gaps of 254..65536 and beyond 2^24 within 2^25 columns.
  std::vector<std::vector<std::int32_t>> rows = {{3}, {}, {3}};
  for (std::int32_t gap : {254, 255, 256, 65535, 65536, (1 << 24) + 3, 14, 15, 1, 16})
    rows[0].push_back(rows[0].back() + gap);
  rows[2] = rows[0];
  rows.push_back({(1 << 25) - 1});
  rows.push_back({0});
  for (int bits : {4, 8})
    expectEmulationMatches(fromRows(1 << 25, rows), "gaps in 2^25 columns", {bits, 32, 2});
  // Many escapes in one block (more than the 32-entry window): every step >= 255.
  std::vector<std::int32_t> sparse;
  for (int k = 0; k < 300; ++k) sparse.push_back(k * 1000);
  for (int bits : {4, 8})
    expectEmulationMatches(fromRows(300000, {sparse, sparse, {}, sparse}), "escapes only",
                           {bits, 0, 2});
}

TEST(SpmvSegmentedStepsEmulated, OneLongRowInManyPieces) {
  for (int bits : {4, 8}) expectEmulationMatches(hugeRow(20000), "one row of 20000", {bits, 64, 2});
}

}  // namespace
}  // namespace penumbra::spmv
