// A dose matrix that stays on the GPU (issue 14): the device transpose against the host one, the
// delta16 layout built on the device against the host planner's (through the products, bit for
// bit), the proton engine's device-resident build against its downloaded one, and the optimiser
// on an engine made from a device matrix against the same optimiser on the host-built engine.
// Label gpu: every test skips without a device, but the first, which checks the message a
// machine without a GPU gets.
#include <gtest/gtest.h>

#include <cstring>

#include "core/device.hpp"
#include "core/error.hpp"
#include "optimise/optimise.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "spmv/spmv.hpp"
#include "layout_round_trip.hpp"
#include "spmv_test_matrices.hpp"
#include "gpu_test_support.hpp"

namespace penumbra::spmv {
namespace {

using namespace spmv::test;

bool haveGpu(std::string* why) { return !queryCudaDevices(why).empty(); }

bool sameBits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

/// Every matrix of the SpMV tests and the awkward shapes, but the column-gaps matrix: its 2^31
/// columns would make a transpose of 2^31 rows (16 GiB of offsets), which the device transpose
/// refuses by design.
std::vector<NamedMatrix> matrices() {
  std::vector<NamedMatrix> all = existingTestMatrices();
  for (NamedMatrix& m : awkwardMatrices())
    if (m.name != "column gaps") all.push_back(std::move(m));
  all.push_back({"one row of 100000", hugeRow(100000)});
  return all;
}

TEST(SpmvDeviceMatrix, WithoutAGpuTheEngineSaysWhy) {
  std::string why;
  if (haveGpu(&why)) GTEST_SKIP() << "a GPU is present: the no-GPU message is not reachable";
  try {
    SpmvEngine e(DeviceHalfCsr{});
    FAIL() << "an engine on a device matrix was made without a GPU";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
    EXPECT_NE(std::string(e.what()).find("GPU"), std::string::npos) << e.what();
  }
}

TEST(SpmvDeviceMatrix, TransposeOnTheDeviceIsTheHostTranspose) {
  REQUIRE_GPU();
  for (const NamedMatrix& nm : matrices()) {
    const DeviceHalfCsr d = DeviceHalfCsr::upload(nm.m);
    expectSameCsr(d.download(), nm.m, nm.name + ": round trip");
    const DeviceHalfCsr t = transposeOnDevice(d);
    expectSameCsr(t.download(), transpose(nm.m), nm.name + "^T");
  }
}

TEST(SpmvDeviceMatrix, ProductsEqualTheHostBuiltEngineBitForBit) {
  REQUIRE_GPU();
  for (const NamedMatrix& nm : matrices()) {
    SpmvOptions o;
    o.backend = Backend::Cuda;
    const SpmvEngine host(nm.m, o);
    const SpmvEngine dev(DeviceHalfCsr::upload(nm.m), o);
    EXPECT_FALSE(dev.hasHostMatrices());
    EXPECT_EQ(dev.matrix(Product::D).rows, nm.m.rows);
    EXPECT_EQ(dev.matrix(Product::Dt).rows, nm.m.cols);
    for (Product p : {Product::D, Product::Dt}) {
      const std::int64_t n = p == Product::D ? nm.m.cols : nm.m.rows;
      const std::vector<double> x = randomVector(n, 77);
      std::vector<double> a, b;
      host.multiply(p, x, a);
      dev.multiply(p, x, b);
      EXPECT_TRUE(sameBits(a, b)) << nm.name << (p == Product::D ? " D x" : " D^T x");
      if (p == Product::D && nm.m.nnz() > 0) {
        std::vector<double> ref(std::size_t(nm.m.rows));
        multiplyCpu(nm.m, x.data(), ref.data());
        EXPECT_LT(compareToReference(b, ref).relError, 1e-12) << nm.name;
      }
    }
  }
}

proton::ProtonDoseRequest randomPlan(std::uint32_t seed) {
  proton::ProtonPhantomCase pc = proton::makeRandomPhantomCase(seed, 40);
  proton::ProtonDoseRequest req;
  req.ct = std::make_shared<const CtVolume>(std::move(pc.ct));
  req.beams = pc.beams;
  req.backend = Backend::Cuda;
  req.params.computeDoseMatrix = true;
  return req;
}

TEST(SpmvDeviceMatrix, ProtonBuildKeptOnTheGpuIsTheDownloadedMatrix) {
  REQUIRE_GPU();
  for (std::uint32_t seed : {3u, 8u}) {
    proton::ProtonDoseRequest req = randomPlan(seed);
    const proton::ProtonDoseResult host = proton::computeProtonDose(req);
    req.params.doseMatrixOnDevice = true;
    const proton::ProtonDoseResult dev = proton::computeProtonDose(req);
    ASSERT_TRUE(host.matrix && !host.deviceMatrix);
    ASSERT_TRUE(dev.deviceMatrix && !dev.matrix);
    ASSERT_GT(host.matrix->nnz(), 0);
    expectSameCsr(dev.deviceMatrix->download(), *host.matrix, "seed " + std::to_string(seed));
  }
}

TEST(SpmvDeviceMatrix, OptimiserOnTheDeviceMatrixMatchesTheHostBuiltEngine) {
  REQUIRE_GPU();
  proton::ProtonDoseRequest req = randomPlan(5);
  req.params.doseMatrixOnDevice = true;
  proton::ProtonDoseResult built = proton::computeProtonDose(req);
  ASSERT_TRUE(built.deviceMatrix);
  const HalfCsr m = built.deviceMatrix->download();
  SpmvOptions o;
  o.backend = Backend::Cuda;
  const SpmvEngine host(m, o);
  const SpmvEngine dev(std::move(*built.deviceMatrix), o);
  // A target: the voxels the plan's first spots reach most; a ring of every other voxel.
  std::vector<double> d;
  host.multiply(Product::D, std::vector<double>(std::size_t(m.cols), 1.0), d);
  double peak = 0;
  for (double v : d) peak = std::max(peak, v);
  std::vector<std::int64_t> target, rest;
  for (std::size_t i = 0; i < d.size(); ++i)
    (d[i] > 0.5 * peak ? target : rest).push_back(std::int64_t(i));
  ASSERT_FALSE(target.empty());
  const optimise::PlanObjective objective(
      {optimise::targetObjective("T", target, 2.0, 1.0, 1.9, 10.0, 2.1, 10.0),
       optimise::organAtRiskObjective("R", rest, 1.0, 1.0)});
  optimise::OptimiserOptions opt;
  opt.maxIterations = 25;
  const std::vector<double> w0(std::size_t(m.cols), 1.0);
  const optimise::OptimiseResult a = optimise::optimiseSpotWeights(host, objective, w0, opt);
  const optimise::OptimiseResult b = optimise::optimiseSpotWeights(dev, objective, w0, opt);
  EXPECT_TRUE(b.loopOnGpu);
  EXPECT_GT(a.iterations, 3);
  EXPECT_EQ(a.iterations, b.iterations);
  EXPECT_TRUE(sameBits(a.weights, b.weights)) << "the same layouts must give the same iterates";
  EXPECT_EQ(a.objective, b.objective);
  EXPECT_LT(b.objective, b.initialObjective);
}

}  // namespace
}  // namespace penumbra::spmv
