#pragma once
// RAII page-locked host allocation for the small results a kernel sequence copies back
// (counters, sums, histograms): an asynchronous copy into pageable memory returns only once the
// copy is done, which would stall the host in the middle of enqueuing a launch sequence.
// cudaMallocHost took 31 ms for 64 MiB on the H200 machine (photon_workspace.cuh): keep one
// and reuse it.
#include <cuda_runtime.h>

#include <cstddef>

#include "core/cuda/cuda_check.cuh"

namespace penumbra::cuda {

template <typename T>
class PinnedBuffer {
public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { release(); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  /// At least count elements (contents lost when it grows).
  void reserve(std::size_t count) {
    if (count <= count_) return;
    release();
    PENUMBRA_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&ptr_), count * sizeof(T)));
    count_ = count;
  }
  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }

private:
  void release() {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace penumbra::cuda
