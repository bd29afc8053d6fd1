#include <algorithm>
#include <vector>

#include "core/bandwidth.hpp"
#include "core/cuda/device_buffer.cuh"
#include "core/device.hpp"

namespace penumbra {

KernelProfile measureCopyBandwidth(std::size_t bytes, int reps) {
  const auto devices = queryCudaDevices();
  PENUMBRA_REQUIRE(!devices.empty(), Unsupported, "no usable CUDA device");
  cuda::DeviceBuffer<unsigned char> src(bytes), dst(bytes);
  src.fillBytes(0x5A);  // never time on untouched memory
  cudaEvent_t start, stop;
  PENUMBRA_CUDA_CHECK(cudaEventCreate(&start));
  PENUMBRA_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<double> ms;
  for (int r = -3; r < reps; ++r) {  // three warm-ups
    PENUMBRA_CUDA_CHECK(cudaEventRecord(start));
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice));
    PENUMBRA_CUDA_CHECK(cudaEventRecord(stop));
    PENUMBRA_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    if (r >= 0) ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  KernelProfile p;
  p.kernel = "cudaMemcpy_d2d";
  p.variant = "runtime";
  p.backend = "cuda";
  p.device = devices.front().name;
  p.repetitions = reps;
  p.medianMs = medianOf(ms);
  p.minMs = *std::min_element(ms.begin(), ms.end());
  p.bytes = 2.0 * double(bytes);
  return p;
}

}  // namespace penumbra
