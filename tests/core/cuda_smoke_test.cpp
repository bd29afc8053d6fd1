// CUDA smoke test: runs on the GPU machine, skips (not fails) where no device is usable.
#include <gtest/gtest.h>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/smoke.hpp"

using namespace penumbra;

TEST(CudaSmoke, DeviceQueryReportsAHopperOrNewerGpu) {
  std::string why;
  const auto devices = queryCudaDevices(&why);
  if (devices.empty()) GTEST_SKIP() << "no usable GPU: " << why;
  const auto& d = devices.front();
  std::cout << "[ device   ] " << d.name << ", " << d.multiprocessors << " SMs, "
            << formatBytes(double(d.totalMemoryBytes)) << ", cc " << d.computeMajor << "."
            << d.computeMinor << "\n";
  EXPECT_GE(d.computeMajor, 9);
  EXPECT_GT(d.multiprocessors, 0);
  EXPECT_GT(d.freeMemoryBytes, 0u);
  EXPECT_LE(d.freeMemoryBytes, d.totalMemoryBytes);
}

TEST(CudaSmoke, KernelWritesEveryElementOfPoisonedBuffer) {
  std::string why;
  if (queryCudaDevices(&why).empty()) GTEST_SKIP() << "no usable GPU: " << why;
  const int n = 1000003;  // not a multiple of the block size
  const auto out = cudaSmokeAffine(n, 3, -7);
  ASSERT_EQ(out.size(), std::size_t(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 3 * i - 7) << "element " << i;
}

TEST(CudaSmoke, WithoutCudaTheSmokeCallSaysSo) {
  if (builtWithCuda()) GTEST_SKIP() << "built with CUDA";
  try {
    cudaSmokeAffine(4, 1, 0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  }
}
