// csr_spmv_binned_delta16: the optimised SpMV (design and measurements: docs/spmv-notes.md).
//
// - Bytes: values fp16 (2 B) + 16-bit column deltas per 256-entry slice (2 B) instead of the
//   paper's 2 + 4 B per entry; the product is bound by these bytes (liver-1: 6 B x 1.48e9 =
//   8.9 GB against 48 MB of vectors), so the floor drops from 2.07 ms to 1.38 ms at 4.3 TB/s.
// - Work: long rows (> threshold) get a 256-thread block each, other rows S lanes each (S = 32,
//   16 or 8: 1, 2 or 4 rows per warp), runs of empty rows a warp that only writes zeros; every
//   task starts from one 16-byte RowTask load.
// - Loads: each thread loads `V` consecutive entries of values and deltas per load (V = 2: 4-byte
//   loads; 8: 16-byte loads) and issues `U` such loads before using the first; the streams bypass
//   L1 (ld.global.nc.L1::no_allocate) so that L1 keeps x, which is gathered through the
//   read-only path (__ldg). Small V keeps a warp's gathers on few cache lines: lane l's k-th
//   entry is V*l + k, so one gather instruction spans 32*V entries of the row.
// - Reproducible: every row is summed by a fixed set of threads, each in entry order, then a
//   fixed xor-shuffle tree (and for block rows a fixed 8-way tree over warps). No atomics.
#include <cuda_fp16.h>

#include "core/cuda/cuda_check.cuh"
#include "core/error.hpp"
#include "spmv/cuda/spmv_kernels.cuh"

namespace penumbra::spmv::cuda {

namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
constexpr int kSlice = Delta16Columns::kSlice;

template <int V> struct Words;  // V halves = V/2 32-bit words per load
template <> struct Words<2> { static constexpr int n = 1; };
template <> struct Words<4> { static constexpr int n = 2; };
template <> struct Words<8> { static constexpr int n = 4; };

/// Streaming load of V 16-bit entries starting at p (aligned to 2V bytes), not kept in L1.
template <int V>
__device__ __forceinline__ void loadStream(const std::uint16_t* p, std::uint32_t (&w)[Words<V>::n]) {
  if constexpr (V == 2) {
    asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(w[0]) : "l"(p));
  } else if constexpr (V == 4) {
    asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));
  } else {
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
        : "l"(p));
  }
}

__device__ __forceinline__ std::uint32_t part(const std::uint32_t w, int k) {
  return (k & 1) ? (w >> 16) : (w & 0xFFFFu);
}

/// Adds the entries [lo, hi) of group g (entries g*V .. g*V+V-1) to acc, in entry order.
template <int V>
__device__ __forceinline__ double addGroup(const Delta16View& m, const double* __restrict__ x,
                                           std::int64_t g, const std::uint32_t (&val)[Words<V>::n],
                                           const std::uint32_t (&del)[Words<V>::n], int lo, int hi,
                                           double acc) {
  const std::int64_t first = g * V;
  const SliceRecord s = m.slices[first / kSlice];  // V divides 256: one slice per group
  std::uint32_t high[Words<V>::n];
#pragma unroll
  for (int k = 0; k < Words<V>::n; ++k) high[k] = 0;
  if (s.wide >= 0) loadStream<V>(m.wideHigh + std::int64_t(s.wide) * kSlice + first % kSlice, high);
  double xv[V];
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const std::uint32_t col = std::uint32_t(s.base) + (part(del[k / 2], k) | (part(high[k / 2], k) << 16));
    xv[k] = (k >= lo && k < hi) ? __ldg(x + col) : 0.0;
  }
#pragma unroll
  for (int k = 0; k < V; ++k) {
    const double h = double(__half2float(__ushort_as_half(std::uint16_t(part(val[k / 2], k)))));
    if (k >= lo && k < hi) acc = fma(h, xv[k], acc);
  }
  return acc;
}

