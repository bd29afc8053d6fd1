#pragma once
// Between the kernel's translation unit (mcml_cuda.cu: constant memory, templated kernel) and
// the multi-GPU driver (mcml_launch.cu).
#include <cuda_runtime.h>

#include "mcml/cuda/mcml_tally.cuh"
#include "mcml/mcml_transport.hpp"

namespace penumbra::mcml::cuda {

/// Copies the transport constants into the current device's constant memory.
void uploadSetup(const TransportSetup<float>& s);

struct LaunchShape {
  int grid = 0, block = 0, sharedBytes = 0, registers = 0;
  double occupancy = 0;
};

/// Launches the persistent-thread kernel for packets [first, first + count) on `stream`.
LaunchShape launchMcmlKernel(TallyMethod m, std::uint64_t first, std::uint64_t count,
                             const TallyPtrs& t, cudaStream_t stream);

}  // namespace penumbra::mcml::cuda
