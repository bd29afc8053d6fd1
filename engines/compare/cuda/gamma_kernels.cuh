#pragma once
// The kernels of the CUDA comparison (launched by compare_cuda.cu), in three steps:
//  1. classifyKernel, kClassifyPoints reference points a thread: each one's class (evaluated,
//     below the cut-off, outside the mask or the evaluated dose) and dose difference; the points
//     that need a gamma are appended to a list (their order in it does not matter: each point's
//     result is written at its own index, so the output is the same whatever the order);
//  2. searchKernel, persistent warps over that list: each lane runs GammaSearch (the same code
//     as the CPU reference, the search in float, positions in double) one box per loop turn,
//     and a lane whose point is finished takes the next one from the list while its neighbours
//     go on. A point still searching after a budget of steps is handed on (step 3);
//  3. longSearchKernel: each handed-on point is finished by a group of lanes sharing its boxes.
// Why step 3. The steps a point needs vary from 5 to 1169 on box4-256 at 2 %/2 mm (mean 16,
// 99.9th percentile 441; the longest sit on the body outline, where the dose drops to 0 within a
// voxel). A lane's steps are sequential, one loop turn each, and a turn takes thousands of
// cycles (a box's bounds are long dependent chains): replaying the warps' schedule on the CPU,
// the search's span was ~1360 turns against ~230 for the same work spread evenly, i.e. set by
// the longest points, not by the total work. With a budget of 32 steps the one-lane part spans
// about 32 + 200 turns and 6.5 % of the points go to the groups, which search a point's boxes
// 8-32 at a time. Measured on one H100 (2026-11-26, `bench gamma`, search span, 2 %/2 mm):
// 3.18 -> 2.35 ms against the one-lane search alone; budgets 16-64 and groups of 8, 16 or 32
// lanes all gave 2.3-2.6 ms, 128 gave 2.8 ms.
// Since 2026-11-27 a step also passes over up to 2 boxes that the corner-range bound rules out
// (GammaSearch::skipRuledOut; the same boxes, the same result): on box4-256 at 2 %/2 mm 59 % of
// the boxes are such, and each took a whole step of both bounds and the probe for every lane.
// With it the mean fell from 15.7 to 11.7 steps a point (CPU replay of the GPU's steps, scan
// and skip limits included), and the best budget from 32 to 16 (CudaGammaTuning).
// Tried and dropped earlier (2026-11-26, H100): handing the points that exceed a box budget to a
// whole warp whose lanes split the point's octants among them (statically, no shared stack). The
// long searches are mostly sequential (deep in a few octants): 32 lanes finished them only 4.3x
// sooner, and the search took 4.25-12.7 ms for budgets of 128-16 boxes against 4.15 ms without.
// Also tried: handing out the list in a permuted order (index x P mod n for P = 11, 257,
// 1000003) to spread the long points: 3.47-3.58 ms against 3.37-3.41 ms in list order
// (neighbouring lanes on neighbouring points share cache lines).
#include <cuda_runtime.h>

#include "compare/compare_internal.hpp"

