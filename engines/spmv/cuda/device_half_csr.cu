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
__global__ void offsetsFromSortedKeys(const std::uint32_t* __restrict__ key, int shift, std::int64_t nnz,
                                      std::int64_t rows, std::int64_t* __restrict__ rowPtr) {
  for (std::int64_t k = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; k <= nnz;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t prev = k == 0 ? -1 : std::int64_t(key[k - 1] >> shift);
    const std::int64_t cur = k == nnz ? rows : std::int64_t(key[k] >> shift);
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

/// Compact form (at most 65536 columns): key = column << 16 | fp16 bits, payload = row.
__global__ void packRowsCompact(const std::int64_t* __restrict__ rowPtr, const std::int32_t* __restrict__ col,
                                const std::uint16_t* __restrict__ val, std::int64_t rows,
                                std::uint32_t* __restrict__ key, std::int32_t* __restrict__ row) {
  const std::int64_t warp = (std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * blockDim.x / 32;
  const int lane = threadIdx.x % 32;
  for (std::int64_t r = warp; r < rows; r += warps)
    for (std::int64_t e = rowPtr[r] + lane; e < rowPtr[r + 1]; e += 32) {
      key[e] = (std::uint32_t(col[e]) << 16) | val[e];
      row[e] = std::int32_t(r);
    }
}

__global__ void valuesFromKeys(const std::uint32_t* __restrict__ key, std::int64_t nnz, std::uint16_t* __restrict__ val) {
  for (std::int64_t e = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < nnz;
       e += std::int64_t(gridDim.x) * blockDim.x)
    val[e] = std::uint16_t(key[e] & 0xFFFFu);
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

void refuseTransposeIfTooBig(double need, std::int64_t n, double bytesPerEntry) {
  std::size_t freeB = 0, totalB = 0;
  PENUMBRA_CUDA_CHECK(cudaMemGetInfo(&freeB, &totalB));
  if (need > 0.95 * double(freeB))
    throw Error(ErrorCode::OutOfMemory,
                "SpMV: transposing the dose matrix on the GPU needs " + formatBytes(need) + " (" +
                    std::to_string(n) + " entries x " + std::to_string(int(bytesPerEntry)) +
                    " B + scratch), " + formatBytes(double(freeB)) +
                    " free: use a coarser dose grid or fewer spots",
                __FILE__, __LINE__);
}

/// At most 65536 columns (every proton plan of ours): one 32-bit key per entry carries the
/// column in its high half and the fp16 value in its low half, the payload is the row, and the
/// sort looks only at the column bits. 8 B per entry per sort buffer (16 B with the double
/// buffers, 18 B at the peak); the sorted payload is D^T's column array as it stands.
void transposeCompact(const DeviceHalfCsr& m, DeviceHalfCsr& t, cudaStream_t s) {
  const std::int64_t n = m.nnz;
  const int endBit = 16 + bitsFor(std::max<std::int64_t>(m.cols, 2));
  cub::DoubleBuffer<std::uint32_t> keys(nullptr, nullptr);
  cub::DoubleBuffer<std::int32_t> rows(nullptr, nullptr);
  std::size_t sortBytes = 0;
  PENUMBRA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, keys, rows, n, 16, endBit, s));
  refuseTransposeIfTooBig(18.0 * double(n) + double(sortBytes), n, 18);
  const auto count = static_cast<std::size_t>(n);
  DeviceBuffer<std::uint32_t> k0(count), k1(count);
  DeviceBuffer<std::int32_t> r0(count), r1(count);
  packRowsCompact<<<blocksFor(m.rows * 32), kThreads, 0, s>>>(m.data->rowPtr.get(), m.data->colIdx.get(),
                                                              m.data->values.get(), m.rows, k0.get(), r0.get());
  PENUMBRA_CUDA_CHECK(cudaGetLastError());
  {
    DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(sortBytes, 1));
    cub::DoubleBuffer<std::uint32_t> kb(k0.get(), k1.get());
    cub::DoubleBuffer<std::int32_t> rb(r0.get(), r1.get());
    PENUMBRA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.get(), sortBytes, kb, rb, n, 16, endBit, s));
    t.data->values.allocate(count);
    offsetsFromSortedKeys<<<blocksFor(n + 1), kThreads, 0, s>>>(kb.Current(), 16, n, m.cols, t.data->rowPtr.get());
    valuesFromKeys<<<blocksFor(n), kThreads, 0, s>>>(kb.Current(), n, t.data->values.get());
    PENUMBRA_CUDA_CHECK(cudaGetLastError());
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
    t.data->colIdx = std::move(rb.Current() == r0.get() ? r0 : r1);
  }
}

