// DeviceHalfCsr: ownership, upload/download, and D^T built on the device (a stable radix sort
// of the entries on their column), and the delta16 columns built on the device.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <string>

#include "core/cuda/stream_event.cuh"
#include "core/device.hpp"
#include "core/error.hpp"
#include "spmv/cuda/device_half_csr.cuh"

namespace penumbra::spmv {

using penumbra::cuda::DeviceBuffer;

DeviceHalfCsr::DeviceHalfCsr() : data(std::make_unique<DeviceHalfCsrData>()) {}
DeviceHalfCsr::~DeviceHalfCsr() = default;
DeviceHalfCsr::DeviceHalfCsr(DeviceHalfCsr&&) noexcept = default;
DeviceHalfCsr& DeviceHalfCsr::operator=(DeviceHalfCsr&&) noexcept = default;

DeviceHalfCsr DeviceHalfCsr::upload(const HalfCsr& m) {
  m.validate();
  penumbra::cuda::requireCudaDevice();
  DeviceHalfCsr d;
  d.rows = m.rows;
  d.cols = m.cols;
  d.nnz = m.nnz();
  d.scale = m.scale;
  d.data->rowPtr.upload(m.rowPtr);
  if (d.nnz > 0) {
    d.data->colIdx.upload(m.colIdx);
    d.data->values.upload(m.values);
  }
  return d;
}

HalfCsr DeviceHalfCsr::download() const {
  PENUMBRA_REQUIRE(nnz == 0 || data->colIdx.size() >= std::size_t(nnz), InvalidArgument,
                   "SpMV: the device matrix's column indices were released");
  HalfCsr m;
  m.rows = rows;
  m.cols = cols;
  m.scale = scale;
  m.rowPtr.resize(std::size_t(rows) + 1);
  m.colIdx.resize(std::size_t(nnz));
  m.values.resize(std::size_t(nnz));
  data->rowPtr.download(m.rowPtr.data(), m.rowPtr.size());
  if (nnz > 0) {
    data->colIdx.download(m.colIdx.data(), m.colIdx.size());
    data->values.download(m.values.data(), m.values.size());
  }
  return m;
}

std::size_t DeviceHalfCsr::deviceBytes() const {
  return 8 * data->rowPtr.size() + 4 * data->colIdx.size() + 2 * data->values.size();
}

namespace {

constexpr int kThreads = 256;

int blocksFor(std::int64_t n) {
  return int(std::max<std::int64_t>(1, std::min<std::int64_t>((n + kThreads - 1) / kThreads, 1 << 20)));
}

/// Row offsets of D^T from the sorted columns: entry k starts every row c in (key[k-1], key[k]],
/// and the rows after the last key start at nnz. Every offset is written exactly once.
__global__ void offsetsFromSortedKeys(const std::uint32_t* __restrict__ key, std::int64_t nnz, std::int64_t rows,
                                      std::int64_t* __restrict__ rowPtr) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k <= nnz;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t prev = k == 0 ? -1 : std::int64_t(key[k - 1]);
    const std::int64_t cur = k == nnz ? rows : std::int64_t(key[k]);
    for (std::int64_t c = prev + 1; c <= cur; ++c) rowPtr[c] = k;
  }
}

/// One warp per row: every entry's payload (row << 16 | fp16 bits) in storage order.
__global__ void packRows(const std::int64_t* __restrict__ rowPtr, const std::uint16_t* __restrict__ val,
                         std::int64_t rows, unsigned long long* __restrict__ packed) {
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  for (std::int64_t r = warp; r < rows; r += warps)
    for (std::int64_t e = rowPtr[r] + lane; e < rowPtr[r + 1]; e += 32)
      packed[e] = (static_cast<unsigned long long>(r) << 16) | val[e];
}

__global__ void unpackEntries(const unsigned long long* __restrict__ packed, std::int64_t nnz,
                              std::int32_t* __restrict__ col, std::uint16_t* __restrict__ val) {
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < nnz;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const unsigned long long p = packed[e];
    col[e] = std::int32_t(p >> 16);
    val[e] = std::uint16_t(p & 0xFFFFu);
  }
}

int bitsFor(std::int64_t n) {
  int b = 1;
  while (b < 63 && (std::int64_t(1) << b) < n) ++b;
  return b;
}

}  // namespace