/// This thread's share of the row [begin, begin + length): groups lane, lane + STRIDE, ...
template <int V, int U, int STRIDE>
__device__ __forceinline__ double rowShare(const Delta16View& m, const double* __restrict__ x,
                                           std::int64_t begin, std::int32_t length, int lane) {
  const std::int64_t end = begin + length;
  const std::int64_t gBegin = begin / V, gEnd = (end + V - 1) / V;
  double acc = 0.0;
  for (std::int64_t g = gBegin + lane; g < gEnd; g += std::int64_t(STRIDE) * U) {
    std::uint32_t val[U][Words<V>::n], del[U][Words<V>::n];
#pragma unroll
    for (int u = 0; u < U; ++u) {  // all loads first: U groups in flight per thread
      const std::int64_t gg = g + std::int64_t(u) * STRIDE;
      if (gg < gEnd) {
        loadStream<V>(m.values + gg * V, val[u]);
        loadStream<V>(m.delta + gg * V, del[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::int64_t gg = g + std::int64_t(u) * STRIDE;
      if (gg < gEnd) {
        const std::int64_t first = gg * V;
        const int lo = first < begin ? int(begin - first) : 0;
        const int hi = first + V > end ? int(end - first) : V;
        acc = addGroup<V>(m, x, gg, val[u], del[u], lo, hi, acc);
      }
    }
  }
  return acc;
}

__device__ __forceinline__ double warpSum(double v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
}

template <int V, int U, int S>
__device__ __forceinline__ void binnedBody(const Delta16View& m, const double* __restrict__ x,
                                           double* __restrict__ y) {
  __shared__ double warpTotals[kWarps];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  std::int64_t b = blockIdx.x;
  if (b < m.nLong) {  // one block per long row
    const RowTask t = m.longRows[b];
    const double s = warpSum(rowShare<V, U, kBlock>(m, x, t.begin, t.length, threadIdx.x));
    if (lane == 0) warpTotals[warp] = s;
    __syncthreads();
    if (warp == 0) {
      double v = lane < kWarps ? warpTotals[lane] : 0.0;
#pragma unroll
      for (int o = kWarps / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
      if (lane == 0) y[t.row] = v * m.scale;
    }
    return;
  }
  b -= m.nLong;
  constexpr int kRowsPerWarp = 32 / S;
  const std::int64_t warpBlocks = (m.nWarp + kWarps * kRowsPerWarp - 1) / (kWarps * kRowsPerWarp);
  if (b < warpBlocks) {  // S lanes per row, 32 / S rows per warp
    const std::int64_t i = (b * kWarps + warp) * kRowsPerWarp + lane / S;
    RowTask t{0, 0, 0};
    if (i < m.nWarp) t = m.warpRows[i];
    double s = rowShare<V, U, S>(m, x, t.begin, t.length, lane % S);
#pragma unroll
    for (int o = S / 2; o > 0; o >>= 1) s += __shfl_xor_sync(0xFFFFFFFFu, s, o);  // within the S lanes
    if (lane % S == 0 && i < m.nWarp) y[t.row] = s * m.scale;
    return;
  }
  b -= warpBlocks;
  const std::int64_t i = b * kWarps + warp;  // one warp per run of empty rows
  if (i >= m.nEmpty) return;
  const EmptyRun r = m.emptyRuns[i];
  for (int k = lane; k < r.count; k += 32) y[r.first + k] = 0.0;
}

// Two register budgets per variant. B = 0: ptxas chooses (v8u1: 44 registers, 62 % occupancy
// after the S-lane generalisation; liver-1 D w 2.68 ms in run 2 against 2.36 ms at 40 registers
// and 75 % in run 1). B = 6: __launch_bounds__(256, 6) caps it at 40 registers (6 blocks per SM),
// at the price of a few bytes of spills outside the inner loop.
template <int V, int U, int S>
__global__ void __launch_bounds__(kBlock)
    csr_spmv_binned_delta16(const Delta16View m, const double* __restrict__ x, double* __restrict__ y) {
  binnedBody<V, U, S>(m, x, y);
}
template <int V, int U, int S>
__global__ void __launch_bounds__(kBlock, 6)
    csr_spmv_binned_delta16_b6(const Delta16View m, const double* __restrict__ x, double* __restrict__ y) {
  binnedBody<V, U, S>(m, x, y);
}

using KernelFn = void (*)(const Delta16View, const double*, double*);

// Compiled variants. Run 1 (docs/spmv-notes.md): V = 2 lost to V = 8 everywhere (liver-1 D w
// 3.33 vs 2.36 ms), so the 16-byte loads stay and only V = 4/8 keep several depths.
KernelFn pick(int v, int u, int s, int b) {
  if (b == 6) {
    if (v == 8 && u == 1 && s == 32) return &csr_spmv_binned_delta16_b6<8, 1, 32>;
    if (v == 8 && u == 1 && s == 16) return &csr_spmv_binned_delta16_b6<8, 1, 16>;
    if (v == 4 && u == 2 && s == 8) return &csr_spmv_binned_delta16_b6<4, 2, 8>;
    if (v == 4 && u == 2 && s == 16) return &csr_spmv_binned_delta16_b6<4, 2, 16>;
  }
  if (b != 0 && b != 6) PENUMBRA_THROW(InvalidArgument, "csr_spmv_binned_delta16: blocks per SM must be 0 or 6");
#define PENUMBRA_DELTA16_CASE(V, U, S) \
  if (b == 0 && v == V && u == U && s == S) return &csr_spmv_binned_delta16<V, U, S>;
  PENUMBRA_DELTA16_CASE(2, 4, 32)
  PENUMBRA_DELTA16_CASE(4, 4, 32)
  PENUMBRA_DELTA16_CASE(8, 1, 32)
  PENUMBRA_DELTA16_CASE(8, 2, 32)
  PENUMBRA_DELTA16_CASE(8, 1, 16)
  PENUMBRA_DELTA16_CASE(8, 1, 8)
  PENUMBRA_DELTA16_CASE(8, 2, 16)
  PENUMBRA_DELTA16_CASE(4, 2, 8)
#undef PENUMBRA_DELTA16_CASE
  PENUMBRA_THROW(InvalidArgument, "csr_spmv_binned_delta16: no variant with " + std::to_string(v) +
                                      " entries per load, " + std::to_string(u) + " loads in flight and " +
                                      std::to_string(s) + " lanes per row" + (b ? " at 6 blocks per SM" : ""));
}

std::int64_t gridOf(const Delta16View& m, int lanesPerRow) {
  const std::int64_t rowsPerBlock = std::int64_t(kWarps) * (32 / lanesPerRow);
  return std::int64_t(m.nLong) + (std::int64_t(m.nWarp) + rowsPerBlock - 1) / rowsPerBlock +
         (std::int64_t(m.nEmpty) + kWarps - 1) / kWarps;
}

}  // namespace

LaunchShape delta16Shape(const Delta16View& v, int entriesPerLoad, int loadsInFlight, int lanesPerRow,
                         int minBlocksPerSm) {
  return {int(gridOf(v, lanesPerRow)), kBlock,
          reinterpret_cast<const void*>(pick(entriesPerLoad, loadsInFlight, lanesPerRow, minBlocksPerSm))};
}

void launchDelta16(const Delta16View& v, int entriesPerLoad, int loadsInFlight, int lanesPerRow,
                   int minBlocksPerSm, const double* x, double* y, cudaStream_t stream) {
  const KernelFn fn = pick(entriesPerLoad, loadsInFlight, lanesPerRow, minBlocksPerSm);
  const std::int64_t grid = gridOf(v, lanesPerRow);
  PENUMBRA_REQUIRE(grid <= INT32_MAX, Unsupported, "csr_spmv_binned_delta16: too many row tasks");
  if (grid == 0) return;
  fn<<<unsigned(grid), kBlock, 0, stream>>>(v, x, y);
  PENUMBRA_CUDA_CHECK_LAUNCH("csr_spmv_binned_delta16");
}

}  // namespace penumbra::spmv::cuda
