// CUDA SpMV kernels against the CPU reference (label gpu; skips without a device): seeded random
// matrices (signed fp16 values, double vectors), a matrix the proton engine made, awkward shapes
// (empty rows, one row of 1e6 entries, columns not a multiple of 32, 1 x 1, no entries, wide
// column spans), every launch configuration of the optimised kernel, 100 repeats compared bit
// for bit. Outputs are poisoned with NaN before every launch (applyHost does it), and a result
// must be finite everywhere and non-zero somewhere. A failing case is dumped as .pcsr.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/device.hpp"
#include "matrix/matrix_io.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "spmv/spmv.hpp"
#include "spmv/synthetic.hpp"
#include "spmv_test_matrices.hpp"
#include "spmv_test_support.hpp"
#include "gpu_test_support.hpp"

namespace penumbra::spmv {
namespace {

using namespace spmv::test;

const Delta16Config kConfigs[] = {
    {2, 4, 32, 4096, 0}, {4, 4, 32, 64, 0},   {8, 1, 32, 4096, 0}, {8, 2, 32, 300, 0},
    {8, 1, 16, 4096, 0}, {8, 1, 8, 100, 0},   {8, 2, 16, 4096, 0}, {4, 2, 8, 4096, 0},
    {4, 2, 8, 4096, 6},  {4, 2, 16, 200, 6},  {8, 1, 32, 4096, 6}, {8, 1, 16, 4096, 6}};

/// Every kernel (and every optimised configuration) on A x, against the CPU, then 100 repeats
/// of each compared bit for bit with the first.
void checkAllKernels(const HalfCsr& a, const std::string& name, std::uint32_t seed, int repeats = 100) {
  const auto x = randomVector(a.cols, seed);
  std::vector<double> ref(std::size_t(a.rows));
  multiplyCpu(a, x.data(), ref.data(), 0);
  CudaSpmvMatrix dev(a, true);
  std::vector<std::pair<SpmvKernel, Delta16Config>> runs = {{SpmvKernel::WarpPerRow, {}}};
  for (const auto& c : kConfigs) runs.push_back({SpmvKernel::BinnedDelta16, c});
  for (const auto& [k, cfg] : runs) {
    if (k == SpmvKernel::BinnedDelta16) dev.reconfigure(cfg);
    const std::string what = name + " / " + kernelName(k) + (k == SpmvKernel::BinnedDelta16 ? " " + cfg.name() : "");
    std::vector<double> y(std::size_t(a.rows)), again(std::size_t(a.rows));
    dev.applyHost(x.data(), y.data(), k);
    const Comparison c = compareToReference(y, ref);
    EXPECT_EQ(c.nonFinite, 0u) << what << ": rows left unwritten";
    EXPECT_LT(c.relError, 1e-12) << what;
    if (c.maxAbsRef > 0) {
      double m = 0;
      for (double v : y) m = std::max(m, std::fabs(v));
      EXPECT_GT(m, 0.0) << what;
    }
    bool same = true;
    for (int r = 0; r < repeats && same; ++r) {
      dev.applyHost(x.data(), again.data(), k);
      same = std::memcmp(y.data(), again.data(), y.size() * sizeof(double)) == 0;
    }
    EXPECT_TRUE(same) << what << ": not bitwise reproducible";
    if (::testing::Test::HasFailure()) {
      const std::string dump = (std::filesystem::temp_directory_path() / ("spmv_fail_" + std::to_string(seed) + ".pcsr")).string();
      io::writeBinaryCsr(a, dump);
      ADD_FAILURE() << what << ": case written to " << dump;
      return;
    }
  }
}

TEST(SpmvCuda, RandomMatricesAndTheirTransposes) {
  REQUIRE_GPU();
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const HalfCsr a = randomCsr(3000 + seed * 777, 1000 + seed * 13, 600, seed);
    checkAllKernels(a, "random " + std::to_string(seed), seed);
    checkAllKernels(transpose(a), "random^T " + std::to_string(seed), seed + 100);
  }
}

TEST(SpmvCuda, SyntheticDoseMatrixLikeTheBench) {
  REQUIRE_GPU();
  const HalfCsr a = makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 20));
  checkAllKernels(a, "prostate-1/20", 7, 20);
  checkAllKernels(transpose(a), "prostate-1/20 ^T", 8, 20);
}

TEST(SpmvCuda, AwkwardShapes) {
  REQUIRE_GPU();
  // Columns not a multiple of 32, many empty rows.
  checkAllKernels(randomCsr(1001, 33, 33, 11, true, 0.7), "33 columns", 11);
  // 1 x 1.
  HalfCsr one;
  one.rows = one.cols = 1;
  one.rowPtr = {0, 1};
  one.colIdx = {0};
  one.values = {floatToHalfBits(0.75f)};
  checkAllKernels(one, "1x1", 12);
  // No entries at all (every row empty).
  HalfCsr none;
  none.rows = 5000;
  none.cols = 7;
  none.rowPtr.assign(5001, 0);
  checkAllKernels(none, "0 nnz", 13, 5);
  // One huge row of 1e6 entries among empty rows (positive values, as dose).
  HalfCsr huge;
  huge.rows = 70;
  huge.cols = 1000003;
  huge.rowPtr.assign(71, 0);
  for (int c = 0; c < 1000000; ++c) {
    huge.colIdx.push_back(c + 3 * (c >= 500000));  // a gap in the middle
    huge.values.push_back(floatToHalfBits(float(1 + (c % 7)) / 8.f));
  }
  for (int r = 40; r < 71; ++r) huge.rowPtr[std::size_t(r)] = 1000000;
  huge.validate();
  checkAllKernels(huge, "one row of 1e6", 14, 10);
  // Wide column spans (slices that need the high halves).
  checkAllKernels(randomCsr(2000, 300000, 400, 15), "300000 columns", 15, 10);
}

TEST(SpmvCuda, ProtonEngineMatrixAndEngineApi) {
  REQUIRE_GPU();
  const HalfCsr d = protonPhantomMatrix();
  ASSERT_GT(d.nnz(), 0);
  checkAllKernels(d, "proton random phantom", 21);
  checkAllKernels(transpose(d), "proton random phantom ^T", 22);

  SpmvOptions o;
  o.backend = Backend::Cuda;
  SpmvEngine eng(HalfCsr(d), o);
  ASSERT_EQ(eng.backend(), Backend::Cuda) << eng.message();
  std::vector<double> w(std::size_t(d.cols), 1.0), dose, ref(std::size_t(d.rows));
  eng.multiply(Product::D, w, dose);
  multiplyCpu(d, w.data(), ref.data());
  EXPECT_LT(compareToReference(dose, ref).relError, 1e-12);
  CancelToken cancel;
  cancel.requestCancel();
  std::vector<std::vector<double>> ys;
  EXPECT_THROW(eng.multiplyBatch(Product::Dt, {dose}, ys, JobControl{nullptr, &cancel}), CancelledError);
}

}  // namespace
}  // namespace penumbra::spmv
