// CudaSpmvMatrix: plan on the host (spmv_plan.cpp, step_csr.cpp, sliced_offset8.cpp), refuse what
// does not fit, upload, launch.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/stream_event.cuh"
#include "core/device.hpp"
#include "spmv/cuda/device_half_csr.cuh"
#include "spmv/cuda/device_sliced_offset8.cuh"
#include "spmv/cuda/device_step_csr.cuh"
#include "spmv/cuda/spmv_kernels.cuh"
#include "spmv/cuda_spmv.hpp"

namespace penumbra::spmv {

using penumbra::cuda::DeviceBuffer;

namespace {
template <typename T>
void put(DeviceBuffer<T>& b, const std::vector<T>& host) {
  if (host.empty())
    b.release();
  else
    b.upload(host);
}
}  // namespace

struct CudaSpmvMatrix::Impl {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  double scale = 1;
  Delta16Config config;
  SpmvLayouts layouts;
  std::int64_t wideSlices = 0, nonEmptyRows = 0;
  std::unique_ptr<cuda::DeviceStepCsr> steps;
  std::unique_ptr<cuda::DeviceSlicedOffset8> offset8;
  DeviceBuffer<std::uint16_t> values, delta, wideHigh;
  DeviceBuffer<SliceRecord> slices;
  DeviceBuffer<std::int64_t> rowPtr;
  DeviceBuffer<std::int32_t> colIdx;
  DeviceBuffer<RowTask> longRows, warpRows;
  DeviceBuffer<EmptyRun> emptyRuns;
  mutable DeviceBuffer<double> scratchX, scratchY;
  std::string device;

  void uploadBins(const RowBins& b) {
    put(longRows, b.longRows);
    put(warpRows, b.warpRows);
    put(emptyRuns, b.emptyRuns);
  }
  cuda::Delta16View view() const {
    cuda::Delta16View v;
    v.values = values.get();
    v.delta = delta.get();
    v.slices = slices.get();
    v.wideHigh = wideHigh.get();
    v.longRows = longRows.get();
    v.warpRows = warpRows.get();
    v.emptyRuns = emptyRuns.get();
    v.nLong = int(longRows.size());
    v.nWarp = int(warpRows.size());
    v.nEmpty = int(emptyRuns.size());
    v.scale = scale;
    return v;
  }
  // Where reconfigure() re-bins the rows from: the host matrix given to the constructor, or for
  // a matrix adopted from the device its row offsets there (rowPtr).
  const HalfCsr* source = nullptr;
  bool deviceBuilt = false;
};

CudaSpmvMatrix::CudaSpmvMatrix(const HalfCsr& m, bool withBaseline, Delta16Config config,
                               int threads)
    : CudaSpmvMatrix(m, layoutsFor(SpmvKernel::BinnedDelta16, withBaseline), config,
                     StepCsrOptions{0, 0, threads}, threads) {}

CudaSpmvMatrix::CudaSpmvMatrix(const HalfCsr& m, const SpmvLayouts& layouts, Delta16Config config,
                               StepCsrOptions stepOptions, int threads,
                               SlicedOffset8Options offset8Options)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  const auto devices = queryCudaDevices();
  PENUMBRA_REQUIRE(!devices.empty(), Unsupported, "SpMV: no usable CUDA device");
  PENUMBRA_REQUIRE(m.nnz() < (std::int64_t(1) << 40), Unsupported, "SpMV: matrix too large");
  s.rows = m.rows;
  s.cols = m.cols;
  s.nnz = m.nnz();
  s.scale = m.scale;
  s.config = config;
  s.layouts = layouts;
  s.device = devices.front().name;
  for (std::int64_t r = 0; r < m.rows; ++r)
    s.nonEmptyRows += m.rowPtr[std::size_t(r) + 1] > m.rowPtr[std::size_t(r)];
  // Check, then allocate: the layouts' bytes (with the true number of wide slices and the true
  // StepCsr) against the free memory, before the first cudaMalloc.
  const bool csr = layouts.delta16 || layouts.baseline;  // values and offsets in CSR order
  Delta16Columns cols;
  RowBins bins;
  if (layouts.delta16) {
    cols = buildDelta16Columns(m, threads);
    bins = buildRowBins(m, config.longThreshold);
  }
  StepCsr stepCsr;
  if (layouts.steps) stepCsr = encodeStepCsr(m, stepOptions);
  SlicedOffset8 sliced;
  if (layouts.offset8) {
    if (offset8Options.offsetBits == 0) {
      const double perSmClock = devices.front().memoryBytesPerSmClock();
      // The share of segmented slices takes a pass over the columns: only where it can matter.
      offset8Options.offsetBits = perSmClock >= kWideOffsetsBytesPerSmClock
                                      ? chooseOffsetBits(perSmClock, countSlices(m, threads))
                                      : 8;
    }
    sliced = encodeSlicedOffset8(m, offset8Options);
  }
  s.wideSlices = cols.wideSlices();
  const double paddedNnz = layouts.delta16 ? double(cols.paddedNnz) : double(m.nnz());
  const double need =
      (csr ? 2.0 * paddedNnz + 8.0 * double(m.rows + 1) : 0.0) + double(cols.delta.size()) * 2 +
      double(cols.slices.size()) * sizeof(SliceRecord) + double(cols.wideHigh.size()) * 2 +
      (layouts.baseline ? 4.0 * double(m.nnz()) : 0.0) +
      16.0 * double(bins.longRows.size() + bins.warpRows.size()) +
      8.0 * double(bins.emptyRuns.size()) + (layouts.steps ? stepCsrDeviceBytes(stepCsr) : 0.0) +
      (layouts.offset8 ? slicedOffset8DeviceBytes(sliced) : 0.0) + 8.0 * double(m.rows + m.cols);
  std::size_t freeB = 0, totalB = 0;
  PENUMBRA_CUDA_CHECK(cudaMemGetInfo(&freeB, &totalB));
  SpmvMemoryEstimate est;
  est.matrixBytes = need;
  refuseIfTooBig(m.rows, m.cols, m.nnz(), est, double(freeB), s.device);

