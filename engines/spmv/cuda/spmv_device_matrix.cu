// CudaSpmvMatrix: plan on the host (spmv_plan.cpp), refuse what does not fit, upload, launch.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/cuda/device_buffer.cuh"
#include "core/device.hpp"
#include "spmv/cuda/spmv_kernels.cuh"
#include "spmv/cuda_spmv.hpp"

namespace penumbra::spmv {

using penumbra::cuda::DeviceBuffer;

namespace {
template <typename T>
void put(DeviceBuffer<T>& b, const std::vector<T>& host) {
  if (host.empty()) b.release();
  else b.upload(host);
}
}  // namespace

struct CudaSpmvMatrix::Impl {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  double scale = 1;
  Delta16Config config;
  std::int64_t wideSlices = 0;
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
  // Host copies of the bins, kept for reconfigure(): cheap (16 B per row at most).
  const HalfCsr* source = nullptr;
};

CudaSpmvMatrix::CudaSpmvMatrix(const HalfCsr& m, bool withBaseline, Delta16Config config, int threads)
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
  s.device = devices.front().name;
  // Check, then allocate: the layout's bytes (with the true number of wide slices) against the
  // free memory, before the first cudaMalloc.
  Delta16Columns cols = buildDelta16Columns(m, threads);
  RowBins bins = buildRowBins(m, config.longThreshold);
  s.wideSlices = cols.wideSlices();
  const double need = double(cols.paddedNnz) * 4 + double(cols.slices.size()) * sizeof(SliceRecord) +
                      double(cols.wideHigh.size()) * 2 + 8.0 * double(m.rows + 1) +
                      (withBaseline ? 4.0 * double(m.nnz()) : 0.0) +
                      16.0 * double(bins.longRows.size() + bins.warpRows.size()) +
                      8.0 * double(bins.emptyRuns.size()) + 8.0 * double(m.rows + m.cols);
  std::size_t freeB = 0, totalB = 0;
  PENUMBRA_CUDA_CHECK(cudaMemGetInfo(&freeB, &totalB));
  SpmvMemoryEstimate est;
  est.matrixBytes = need;
  refuseIfTooBig(m.rows, m.cols, m.nnz(), est, double(freeB), s.device);

  s.values.allocate(std::size_t(cols.paddedNnz));
  s.values.fillBytes(0);
  if (m.nnz() > 0) s.values.upload(m.values.data(), m.values.size());
  put(s.delta, cols.delta);
  put(s.slices, cols.slices);
  put(s.wideHigh, cols.wideHigh);
  put(s.rowPtr, m.rowPtr);
  if (withBaseline) put(s.colIdx, m.colIdx);
  s.uploadBins(bins);
  s.source = &m;
}

CudaSpmvMatrix::~CudaSpmvMatrix() = default;

std::int64_t CudaSpmvMatrix::rows() const { return impl_->rows; }
std::int64_t CudaSpmvMatrix::cols() const { return impl_->cols; }
std::int64_t CudaSpmvMatrix::nnz() const { return impl_->nnz; }
std::int64_t CudaSpmvMatrix::wideSlices() const { return impl_->wideSlices; }
std::int64_t CudaSpmvMatrix::longRows() const { return std::int64_t(impl_->longRows.size()); }
const Delta16Config& CudaSpmvMatrix::config() const { return impl_->config; }
const std::int64_t* CudaSpmvMatrix::deviceRowPtr() const { return impl_->rowPtr.get(); }
const std::int32_t* CudaSpmvMatrix::deviceColIdx() const { return impl_->colIdx.get(); }
const std::uint16_t* CudaSpmvMatrix::deviceValues() const { return impl_->values.get(); }

std::size_t CudaSpmvMatrix::deviceBytes() const {
  const Impl& s = *impl_;
  return 2 * (s.values.size() + s.delta.size() + s.wideHigh.size()) +
         sizeof(SliceRecord) * s.slices.size() + 8 * s.rowPtr.size() + 4 * s.colIdx.size() +
         sizeof(RowTask) * (s.longRows.size() + s.warpRows.size()) +
         sizeof(EmptyRun) * s.emptyRuns.size();
}

void CudaSpmvMatrix::reconfigure(const Delta16Config& config) {
  PENUMBRA_REQUIRE(impl_->source, Internal, "SpMV: reconfigure without the host matrix");
  if (config.longThreshold != impl_->config.longThreshold)
    impl_->uploadBins(buildRowBins(*impl_->source, config.longThreshold));
  impl_->config = config;
}

void CudaSpmvMatrix::apply(const double* dX, double* dY, SpmvKernel k, void* stream) const {
  const Impl& s = *impl_;
  const cudaStream_t st = static_cast<cudaStream_t>(stream);
  if (k == SpmvKernel::WarpPerRow) {
    PENUMBRA_REQUIRE(s.nnz == 0 || s.colIdx.get(), InvalidArgument,
                     "SpMV: the baseline kernel needs the matrix uploaded withBaseline");
    cuda::launchWarpPerRow(s.values.get(), s.colIdx.get(), s.rowPtr.get(), s.rows, s.scale, dX, dY, st);
  } else {
    cuda::launchDelta16(s.view(), s.config.entriesPerLoad, s.config.loadsInFlight, s.config.lanesPerRow,
                        s.config.minBlocksPerSm, dX, dY, st);
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
  const cuda::LaunchShape shape =
      k == SpmvKernel::WarpPerRow
          ? cuda::warpPerRowShape(s.rows)
          : cuda::delta16Shape(s.view(), s.config.entriesPerLoad, s.config.loadsInFlight, s.config.lanesPerRow,
                                s.config.minBlocksPerSm);
  KernelProfile p;
  p.kernel = kernelName(k);
  p.variant = k == SpmvKernel::WarpPerRow ? "paper" : s.config.name();
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
  PENUMBRA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSm, shape.kernel, shape.block, 0));
  int maxThreads = 0;
  PENUMBRA_CUDA_CHECK(cudaDeviceGetAttribute(&maxThreads, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  p.theoreticalOccupancy = maxThreads > 0 ? double(blocksPerSm * shape.block) / maxThreads : 0;
  // The issue's traffic model (the same for every kernel, so GB/s compare like for like).
  p.bytes = 6.0 * double(s.nnz) + 12.0 * double(s.rows) + 8.0 * double(s.cols);
  p.flops = 2.0 * double(s.nnz);
  return p;
}

}  // namespace penumbra::spmv
