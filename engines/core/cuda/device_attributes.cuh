#pragma once
// What the engines' CUDA backends report about the device and their kernels: the current
// device's name and the register, shared-memory and occupancy fields of a KernelProfile.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <string>

#include "core/cuda/cuda_check.cuh"
#include "core/kernel_profile.hpp"

namespace penumbra::cuda {

/// Name of the current device (cudaGetDeviceProperties is slow: once per device and process).
inline std::string currentDeviceName() {
  int dev = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));
  static std::map<int, std::string> names;
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (!names.count(dev)) {
    cudaDeviceProp prop{};
    PENUMBRA_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    names[dev] = prop.name;
  }
  return names[dev];
}

/// fn: the kernel (its host stub, as `(const void*)kernel<...>`); block: threads per block of
/// its launches.
inline void describeKernel(const void* fn, int block, KernelProfile& p) {
  // cudaDeviceGetAttribute, not cudaGetDeviceProperties: the latter queries every attribute
  // and costs up to milliseconds, inside dose computations that aim at ~10 ms.
  int dev = 0, maxThreads = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));
  PENUMBRA_CUDA_CHECK(
      cudaDeviceGetAttribute(&maxThreads, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  p.backend = "cuda";
  cudaFuncAttributes attr{};
  PENUMBRA_CUDA_CHECK(cudaFuncGetAttributes(&attr, fn));
  p.registersPerThread = attr.numRegs;
  p.sharedBytesPerBlock = int(attr.sharedSizeBytes);
  int blocksPerSm = 0;
  PENUMBRA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSm, fn, block, 0));
  p.theoreticalOccupancy = maxThreads > 0 ? double(blocksPerSm * block) / maxThreads : 0;
}

}  // namespace penumbra::cuda
