// Device query for CUDA builds. A missing or unusable GPU is reported, never thrown: the
// caller falls back to the CPU backend.
#include <cuda_runtime.h>

#include <map>
#include <mutex>
#include <string>

#include "core/device.hpp"

namespace penumbra {

bool builtWithCuda() { return true; }

namespace {

/// What cudaGetDeviceProperties says about one device. It cannot change while the process runs,
/// and the call queries every attribute (up to milliseconds: see describeKernel), while
/// selectBackend() - every dose computation's first step - asks for it on every call. So it is
/// asked once per device; only the free memory is read on every query.
struct DeviceProperties {
  bool usable = false;
  DeviceInfo info;     ///< without freeMemoryBytes
  std::string whyNot;  ///< when not usable
};

std::mutex propertiesMutex;
std::map<int, DeviceProperties> propertiesCache;

/// The properties of device d, from the cache; false when CUDA cannot report them (not cached).
bool deviceProperties(int d, DeviceProperties& out) {
  {
    const std::lock_guard<std::mutex> lock(propertiesMutex);
    const auto it = propertiesCache.find(d);
    if (it != propertiesCache.end()) {
      out = it->second;
      return true;
    }
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  DeviceProperties p;
  // This build carries sm_90 code plus compute_90 PTX; older GPUs cannot run it.
  if (prop.major < 9) {
    p.whyNot = std::string(prop.name) + " has compute capability " + std::to_string(prop.major) +
               "." + std::to_string(prop.minor) + ", this build needs 9.0 or newer";
  } else {
    p.usable = true;
    p.info.index = d;
    p.info.name = prop.name;
    p.info.multiprocessors = prop.multiProcessorCount;
    p.info.computeMajor = prop.major;
    p.info.computeMinor = prop.minor;
    p.info.totalMemoryBytes = prop.totalGlobalMem;
    p.info.l2CacheBytes = std::size_t(prop.l2CacheSize);
    p.info.sharedMemPerBlockOptin = prop.sharedMemPerBlockOptin;
    p.info.maxThreadsPerMultiprocessor = prop.maxThreadsPerMultiProcessor;
    int memKHz = 0, busBits = 0, smKHz = 0;
    if (cudaDeviceGetAttribute(&memKHz, cudaDevAttrMemoryClockRate, d) == cudaSuccess &&
        cudaDeviceGetAttribute(&busBits, cudaDevAttrGlobalMemoryBusWidth, d) == cudaSuccess)
      p.info.memoryBytesPerS = 2.0 * double(memKHz) * 1e3 * double(busBits) / 8.0;
    if (cudaDeviceGetAttribute(&smKHz, cudaDevAttrClockRate, d) == cudaSuccess)
      p.info.smClockHz = double(smKHz) * 1e3;
    (void)cudaGetLastError();
  }
  const std::lock_guard<std::mutex> lock(propertiesMutex);
  out = propertiesCache.emplace(d, std::move(p)).first->second;
  return true;
}

}  // namespace

std::size_t cudaFreeMemoryBytes(int index) {
  std::size_t freeB = 0, totalB = 0;
  int prev = 0;
  if (cudaGetDevice(&prev) == cudaSuccess && cudaSetDevice(index) == cudaSuccess) {
    if (cudaMemGetInfo(&freeB, &totalB) != cudaSuccess) freeB = 0;
    (void)cudaGetLastError();
    cudaSetDevice(prev);
  }
  (void)cudaGetLastError();
  return freeB;
}

std::vector<DeviceInfo> queryCudaDevices(std::string* whyNot, bool withFreeMemory) {
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
    DeviceProperties props;
    if (!deviceProperties(d, props)) continue;
    if (!props.usable) {
      if (whyNot) *whyNot = props.whyNot;
      continue;
    }
    DeviceInfo info = props.info;
    if (withFreeMemory) info.freeMemoryBytes = cudaFreeMemoryBytes(d);
    out.push_back(info);
  }
  if (out.empty() && whyNot && whyNot->empty()) *whyNot = "no usable CUDA device";
  return out;
}

}  // namespace penumbra
