#pragma once
// RAII device allocation (after CUTLASS's DeviceAllocation): freed on every path, including
// exceptions thrown between allocation and use.
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/device.hpp"

namespace penumbra::cuda {

template <typename T>
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) { allocate(count); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) {
    o.ptr_ = nullptr;
    o.count_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = o.ptr_;
      count_ = o.count_;
      o.ptr_ = nullptr;
      o.count_ = 0;
    }
    return *this;
  }

  void allocate(std::size_t count) {
    release();
    if (count == 0) return;
    const cudaError_t err = cudaMalloc(&ptr_, count * sizeof(T));
    if (err != cudaSuccess) {
      ptr_ = nullptr;
      (void)cudaGetLastError();  // clear the sticky-free allocation error
      throw Error(ErrorCode::OutOfMemory,
                  "cannot allocate " + formatBytes(double(count) * sizeof(T)) + " on the GPU",
                  __FILE__, __LINE__, cudaGetErrorString(err));
    }
    count_ = count;
  }
  void release() noexcept {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }
  /// Synchronous: the data is on the GPU when this returns. cudaMemcpy from pageable memory
  /// returns once the source is staged, with the DMA possibly still running on the legacy default
  /// stream, and the engines' non-blocking streams do not wait for that stream: a kernel on one of
  /// them could read the buffer half-written (seen as a 1-in-10 bit difference between the SpMV
  /// engines built from the host and on the GPU under a loaded ctest run, H100 2026-11-26).
  void upload(const T* host, std::size_t count) {
    PENUMBRA_CUDA_CHECK(cudaMemcpy(ptr_, host, count * sizeof(T), cudaMemcpyHostToDevice));
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }
  template <typename A>
  void upload(const std::vector<T, A>& host) {
    if (count_ != host.size()) allocate(host.size());
    upload(host.data(), host.size());
  }
  void download(T* host, std::size_t count) const {
    PENUMBRA_CUDA_CHECK(cudaMemcpy(host, ptr_, count * sizeof(T), cudaMemcpyDeviceToHost));
  }
  std::vector<T> download() const {
    std::vector<T> h(count_);
    download(h.data(), count_);
    return h;
  }
  /// Synchronous, for the same reason as upload(): cudaMemset of device memory returns at once.
  void fillBytes(int value) {
    PENUMBRA_CUDA_CHECK(cudaMemset(ptr_, value, count_ * sizeof(T)));
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  }

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }

private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace penumbra::cuda