  if (csr) {
    s.values.allocate(std::size_t(paddedNnz));
    s.values.fillBytes(0);
    if (m.nnz() > 0) s.values.upload(m.values.data(), m.values.size());
    put(s.rowPtr, m.rowPtr);
  }
  put(s.delta, cols.delta);
  put(s.slices, cols.slices);
  put(s.wideHigh, cols.wideHigh);
  if (layouts.baseline) put(s.colIdx, m.colIdx);
  s.uploadBins(bins);
  if (layouts.steps)
    s.steps = std::make_unique<cuda::DeviceStepCsr>(stepCsr, stepOptions.lanesPerGroup);
  if (layouts.offset8) s.offset8 = std::make_unique<cuda::DeviceSlicedOffset8>(sliced);
  s.source = &m;
}

CudaSpmvMatrix::CudaSpmvMatrix(DeviceHalfCsr&& m, bool withBaseline, Delta16Config config)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  PENUMBRA_REQUIRE(m.data && m.data->rowPtr.size() == std::size_t(m.rows) + 1, InvalidArgument,
                   "SpMV: the device matrix has no row offsets");
  PENUMBRA_REQUIRE(m.nnz == 0 || m.data->colIdx.size() >= std::size_t(m.nnz), InvalidArgument,
                   "SpMV: the device matrix's column indices were released");
  s.rows = m.rows;
  s.cols = m.cols;
  s.nnz = m.nnz;
  s.scale = m.scale;
  s.config = config;
  s.layouts = layoutsFor(SpmvKernel::BinnedDelta16, withBaseline);
  s.device = queryCudaDevices().front().name;
  penumbra::cuda::Stream stream;
  // The delta16 layout built where the matrix is: deltas (2 B per entry, padded to whole slices),
  // the values padded the same way, and the row bins.
  cuda::DeviceDelta16 delta = cuda::buildDelta16OnDevice(m.data->colIdx.get(), m.nnz, stream.s);
  if (m.data->values.size() < std::size_t(delta.paddedNnz)) {
    DeviceBuffer<std::uint16_t> padded(std::size_t(delta.paddedNnz));
    padded.fillBytes(0);
    if (m.nnz > 0) {
      PENUMBRA_CUDA_CHECK(cudaMemcpy(padded.get(), m.data->values.get(), std::size_t(m.nnz) * 2,
                                     cudaMemcpyDeviceToDevice));
      // A device-to-device cudaMemcpy returns before it is done, on the legacy stream, which the
      // optimiser's non-blocking streams do not wait for (see DeviceBuffer::upload).
      PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
    }
    m.data->values = std::move(padded);
  }
  cuda::DeviceRowBins bins =
      cuda::buildRowBinsOnDevice(m.data->rowPtr.get(), m.rows, config.longThreshold, stream.s);
  s.nonEmptyRows = bins.nonEmptyRows;
  s.longRows = std::move(bins.longRows);
  s.warpRows = std::move(bins.warpRows);
  s.emptyRuns = std::move(bins.emptyRuns);
  s.values = std::move(m.data->values);
  s.rowPtr = std::move(m.data->rowPtr);
  if (withBaseline)
    s.colIdx = std::move(m.data->colIdx);
  else
    m.data->colIdx.release();
  s.delta = std::move(delta.delta);
  s.slices = std::move(delta.slices);
  s.wideHigh = std::move(delta.wideHigh);
  s.wideSlices = delta.wideSlices;
  s.deviceBuilt = true;
  m.nnz = 0;
  m.rows = 0;
}

