#include "core/cuda/device_buffer.cuh"
#include "core/smoke.hpp"

namespace penumbra {

namespace {
__global__ void __launch_bounds__(256) affineFill(std::int32_t* out, int n, std::int32_t a,
                                                  std::int32_t b) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * i + b;
}
}  // namespace

std::vector<std::int32_t> cudaSmokeAffine(int n, std::int32_t a, std::int32_t b) {
  cuda::DeviceBuffer<std::int32_t> buf{static_cast<std::size_t>(n)};
  buf.fillBytes(0xFF);  // poison: -1 everywhere, so unwritten elements are visible
  const int block = 256;
  affineFill<<<(n + block - 1) / block, block>>>(buf.get(), n, a, b);
  PENUMBRA_CUDA_CHECK_LAUNCH("affineFill");
  PENUMBRA_CUDA_CHECK(cudaDeviceSynchronize());
  return buf.download();
}

}  // namespace penumbra
