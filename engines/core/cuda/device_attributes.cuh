#pragma once
// What the engines' CUDA backends report about the device and their kernels: the current
// device's name and the register, shared-memory and occupancy fields of a KernelProfile.
#include <cuda_runtime.h>

#include <cstddef>
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

/// How many blocks of kernel fn (its host stub), with `block` threads and `sharedBytes` of dynamic
/// shared memory, fit on one SM of the current device, and the device's SM count. Asked once per
/// device, kernel, block and shared memory: they cannot change while the process runs, and the
/// two driver queries would otherwise sit in the host's part of every call that sizes a
/// persistent grid.
struct Residency {
  int blocksPerSm = 0, sms = 0;
};
inline Residency kernelResidency(const void* fn, int block, std::size_t sharedBytes = 0) {
  struct Key {
    int dev;
    const void* fn;
    int block;
    std::size_t shared;
    bool operator<(const Key& o) const {
      if (dev != o.dev) return dev < o.dev;
      if (fn != o.fn) return fn < o.fn;
      return block != o.block ? block < o.block : shared < o.shared;
    }
  };
  static std::map<Key, Residency> known;
  static std::mutex mutex;
  int dev = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));
  const Key key{dev, fn, block, sharedBytes};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = known.find(key);
    if (it != known.end()) return it->second;
  }
  Residency r;
  PENUMBRA_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocksPerSm, fn, block, sharedBytes));
  PENUMBRA_CUDA_CHECK(cudaDeviceGetAttribute(&r.sms, cudaDevAttrMultiProcessorCount, dev));
  const std::lock_guard<std::mutex> lock(mutex);
  known.emplace(key, r);
  return r;
}

/// fn: the kernel (its host stub, as `(const void*)kernel<...>`); block: threads per block of
/// its launches. The attributes of a kernel cannot change while the process runs: asked once per
/// device, kernel and block size (otherwise four CUDA calls a kernel kind on every call that
/// reports its profile, on the host's critical path of a few-millisecond gamma).
inline void describeKernel(const void* fn, int block, KernelProfile& p) {
  struct Facts {
    int registers = 0, shared = 0;
    double occupancy = 0;
  };
  struct Key {
    int dev;
    const void* fn;
    int block;
    bool operator<(const Key& o) const {
      return dev != o.dev ? dev < o.dev : (fn != o.fn ? fn < o.fn : block < o.block);
    }
  };
  static std::map<Key, Facts> known;
  static std::mutex mutex;
  int dev = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));
  const Key key{dev, fn, block};
  Facts f;
  bool found = false;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    const auto it = known.find(key);
    if (it != known.end()) {
      f = it->second;
      found = true;
    }
  }
  if (!found) {
    // cudaDeviceGetAttribute, not cudaGetDeviceProperties: the latter queries every attribute
    // and costs up to milliseconds, inside dose computations that aim at ~10 ms.
    int maxThreads = 0;
    PENUMBRA_CUDA_CHECK(
        cudaDeviceGetAttribute(&maxThreads, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    cudaFuncAttributes attr{};
    PENUMBRA_CUDA_CHECK(cudaFuncGetAttributes(&attr, fn));
    const int blocksPerSm = kernelResidency(fn, block).blocksPerSm;
    f.registers = attr.numRegs;
    f.shared = int(attr.sharedSizeBytes);
    f.occupancy = maxThreads > 0 ? double(blocksPerSm * block) / maxThreads : 0;
    const std::lock_guard<std::mutex> lock(mutex);
    known.emplace(key, f);
  }
  p.backend = "cuda";
  p.registersPerThread = f.registers;
  p.sharedBytesPerBlock = f.shared;
  p.theoreticalOccupancy = f.occupancy;
}

}  // namespace penumbra::cuda