namespace penumbra::compare::detail::gpu {

constexpr int kBlock = 128;

/// Slabs of slices classified (and then searched and downloaded) one after the other, at most.
constexpr int kMaxSlabs = 8;

/// Entries of each slab's two boxes (BoxSet below): 2 boxes x 3 axes x (low, high).
constexpr int kBoxEntries = 12;

/// Counters of one run, in device memory.
enum Counter {
  kListed = 0,        ///< points listed for a gamma
  kDepthLimited = 1,  ///< depth-limited points
  kSlabCount = 2,     ///< kMaxSlabs entries: the points slab s listed
  kNext = kSlabCount + kMaxSlabs,  ///< kMaxSlabs entries: the next list entry of slab s's search
  kLong = kNext + kMaxSlabs,     ///< kMaxSlabs entries: slab s's points handed to lane groups
  kLongNext = kLong + kMaxSlabs, ///< kMaxSlabs entries: the next of them a group takes
  /// kMaxSlabs x kBoxEntries entries: slab s's two boxes (BoxSet), kBoxEntries / 2 each: for
  /// axis a, entry 2a holds kBoxKey - the lowest index, entry 2a + 1 the highest index + 1
  /// (both 0 while the box is empty).
  kBoxes = kLongNext + kMaxSlabs,
  kCounters = kBoxes + kMaxSlabs * kBoxEntries
};

/// The boxes each slab's classification finds: only their voxels are downloaded (the host's
/// memory holds the value every voxel outside has: +0 for the difference, NaN for the gamma).
enum BoxSet { kDifferenceBox = 0, kListedBox = 1 };

/// A box's low ends are held as kBoxKey - index, so that one atomicMax (from a zeroed counter)
/// finds the smallest index.
constexpr unsigned long long kBoxKey = 1ull << 40;

/// A point is handed to a lane group only while the cells within its reach lie within this many
/// cells of its own along every axis (the group's stack entries hold 6-bit offsets).
constexpr int kLongReachCells = 29;

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

/// Points a classification thread takes (kBlock apart, so that each of its loads is coalesced).
constexpr int kClassifyPoints = 4;

__global__ void __launch_bounds__(kBlock)
    classifyKernel(PointSetup<float> s, const float* __restrict__ ref,
                   const std::uint8_t* __restrict__ mask, float* __restrict__ gamma,
                   float* __restrict__ diff, unsigned* __restrict__ list, int firstSlice,
                   int lastSlice, int slab, unsigned long long* counters) {
  // A block classifies kClassifyPoints * kBlock consecutive points, each thread kClassifyPoints
  // of them: the block's share of the list (ballots, shared counts, three atomics, two barriers)
  // and the kernel's set-up were ~a third of a thread's instructions with one point a thread
  // (ncu, H200, 2026-11-27: 0.11 ms a slab of 2^23 points, issue-bound, 79 % of SM throughput).
  const long long slice = (long long)s.refDims[0] * s.refDims[1];
  const long long first = (long long)firstSlice * slice +
                          (long long)blockIdx.x * (kBlock * kClassifyPoints) + threadIdx.x;
  const long long stop = (long long)lastSlice * slice;
  const float nan = __int_as_float(0x7fc00000);
  PointSetup<float> classify = s;
  classify.gamma = false;  // the difference and the class only; the search comes next
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  unsigned lanes[kClassifyPoints];
  // This thread's part of the slab's two boxes (BoxSet): [box][axis] lowest and highest index.
  unsigned boxLo[2][3], boxHi[2][3];
#pragma unroll
  for (int b = 0; b < 2; ++b)
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      boxLo[b][a] = 0xffffffffu;
      boxHi[b][a] = 0u;
    }
#pragma unroll
  for (int u = 0; u < kClassifyPoints; ++u) {
    const long long at = first + (long long)u * kBlock;
    bool needsGamma = false;
    if (at < stop) {
      const float dr = __ldg(ref + at);
      const bool inMask = mask ? __ldg(mask + at) != 0 : true;
      PointOutcome o;
      int i = -1, j = 0, k = 0;
      if (s.sameGrid) {
        // The evaluated voxel at the same index (comparePoint's same-grid case), no position.
        o = classifyPoint(classify, dr, __ldg(s.field.dose + at), inMask);
      } else {
        pointIndex(s, at, i, j, k);
        o = comparePoint(classify, i, j, k, dr, inMask);
      }
      const float d = o.cls == kOutsideEvaluated ? nan : o.difference;
      diff[at] = d;
      gamma[at] = nan;
      needsGamma = o.cls == kEvaluated && s.gamma;
      // A difference other than +0 (the host memory's fill: both doses 0 give +0) is
      // downloaded, so is a listed point's gamma.
      const bool inDiffBox = __float_as_uint(d) != 0u;
      if (inDiffBox || needsGamma) {
        if (i < 0) pointIndex(s, at, i, j, k);
        const unsigned c[3] = {unsigned(i), unsigned(j), unsigned(k)};
#pragma unroll
        for (int a = 0; a < 3; ++a) {
          if (inDiffBox) {
            boxLo[kDifferenceBox][a] = min(boxLo[kDifferenceBox][a], c[a]);
            boxHi[kDifferenceBox][a] = max(boxHi[kDifferenceBox][a], c[a]);
          }
          if (needsGamma) {
            boxLo[kListedBox][a] = min(boxLo[kListedBox][a], c[a]);
            boxHi[kListedBox][a] = max(boxHi[kListedBox][a], c[a]);
          }
        }
      }
    }
    lanes[u] = __ballot_sync(0xffffffffu, needsGamma);
  }
  // The warp's boxes (one reduction instruction each on sm_80 and later), then the block's.
  __shared__ unsigned warpBox[kBlock / 32][2][6];
#pragma unroll
  for (int b = 0; b < 2; ++b)
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      const unsigned lo = __reduce_min_sync(0xffffffffu, boxLo[b][a]);
      const unsigned hi = __reduce_max_sync(0xffffffffu, boxHi[b][a]);
      if (lane == 0) {
        warpBox[warp][b][2 * a] = lo;
        warpBox[warp][b][2 * a + 1] = hi;
      }
    }
  // One atomic a block for the list, one for the slab's count and one for each end of its
  // listed range (the warps' counts and ends meet in shared memory): same-address atomics
  // serialise in L2. With one a warp (box4-256, one H100, 2026-11-26) the classification took
  // 0.24 ms, then 0.22 ms, and the search 1.78 -> 1.72 ms (2 %/2 mm): a block's points lie
  // together in the list, in index order, so a warp's lanes search neighbouring points.
  constexpr int kParts = kClassifyPoints * (kBlock / 32);  // (point round, warp), index order
  __shared__ unsigned partCount[kParts];
  __shared__ unsigned blockBase;
  if (lane == 0) {
#pragma unroll
    for (int u = 0; u < kClassifyPoints; ++u)
      partCount[u * (kBlock / 32) + warp] = unsigned(__popc(lanes[u]));
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned total = 0;
    for (int q = 0; q < kParts; ++q) total += partCount[q];
    if (total) {
      blockBase = unsigned(atomicAdd(counters + kListed, (unsigned long long)total));
      atomicAdd(counters + kSlabCount + slab, (unsigned long long)total);
    }
  } else if (threadIdx.x <= 6) {
    // Threads 1-6: one (box, axis) each over the block's warps; nothing where no warp saw a
    // point of the box.
    const int b = (threadIdx.x - 1) / 3, a = (threadIdx.x - 1) % 3;
    unsigned lo = 0xffffffffu, hi = 0u;
    for (int w = 0; w < kBlock / 32; ++w) {
      lo = min(lo, warpBox[w][b][2 * a]);
      hi = max(hi, warpBox[w][b][2 * a + 1]);
    }
    if (lo != 0xffffffffu) {
      unsigned long long* box = counters + kBoxes + slab * kBoxEntries + b * 6 + 2 * a;
      atomicMax(box, kBoxKey - (unsigned long long)lo);
      atomicMax(box + 1, (unsigned long long)hi + 1ull);
    }
  }
  __syncthreads();
  unsigned before = blockBase;  // list entries of this block's earlier parts
