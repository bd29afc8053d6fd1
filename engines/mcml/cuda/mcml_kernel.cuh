#pragma once
// Between the kernel's translation unit (mcml_cuda.cu: constant memory, templated kernel) and
// the multi-GPU driver (mcml_launch.cu).
#include <cuda_runtime.h>

#include <vector>

#include "mcml/cuda/mcml_fast_math.cuh"
#include "mcml/cuda/mcml_tally.cuh"
#include "mcml/mcml_transport.hpp"

namespace penumbra::mcml::cuda {

/// Copies the transport constants and the fast step's layer table (makeGpuLayers) into the
/// current device's constant memory.
void uploadSetup(const TransportSetup<float>& s, const std::vector<GpuLayer>& layers);

struct LaunchShape {
  int grid = 0, block = 0, sharedBytes = 0, registers = 0;
  int sharedNr = 0, sharedNz = 0;  ///< the A_rz region buffered in shared memory
  double occupancy = 0;
};

struct LaunchInput {
  std::uint64_t first = 0, count = 0;  ///< packets [first, first + count)
  unsigned long long* nextPacket = nullptr;  ///< one zeroed device counter: the packet pool
  int numLayers = 0, nr = 0, nz = 0;
  int usedNz = 0;  ///< depth bins the medium reaches (no deposit lies deeper)
};

/// Launches the persistent-thread kernel on `stream`; sizes the shared-memory region of A_rz
/// (methods that have one) from the shared memory left per block at full occupancy.
LaunchShape launchMcmlKernel(TallyMethod m, const LaunchInput& in, TallyPtrs t, cudaStream_t stream);

}  // namespace penumbra::mcml::cuda