/// Any number of columns: the column is the key and the payload carries row << 16 | value
/// (8 B), 24 B per entry at the peak.
void transposeWide(const DeviceHalfCsr& m, DeviceHalfCsr& t, cudaStream_t s) {
  const std::int64_t n = m.nnz;
  const int endBit = bitsFor(std::max<std::int64_t>(m.cols, 2));
  cub::DoubleBuffer<std::uint32_t> keys(nullptr, nullptr);
  cub::DoubleBuffer<unsigned long long> payload(nullptr, nullptr);
  std::size_t sortBytes = 0;
  PENUMBRA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, keys, payload, n, 0, endBit, s));
  refuseTransposeIfTooBig(24.0 * double(n) + double(sortBytes), n, 24);
  const auto count = static_cast<std::size_t>(n);
  DeviceBuffer<std::uint32_t> k0(count), k1(count);  // columns (>= 0) as unsigned keys
  DeviceBuffer<unsigned long long> p0(count), p1(count);
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(k0.get(), m.data->colIdx.get(), count * 4, cudaMemcpyDeviceToDevice, s));
  packRows<<<blocksFor(m.rows * 32), kThreads, 0, s>>>(m.data->rowPtr.get(), m.data->values.get(), m.rows, p0.get());
  PENUMBRA_CUDA_CHECK(cudaGetLastError());
  DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(sortBytes, 1));
  cub::DoubleBuffer<std::uint32_t> kb(k0.get(), k1.get());
  cub::DoubleBuffer<unsigned long long> pb(p0.get(), p1.get());
  PENUMBRA_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(scratch.get(), sortBytes, kb, pb, n, 0, endBit, s));
  offsetsFromSortedKeys<<<blocksFor(n + 1), kThreads, 0, s>>>(kb.Current(), 0, n, m.cols, t.data->rowPtr.get());
  PENUMBRA_CUDA_CHECK(cudaGetLastError());
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
  k0.release();
  k1.release();
  scratch.release();
  DeviceBuffer<unsigned long long>& sorted = pb.Current() == p0.get() ? p0 : p1;
  (pb.Current() == p0.get() ? p1 : p0).release();
  t.data->colIdx.allocate(count);
  t.data->values.allocate(count);
  unpackEntries<<<blocksFor(n), kThreads, 0, s>>>(sorted.get(), n, t.data->colIdx.get(), t.data->values.get());
  PENUMBRA_CUDA_CHECK(cudaGetLastError());
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
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
  t.data->rowPtr.allocate(std::size_t(m.cols) + 1);
  if (m.nnz == 0) {
    t.data->rowPtr.fillBytes(0);
    return t;
  }
  // A stable sort of the entries on their column: they come in row order, so each column keeps
  // ascending rows, the order transpose(HalfCsr) gives. Check, then run: each form asks the sort
  // for its scratch and refuses (OutOfMemory) before it allocates.
  penumbra::cuda::Stream stream;
  if (m.cols <= 65536) transposeCompact(m, t, stream.s);
  else transposeWide(m, t, stream.s);
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

