#pragma once
// Every CUDA runtime call and kernel launch goes through these checks; a failure becomes a
// penumbra::Error with the runtime's error string and the call site (never exit()).
#include <cuda_runtime.h>

#include <string>

#include "core/error.hpp"

namespace penumbra::cuda {

inline void throwCudaError(cudaError_t err, const char* what, const char* file, int line) {
  const ErrorCode code =
      err == cudaErrorMemoryAllocation ? ErrorCode::OutOfMemory : ErrorCode::Cuda;
  throw Error(code, std::string(what) + " failed", file, line,
              std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err));
}

/// Throws Unsupported when the runtime counts no device: the cheap check of a backend's entry
/// point for direct callers (the engines' selectBackend() has checked the device properly).
inline void requireCudaDevice() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    PENUMBRA_THROW(Unsupported, "no usable CUDA device");
  }
}

}  // namespace penumbra::cuda

#define PENUMBRA_CUDA_CHECK(call)                                                   \
  do {                                                                              \
    const cudaError_t penumbra_err_ = (call);                                       \
    if (penumbra_err_ != cudaSuccess)                                               \
      ::penumbra::cuda::throwCudaError(penumbra_err_, #call, __FILE__, __LINE__);   \
  } while (0)

/// After a <<<>>> launch: catches bad configurations at once (no device synchronisation).
#define PENUMBRA_CUDA_CHECK_LAUNCH(name)                                            \
  do {                                                                              \
    const cudaError_t penumbra_err_ = cudaGetLastError();                           \
    if (penumbra_err_ != cudaSuccess)                                               \
      ::penumbra::cuda::throwCudaError(penumbra_err_, "launch of " name, __FILE__, __LINE__); \
  } while (0)
