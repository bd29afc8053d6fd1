// Device query for CUDA builds. A missing or unusable GPU is reported, never thrown: the
// caller falls back to the CPU backend.
#include <cuda_runtime.h>

#include <string>

#include "core/device.hpp"

namespace penumbra {

bool builtWithCuda() { return true; }

std::vector<DeviceInfo> queryCudaDevices(std::string* whyNot) {
  std::vector<DeviceInfo> out;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (whyNot) *whyNot = std::string("CUDA reports: ") + cudaGetErrorString(err);
    return out;
  }
  if (count == 0) {
    if (whyNot) *whyNot = "no CUDA device found";
    return out;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
      (void)cudaGetLastError();
      continue;
    }
    // This build carries sm_90 code plus compute_90 PTX; older GPUs cannot run it.
    if (prop.major < 9) {
      if (whyNot)
        *whyNot = std::string(prop.name) + " has compute capability " +
                  std::to_string(prop.major) + "." + std::to_string(prop.minor) +
                  ", this build needs 9.0 or newer";
      continue;
    }
    DeviceInfo info;
    info.index = d;
    info.name = prop.name;
    info.multiprocessors = prop.multiProcessorCount;
    info.computeMajor = prop.major;
    info.computeMinor = prop.minor;
    info.totalMemoryBytes = prop.totalGlobalMem;
    info.l2CacheBytes = std::size_t(prop.l2CacheSize);
    info.sharedMemPerBlockOptin = prop.sharedMemPerBlockOptin;
    info.maxThreadsPerMultiprocessor = prop.maxThreadsPerMultiProcessor;
    int prev = 0;
    if (cudaGetDevice(&prev) == cudaSuccess && cudaSetDevice(d) == cudaSuccess) {
      std::size_t freeB = 0, totalB = 0;
      if (cudaMemGetInfo(&freeB, &totalB) == cudaSuccess) info.freeMemoryBytes = freeB;
      (void)cudaGetLastError();
      cudaSetDevice(prev);
    }
    out.push_back(info);
  }
  if (out.empty() && whyNot && whyNot->empty()) *whyNot = "no usable CUDA device";
  return out;
}

}  // namespace penumbra
