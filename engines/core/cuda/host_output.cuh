#pragma once
// Host memory for a result volume that a GPU backend downloads into by DMA: a std::vector<float>
// (the result's own type, handed to the caller by move) whose pages are already touched and
// registered with CUDA. Made on a helper thread while the GPU works (photon and compare
// backends keep the next one ready between calls).
//
// Why (measured on the H200 machine with a scratch program, 64 MiB): a fresh std::vector<float>
// of 16M voxels costs 30 ms (zero fill through 4 KiB page faults; 10.5 ms with transparent huge
// pages asked for by madvise), a pageable download 7.2 ms into touched memory and 52 ms into
// fresh memory; page-locked transfers take 1.2 ms each way, and cudaHostRegister /
// cudaHostUnregister of touched memory 3.6 / 1.2 ms.
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <cstdint>
#include <vector>

namespace penumbra::cuda {

/// Unregistered (unregister()) before its data is handed out.
struct HostOutput {
  std::vector<float> data;
  bool registered = false;

  HostOutput() = default;
  HostOutput(HostOutput&& o) noexcept : data(std::move(o.data)), registered(o.registered) {
    o.registered = false;
  }
  HostOutput& operator=(HostOutput&& o) noexcept {
    if (this != &o) {
      unregister();
      data = std::move(o.data);
      registered = o.registered;
      o.registered = false;
    }
    return *this;
  }
  HostOutput(const HostOutput&) = delete;
  HostOutput& operator=(const HostOutput&) = delete;
  ~HostOutput() { unregister(); }

  void unregister() noexcept {
    if (registered) cudaHostUnregister(data.data());
    registered = false;
  }

  /// n floats, touched (zero), page-locked for `device` from 8 MiB on when CUDA allows it
  /// (otherwise plain memory, downloaded through the driver's staging). Runs on a helper thread.
  static HostOutput make(std::size_t n, int device) {
    HostOutput out;
    out.data.reserve(n);
    const std::size_t bytes = n * sizeof(float), huge = std::size_t(2) << 20;
    if (bytes >= 4 * huge) {
      // Ask for 2 MiB pages before the first touch: 32 faults instead of 16384 for 64 MiB.
      const auto begin = reinterpret_cast<std::uintptr_t>(out.data.data());
      const std::uintptr_t lo = (begin + huge - 1) & ~(huge - 1),
                           hi = (begin + bytes) & ~(huge - 1);
      if (hi > lo) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
    }
    out.data.resize(n);  // the zero fill touches every page
    // Small volumes download fast enough through pageable memory (and may share heap pages).
    if (bytes < 4 * huge) return out;
    if (cudaSetDevice(device) == cudaSuccess &&
        cudaHostRegister(out.data.data(), bytes, cudaHostRegisterPortable) == cudaSuccess)
      out.registered = true;
    else
      (void)cudaGetLastError();  // not fatal: the download then goes through pageable memory
    return out;
  }
};

}  // namespace penumbra::cuda
