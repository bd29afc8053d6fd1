#pragma once
// The kernels of the CUDA comparison (launched by compare_cuda.cu), in two steps:
//  1. classifyKernel, one thread per reference point: its class (evaluated, below the cut-off,
//     outside the mask or the evaluated dose) and dose difference; the points that need a gamma
//     are appended to a list (their order in it does not matter: each point's result is
//     written at its own index, so the output is the same whatever the order);
//  2. searchKernel, persistent warps over that list: each lane runs GammaSearch (the same code
//     as the CPU reference, the search in float, positions in double) one box per loop turn,
//     and a lane whose point is finished takes the next one from the list while its neighbours
//     go on. The number of boxes a point needs varies 100-fold (5 to 700 on box4-256 at
//     2 %/2 mm), and one thread per point left a warp waiting for its slowest lane.
// Tried and dropped (2026-11-26, H100): handing the points that exceed a box budget to a whole
// warp whose lanes share the point's octants. The long searches are mostly sequential (deep in a
// few octants): 32 lanes finished them only 4.3x sooner (8 lanes 2.3x; CPU replay of the warp),
// and the search took 4.25-12.7 ms for budgets of 128-16 boxes against 4.15 ms without. Also
// tried: handing out the list in a permuted order (index x P mod n for P = 11, 257, 1000003) to
// spread the long points: 3.47-3.58 ms against 3.37-3.41 ms in list order (neighbouring lanes
// on neighbouring points share cache lines).
#include <cuda_runtime.h>

#include "compare/compare_internal.hpp"

namespace penumbra::compare::detail::gpu {

constexpr int kBlock = 128;

/// Slabs of slices classified (and then searched and downloaded) one after the other, at most.
constexpr int kMaxSlabs = 8;

/// Counters of one run, in device memory.
enum Counter {
  kListed = 0,        ///< points listed for a gamma
  kDepthLimited = 1,  ///< depth-limited points
  kSlabEnd = 2,       ///< kMaxSlabs entries: the list's length after slab s was classified
  kNext = kSlabEnd + kMaxSlabs,  ///< kMaxSlabs entries: the next list entry of slab s's search
  kCounters = kNext + kMaxSlabs
};

/// The point's grid indices; 32-bit arithmetic (the backend takes fewer than 2^32 points: a
/// 64-bit division costs ~70 instructions, and in the search it runs for a few lanes of a warp
/// at a time).
__device__ __forceinline__ void pointIndex(const PointSetup<float>& s, long long at, int& i,
                                           int& j, int& k) {
  const unsigned a = unsigned(at), nx = unsigned(s.refDims[0]), ny = unsigned(s.refDims[1]);
  const unsigned row = a / nx;
  i = int(a - row * nx);
  k = int(row / ny);
  j = int(row - unsigned(k) * ny);
}

__global__ void __launch_bounds__(kBlock)
    classifyKernel(PointSetup<float> s, const float* __restrict__ ref,
                   const std::uint8_t* __restrict__ mask, float* __restrict__ gamma,
                   float* __restrict__ diff, unsigned* __restrict__ list, int firstSlice,
                   int lastSlice, unsigned long long* counters) {
  const long long slice = (long long)s.refDims[0] * s.refDims[1];
  const long long at = (long long)firstSlice * slice + (long long)blockIdx.x * kBlock + threadIdx.x;
  const bool inside = at < (long long)lastSlice * slice;
  bool needsGamma = false;
  if (inside) {
    int i, j, k;
    pointIndex(s, at, i, j, k);
    const float nan = __int_as_float(0x7fc00000);
    PointSetup<float> classify = s;
    classify.gamma = false;  // the difference and the class only; the search comes next
    const PointOutcome o =
        comparePoint(classify, i, j, k, __ldg(ref + at), mask ? __ldg(mask + at) != 0 : true);
    diff[at] = o.cls == kOutsideEvaluated ? nan : o.difference;
    gamma[at] = nan;
    needsGamma = o.cls == kEvaluated && s.gamma;
  }
  // One atomic a warp for the list.
  const unsigned lanes = __ballot_sync(0xffffffffu, needsGamma);
  if (!lanes) return;
  const int lane = threadIdx.x & 31;
  const int leader = __ffs(lanes) - 1;
  unsigned base = 0;
  if (lane == leader) base = unsigned(atomicAdd(counters + kListed, (unsigned long long)__popc(lanes)));
  base = __shfl_sync(0xffffffffu, base, leader);
  if (needsGamma) list[base + __popc(lanes & ((1u << lane) - 1u))] = unsigned(at);
}

/// Starts the search at the listed point `at` (inside the evaluated box: classified so).
__device__ __forceinline__ void startPoint(const PointSetup<float>& s,
                                           const float* __restrict__ ref, long long at,
                                           GammaSearch<float>& g) {
  int i, j, k;
  pointIndex(s, at, i, j, k);
  const float dr = __ldg(ref + at);
  double e[3];
  locatePoint(s, i, j, k, e);
  g.start(s.field, e, dr, inverseDoseCriterion(s, dr), s.limits);
}

/// kRefill: idle lanes take new points only once at least that many are idle (or none is
/// busy), so that the start of a point (locating it, the first ring) runs for several lanes at
/// once instead of one lane at almost every turn.
template <int kRefill>
__global__ void __launch_bounds__(kBlock)
    searchKernel(PointSetup<float> s, const float* __restrict__ ref,
                 const unsigned* __restrict__ list, int slab, unsigned from, unsigned to,
                 float* __restrict__ gamma, unsigned long long* counters) {
  // Entries [from, to) of slab `slab`'s part of the list, which the classification counted
  // (device memory: the host enqueues the search without waiting for the counts).
  const unsigned begin = slab > 0 ? unsigned(counters[kSlabEnd + slab - 1]) : 0u;
  const unsigned end = unsigned(counters[kSlabEnd + slab]);
  const unsigned first = begin + from;
  unsigned last = begin + to;
  last = last < end ? last : end;
  const int lane = threadIdx.x & 31;
  GammaSearch<float> g;
  long long at = -1;  // this lane's point; -1: none (take one), -2: the list is exhausted
  for (;;) {
    const unsigned wants = __ballot_sync(0xffffffffu, at == -1);
    const unsigned busy = __ballot_sync(0xffffffffu, at >= 0);
    if (wants && (__popc(wants) >= kRefill || !busy)) {
      const int leader = __ffs(wants) - 1;
      unsigned base = 0;
      if (lane == leader)
        base = first + unsigned(atomicAdd(counters + kNext + slab, (unsigned long long)__popc(wants)));
      base = __shfl_sync(0xffffffffu, base, leader);
      if (at == -1) {
        const unsigned idx = base + __popc(wants & ((1u << lane) - 1u));
        if (idx < last) {
          at = __ldg(list + idx);
          startPoint(s, ref, at, g);
        } else {
          at = -2;
        }
      }
    }
    if (__all_sync(0xffffffffu, at == -2)) return;
    if (at >= 0 && !g.step(s.field, s.limits)) {
      const GammaPoint r = g.result();
      gamma[at] = float(r.gamma);
      if (r.depthLimited) atomicAdd(counters + kDepthLimited, 1ull);
      at = -1;
    }
  }
}

}  // namespace penumbra::compare::detail::gpu
