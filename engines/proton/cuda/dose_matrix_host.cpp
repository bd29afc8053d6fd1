// The GPU-built dose matrix brought to the host as a DoseMatrixCsr (what the optimiser takes).
// For hn-2field at 1 mm the CSR is ~9 GB, so its host memory is the slow part, not the GPU:
// fresh std::vector memory is zero-filled through page faults (~6 GB/s with 2 MiB pages asked
// for, 2 GB/s without, on the H200 machine: core/cuda/host_output.cuh), and a pageable download
// runs at ~9 GB/s against ~55 GB/s page-locked. So the vectors are made on helper threads as
// soon as their sizes are known (the row offsets at once, the entries once counted, while the
// GPU writes them), with 2 MiB pages faulted in on several threads, page-locked by
// cudaHostRegister where CUDA allows, and the download then runs at PCIe speed.
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>
#include <thread>
#include <vector>

#include "core/cpu_stage.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/stream_event.cuh"
#include "core/host_memory.hpp"
#include "proton/cuda/dose_matrix_cuda.cuh"
#include "spmv/cuda/device_half_csr.cuh"

namespace penumbra::proton::detail {

namespace {

/// Faults in the pages of [p, p + n) on several threads. std::vector's zero fill runs on one
/// thread, and for fresh memory most of its time is the page faults (the kernel zeroing each
/// page): 6 GB of column indices take ~1 s that way (6.4 GB/s measured with 2 MiB pages), and
/// several threads share that part. p is reserved, not yet sized, storage of a trivial type: the
/// allocation created the T objects implicitly (C++20 [intro.object]), and resize() then
/// value-initialises them, so no value written here is ever read.
template <typename T>
void firstTouch(T* p, std::size_t n) {
  const int threads = std::clamp(int(std::thread::hardware_concurrency()) / 2, 1, 8);
  const std::size_t step = std::max<std::size_t>(1, 4096 / sizeof(T));  // one write per page
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([=] {
      const std::size_t lo = n * std::size_t(t) / std::size_t(threads);
      const std::size_t hi = n * std::size_t(t + 1) / std::size_t(threads);
      for (std::size_t i = lo; i < hi; i += step) p[i] = T{};
    });
  for (std::thread& th : pool) th.join();
}

/// A std::vector (the result's own type, handed out by move) touched and page-locked for the
/// download; unregistered before it is handed out.
template <typename T>
struct LockedVector {
  std::vector<T> data;
  bool registered = false;

  LockedVector() = default;
  LockedVector(const LockedVector&) = delete;
  LockedVector& operator=(const LockedVector&) = delete;
  ~LockedVector() { unregister(); }

  void unregister() noexcept {
    if (registered) cudaHostUnregister(data.data());
    registered = false;
  }
  /// n elements; runs on a helper thread.
  void make(std::size_t n, int device) {
    data.reserve(n);
    const std::size_t bytes = n * sizeof(T), huge = std::size_t(2) << 20;
    if (bytes >= 4 * huge) {
      const auto begin = reinterpret_cast<std::uintptr_t>(data.data());
      const std::uintptr_t lo = (begin + huge - 1) & ~(huge - 1), hi = (begin + bytes) & ~(huge - 1);
      if (hi > lo) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
    }
    if (bytes >= 64 * huge) firstTouch(data.data(), n);
    data.resize(n);  // zero fill: over resident pages after firstTouch
    if (bytes < 4 * huge) return;
    if (cudaSetDevice(device) == cudaSuccess &&
        cudaHostRegister(data.data(), bytes, cudaHostRegisterPortable) == cudaSuccess)
      registered = true;
    else
      (void)cudaGetLastError();  // not fatal: the download goes through pageable memory
  }
};

template <typename T, typename D>
void downloadAsync(LockedVector<T>& host, const D* device, cudaStream_t s) {
  static_assert(sizeof(T) == sizeof(D), "same element size on both sides");
  if (!host.data.empty())
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(host.data.data(), device, host.data.size() * sizeof(T),
                                        cudaMemcpyDeviceToHost, s));
}

}  // namespace

