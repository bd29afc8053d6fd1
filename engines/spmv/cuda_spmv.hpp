#pragma once
/// A HalfCsr resident on the GPU in the layouts its kernels read, with their launches. Plain C++
/// header (no CUDA types), implemented in cuda/spmv_device_matrix.cu, or in spmv_nocuda.cpp
/// where every call throws Unsupported. Vectors are device pointers; nothing here synchronises.
#include <cstdint>
#include <memory>
#include <string>

#include "core/kernel_profile.hpp"
#include "spmv/device_half_csr.hpp"
#include "spmv/half_csr.hpp"
#include "spmv/sliced_offset8.hpp"
#include "spmv/step_csr.hpp"

namespace penumbra::spmv {

enum class SpmvKernel {
  WarpPerRow,      ///< "csr_spmv_warp_per_row": Liu et al.'s kernel, the baseline
  BinnedDelta16,   ///< "csr_spmv_binned_delta16": row bins + 16-bit column deltas (optimised)
  SegmentedSteps,  ///< "csr_spmv_segmented_steps": warp tasks over a StepCsr (issue 14)
  SlicedOffset8,   ///< "csr_spmv_sliced_offset8": 32-entry row slices, 8- to 16-bit offsets (issue 14)
};
const char* kernelName(SpmvKernel k);
/// The layout kernel k reads (plus the baseline's int32 indices when `withBaseline`).
SpmvLayouts layoutsFor(SpmvKernel k, bool withBaseline);

/// Launch shape of the optimised kernel (the tuning knobs that the bench sweeps).
/// Defaults: chosen from the sweeps in docs/spmv-notes.md (runs 1-3 on the H200).
struct Delta16Config {
  int entriesPerLoad = 4;   ///< 2, 4 or 8 consecutive entries per thread per load (4/8/16 B)
  int loadsInFlight = 2;    ///< groups each thread loads before it uses the first one
  int lanesPerRow = 8;      ///< lanes per row of the warp bin: 32, 16 or 8
  std::int64_t longThreshold = 4096;  ///< rows longer than this get a whole block
  int minBlocksPerSm = 6;   ///< 0: registers as ptxas likes; 6: capped at 40 (75 % occupancy)
  std::string name() const;  ///< "v4u2s8t4096b6"
};

class CudaSpmvMatrix {
public:
  /// Plans (delta columns, row bins) on the host and uploads. `withBaseline` also uploads the
  /// int32 indices the warp-per-row kernel reads. Refuses (OutOfMemory, sizes in the message)
  /// before allocating when the device's free memory does not hold it.
  CudaSpmvMatrix(const HalfCsr& m, bool withBaseline, Delta16Config config = {}, int threads = 0);
  /// The same with any set of layouts (the StepCsr is encoded with `steps`, the SlicedOffset8
  /// with `offset8`, threads included).
  CudaSpmvMatrix(const HalfCsr& m, const SpmvLayouts& layouts, Delta16Config config = {},
                 StepCsrOptions steps = {}, int threads = 0, SlicedOffset8Options offset8 = {});
  /// A matrix already on the GPU, adopted without a copy: its arrays become this object's, the
  /// delta16 layout is built on the device (the same layout as the host planner's), and the
  /// int32 indices are kept only `withBaseline` (else released: 4 B per entry). `m` is left empty.
  CudaSpmvMatrix(DeviceHalfCsr&& m, bool withBaseline, Delta16Config config = {});
  ~CudaSpmvMatrix();
  CudaSpmvMatrix(const CudaSpmvMatrix&) = delete;
  CudaSpmvMatrix& operator=(const CudaSpmvMatrix&) = delete;

  std::int64_t rows() const;
  std::int64_t cols() const;
  std::int64_t nnz() const;
  std::size_t deviceBytes() const;
  std::int64_t wideSlices() const;
  std::int64_t longRows() const;
  const Delta16Config& config() const;
  /// Re-bins the rows for another configuration (the delta columns stay); needs the HalfCsr
  /// given to the constructor to be still alive.
  void reconfigure(const Delta16Config& config);
  const SpmvLayouts& layouts() const;
  /// Step width (4 or 8) and task size (groups) of the StepCsr; 0 without the steps layout.
  int stepBits() const;
  std::int64_t stepTaskGroups() const;
  /// Chunks per task and segmented slices (two to four segments) of the SlicedOffset8; 0 without
  /// the offset8 layout.
  int offset8ChunksPerTask() const;
  std::int64_t offset8SegmentedSlices() const;

  /// y = A x on `stream` (a cudaStream_t; null: the default stream). dX: cols doubles,
  /// dY: rows doubles, both on the device. Every row of y is written.
  void apply(const double* dX, double* dY, SpmvKernel k, void* stream = nullptr) const;
  /// Host vectors: uploads x, poisons y on the device with NaN, launches, downloads y
  /// (scratch device vectors are allocated on first use and kept).
  void applyHost(const double* x, double* y, SpmvKernel k) const;

  /// Launch shape and resources of kernel k (grid, block, registers, shared memory, occupancy)
  /// and the traffic model of the issue: 6 B per entry + 12 B per row + 8 B per column, 2 flops
  /// per entry. Timing fields are left for the caller.
  KernelProfile describe(SpmvKernel k) const;
  /// Bytes one product with kernel k really moves: every array of its layout that the kernel
  /// reads, once (the values and indices, slice or step tables, escapes, row plan or offsets),
  /// y written once and x read once (8 B per row and per column, as the model counts the
  /// vectors: gathers of x after the first are taken to hit in cache).
  double realBytes(SpmvKernel k) const;

  /// Device arrays, for the cuSPARSE yardstick in the benchmark.
  const std::int64_t* deviceRowPtr() const;
  const std::int32_t* deviceColIdx() const;  ///< null unless withBaseline
  const std::uint16_t* deviceValues() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace penumbra::spmv