namespace {
constexpr int kRun = RowBins::kEmptyRunMax;

/// Per row: is it a warp row, a long row, the first row of a piece of an empty run?
__global__ void classifyRows(const std::int64_t* __restrict__ rowPtr, std::int64_t rows, std::int64_t longThreshold,
                             int* __restrict__ warp, int* __restrict__ longRow, int* __restrict__ runStart) {
  for (std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r <= rows;
       r += std::int64_t(gridDim.x) * blockDim.x) {
    if (r == rows) {  // the extra element makes the exclusive sums' last entry the totals
      warp[r] = longRow[r] = runStart[r] = 0;
      continue;
    }
    const std::int64_t len = rowPtr[r + 1] - rowPtr[r];
    warp[r] = len > 0 && len <= longThreshold;
    longRow[r] = len > longThreshold;
    runStart[r] = len == 0 && (r % kRun == 0 || rowPtr[r] - rowPtr[r - 1] > 0);
  }
}

__global__ void scatterRows(const std::int64_t* __restrict__ rowPtr, std::int64_t rows,
                            const int* __restrict__ warp, const int* __restrict__ warpAt,
                            const int* __restrict__ longRow, const int* __restrict__ longAt,
                            const int* __restrict__ runStart, const int* __restrict__ runAt,
                            RowTask* __restrict__ warpRows, RowTask* __restrict__ longRows,
                            EmptyRun* __restrict__ runs) {
  for (std::int64_t r = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows;
       r += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t begin = rowPtr[r], len = rowPtr[r + 1] - begin;
    const RowTask t{begin, std::int32_t(len), std::int32_t(r)};
    if (warp[r]) warpRows[warpAt[r]] = t;
    else if (longRow[r]) longRows[longAt[r]] = t;
    else if (runStart[r]) {
      // The piece runs on while rows stay empty, up to the next multiple of kRun.
      std::int64_t end = r + 1;
      const std::int64_t stop = min(rows, (r / kRun + 1) * kRun);
      while (end < stop && rowPtr[end + 1] == rowPtr[end]) ++end;
      runs[runAt[r]] = EmptyRun{std::int32_t(r), std::int32_t(end - r)};
    }
  }
}
}  // namespace

DeviceRowBins buildRowBinsOnDevice(const std::int64_t* rowPtr, std::int64_t rows, std::int64_t longThreshold,
                                   cudaStream_t s) {
  PENUMBRA_REQUIRE(rows <= INT32_MAX, Unsupported, "SpMV: more than 2^31 rows");
  PENUMBRA_REQUIRE(longThreshold >= 1, InvalidArgument, "SpMV: long-row threshold must be >= 1");
  DeviceRowBins b;
  const auto n = static_cast<std::size_t>(rows) + 1;
  DeviceBuffer<int> flags(3 * n), at(3 * n);
  int* const f[3] = {flags.get(), flags.get() + n, flags.get() + 2 * n};
  int* const a[3] = {at.get(), at.get() + n, at.get() + 2 * n};
  classifyRows<<<blocksFor(rows + 1), kThreads, 0, s>>>(rowPtr, rows, longThreshold, f[0], f[1], f[2]);
  PENUMBRA_CUDA_CHECK(cudaGetLastError());
  std::size_t scanBytes = 0;
  PENUMBRA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scanBytes, f[0], a[0], std::int64_t(n), s));
  int totals[3] = {0, 0, 0};
  {
    DeviceBuffer<unsigned char> scratch(std::max<std::size_t>(scanBytes, 1));
    for (int k = 0; k < 3; ++k) {
      PENUMBRA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scratch.get(), scanBytes, f[k], a[k], std::int64_t(n), s));
      PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(&totals[k], a[k] + rows, sizeof(int), cudaMemcpyDeviceToHost, s));
    }
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  b.warpRows.allocate(std::size_t(totals[0]));
  b.longRows.allocate(std::size_t(totals[1]));
  b.emptyRuns.allocate(std::size_t(totals[2]));
  if (rows > 0)
    scatterRows<<<blocksFor(rows), kThreads, 0, s>>>(rowPtr, rows, f[0], a[0], f[1], a[1], f[2], a[2],
                                                     b.warpRows.get(), b.longRows.get(), b.emptyRuns.get());
  PENUMBRA_CUDA_CHECK(cudaGetLastError());
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
  b.nonEmptyRows = std::int64_t(totals[0]) + totals[1];
  return b;
}

}  // namespace cuda
}  // namespace penumbra::spmv
