#pragma once
// The comparison's statistics on the GPU: one block a run of kStatsRun reference points sums
// them (addPoint, the CPU's code) into one PointSums, and the fine gamma histogram is counted in
// shared memory and added to one global histogram. The host merges the runs in index order
// (summarise). Why on the GPU: on the host the same sums read the three 64 MB volumes of a
// 256^3 comparison after they were downloaded and took 4.4-6.6 ms on 16 threads (H200 machine,
// 2026-11-26), more than the gamma search itself; here they read device memory at ~3 TB/s.
// Deterministic: each thread sums its points in a fixed order, the block merges in a fixed
// tree, the histogram is integer.
#include <cuda_runtime.h>

#include "compare/compare_internal.hpp"

namespace penumbra::compare::detail::gpu {

constexpr int kStatsBlock = 256;
constexpr long long kStatsRun = 32768;
constexpr int kStatsBatch = 4;

__global__ void __launch_bounds__(kStatsBlock)
    statsKernel(const float* __restrict__ ref, const float* __restrict__ gamma,
                const float* __restrict__ diff, const std::uint8_t* __restrict__ mask,
                long long n, float cutoffGy, double ddGy, double cap, bool withGamma,
                PointSums* __restrict__ runs, unsigned long long* __restrict__ histogram) {
  __shared__ unsigned hist[kGammaHistogramBins];
  // PointSums has initialisers: raw storage, assigned below (a __shared__ object cannot be
  // constructed).
  __shared__ alignas(PointSums) unsigned char raw[sizeof(PointSums) * kStatsBlock];
  PointSums* sums = reinterpret_cast<PointSums*>(raw);
  const int t = threadIdx.x;
  if (withGamma)
    for (int b = t; b < kGammaHistogramBins; b += kStatsBlock) hist[b] = 0;
  __syncthreads();
  const long long begin = (long long)blockIdx.x * kStatsRun;
  const long long end = begin + kStatsRun < n ? begin + kStatsRun : n;
  // kStatsBatch points a thread are loaded before the first is summed: with one point a turn
  // each thread's 128 turns waited for one load after the other, and the kernel, one wave of
  // blocks, took 0.14 ms on box4-256 (H200, 2026-11-27) for what its bytes take in ~0.05 ms.
  PointSums p;
  for (long long i0 = begin + t; i0 < end; i0 += kStatsBlock * kStatsBatch) {
    float rv[kStatsBatch], dv[kStatsBatch], gv[kStatsBatch];
    bool in[kStatsBatch];
#pragma unroll
    for (int u = 0; u < kStatsBatch; ++u) {
      const long long i = i0 + (long long)u * kStatsBlock;
      const bool ok = i < end;
      rv[u] = ok ? __ldg(ref + i) : 0.0f;
      dv[u] = ok ? __ldg(diff + i) : 0.0f;
      gv[u] = ok && withGamma ? __ldg(gamma + i) : 0.0f;
      in[u] = ok && (mask ? __ldg(mask + i) != 0 : true);
    }
#pragma unroll
    for (int u = 0; u < kStatsBatch; ++u) {
      if (i0 + (long long)u * kStatsBlock >= end) break;
      if (addPoint(p, rv[u], dv[u], gv[u], in[u], cutoffGy, ddGy, withGamma) && withGamma)
        atomicAdd(hist + gammaBin(gv[u], cap), 1u);
    }
  }
  sums[t] = p;
  __syncthreads();
  for (int half = kStatsBlock / 2; half > 0; half >>= 1) {
    if (t < half) mergeSums(sums[t], sums[t + half]);
    __syncthreads();
  }
  if (t == 0) runs[blockIdx.x] = sums[0];
  if (withGamma)
    for (int b = t; b < kGammaHistogramBins; b += kStatsBlock)
      if (hist[b]) atomicAdd(histogram + b, (unsigned long long)hist[b]);
}

}  // namespace penumbra::compare::detail::gpu