DoseMatrixCsr buildDoseMatrixCuda(const ResolvedRequest& r, const JobControl& job,
                                  std::vector<KernelProfile>& profiles) {
  const auto tStart = std::chrono::steady_clock::now();
  penumbra::cuda::requireCudaDevice();
  int device = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&device));
  const std::size_t rows = r.doseGrid.voxelCount();
  LockedVector<std::int64_t> hRowPtr;
  LockedVector<std::int32_t> hCol;
  LockedVector<std::uint16_t> hVal;
  // Declared after the vectors: on an exception the futures wait for their threads first.
  std::future<void> fRow, fCol, fVal;
  refuseIfHostMemoryExceeded(8.0 * double(rows + 1), "dose matrix", "row offsets");
  fRow = std::async(std::launch::async, [&] { hRowPtr.make(rows + 1, device); });
  auto onCounted = [&](std::int64_t nRows, std::int64_t nnz) {
    refuseIfHostMemoryExceeded(8.0 * double(nRows + 1) + 6.0 * double(nnz), "dose matrix",
                               std::to_string(nnz) + " entries x 6 B + row offsets");
    fCol = std::async(std::launch::async, [&, nnz] { hCol.make(std::size_t(nnz), device); });
    fVal = std::async(std::launch::async, [&, nnz] { hVal.make(std::size_t(nnz), device); });
  };
  DeviceDoseMatrix d = buildDoseMatrixOnDevice(r, job, profiles, onCounted);

  job.report(0.95, "dose matrix (GPU): download");
  const auto tDownload = std::chrono::steady_clock::now();
  for (std::future<void>* f : {&fRow, &fCol, &fVal})
    if (f->valid()) f->get();
  const double waitMs = msSince(tDownload);
  {
    penumbra::cuda::Stream stream;
    downloadAsync(hRowPtr, d.rowPtr.get(), stream.s);
    downloadAsync(hCol, d.colIdx.get(), stream.s);
    downloadAsync(hVal, d.values.get(), stream.s);
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream.s));
  }
  hRowPtr.unregister();
  hCol.unregister();
  hVal.unregister();

  DoseMatrixCsr m;
  m.rows = d.rows;
  m.cols = d.cols;
  m.scale = d.scale;
  m.relativeCutoff = d.relativeCutoff;
  m.droppedEntries = d.droppedEntries;
  m.rowPtr = std::move(hRowPtr.data);
  m.colIdx = std::move(hCol.data);
  m.values = std::move(hVal.data);
  const std::string name = profiles.empty() ? std::string("cuda") : profiles.back().device;
  // Host side of the download: waiting for the host vectors after the GPU finished (their zero
  // fill and page locking), then the copies and the unlocking.
  KernelProfile pw = cpuProfile("dose_matrix_host_memory", "wait", waitMs, 1);
  KernelProfile pd = cpuProfile("dose_matrix_download", "d2h", msSince(tDownload) - waitMs, 1);
  pd.bytes = 8.0 * double(rows + 1) + 6.0 * double(d.nnz);
  KernelProfile pt = cpuProfile("dose_matrix_build", "to-host", msSince(tStart), 1);
  for (KernelProfile* p : {&pw, &pd, &pt}) {
    p->backend = "cuda";
    p->device = name;
    p->blockX = 0;
    profiles.push_back(*p);
  }
  job.report(1.0, "dose matrix (GPU): done");
  return m;
}

std::shared_ptr<spmv::DeviceHalfCsr> buildDoseMatrixCudaOnDevice(const ResolvedRequest& r,
                                                                 const JobControl& job,
                                                                 std::vector<KernelProfile>& profiles) {
  DeviceDoseMatrix d = buildDoseMatrixOnDevice(r, job, profiles);
  auto m = std::make_shared<spmv::DeviceHalfCsr>();
  m->rows = d.rows;
  m->cols = d.cols;
  m->nnz = d.nnz;
  m->scale = d.scale;
  m->data->rowPtr = std::move(d.rowPtr);
  m->data->colIdx = std::move(d.colIdx);
  m->data->values = std::move(d.values);
  job.report(1.0, "dose matrix (GPU): done, kept on the GPU");
  return m;
}

}  // namespace penumbra::proton::detail