DeviceHalfCsr transposeOnDevice(const DeviceHalfCsr& m) {
  penumbra::cuda::requireCudaDevice();
  PENUMBRA_REQUIRE(m.rows < (std::int64_t(1) << 31) && m.cols < (std::int64_t(1) << 31), Unsupported,
                   "SpMV: the device transpose takes fewer than 2^31 rows and columns");
  PENUMBRA_REQUIRE(m.nnz == 0 || m.data->colIdx.size() >= std::size_t(m.nnz), InvalidArgument,
                   "SpMV: the device matrix's column indices were released before the transpose");
  DeviceHalfCsr t;
  t.rows = m.cols;
  t.cols = m.rows;
  t.nnz = m.nnz;
  t.scale = m.scale;
  penumbra::cuda::Stream stream;
  const cudaStream_t s = stream.s;
  const std::int64_t n = m.nnz;
  // Check, then run: keys (2 x 4 B), payloads (2 x 8 B), the result (4 + 2 B) per entry, the
  // offsets, and the sort's scratch (asked for before anything is allocated). The keys are
  // released before the result is allocated, so the peak is 24 B per entry.
  cub::DoubleBuffer<std::uint32_t> keys(nullptr, nullptr);
  cub::DoubleBuffer<unsigned long long> payload(nullptr, nullptr);
  std::size_t sortBytes = 0;
  const int endBit = bitsFor(std::max<std::int64_t>(m.cols, 2));
  PENUMBRA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, keys, payload, n, 0, endBit, s));
  const double need = 24.0 * double(n) + double(sortBytes) + 8.0 * double(m.cols + 1);
  std::size_t freeB = 0, totalB = 0;
  PENUMBRA_CUDA_CHECK(cudaMemGetInfo(&freeB, &totalB));
  if (need > 0.95 * double(freeB))
    throw Error(ErrorCode::OutOfMemory,
                "SpMV: transposing the dose matrix on the GPU needs " + formatBytes(need) + " (" +
                    std::to_string(n) + " entries x 24 B + scratch), " + formatBytes(double(freeB)) +
                    " free: use a coarser dose grid or fewer spots",
                __FILE__, __LINE__);

  t.data->rowPtr.allocate(std::size_t(m.cols) + 1);
  if (n == 0) {
    t.data->rowPtr.fillBytes(0);
    return t;
  }

  // Stable sort of (column, row << 16 | value) on the column: entries come in row order, so each
  // column keeps ascending rows, the order transpose(HalfCsr) gives.
  const auto count = static_cast<std::size_t>(n);
  DeviceBuffer<std::uint32_t> k0(count), k1(count);  // columns (>= 0) as unsigned keys
  DeviceBuffer<unsigned long long> p0(count), p1(count);
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(k0.get(), m.data->colIdx.get(), std::size_t(n) * 4,
                                      cudaMemcpyDeviceToDevice, s));
  packRows<<<blocksFor(m.rows * 32), kThreads, 0, s>>>(m.data->rowPtr.get(), m.data->values.get(), m.rows, p0.get());
  PENUMBRA_CUDA_CHECK(cudaGetLastError());
  {
    DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(sortBytes, 1));
    cub::DoubleBuffer<std::uint32_t> kb(k0.get(), k1.get());
    cub::DoubleBuffer<unsigned long long> pb(p0.get(), p1.get());
    PENUMBRA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.get(), sortBytes, kb, pb, n, 0, endBit, s));
    // Row offsets of D^T where the sorted columns change (reads the keys once).
    offsetsFromSortedKeys<<<blocksFor(n + 1), kThreads, 0, s>>>(kb.Current(), n, m.cols, t.data->rowPtr.get());
    PENUMBRA_CUDA_CHECK(cudaGetLastError());
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
    k0.release();
    k1.release();
    DeviceBuffer<unsigned long long>& sorted = pb.Current() == p0.get() ? p0 : p1;
    (pb.Current() == p0.get() ? p1 : p0).release();
    t.data->colIdx.allocate(std::size_t(n));
    t.data->values.allocate(std::size_t(n));
    unpackEntries<<<blocksFor(n), kThreads, 0, s>>>(sorted.get(), n, t.data->colIdx.get(), t.data->values.get());
    PENUMBRA_CUDA_CHECK(cudaGetLastError());
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  return t;
}