#pragma unroll
  for (int u = 0; u < kClassifyPoints; ++u) {
    const int q0 = u * (kBlock / 32);
    unsigned offset = before;
    for (int w = 0; w < warp; ++w) offset += partCount[q0 + w];
    if ((lanes[u] >> lane) & 1u)
      list[offset + unsigned(__popc(lanes[u] & ((1u << lane) - 1u)))] =
          unsigned(first + (long long)u * kBlock);
    for (int w = 0; w < kBlock / 32; ++w) before += partCount[q0 + w];
  }
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
/// True when the cells within reach of the point (its best so far, the search limit) fit the
/// group search's offsets.
__device__ __forceinline__ bool fitsGroupSearch(const GammaField<float>& f,
                                                const GammaSearch<float>& g) {
  const float reach = sqrtf(fminf(g.best.g2, g.best.limit2));
  for (int a = 0; a < 3; ++a)
    if (f.n[a] > 1 && reach > float(kLongReachCells - 2) * f.h[a]) return false;
  return true;
}

/// Slab s's part of the list (and of the long list beside it) starts here.
__device__ __forceinline__ unsigned slabBegin(const unsigned long long* counters, int slab) {
  // The classifications run one after the other on one stream, so each slab's entries follow
  // the earlier slabs' in the list. (Until 2026-11-27 a device-to-device copy of the running
  // count after each classification held each slab's end: two more GPU operations and API
  // calls between the classification and the search.)
  unsigned begin = 0;
  for (int b = 0; b < slab; ++b) begin += unsigned(counters[kSlabCount + b]);
  return begin;
}

