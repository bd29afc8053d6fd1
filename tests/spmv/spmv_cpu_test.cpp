// SpMV engine without a GPU: the CPU reference on hand-checked products, the transpose, the
// 16-bit delta layout (decoded exactly, wide slices included), row bins, memory refusal, the
// synthetic generator, and the engine's CPU path with cancel.
#include <gtest/gtest.h>

#include <numeric>

#include "core/error.hpp"
#include "spmv/spmv.hpp"
#include "spmv/spmv_plan.hpp"
#include "spmv/synthetic.hpp"
#include "spmv_test_support.hpp"

namespace penumbra::spmv {
namespace {

using namespace spmv::test;

/// [[1 0 2], [0 0 0], [0 -3 0.5]] with scale 2.
HalfCsr small3x3() {
  HalfCsr m;
  m.rows = 3;
  m.cols = 3;
  m.rowPtr = {0, 2, 2, 4};
  m.colIdx = {0, 2, 1, 2};
  for (float v : {1.f, 2.f, -3.f, 0.5f}) m.values.push_back(floatToHalfBits(v));
  m.scale = 2;
  return m;
}

TEST(SpmvCpu, HandCheckedProductAndTranspose) {
  const HalfCsr m = small3x3();
  m.validate();
  const std::vector<double> x = {1, 10, 100};
  std::vector<double> y(3, -1);
  multiplyCpu(m, x.data(), y.data(), 2);
  EXPECT_EQ(y, (std::vector<double>{2 * (1 + 200), 0, 2 * (-30 + 50)}));
  const HalfCsr t = transpose(m, 3);
  t.validate();
  EXPECT_EQ(t.rowPtr, (std::vector<std::int64_t>{0, 1, 2, 4}));
  EXPECT_EQ(t.colIdx, (std::vector<std::int32_t>{0, 2, 0, 2}));
  std::vector<double> g(3);
  multiplyCpu(t, x.data(), g.data(), 1);
  EXPECT_EQ(g, (std::vector<double>{2 * 1, 2 * (-300), 2 * (2 + 50)}));
}

TEST(SpmvCpu, TransposeTwiceIsIdentityForAnyThreadCount) {
  const HalfCsr m = randomCsr(500, 77, 40, 3);
  const HalfCsr t1 = transpose(m, 1), t5 = transpose(m, 5);
  EXPECT_EQ(t1.colIdx, t5.colIdx);
  EXPECT_EQ(t1.values, t5.values);
  const HalfCsr back = transpose(t5, 4);
  EXPECT_EQ(back.rowPtr, m.rowPtr);
  EXPECT_EQ(back.colIdx, m.colIdx);
  EXPECT_EQ(back.values, m.values);
}

TEST(SpmvCpu, ResultDoesNotDependOnThreads) {
  const HalfCsr m = randomCsr(20000, 300, 200, 5);
  const auto x = randomVector(m.cols, 6);
  std::vector<double> a(std::size_t(m.rows)), b(std::size_t(m.rows));
  multiplyCpu(m, x.data(), a.data(), 1);
  multiplyCpu(m, x.data(), b.data(), 7);
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(double)));
}

TEST(SpmvCpu, ValidateNamesTheBrokenInvariant) {
  HalfCsr m = small3x3();
  m.colIdx[1] = 3;
  try {
    m.validate();
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos);
  }
  m = small3x3();
  m.rowPtr[2] = 1;
  EXPECT_THROW(m.validate(), Error);
}

TEST(SpmvPlan, DeltaColumnsDecodeExactlyIncludingWideSlices) {
  // 200 000 columns: rows that span more than 65 535 columns make wide slices.
  HalfCsr m = randomCsr(3000, 200000, 300, 9);
  const Delta16Columns c = buildDelta16Columns(m, 3);
  EXPECT_GT(c.wideSlices(), 0);
  for (std::int64_t e = 0; e < m.nnz(); ++e) ASSERT_EQ(decodeColumn(c, e), m.colIdx[std::size_t(e)]) << e;
  // Narrow columns: no wide slice.
  const HalfCsr n = randomCsr(3000, 5000, 300, 10);
  const Delta16Columns cn = buildDelta16Columns(n, 2);
  EXPECT_EQ(cn.wideSlices(), 0);
  for (std::int64_t e = 0; e < n.nnz(); ++e) ASSERT_EQ(decodeColumn(cn, e), n.colIdx[std::size_t(e)]);
}