CudaSpmvMatrix::~CudaSpmvMatrix() = default;

std::int64_t CudaSpmvMatrix::rows() const { return impl_->rows; }
std::int64_t CudaSpmvMatrix::cols() const { return impl_->cols; }
std::int64_t CudaSpmvMatrix::nnz() const { return impl_->nnz; }
std::int64_t CudaSpmvMatrix::wideSlices() const { return impl_->wideSlices; }
std::int64_t CudaSpmvMatrix::longRows() const { return std::int64_t(impl_->longRows.size()); }
const Delta16Config& CudaSpmvMatrix::config() const { return impl_->config; }
const SpmvLayouts& CudaSpmvMatrix::layouts() const { return impl_->layouts; }
int CudaSpmvMatrix::stepBits() const { return impl_->steps ? impl_->steps->stepBits() : 0; }
std::int64_t CudaSpmvMatrix::stepTaskGroups() const {
  return impl_->steps ? impl_->steps->taskGroups() : 0;
}
int CudaSpmvMatrix::offset8ChunksPerTask() const {
  return impl_->offset8 ? impl_->offset8->chunksPerTask() : 0;
}
std::int64_t CudaSpmvMatrix::offset8SegmentedSlices() const {
  return impl_->offset8 ? impl_->offset8->segmentedSlices() : 0;
}
const std::int64_t* CudaSpmvMatrix::deviceRowPtr() const { return impl_->rowPtr.get(); }
const std::int32_t* CudaSpmvMatrix::deviceColIdx() const { return impl_->colIdx.get(); }
const std::uint16_t* CudaSpmvMatrix::deviceValues() const { return impl_->values.get(); }

std::size_t CudaSpmvMatrix::deviceBytes() const {
  const Impl& s = *impl_;
  return 2 * (s.values.size() + s.delta.size() + s.wideHigh.size()) +
         sizeof(SliceRecord) * s.slices.size() + 8 * s.rowPtr.size() + 4 * s.colIdx.size() +
         sizeof(RowTask) * (s.longRows.size() + s.warpRows.size()) +
         sizeof(EmptyRun) * s.emptyRuns.size() +
         std::size_t(s.steps ? s.steps->deviceBytes() : 0.0) +
         std::size_t(s.offset8 ? s.offset8->deviceBytes() : 0.0);
}