/// stepBudget > 0: a point still searching after that many steps goes to the long list (its
/// index; its best Gamma^2 so far in its gamma slot) for longSearchKernel, unless its reach is
/// too wide for it.
/// At least 6 blocks an SM (at most 80 registers). ncu on the search without a bound (one H100,
/// 2026-11-26): 89 registers, 5 blocks (20 warps) an SM, 75 % of issue slots busy, 17 of 32
/// lanes active; issue-bound, so more warps help: search span 1.84 -> 1.78 ms (2 %/2 mm) and
/// 2.35 -> 2.29 ms (1 %/1 mm) on box4-256; 8 blocks (64 registers) 1.81 / 2.32 ms.
template <int kRefill>
__global__ void __launch_bounds__(kBlock, 6)
    searchKernel(PointSetup<float> s, const float* __restrict__ ref,
                 const unsigned* __restrict__ list, int slab, unsigned from, unsigned to,
                 float* __restrict__ gamma, unsigned long long* counters, int stepBudget,
                 int skipLimit, unsigned* __restrict__ longList) {
  // Entries [from, to) of slab `slab`'s part of the list, which the classification counted
  // (device memory: the host enqueues the search without waiting for the counts).
  const unsigned begin = slabBegin(counters, slab);
  const unsigned end = begin + unsigned(counters[kSlabCount + slab]);
  const unsigned first = begin + from;
  unsigned last = begin + to;
  last = last < end ? last : end;
  const int lane = threadIdx.x & 31;
  GammaSearch<float> g;
  g.skipLimit = skipLimit;
  long long at = -1;  // this lane's point; -1: none (take one), -2: the list is exhausted
  int steps = 0;      // of this lane's point; negative once it was found too wide to hand on
  for (;;) {
    const unsigned wants = __ballot_sync(0xffffffffu, at == -1);
    const unsigned busy = __ballot_sync(0xffffffffu, at >= 0);
    if (wants && (__popc(wants) >= kRefill || !busy)) {
      const int leader = __ffs(wants) - 1;
      unsigned base = 0;
      if (lane == leader)
        base =
            first + unsigned(atomicAdd(counters + kNext + slab, (unsigned long long)__popc(wants)));
      base = __shfl_sync(0xffffffffu, base, leader);
      if (at == -1) {
        const unsigned idx = base + __popc(wants & ((1u << lane) - 1u));
        if (idx < last) {
          at = __ldg(list + idx);
          startPoint(s, ref, at, g);
          steps = 0;
        } else {
          at = -2;
        }
      }
    }
    if (__all_sync(0xffffffffu, at == -2)) return;
    if (at >= 0) {
      if (!g.step(s.field, s.limits)) {
        const GammaPoint r = g.result();
        gamma[at] = float(r.gamma);
        if (r.depthLimited) atomicAdd(counters + kDepthLimited, 1ull);
        at = -1;
      } else if (++steps == stepBudget) {
        if (fitsGroupSearch(s.field, g)) {
          // Only the bound goes on: a depth-limited box met so far is met again by the group
          // unless a lower best prunes it first.
          gamma[at] = g.best.g2;
          longList[begin + unsigned(atomicAdd(counters + kLong + slab, 1ull))] = unsigned(at);
          at = -1;
        } else {
          steps = -(1 << 30);
        }
      }
    }
  }
}

// ---- The group search of the long points ----
//
// The lanes of a group (8, 16 or 32 of a warp) share one point's boxes. Work is a stack in
// shared memory of boxes (cell offset from the point's cell, level, position) and a generator of
// the cells within the point's reach; every turn each lane without a subtree of its own takes a
// box from the stack (or the next cell), evaluates it (boxUndecided: the same bounds as the
// one-lane search), the lanes share their best Gamma^2 (group minimum), and each box to be
// refined pushes its 8 children. A lane whose children find the stack full searches that box's
// subtree alone, depth first (nextBox), so the stack never overflows. A box is dropped only by
// the tests of the one-lane search, against a best that is an upper bound found at some point of
// the function: the result meets the same bounds (gamma <= result <= gamma + tolerance, pass /
// fail exact), though not bit for bit the one-lane search's value.

