#pragma once
// Host memory for a result volume that a GPU backend downloads into by DMA: a pooled
// VoxelVector<float> (the result's own type, handed to the caller by move) whose pages are
// touched and page-locked. Made on a helper thread while the GPU works (the photon, proton and
// compare backends keep the next one ready between calls).
//
// The block stays page-locked after it is handed out: the voxel pool (core/voxel_memory.hpp)
// keeps it locked while the caller owns it and after the caller frees it, and the next result of
// the same size reuses it, so a warm call neither locks nor unlocks anything.
//
// Why (measured on the H200 machine with a scratch program, 64 MiB): a fresh std::vector<float>
// of 16M voxels costs 30 ms (zero fill through 4 KiB page faults; 10.5 ms with transparent huge
// pages), a pageable download 7.2 ms into touched memory and 52 ms into fresh memory;
// page-locked transfers take 1.2 ms each way, and cudaHostRegister / cudaHostUnregister of
// touched memory 3.6 / 1.2 ms.
#include <cuda_runtime.h>

#include <cstddef>
#include <mutex>

#include "core/voxel_memory.hpp"

namespace penumbra::cuda {

/// Gives the voxel pool CUDA's page locking (once per process).
inline void installVoxelLockHooks() {
  static std::once_flag once;
  std::call_once(once, [] {
    voxel_memory::LockHooks h;
    h.lock = [](void* p, std::size_t bytes) {
      if (cudaHostRegister(p, bytes, cudaHostRegisterPortable) == cudaSuccess) return true;
      (void)cudaGetLastError();  // not fatal: transfers then go through pageable memory
      return false;
    };
    h.unlock = [](void* p) {
      if (cudaHostUnregister(p) != cudaSuccess) (void)cudaGetLastError();
    };
    voxel_memory::installLockHooks(h);
  });
}

struct HostOutput {
  VoxelVector<float> data;
  bool locked = false;  ///< page-locked: the download goes by DMA straight into it

  /// n floats of value `fill`, page-locked for `device` from voxel_memory::kPooledFrom on when
  /// CUDA allows it (otherwise pageable, downloaded through the driver's staging). Runs on a
  /// helper thread. (A caller that downloads only part of the volume fills the rest this way.)
  static HostOutput make(std::size_t n, int device, float fill) {
    installVoxelLockHooks();
    HostOutput out;
    // A reused block: a 64 MiB fill over mapped pages; a fresh one: huge-page faults.
    out.data.resize(n, fill);
    if (n * sizeof(float) < voxel_memory::kPooledFrom) return out;
    out.locked = cudaSetDevice(device) == cudaSuccess && voxel_memory::lockBlock(out.data.data());
    if (!out.locked) (void)cudaGetLastError();
    return out;
  }
};

}  // namespace penumbra::cuda
