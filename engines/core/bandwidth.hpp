#pragma once
/// Measures the device's memory bandwidth with a large device-to-device cudaMemcpy, counting
/// bytes read plus bytes written (the convention of PLATFORM.md: 4.30 TB/s on the H200).
/// This is the "measured peak" that kernel profiles report a percentage of.
#include <cstddef>

#include "core/kernel_profile.hpp"

namespace penumbra {

/// Copies `bytes` between two device buffers `reps` times (after warm-ups); median time.
/// Throws Unsupported in builds without CUDA and Cuda/OutOfMemory errors on failure.
KernelProfile measureCopyBandwidth(std::size_t bytes, int reps);

}  // namespace penumbra