/// Stack entry: cell offsets (6 bits each, + 32), level (4 bits), position (14 bits per axis).
__device__ __forceinline__ unsigned long long packBox(const int o[3], const BoxCursor& b) {
  return (static_cast<unsigned long long>(o[0] + 32) << 58) |
         (static_cast<unsigned long long>(o[1] + 32) << 52) |
         (static_cast<unsigned long long>(o[2] + 32) << 46) |
         (static_cast<unsigned long long>(b.level) << 42) |
         (static_cast<unsigned long long>(b.ix) << 28) |
         (static_cast<unsigned long long>(b.iy) << 14) | static_cast<unsigned long long>(b.iz);
}
__device__ __forceinline__ void unpackBox(unsigned long long v, int o[3], BoxCursor& b) {
  o[0] = int((v >> 58) & 63) - 32;
  o[1] = int((v >> 52) & 63) - 32;
  o[2] = int((v >> 46) & 63) - 32;
  b.level = int((v >> 42) & 15);
  b.ix = int((v >> 28) & 16383);
  b.iy = int((v >> 14) & 16383);
  b.iz = int(v & 16383);
}

constexpr int kLongWarps = 2;  ///< warps per block

/// kGroup lanes share a point (a warp searches 32 / kGroup points at once), each group with its
/// own stack of stackItems entries.
template <int kGroup>
__global__ void __launch_bounds__(32 * kLongWarps)
    longSearchKernel(PointSetup<float> s, const float* __restrict__ ref,
                     const unsigned* __restrict__ longList, int slab, float* __restrict__ gamma,
                     unsigned long long* counters, int stackItems) {
  static_assert(kGroup == 8 || kGroup == 16 || kGroup == 32, "groups split a warp evenly");
  extern __shared__ unsigned long long stacks[];
  const int lane = threadIdx.x & (kGroup - 1);  // within the group
  const int group = (threadIdx.x & 31) / kGroup;
  const unsigned groupBits = kGroup == 32 ? 0xffffffffu : ((1u << kGroup) - 1u);
  const int shift = group * kGroup;               // the group's bits in a ballot
  const unsigned groupMask = groupBits << shift;  // its lanes, for the *_sync intrinsics
  unsigned long long* stack = stacks + (threadIdx.x / kGroup) * stackItems;
  const unsigned begin = slabBegin(counters, slab);
  const unsigned count = unsigned(counters[kLong + slab]);
  const GammaField<float>& f = s.field;
  for (;;) {
    unsigned k = 0;
    if (lane == 0) k = unsigned(atomicAdd(counters + kLongNext + slab, 1ull));
    k = __shfl_sync(groupMask, k, 0, kGroup);
    if (k >= count) return;
    const unsigned at = longList[begin + k];
    GammaSearch<float> g;  // the point's position, dose and limits
    startPoint(s, ref, at, g);
    detail::Best<float> best = g.best;
    best.g2 = gamma[at];  // the bound the one-lane search found
    // The cells within reach, per axis, clipped to the grid (as beginRing, for every ring).
    const float reach2 = fminf(best.g2, best.limit2);
    int lo3[3], ext[3];
    for (int a = 0; a < 3; ++a) {
      int lo = 0, hi = 0;
      if (f.n[a] > 1) {
        while (hi < kLongReachCells && g.pc[a] + hi + 1 < f.cells[a] &&
               detail::axisGap2(g.ur[a], float(hi + 1) * f.h[a], f.w[a]) <= reach2)
          ++hi;
        while (lo > -kLongReachCells && g.pc[a] + lo - 1 >= 0 &&
               detail::axisGap2(g.ur[a], float(lo - 1) * f.h[a], f.w[a]) <= reach2)
          --lo;
      }
      lo3[a] = lo;
      ext[a] = hi - lo + 1;
    }
    const int cellCount = ext[0] * ext[1] * ext[2];
    int top = 0, nextCell = 0;  // the same in every lane
    bool own = false;           // this lane searches a subtree of its own
    int ownRoot = 0, o[3] = {0, 0, 0}, loaded[3] = {1 << 20, 0, 0};
    BoxCursor box;
    float corner[8], lo[3];
    for (;;) {
      const unsigned wants = (__ballot_sync(groupMask, !own) >> shift) & groupBits;
      const int rank = __popc(wants & ((1u << lane) - 1u));
      const int fromStack = min(top, __popc(wants));
      bool have = own, fresh = false;
      if (!own) {
        if (rank < fromStack) {
          unpackBox(stack[top - 1 - rank], o, box);
          have = true;
        } else {
          const int c = nextCell + rank - fromStack;
          if (c < cellCount) {
            o[0] = lo3[0] + c % ext[0];
            o[1] = lo3[1] + (c / ext[0]) % ext[1];
            o[2] = lo3[2] + c / (ext[0] * ext[1]);
            box = BoxCursor{};
            have = fresh = true;
          }
        }
      }
      top -= fromStack;
      nextCell = min(cellCount, nextCell + __popc(wants) - fromStack);
      __syncwarp(groupMask);  // every lane has read its entry before the pushes below overwrite it
      if (!__any_sync(groupMask, have)) break;
      bool refine = false;
      if (have) {
        for (int a = 0; a < 3; ++a) lo[a] = float(o[a]) * f.h[a];
        bool skip = false;
        if (fresh) {  // the cell test of nextCell, before loading its doses
          const float g2 = detail::axisGap2(g.ur[0], lo[0], f.w[0]) +
                           detail::axisGap2(g.ur[1], lo[1], f.w[1]) +
                           detail::axisGap2(g.ur[2], lo[2], f.w[2]);
          skip = best.prunes(g2) || g2 > best.limit2;
        }
        if (!skip) {
          if (o[0] != loaded[0] || o[1] != loaded[1] || o[2] != loaded[2]) {
            detail::loadCorners(f, g.pc[0] + o[0], g.pc[1] + o[1], g.pc[2] + o[2], g.invDd, corner);
            for (int a = 0; a < 3; ++a) loaded[a] = o[a];
          }
          refine = detail::boxUndecided(corner, lo, f, g.ur, g.d, best, box);
        }
      }
      float m = best.g2;
      for (int d = kGroup / 2; d > 0; d >>= 1)
        m = fminf(m, __shfl_xor_sync(groupMask, m, d, kGroup));
      best.g2 = m;
      // Children onto the stack (8 a box), as far as it has room; the rest go their own way.
      const bool push = refine && !own && box.level < kGammaMaxLevel;
      const unsigned pushers = (__ballot_sync(groupMask, push) >> shift) & groupBits;
      const int before = __popc(pushers & ((1u << lane) - 1u));
      const int room = (stackItems - top) / 8;
      if (push && before < room) {
        for (int c = 0; c < 8; ++c) {
          const BoxCursor child{box.level + 1, box.ix * 2 + (c & 1), box.iy * 2 + ((c >> 1) & 1),
                                box.iz * 2 + ((c >> 2) & 1)};
          stack[top + 8 * before + 7 - c] = packBox(o, child);  // child 0 on top
        }
      }
      top += 8 * min(__popc(pushers), room);
      if (push && before >= room) {
        own = true;
        ownRoot = box.level;
        detail::nextBox(box, true, ownRoot, best.depthLimited);
      } else if (own) {
        own = detail::nextBox(box, refine, ownRoot, best.depthLimited);
      } else if (refine && !push) {
        // At the depth limit, as nextBox flags it. (Until 2026-11-27 a box whose children went
        // onto the stack was flagged too: every point a group refined was reported depth-limited,
        // 93 795 of box4-256's 1 447 376 at 2 %/2 mm; the gammas were right.)
        best.depthLimited = true;
      }
      __syncwarp(groupMask);
    }
    const bool limited = __any_sync(groupMask, best.depthLimited);
    if (lane == 0) {
      gamma[at] = sqrtf(best.g2);
      if (limited) atomicAdd(counters + kDepthLimited, 1ull);
    }
  }
}

}  // namespace penumbra::compare::detail::gpu