void CudaSpmvMatrix::reconfigure(const Delta16Config& config) {
  Impl& s = *impl_;
  PENUMBRA_REQUIRE(s.source || s.deviceBuilt, Internal,
                   "SpMV: reconfigure without the row offsets");
  PENUMBRA_REQUIRE(s.layouts.delta16, InvalidArgument,
                   "SpMV: reconfigure without the delta16 layout");
  if (config.longThreshold != s.config.longThreshold && s.source) {
    s.uploadBins(buildRowBins(*s.source, config.longThreshold));
  } else if (config.longThreshold != s.config.longThreshold) {
    penumbra::cuda::Stream stream;
    cuda::DeviceRowBins bins =
        cuda::buildRowBinsOnDevice(s.rowPtr.get(), s.rows, config.longThreshold, stream.s);
    s.longRows = std::move(bins.longRows);
    s.warpRows = std::move(bins.warpRows);
    s.emptyRuns = std::move(bins.emptyRuns);
  }
  impl_->config = config;
}

void CudaSpmvMatrix::apply(const double* dX, double* dY, SpmvKernel k, void* stream) const {
  const Impl& s = *impl_;
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (k == SpmvKernel::WarpPerRow) {
    PENUMBRA_REQUIRE(s.nnz == 0 || s.colIdx.get(), InvalidArgument,
                     "SpMV: the baseline kernel needs the matrix uploaded withBaseline");
    cuda::launchWarpPerRow(s.values.get(), s.colIdx.get(), s.rowPtr.get(), s.rows, s.scale, dX, dY,
                           st);
  } else if (k == SpmvKernel::SegmentedSteps) {
    PENUMBRA_REQUIRE(s.steps, InvalidArgument,
                     "SpMV: csr_spmv_segmented_steps needs the steps layout");
    cuda::launchSegmentedSteps(s.steps->view(), s.steps->stepBits(), s.steps->lanesPerGroup(), dX,
                               dY, st);
  } else if (k == SpmvKernel::SlicedOffset8) {
    PENUMBRA_REQUIRE(s.offset8, InvalidArgument,
                     "SpMV: csr_spmv_sliced_offset8 needs the offset8 layout");
    cuda::launchSlicedOffset8(s.offset8->view(), s.offset8->offsetBits(), s.offset8->rowBuffer(),
                              s.offset8->high(), dX, dY, st);
  } else {
    PENUMBRA_REQUIRE(s.layouts.delta16, InvalidArgument,
                     "SpMV: csr_spmv_binned_delta16 needs the delta16 layout");
    cuda::launchDelta16(s.view(), s.config.entriesPerLoad, s.config.loadsInFlight,
                        s.config.lanesPerRow, s.config.minBlocksPerSm, dX, dY, st);
  }
}

void CudaSpmvMatrix::applyHost(const double* x, double* y, SpmvKernel k) const {
  const Impl& s = *impl_;
  if (s.scratchX.size() != std::size_t(s.cols)) s.scratchX.allocate(std::size_t(s.cols));
  if (s.scratchY.size() != std::size_t(s.rows)) s.scratchY.allocate(std::size_t(s.rows));
  if (s.cols > 0) s.scratchX.upload(x, std::size_t(s.cols));
  if (s.rows == 0) return;
  s.scratchY.fillBytes(0xFF);  // NaN poison: an unwritten row cannot pass for a result
  apply(s.scratchX.get(), s.scratchY.get(), k, nullptr);
  s.scratchY.download(y, std::size_t(s.rows));  // synchronising copy: reports kernel faults
}

