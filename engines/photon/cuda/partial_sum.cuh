#pragma once
// Block-level combination of Partial records (photon_cuda.cuh) in a fixed order: warp shuffles
// with a fixed pattern, then warp 0's lane 0 adds the warps in index order. The same block size
// and the same inputs give the same bits on every run; no atomics.
#include "photon/cuda/photon_cuda.cuh"

namespace penumbra::photon::cuda {

__device__ __forceinline__ Partial emptyPartial() {
  Partial p;
  p.sum[0] = p.sum[1] = p.sum[2] = 0.0;
  p.count = 0;
  for (int a = 0; a < 3; ++a) {
    p.lo[a] = INT_MAX;
    p.hi[a] = INT_MIN;
  }
  return p;
}

__device__ __forceinline__ void combine(Partial& a, const Partial& b) {
  for (int c = 0; c < 3; ++c) a.sum[c] += b.sum[c];
  a.count += b.count;
  for (int c = 0; c < 3; ++c) {
    a.lo[c] = min(a.lo[c], b.lo[c]);
    a.hi[c] = max(a.hi[c], b.hi[c]);
  }
}

/// Every thread of the block must call this (it synchronises). Thread 0 writes the block total.
template <int kThreads>
__device__ __forceinline__ void writeBlockPartial(Partial mine, Partial* out) {
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "whole warps");
  __shared__ Partial warps[kThreads / 32];
  for (int off = 16; off > 0; off >>= 1) {
    Partial o;
    for (int c = 0; c < 3; ++c) o.sum[c] = __shfl_down_sync(0xffffffffu, mine.sum[c], off);
    o.count = __shfl_down_sync(0xffffffffu, mine.count, off);
    for (int c = 0; c < 3; ++c) {
      o.lo[c] = __shfl_down_sync(0xffffffffu, mine.lo[c], off);
      o.hi[c] = __shfl_down_sync(0xffffffffu, mine.hi[c], off);
    }
    combine(mine, o);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warps[warp] = mine;
  __syncthreads();
  if (threadIdx.x == 0) {
    Partial t = warps[0];
    for (int w = 1; w < kThreads / 32; ++w) combine(t, warps[w]);
    *out = t;
  }
}

}  // namespace penumbra::photon::cuda
