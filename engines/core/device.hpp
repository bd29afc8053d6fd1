#pragma once
/// GPU discovery and run-time backend choice. Implemented in cuda/device_query.cu when built
/// with CUDA and in device_query_nocuda.cpp otherwise, so callers never need #ifdefs.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace penumbra {

struct DeviceInfo {
  int index = -1;
  std::string name;
  int multiprocessors = 0;
  int computeMajor = 0, computeMinor = 0;
  std::size_t totalMemoryBytes = 0;
  std::size_t freeMemoryBytes = 0;
  std::size_t l2CacheBytes = 0;
  std::size_t sharedMemPerBlockOptin = 0;
  int maxThreadsPerMultiprocessor = 0;
  /// Theoretical DRAM bandwidth (memory clock x bus width x 2) and peak SM clock; 0: unknown.
  double memoryBytesPerS = 0, smClockHz = 0;
  /// DRAM bytes per SM and clock (theoretical): what a kernel bound by its SMs has to spare;
  /// 0 when unknown.
  double memoryBytesPerSmClock() const {
    return smClockHz > 0 && multiprocessors > 0 ? memoryBytesPerS / (smClockHz * multiprocessors)
                                                : 0.0;
  }
};

/// True when this binary contains CUDA code.
bool builtWithCuda();

/// Lists usable CUDA devices. When none is usable, returns an empty list and, if `whyNot`
/// is given, the reason (built without CUDA, no device, driver too old, ...). Without
/// `withFreeMemory` freeMemoryBytes stays 0: reading it is a driver call (~0.1 ms on the GPU
/// machine, 2026-11-26), which an engine whose cached buffers already hold its run can skip.
std::vector<DeviceInfo> queryCudaDevices(std::string* whyNot = nullptr,
                                         bool withFreeMemory = true);

/// Free memory of CUDA device `index` now; 0 when it cannot be read (or without CUDA).
std::size_t cudaFreeMemoryBytes(int index);

enum class Backend { Cpu, Cuda, Auto };

const char* toString(Backend b);
/// "cpu", "cuda", "auto" (case-insensitive); throws InvalidArgument otherwise.
Backend parseBackend(const std::string& text);

struct BackendChoice {
  Backend backend = Backend::Cpu;  ///< resolved: Cpu or Cuda, never Auto
  std::optional<DeviceInfo> device;
  std::string message;  ///< user-facing; non-empty when the request could not be honoured
  bool fellBack = false;
};

/// Resolves a requested backend. Auto and Cuda pick the first usable GPU; when none is usable
/// both fall back to the CPU and say why in `message` (a missing GPU is not an error: every
/// engine has a CPU path).
BackendChoice selectBackend(Backend requested, bool withFreeMemory = true);

/// Formats bytes for messages: "12.3 GiB".
std::string formatBytes(double bytes);

}  // namespace penumbra