KernelProfile CudaSpmvMatrix::describe(SpmvKernel k) const {
  const Impl& s = *impl_;
  if (k == SpmvKernel::SegmentedSteps)
    PENUMBRA_REQUIRE(s.steps, InvalidArgument,
                     "SpMV: csr_spmv_segmented_steps needs the steps layout");
  if (k == SpmvKernel::SlicedOffset8)
    PENUMBRA_REQUIRE(s.offset8, InvalidArgument,
                     "SpMV: csr_spmv_sliced_offset8 needs the offset8 layout");
  const cuda::LaunchShape shape =
      k == SpmvKernel::WarpPerRow ? cuda::warpPerRowShape(s.rows)
      : k == SpmvKernel::SegmentedSteps
          ? cuda::segmentedStepsShape(s.steps->view(), s.steps->stepBits(),
                                      s.steps->lanesPerGroup())
      : k == SpmvKernel::SlicedOffset8
          ? cuda::slicedOffset8Shape(s.offset8->view(), s.offset8->offsetBits(),
                                     s.offset8->rowBuffer())
          : cuda::delta16Shape(s.view(), s.config.entriesPerLoad, s.config.loadsInFlight,
                               s.config.lanesPerRow, s.config.minBlocksPerSm);
  KernelProfile p;
  p.kernel = kernelName(k);
  p.variant = k == SpmvKernel::WarpPerRow       ? std::string("paper")
              : k == SpmvKernel::SegmentedSteps ? "s" + std::to_string(s.steps->stepBits()) + "t" +
                                                      std::to_string(s.steps->taskGroups()) + "l" +
                                                      std::to_string(s.steps->lanesPerGroup())
              : k == SpmvKernel::SlicedOffset8
                  ? "c" + std::to_string(s.offset8->chunksPerTask()) + "b" +
                        std::to_string(s.offset8->view().minBlocksPerSm) + "k" +
                        std::to_string(s.offset8->view().warpsPerBlock) + "g" +
                        std::to_string(s.offset8->taskGroupRows()) +
                        offsetBitsSuffix(s.offset8->offsetBits()) +
                        (s.offset8->rowBuffer() ? "r" : "")
                  : s.config.name();
  p.backend = "cuda";
  p.device = s.device;
  p.gridX = shape.grid;
  p.blockX = shape.block;
  cudaFuncAttributes attr{};
  PENUMBRA_CUDA_CHECK(cudaFuncGetAttributes(&attr, shape.kernel));
  p.registersPerThread = attr.numRegs;
  p.sharedBytesPerBlock = int(attr.sharedSizeBytes);
  int blocksPerSm = 0, dev = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));
  PENUMBRA_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSm, shape.kernel, shape.block, 0));
  int maxThreads = 0;
  PENUMBRA_CUDA_CHECK(
      cudaDeviceGetAttribute(&maxThreads, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  p.theoreticalOccupancy = maxThreads > 0 ? double(blocksPerSm * shape.block) / maxThreads : 0;
  // The issue's traffic model (the same for every kernel, so GB/s compare like for like).
  p.bytes = 6.0 * double(s.nnz) + 12.0 * double(s.rows) + 8.0 * double(s.cols);
  p.flops = 2.0 * double(s.nnz);
  return p;
}

double CudaSpmvMatrix::realBytes(SpmvKernel k) const {
  const Impl& s = *impl_;
  const double vectors = 8.0 * double(s.rows + s.cols), nnz = double(s.nnz);
  switch (k) {
    case SpmvKernel::WarpPerRow:  // fp16 values, int32 columns, two 64-bit offsets per row (one
                                  // read)
      return 6.0 * nnz + 8.0 * double(s.rows + 1) + vectors;
    case SpmvKernel::SegmentedSteps:
      PENUMBRA_REQUIRE(s.steps, InvalidArgument,
                       "SpMV: csr_spmv_segmented_steps needs the steps layout");
      return s.steps->bytes().total();
    case SpmvKernel::SlicedOffset8:
      PENUMBRA_REQUIRE(s.offset8, InvalidArgument,
                       "SpMV: csr_spmv_sliced_offset8 needs the offset8 layout");
      return s.offset8->bytes().total();
    case SpmvKernel::BinnedDelta16:
      PENUMBRA_REQUIRE(s.layouts.delta16, InvalidArgument,
                       "SpMV: csr_spmv_binned_delta16 needs the delta16 layout");
      break;
  }
  return delta16RealBytes(s.rows, s.cols, s.nnz, std::int64_t(s.slices.size()), s.wideSlices,
                          s.nonEmptyRows, std::int64_t(s.emptyRuns.size()));
}

}  // namespace penumbra::spmv
