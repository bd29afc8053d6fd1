// CUDA ray tracing against the CPU float path (the same header code): voxel lists and
// radiological paths must agree bit for bit, since the CUDA file is built without FMA
// contraction. Skips cleanly where no device is usable; label "gpu".
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/device.hpp"
#include "core/error.hpp"
#include "ray_test_support.hpp"

using namespace penumbra;
using namespace penumbra::test;

namespace {

bool haveGpu(std::string* why) { return !queryCudaDevices(why).empty(); }

Volume<float> randomDensity(const Grid& g, std::mt19937_64& rng) {
  Volume<float> v(g);
  std::uniform_real_distribution<float> d(0.0f, 2.0f);
  for (float& x : v.data) x = d(rng);
  return v;
}

}  // namespace

TEST(RaytraceCuda, VoxelListsEqualCpuFloatBitForBit) {
  std::string why;
  if (!haveGpu(&why)) GTEST_SKIP() << "no usable GPU: " << why;
  std::mt19937_64 rng(555);
  long long segments = 0;
  for (int gi = 0; gi < 12; ++gi) {
    const Grid g = randomGrid(rng, gi == 0 ? 1 : 64);  // first grid: awkward 1x1x1
    std::vector<Ray> rays;
    for (int n = 0; n < 1000 + 37 * gi; ++n) rays.push_back(randomRay(g, rng));  // not /256
    for (DdaVariant v : kVariants) {
      const auto gpu = traceRaysCuda(g, rays, v);
      ASSERT_EQ(gpu.size(), rays.size());
      for (std::size_t r = 0; r < rays.size(); ++r) {
        const auto cpu = traceRay(g, rays[r], v, DdaPrecision::Float);
        for (const auto& s : gpu[r]) ASSERT_TRUE(s.lengthMm > 0) << "poison left in ray " << r;
        ASSERT_TRUE(identical(gpu[r], cpu))
            << toString(v) << " ray " << r << "; dumped to "
            << dumpCase("cuda_list_" + std::to_string(gi) + "_" + std::to_string(r), g, rays[r],
                        gpu[r], cpu);
        segments += static_cast<long long>(cpu.size());
      }
    }
  }
  EXPECT_GT(segments, 100000);
}

TEST(RaytraceCuda, RadiologicalPathsEqualCpuFloatBitForBitAndDoubleClosely) {
  std::string why;
  if (!haveGpu(&why)) GTEST_SKIP() << "no usable GPU: " << why;
  std::mt19937_64 rng(808);
  for (int gi = 0; gi < 6; ++gi) {
    const Grid g = randomGrid(rng, 96);
    const Volume<float> dens = randomDensity(g, rng);
    std::vector<Ray> rays;
    for (int n = 0; n < 20000 + 13 * gi; ++n) rays.push_back(randomRay(g, rng));
    for (DdaVariant v : kVariants) {
      std::vector<float> gpu(rays.size(), std::numeric_limits<float>::quiet_NaN());  // poisoned
      float ms = -1;
      traceRadiologicalPathsCuda(dens, rays, v, gpu, &ms);
      EXPECT_GE(ms, 0.0f);
      std::vector<double> cpuF, cpuD;
      traceRadiologicalPaths(dens, rays, v, cpuF, DdaPrecision::Float);
      traceRadiologicalPaths(dens, rays, v, cpuD, DdaPrecision::Double);
      ASSERT_EQ(gpu.size(), rays.size());
      int nonZero = 0, mismatches = 0;
      for (std::size_t r = 0; r < rays.size(); ++r) {
        ASSERT_FALSE(std::isnan(gpu[r])) << "ray " << r << " result never written";
        if (double(gpu[r]) != cpuF[r] && mismatches++ < 5)
          ADD_FAILURE() << toString(v) << " ray " << r << ": gpu " << gpu[r] << " cpu float "
                        << cpuF[r] << "\n"
                        << describe(g, rays[r]);
        EXPECT_NEAR(gpu[r], cpuD[r], 1e-4 * (cpuD[r] + 1)) << "ray " << r;
        nonZero += gpu[r] > 0;
      }
      EXPECT_EQ(mismatches, 0);
      EXPECT_GT(nonZero, int(rays.size()) / 2);
    }
  }
}

TEST(RaytraceCuda, TooSmallSegmentBufferIsReportedNotTruncated) {
  std::string why;
  if (!haveGpu(&why)) GTEST_SKIP() << "no usable GPU: " << why;
  const Grid g = makeGrid(10, 1, 1, {1, 1, 1});
  const std::vector<Ray> rays{{{-5, 0, 0}, {1, 0, 0}}};
  EXPECT_EQ(traceRaysCuda(g, rays, DdaVariant::Classic)[0].size(), 10u);
  try {
    traceRaysCuda(g, rays, DdaVariant::BranchFree, 4);
    FAIL() << "expected InvalidArgument";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
  }
}

TEST(RaytraceCuda, KernelTimingFillsTheProfile) {
  std::string why;
  if (!haveGpu(&why)) GTEST_SKIP() << "no usable GPU: " << why;
  const Grid g = makeGrid(128, 128, 128, {1, 1, 1});
  const Volume<float> water(g, 1.0f);
  std::mt19937_64 rng(1);
  std::vector<Ray> rays;
  for (int n = 0; n < 65536; ++n) rays.push_back(randomRay(g, rng));
  for (DdaVariant v : kVariants) {
    const KernelProfile p = timeRadiologicalPathsCuda(water, rays, v, 5);
    std::cout << "[ profile  ] " << p.kernel << " " << p.variant << " " << p.medianMs << " ms, "
              << p.registersPerThread << " regs, occupancy " << p.theoreticalOccupancy << ", "
              << p.gbPerS() << " GB/s\n";
    EXPECT_EQ(p.backend, "cuda");
    EXPECT_GT(p.medianMs, 0);
    EXPECT_GT(p.registersPerThread, 0);
    EXPECT_GT(p.theoreticalOccupancy, 0);
    EXPECT_GT(p.bytes, 0);
  }
}

TEST(RaytraceCuda, WithoutCudaTheCallsSaySo) {
  if (builtWithCuda()) GTEST_SKIP() << "built with CUDA";
  const Grid g = makeGrid(2, 2, 2, {1, 1, 1});
  const Volume<float> dens(g, 1.0f);
  std::vector<float> out;
  const std::vector<Ray> rays{{{-5, 0, 0}, {1, 0, 0}}};
  try {
    traceRadiologicalPathsCuda(dens, rays, DdaVariant::Classic, out);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  }
}