TEST(SpmvPlan, RowBinsCoverEveryRowOnce) {
  const HalfCsr m = randomCsr(5000, 4000, 3000, 12, true, 0.5);
  const RowBins b = buildRowBins(m, 1000);
  std::vector<int> seen(std::size_t(m.rows), 0);
  for (const auto& t : b.longRows) {
    EXPECT_GT(t.length, 1000);
    ++seen[std::size_t(t.row)];
  }
  for (const auto& t : b.warpRows) {
    EXPECT_LE(t.length, 1000);
    EXPECT_EQ(t.begin, m.rowPtr[std::size_t(t.row)]);
    ++seen[std::size_t(t.row)];
  }
  for (const auto& r : b.emptyRuns) {
    EXPECT_LE(r.count, RowBins::kEmptyRunMax);
    for (int k = 0; k < r.count; ++k) ++seen[std::size_t(r.first + k)];
  }
  for (int s : seen) ASSERT_EQ(s, 1);
}

TEST(SpmvMemory, TooBigIsRefusedWithItsSize) {
  const std::int64_t rows = 2970000, cols = 68000, nnz = 1480000000;
  const SpmvMemoryEstimate e = estimateDeviceBytes(rows, cols, nnz, true);
  EXPECT_GT(e.total(), 2 * 6.0 * double(nnz));
  try {
    refuseIfTooBig(rows, cols, nnz, e, 8.0 * (1 << 30), "test GPU");
    FAIL() << "not refused";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), ErrorCode::OutOfMemory);
    const std::string w = err.what();
    EXPECT_NE(w.find("2970000 x 68000"), std::string::npos) << w;
    EXPECT_NE(w.find("1480000000"), std::string::npos) << w;
    EXPECT_NE(w.find("test GPU"), std::string::npos) << w;
  }
  EXPECT_NO_THROW(refuseIfTooBig(rows, cols, nnz, e, 200.0 * (1ull << 30), "big GPU"));
}

TEST(SpmvSynthetic, StructureMatchesTheSpecAndIsThreadIndependent) {
  const SyntheticSpec s = scaled(prostate1Spec(), 1.0 / 50);
  const HalfCsr a = makeSyntheticDoseMatrix(s, 1), b = makeSyntheticDoseMatrix(s, 3);
  a.validate();
  EXPECT_EQ(a.rowPtr, b.rowPtr);
  EXPECT_EQ(a.colIdx, b.colIdx);
  EXPECT_EQ(a.values, b.values);
  EXPECT_NEAR(double(a.nnz()), double(s.nnz), 1e-3 * double(s.nnz));
  std::int64_t empty = 0;
  for (std::int64_t r = 0; r < a.rows; ++r) empty += a.rowPtr[std::size_t(r) + 1] == a.rowPtr[std::size_t(r)];
  EXPECT_NEAR(double(empty) / double(a.rows), 0.7, 0.08);
  for (std::uint16_t v : a.values) ASSERT_GT(halfBitsToFloat(v), 0.f);
}

TEST(SpmvEngine, CpuBackendMatchesReferenceAndCancelsBetweenProducts) {
  HalfCsr m = randomCsr(400, 90, 60, 21);
  const HalfCsr copy = m;
  SpmvOptions o;
  o.backend = Backend::Cpu;
  SpmvEngine eng(std::move(m), o);
  EXPECT_EQ(eng.backend(), Backend::Cpu);
  const auto w = randomVector(90, 1);
  std::vector<double> d, ref(400);
  eng.multiply(Product::D, w, d);
  multiplyCpu(copy, w.data(), ref.data(), 1);
  EXPECT_EQ(d, ref);
  const auto r = randomVector(400, 2);
  std::vector<double> g;
  eng.multiply(Product::Dt, r, g);
  ASSERT_EQ(g.size(), 90u);
  for (std::size_t c = 0; c < 90; ++c) {  // g = D^T r by columns of D
    double s = 0;
    for (std::int64_t row = 0; row < copy.rows; ++row)
      for (std::int64_t e = copy.rowPtr[std::size_t(row)]; e < copy.rowPtr[std::size_t(row) + 1]; ++e)
        if (copy.colIdx[std::size_t(e)] == std::int32_t(c)) s += double(halfBitsToFloat(copy.values[std::size_t(e)])) * r[std::size_t(row)];
    EXPECT_EQ(g[c], s);  // same order: D^T rows hold old rows ascending
  }
  EXPECT_THROW(eng.multiply(Product::D, r, d), Error);  // wrong length
  CancelToken cancel;
  cancel.requestCancel();
  std::vector<std::vector<double>> ys;
  EXPECT_THROW(eng.multiplyBatch(Product::D, {w, w}, ys, JobControl{nullptr, &cancel}), CancelledError);
}

}  // namespace
}  // namespace penumbra::spmv
