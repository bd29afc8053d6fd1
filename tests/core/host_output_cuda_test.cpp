// core/cuda/host_output.cuh with the voxel pool: a GPU result's host memory is page-locked once
// and stays so while the caller owns it and after it is freed, and the next result of the same
// size reuses it (no lock or unlock on a warm call). Skips where no GPU is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/voxel_memory.hpp"
#include "gpu_test_support.hpp"
#if PENUMBRA_HAVE_CUDA
#include "core/cuda/host_output.cuh"
#endif

namespace penumbra {
namespace {

TEST(HostOutputCuda, AResultStaysPageLockedAndItsBlockServesTheNextResult) {
#if !PENUMBRA_HAVE_CUDA
  GTEST_SKIP() << "built without CUDA";
#else
  REQUIRE_GPU();
  voxel_memory::trim(0);
  const std::size_t n = std::size_t(256) * 256 * 64;  // 16 MiB of floats
  std::vector<float> src(n);
  for (std::size_t i = 0; i < n; ++i) src[i] = float(i % 1009) - 3.0f;
  float* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, n * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dev, src.data(), n * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);

  const float* first = nullptr;
  const std::size_t mapped0 = voxel_memory::stats().mapped;
  for (int call = 0; call < 3; ++call) {
    // The fill: 0 for a dose, NaN for a gamma volume whose unlisted stretches stay undownloaded.
    const float fill = call == 1 ? std::numeric_limits<float>::quiet_NaN() : 0.0f;
    cuda::HostOutput out = cuda::HostOutput::make(n, 0, fill);
    ASSERT_TRUE(out.locked) << "call " << call;
    ASSERT_EQ(out.data.size(), n);
    EXPECT_TRUE(std::all_of(out.data.begin(), out.data.end(), [&](float v) {
      return call == 1 ? std::isnan(v) : v == 0.0f;
    })) << "call " << call << ": filled";
    unsigned flags = 0;
    EXPECT_EQ(cudaHostGetFlags(&flags, out.data.data()), cudaSuccess) << "registered with CUDA";
    out.data[n / 2] = -1e30f;  // poison: the download must overwrite it
    ASSERT_EQ(cudaMemcpy(out.data.data(), dev, n * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    // (std::equal, not a temporary VoxelVector: that would take a pool block of its own.)
    EXPECT_TRUE(std::equal(src.begin(), src.end(), out.data.begin())) << "call " << call;
    if (call == 0) first = out.data.data();
    EXPECT_EQ(out.data.data(), first) << "the block freed by the previous call is reused";
    // `out` goes out of scope here: the caller dropping a result.
  }
  EXPECT_EQ(voxel_memory::stats().mapped, mapped0 + 1);
  EXPECT_EQ(voxel_memory::stats().lockedBlocks, 1u);
  EXPECT_GT(voxel_memory::trim(0), n * sizeof(float) - 1);
  EXPECT_EQ(voxel_memory::stats().lockedBlocks, 0u);
  unsigned flags = 0;
  EXPECT_NE(cudaHostGetFlags(&flags, const_cast<float*>(first)), cudaSuccess)
      << "unlocked when the pool freed it";
  (void)cudaGetLastError();
  cudaFree(dev);
#endif
}

}  // namespace
}  // namespace penumbra