namespace cuda {

namespace {
constexpr int kSlice = Delta16Columns::kSlice;

/// One warp per slice: smallest and largest column, hence base and width (as pass 1 of the host
/// build).
__global__ void sliceBounds(const std::int32_t* __restrict__ col, std::int64_t nnz, std::int64_t nSlices,
                            SliceRecord* __restrict__ slices, int* __restrict__ wide) {
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  for (std::int64_t sl = warp; sl < nSlices; sl += warps) {
    const std::int64_t b = sl * kSlice, e = min(nnz, b + kSlice);
    int lo = INT_MAX, hi = INT_MIN;
    for (std::int64_t k = b + lane; k < e; k += 32) {
      lo = min(lo, col[k]);
      hi = max(hi, col[k]);
    }
    for (int o = 16; o > 0; o >>= 1) {
      lo = min(lo, __shfl_xor_sync(0xFFFFFFFFu, lo, o));
      hi = max(hi, __shfl_xor_sync(0xFFFFFFFFu, hi, o));
    }
    if (lane == 0) {
      const bool any = b < e;
      slices[sl].base = any ? lo : 0;
      slices[sl].wide = -1;
      wide[sl] = any && (long long)hi - lo >= 65536 ? 1 : 0;
    }
  }
}

__global__ void numberWide(const int* __restrict__ wide, const int* __restrict__ firstWide, std::int64_t nSlices,
                           SliceRecord* __restrict__ slices) {
  for (std::int64_t sl = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; sl < nSlices;
       sl += std::int64_t(gridDim.x) * blockDim.x)
    if (wide[sl]) slices[sl].wide = firstWide[sl];
}

__global__ void fillDeltas(const std::int32_t* __restrict__ col, std::int64_t nnz,
                           const SliceRecord* __restrict__ slices, std::uint16_t* __restrict__ delta,
                           std::uint16_t* __restrict__ wideHigh) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k < nnz;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    const SliceRecord rec = slices[k / kSlice];
    const std::uint32_t d = std::uint32_t(col[k] - rec.base);
    delta[k] = std::uint16_t(d & 0xFFFFu);
    if (rec.wide >= 0) wideHigh[std::int64_t(rec.wide) * kSlice + k % kSlice] = std::uint16_t(d >> 16);
  }
}
}  // namespace

DeviceDelta16 buildDelta16OnDevice(const std::int32_t* colIdx, std::int64_t nnz, cudaStream_t s) {
  DeviceDelta16 out;
  const std::int64_t nSlices = (nnz + kSlice - 1) / kSlice + 1;  // one spare, as on the host
  out.paddedNnz = nSlices * kSlice;
  out.delta.allocate(std::size_t(out.paddedNnz));
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(out.delta.get(), 0, std::size_t(out.paddedNnz) * 2, s));
  out.slices.allocate(std::size_t(nSlices));
  const auto slices = static_cast<std::size_t>(nSlices);
  DeviceBuffer<int> wide(slices), firstWide(slices + 1);
  sliceBounds<<<blocksFor(nSlices * 32), kThreads, 0, s>>>(colIdx, nnz, nSlices, out.slices.get(), wide.get());
  PENUMBRA_CUDA_CHECK(cudaGetLastError());
  std::size_t scanBytes = 0;
  PENUMBRA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, wide.get(), firstWide.get(), nSlices, s));
  {
    DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(scanBytes, 1));
    PENUMBRA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scratch.get(), scanBytes, wide.get(), firstWide.get(), nSlices, s));
    int lastFirst = 0, lastWide = 0;
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(&lastFirst, firstWide.get() + nSlices - 1, 4, cudaMemcpyDeviceToHost, s));
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(&lastWide, wide.get() + nSlices - 1, 4, cudaMemcpyDeviceToHost, s));
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
    out.wideSlices = lastFirst + lastWide;
  }
  numberWide<<<blocksFor(nSlices), kThreads, 0, s>>>(wide.get(), firstWide.get(), nSlices, out.slices.get());
  PENUMBRA_CUDA_CHECK(cudaGetLastError());
  if (out.wideSlices > 0) {
    out.wideHigh.allocate(std::size_t(out.wideSlices) * kSlice);
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(out.wideHigh.get(), 0, out.wideHigh.size() * 2, s));
  }
  if (nnz > 0) fillDeltas<<<blocksFor(nnz), kThreads, 0, s>>>(colIdx, nnz, out.slices.get(), out.delta.get(), out.wideHigh.get());
  PENUMBRA_CUDA_CHECK(cudaGetLastError());
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

}  // namespace cuda
}  // namespace penumbra::spmv
