#pragma once
// The device buffers behind spmv::DeviceHalfCsr, and the device-side layout builders that
// CudaSpmvMatrix uses for a matrix that is already on the GPU.
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/device_buffer.cuh"
#include "spmv/device_half_csr.hpp"
#include "spmv/spmv_plan.hpp"

namespace penumbra::spmv {

struct DeviceHalfCsrData {
  penumbra::cuda::DeviceBuffer<std::int64_t> rowPtr;   ///< rows + 1
  penumbra::cuda::DeviceBuffer<std::int32_t> colIdx;   ///< nnz (may be released once a layout no longer needs it)
  penumbra::cuda::DeviceBuffer<std::uint16_t> values;  ///< >= nnz (a layout may pad it)
};

namespace cuda {

/// The delta16 columns (spmv_plan.hpp, buildDelta16Columns) of a device matrix, built on the
/// device: the same slices, bases, wide numbering and deltas as the host build.
struct DeviceDelta16 {
  std::int64_t paddedNnz = 0, wideSlices = 0;
  penumbra::cuda::DeviceBuffer<std::uint16_t> delta, wideHigh;
  penumbra::cuda::DeviceBuffer<SliceRecord> slices;
};
DeviceDelta16 buildDelta16OnDevice(const std::int32_t* colIdx, std::int64_t nnz, cudaStream_t s);

/// The row bins (spmv_plan.hpp, buildRowBins) built on the device from the row offsets: the same
/// long and warp rows in row order, so every row is summed by the same code as with the host's
/// bins and the products agree bit for bit. Runs of empty rows are cut at multiples of
/// RowBins::kEmptyRunMax rows rather than every kEmptyRunMax rows from the run's start (they
/// only write zeros, so where they are cut changes no result).
struct DeviceRowBins {
  penumbra::cuda::DeviceBuffer<RowTask> longRows, warpRows;
  penumbra::cuda::DeviceBuffer<EmptyRun> emptyRuns;
  std::int64_t nonEmptyRows = 0;
};
DeviceRowBins buildRowBinsOnDevice(const std::int64_t* rowPtr, std::int64_t rows, std::int64_t longThreshold,
                                   cudaStream_t s);

}  // namespace cuda
}  // namespace penumbra::spmv
