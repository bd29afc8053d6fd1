#pragma once
// What the CUDA backend of the photon engine keeps between calls (photon_dose.hpp: "GPU cache
// across calls"): the density on the GPU with the key of the volume it came from, the work
// buffers (grown, never shrunk), and the page-locked host memory of the next result. One
// Workspace lives in detail::gpuCacheSlot() while idle; a run takes it out (exclusive use) and
// puts it back at the end (photon_dose_cuda.cu).
//
// Why the host buffers matter (measured on the H200 machine with a scratch program, 64 MiB):
// a fresh std::vector<float> of 16M voxels costs 30 ms (zero fill through 4 KiB page faults;
// 10.5 ms with transparent huge pages asked for by madvise), cudaMallocHost 31 ms and
// cudaFreeHost 9.5 ms, a pageable download 7.2 ms into touched memory and 52 ms into fresh
// memory, a pageable upload 10.7 ms; page-locked transfers take 1.2 ms each way, and
// cudaHostRegister / cudaHostUnregister of touched memory 3.6 / 1.2 ms.
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <cstdint>
#include <future>
#include <memory>
#include <utility>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/host_output.cuh"
#include "core/grid.hpp"
#include "photon/cuda/photon_cuda.cuh"

namespace penumbra::photon::detail {

using penumbra::cuda::HostOutput;

/// Identity of the density on the GPU: the input volume (owner, data, size, grid), the dose grid
/// and, for a CT, the HU -> RED curve.
struct DensityKey {
  std::weak_ptr<const void> owner;  ///< owner identity; expired once the volume is gone
  const void* data = nullptr;
  std::size_t voxels = 0;
  bool ct = false;
  std::vector<std::pair<double, double>> hlut;
  Grid input, dose;
  bool valid = false;
};

inline bool identicalGrid(const Grid& a, const Grid& b) {
  if (a.dims != b.dims) return false;
  for (int i = 0; i < 3; ++i) {
    if (a.spacing[i] != b.spacing[i] || a.origin[i] != b.origin[i]) return false;
    for (int j = 0; j < 3; ++j)
      if (a.direction.m[i][j] != b.direction.m[i][j]) return false;
  }
  return true;
}

/// Everything kept between calls; all device buffers grow on demand.
struct Workspace {
  int device = -1;
  DensityKey key;
  penumbra::cuda::DeviceBuffer<float> density, terma, dose, map, slots;
  penumbra::cuda::DeviceBuffer<std::uint8_t> bricks;  ///< of the current beam's TERMA
  penumbra::cuda::DeviceBuffer<cuda::SliceEntry> slices;
  penumbra::cuda::DeviceBuffer<cuda::Partial> partials, stats;
  /// The next result's host memory, prepared on a helper thread from the start of a run (off
  /// the next run's critical path, also for runs back to back), for nextOutputSize floats.
  std::future<HostOutput> nextOutput;
  std::size_t nextOutputSize = 0;

  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    if (nextOutput.valid()) nextOutput.wait();  // its block goes back to the voxel pool
  }

  std::size_t deviceBytes() const {
    return (density.size() + terma.size() + dose.size() + map.size() + slots.size()) *
               sizeof(float) +
           bricks.size() + slices.size() * sizeof(cuda::SliceEntry) +
           (partials.size() + stats.size()) * sizeof(cuda::Partial);
  }
};

}  // namespace penumbra::photon::detail
