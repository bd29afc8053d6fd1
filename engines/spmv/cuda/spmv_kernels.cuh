#pragma once
// Launch wrappers of the SpMV kernels (definitions in csr_spmv_warp_per_row.cu,
// csr_spmv_binned_delta16.cu, csr_spmv_segmented_steps.cu and csr_spmv_sliced_offset8.cu). Every
// wrapper checks its launch.
#include <cuda_runtime.h>

#include <cstdint>

#include "spmv/segmented_steps_warp.hpp"
#include "spmv/sliced_offset8_warp.hpp"
#include "spmv/spmv_plan.hpp"

namespace penumbra::spmv::cuda {

/// Device view of a planned matrix for csr_spmv_binned_delta16.
struct Delta16View {
  const std::uint16_t* values = nullptr;  ///< paddedNnz halves
  const std::uint16_t* delta = nullptr;   ///< paddedNnz 16-bit column deltas
  const SliceRecord* slices = nullptr;
  const std::uint16_t* wideHigh = nullptr;
  const RowTask* longRows = nullptr;
  const RowTask* warpRows = nullptr;
  const EmptyRun* emptyRuns = nullptr;
  int nLong = 0, nWarp = 0, nEmpty = 0;
  double scale = 1;
};

struct LaunchShape {
  int grid = 0, block = 0;
  const void* kernel = nullptr;  ///< for cudaFuncGetAttributes
};

LaunchShape warpPerRowShape(std::int64_t rows);
void launchWarpPerRow(const std::uint16_t* values, const std::int32_t* colIdx,
                      const std::int64_t* rowPtr, std::int64_t rows, double scale,
                      const double* x, double* y, cudaStream_t stream);

/// entriesPerLoad in {2, 4, 8}, loadsInFlight in {1, 2, 4}, lanesPerRow in {8, 16, 32} (not every
/// combination is compiled: an unsupported one throws InvalidArgument).
LaunchShape delta16Shape(const Delta16View& v, int entriesPerLoad, int loadsInFlight, int lanesPerRow,
                         int minBlocksPerSm);
void launchDelta16(const Delta16View& v, int entriesPerLoad, int loadsInFlight, int lanesPerRow,
                   int minBlocksPerSm, const double* x, double* y, cudaStream_t stream);

/// stepBits 4 or 8 (the StepCsr's width), lanesPerGroup 1 or 2. Launches the main kernel and, when
/// rows are cut between tasks, the kernel that adds their pieces.
LaunchShape segmentedStepsShape(const StepKernelView& v, int stepBits, int lanesPerGroup);
void launchSegmentedSteps(const StepKernelView& v, int stepBits, int lanesPerGroup, const double* x, double* y,
                          cudaStream_t stream);

/// Launches csr_spmv_sliced_offset8 and, when rows are cut between tasks, the kernel that adds
/// their pieces.
/// offsetBits: the layout's (8, 12 or 16); high: its offsets beyond the low bytes
/// (DeviceSlicedOffset8::high(): offsets16 at 16 bits, offsetsHi at 12), unused at 8.
/// rowBuffer: the kernel that sums rows through shared memory (SlicedOffset8::rowBuffer; not in
/// the view: a larger view made ptxas spill in the 8-bit kernel, sm_90, 2026-11-28).
LaunchShape slicedOffset8Shape(const Offset8KernelView& v, int offsetBits, bool rowBuffer);
void launchSlicedOffset8(const Offset8KernelView& v, int offsetBits, bool rowBuffer,
                         const void* high, const double* x, double* y, cudaStream_t stream);

}  // namespace penumbra::spmv::cuda
