// csr_spmv_segmented_steps on the GPU (label gpu; skips without a device), against the CPU: on
// seeded random matrices and their transposes, the synthetic dose matrix, the awkward shapes of
// issue 14 and the proton engine's matrix, at both step widths, one and two lanes per group and
// with small tasks (rows cut between tasks). Each case asks for
// - the contract of the delta16 kernel's tests: every row written (outputs poisoned with NaN
//   first), max |gpu - cpu| / max |cpu| < 1e-12 against multiplyCpu, non-zero where the
//   reference is, 100 repeats equal bit for bit;
// - bit for bit equality with the CPU emulation of the same warp algorithm (warp_emulator.hpp:
//   same summation order, so any difference is a GPU-only bug: a race, a missed wait);
// - bit for bit equality with multiplyCpu on small-integer values (every sum exact).
// A failing case is written to a .pcsr file.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "core/device.hpp"
#include "matrix/matrix_io.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "spmv/spmv.hpp"
#include "spmv_test_matrices.hpp"
#include "warp_emulator.hpp"
#include "gpu_test_support.hpp"

namespace penumbra::spmv {
namespace {

using namespace spmv::test;

SpmvLayouts stepsOnly() {
  SpmvLayouts l;
  l.delta16 = false;
  l.steps = true;
  return l;
}

void checkOne(const HalfCsr& a, const std::string& what, const StepCsrOptions& o,
              std::uint32_t seed, int repeats) {
  const auto x = randomVector(a.cols, seed);
  std::vector<double> ref(std::size_t(a.rows)), y(std::size_t(a.rows)), again(std::size_t(a.rows));
  multiplyCpu(a, x.data(), ref.data(), 0);
  CudaSpmvMatrix dev(a, stepsOnly(), {}, o);
  dev.applyHost(x.data(), y.data(), SpmvKernel::SegmentedSteps);
  const Comparison c = compareToReference(y, ref);
  EXPECT_EQ(c.nonFinite, 0u) << what << ": rows left unwritten";
  EXPECT_LT(c.relError, 1e-12) << what;
  if (c.maxAbsRef > 0) {
    double most = 0;
    for (double v : y) most = std::max(most, std::fabs(v));
    EXPECT_GT(most, 0.0) << what;
  }
  std::vector<double> emulated(std::size_t(a.rows));
  ASSERT_EQ(emulateSegmentedSteps(encodeStepCsr(a, o), x.data(), emulated.data(), o.lanesPerGroup),
            0)
      << what;
  EXPECT_EQ(0, std::memcmp(y.data(), emulated.data(), y.size() * sizeof(double)))
      << what << ": differs from the emulation";
  bool same = true;
  for (int r = 0; r < repeats && same; ++r) {
    dev.applyHost(x.data(), again.data(), SpmvKernel::SegmentedSteps);
    same = std::memcmp(y.data(), again.data(), y.size() * sizeof(double)) == 0;
  }
  EXPECT_TRUE(same) << what << ": not bitwise reproducible";
}

/// Both widths and lane mappings (and the given task size) on A and on A with small-integer values.
void checkSegmentedSteps(const HalfCsr& a, const std::string& name, std::uint32_t seed,
                         std::int64_t taskGroups = 0, int repeats = 100) {
  for (const auto& [bits, lanes] :
       {std::pair{4, 1}, std::pair{8, 1}, std::pair{4, 2}, std::pair{8, 2}}) {
    const StepCsrOptions o{bits, taskGroups, 0, lanes};
    const std::string what = name + " (bits " + std::to_string(bits) + ", task " +
                             std::to_string(taskGroups) + ", " + std::to_string(lanes) +
                             " lanes per group)";
    checkOne(a, what, o, seed, repeats);
    const HalfCsr ai = integerValued(a);
    std::vector<double> xi(std::size_t(a.cols)), ref(std::size_t(a.rows)), y(std::size_t(a.rows));
    for (std::size_t k = 0; k < xi.size(); ++k) xi[k] = double(int(k % 11) - 5);
    multiplyCpu(ai, xi.data(), ref.data(), 0);
    CudaSpmvMatrix dev(ai, stepsOnly(), {}, o);
    dev.applyHost(xi.data(), y.data(), SpmvKernel::SegmentedSteps);
    std::size_t wrong = 0, first = 0;
    for (std::size_t r = 0; r < y.size(); ++r)
      if (!(y[r] == ref[r]) && wrong++ == 0) first = r;
    EXPECT_EQ(wrong, 0u) << what << ": integer values, first wrong row " << first;
    if (::testing::Test::HasFailure()) {
      const std::string dump = (std::filesystem::temp_directory_path() /
                                ("spmv_steps_fail_" + std::to_string(seed) + ".pcsr"))
                                   .string();
      io::writeBinaryCsr(a, dump);
      ADD_FAILURE() << what << ": case written to " << dump;
      return;
    }
  }
}

TEST(SpmvSegmentedStepsCuda, RandomMatricesAndTheirTransposes) {
  REQUIRE_GPU();
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    const HalfCsr a = randomCsr(3000 + seed * 777, 1000 + seed * 13, 600, seed);
    checkSegmentedSteps(a, "random " + std::to_string(seed), seed);
    checkSegmentedSteps(transpose(a), "random^T " + std::to_string(seed), seed + 100, 32, 10);
  }
}

TEST(SpmvSegmentedStepsCuda, EveryMatrixOfTheSpmvTests) {
  REQUIRE_GPU();
  std::uint32_t seed = 200;
  for (const auto& [name, m] : existingTestMatrices()) checkSegmentedSteps(m, name, ++seed, 0, 5);
}

TEST(SpmvSegmentedStepsCuda, AwkwardShapes) {
  REQUIRE_GPU();
  std::uint32_t seed = 300;
  for (const auto& [name, m] : awkwardMatrices()) {
    if (m.cols > 10000000)
      continue;  // columnGaps: x would take 16 GB; the same gaps in 2^25 columns below
    checkSegmentedSteps(m, name, ++seed, 32, 10);
  }
  std::vector<std::vector<std::int32_t>> rows = {{3}, {}, {3}};
  for (std::int32_t gap : {254, 255, 256, 65535, 65536, (1 << 24) + 3, 14, 15, 1, 16})
    rows[0].push_back(rows[0].back() + gap);
  rows[2] = rows[0];
  rows.push_back({(1 << 25) - 1});
  rows.push_back({0});
  checkSegmentedSteps(fromRows(1 << 25, rows), "gaps in 2^25 columns", 310, 32, 10);
  std::vector<std::int32_t> sparse;  // every step escaped: more escapes per block than the window
  for (int k = 0; k < 300; ++k) sparse.push_back(k * 1000);
  checkSegmentedSteps(fromRows(300000, {sparse, sparse, {}, sparse}), "escapes only", 311, 0, 10);
  checkSegmentedSteps(hugeRow(1000000), "one row of 1e6", 312, 0, 10);
  checkSegmentedSteps(hugeRow(1000000), "one row of 1e6 in pieces of 32 groups", 313, 32, 10);
}

TEST(SpmvSegmentedStepsCuda, ProtonEngineMatrixAndEngineApi) {
  REQUIRE_GPU();
  const HalfCsr d = protonPhantomMatrix();
  ASSERT_GT(d.nnz(), 0);
  checkSegmentedSteps(d, "proton random phantom", 21);
  checkSegmentedSteps(transpose(d), "proton random phantom^T", 22);

  SpmvOptions o;
  o.backend = Backend::Cuda;
  o.kernel = SpmvKernel::SegmentedSteps;
  SpmvEngine eng(HalfCsr(d), o);
  ASSERT_EQ(eng.backend(), Backend::Cuda) << eng.message();
  ASSERT_FALSE(eng.deviceMatrix(Product::D)->layouts().delta16);  // only the layout it reads
  std::vector<double> w(std::size_t(d.cols), 1.0), dose, ref(std::size_t(d.rows));
  eng.multiply(Product::D, w, dose);
  multiplyCpu(d, w.data(), ref.data());
  EXPECT_LT(compareToReference(dose, ref).relError, 1e-12);
  std::vector<double> g, refT(std::size_t(d.cols));
  eng.multiply(Product::Dt, dose, g);
  multiplyCpu(eng.matrix(Product::Dt), dose.data(), refT.data());
  EXPECT_LT(compareToReference(g, refT).relError, 1e-12);
  EXPECT_THROW(eng.deviceMatrix(Product::D)->apply(nullptr, nullptr, SpmvKernel::BinnedDelta16),
               Error);
}

}  // namespace
}  // namespace penumbra::spmv
