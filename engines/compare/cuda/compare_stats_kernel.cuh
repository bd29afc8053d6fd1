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
  PointSums p;
  for (long long i = begin + t; i < end; i += kStatsBlock) {
    const float g = withGamma ? __ldg(gamma + i) : 0.0f;
    if (addPoint(p, __ldg(ref + i), __ldg(diff + i), g, mask ? __ldg(mask + i) != 0 : true,
                 cutoffGy, ddGy, withGamma) &&
        withGamma)
      atomicAdd(hist + gammaBin(g, cap), 1u);
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
