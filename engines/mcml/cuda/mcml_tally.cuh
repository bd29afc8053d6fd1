#pragma once
// The tally methods of the CUDA MCML engine (issue 6; Liu et al. 2018 compare the atomic
// ones, Lo et al. 2009 introduced the shared-memory buffer and the register cache). Each
// method is a compile-time switch of the one kernel; all are called at a warp-uniform point
// (every lane of the warp, `valid` says whether the lane has something to add).
//
// Three methods keep the high-fluence region of A_rz near the source (the first sharedNr radial
// x sharedNz depth bins; the launcher sizes it from the shared memory left per block and the
// depth of the medium) in a per-block shared-memory buffer, flushed into the global array when
// the block ends:
//  - SharedBuffer / SharedRegister: 32-bit words holding the low half of the 64-bit fixed-point
//    sum. Shared-memory atomicAdd is native for 32 bits; the 64-bit one is a compare-and-swap
//    loop on this GPU. A deposit adds its low 32 bits to the word; when the word wraps (the
//    returned old value says so) the carry, 2^32, goes to the global 64-bit bin, as does the
//    high half of a deposit of weight >= 1. Integer sums in any order give the same total, so
//    the result is bit for bit that of FixedPoint64.
//  - KahanFloatPair: (sum, compensation) float pairs, the same compare-and-swap update as the
//    global pairs. A CAS loop on a global bin that thousands of threads hit at once (the bins
//    near the source) costs a failed round trip per contender for every success: the global-only
//    version took 11.5 s per 10^7 packets on an H200. In shared memory only the block's own
//    threads contend. The flush adds the block's sum and its compensation to the global pair
//    by two Kahan updates (nothing is lost), blocks starting at different bins.
#include <cuda_runtime.h>

#include <cstdint>

#include "mcml/mcml.hpp"

namespace penumbra::mcml::cuda {

constexpr unsigned kFullMask = 0xffffffffu;
/// Fixed point: weight x 2^32 in an unsigned 64-bit bin. A bin holds 4.3e9 packets of unit
/// weight; a deposit is rounded to 2.3e-10 (round to nearest, so unbiased).
constexpr float kFixedScale = 4294967296.0f;
constexpr double kFixedInv = 1.0 / 4294967296.0;

__device__ __forceinline__ unsigned long long toFixed(float w) { return __float2ull_rn(w * kFixedScale); }

/// Kahan-compensated float pair (sum, compensation) updated atomically by a 64-bit CAS (global
/// or shared memory). The true value is sum - compensation.
__device__ __forceinline__ void kahanAtomicAdd(unsigned long long* bin, float v) {
  unsigned long long old = *reinterpret_cast<volatile unsigned long long*>(bin), assumed;
  do {
    assumed = old;
    const float s = __uint_as_float(unsigned(assumed)), c = __uint_as_float(unsigned(assumed >> 32));
    const float y = __fsub_rn(v, c);
    const float t = __fadd_rn(s, y);
    const float cNew = __fsub_rn(__fsub_rn(t, s), y);
    const unsigned long long next =
        (static_cast<unsigned long long>(__float_as_uint(cNew)) << 32) | __float_as_uint(t);
    old = atomicCAS(bin, assumed, next);
  } while (old != assumed);
}

/// Sum of x over the lanes of `peers` (lanes with the same bin); `mask` = all calling lanes.
/// Tree reduction by shuffles (Westphal, "Voting and shuffling to optimize atomic operations").
__device__ __forceinline__ double reducePeers(unsigned mask, unsigned peers, double x) {
  const int lane = threadIdx.x & 31;
  int rel = __popc(peers & ((1u << lane) - 1u));
  unsigned rest = lane == 31 ? 0u : peers & (0xfffffffeu << lane);
  while (__any_sync(mask, rest != 0)) {
    const int next = __ffs(rest);
    const double t = __shfl_sync(mask, x, (next - 1) & 31);
    if (next) x += t;
    const bool done = rel & 1;
    rest &= ~__ballot_sync(mask, done);
    rel >>= 1;
  }
  return x;
}

/// Where the tallies of one launch live (element type depends on the method) and the buffered
/// region (shared-memory methods; 0 x 0 when there is none).
struct TallyPtrs {
  void* arz;
  void* rd;
  void* tt;
  double* rouletteGain;
  int sharedNr, sharedNz;
};

/// A plain (non-aggregated) atomic add of weight w into bin i of an array of the method's type.
template <TallyMethod M>
__device__ __forceinline__ void atomicAddBin(void* base, int i, float w) {
  if constexpr (M == TallyMethod::FloatAtomic) {
    atomicAdd(static_cast<float*>(base) + i, w);
  } else if constexpr (M == TallyMethod::DoubleAtomic || M == TallyMethod::WarpAggregatedDouble) {
    atomicAdd(static_cast<double*>(base) + i, double(w));
  } else if constexpr (M == TallyMethod::KahanFloatPair) {
    kahanAtomicAdd(static_cast<unsigned long long*>(base) + i, w);
  } else {
    atomicAdd(static_cast<unsigned long long*>(base) + i, toFixed(w));
  }
}

template <TallyMethod M>
constexpr bool usesShared() {
  return M == TallyMethod::SharedBuffer || M == TallyMethod::SharedRegister ||
         M == TallyMethod::KahanFloatPair;
}
template <TallyMethod M>
constexpr bool usesRegisterCache() {
  return M == TallyMethod::RegisterCache || M == TallyMethod::SharedRegister;
}
/// Bytes of one shared-memory bin (0: the method has no buffer).
template <TallyMethod M>
constexpr int sharedBinBytes() {
  return M == TallyMethod::KahanFloatPair ? 8 : usesShared<M>() ? 4 : 0;
}

/// Fixed-point add of an already converted amount into A_rz bin (ir, iz): the shared buffer
/// (low words, carries to global) when the bin lies in the buffered region, else global memory.
template <TallyMethod M>
__device__ __forceinline__ void fixedAddArz(const TallyPtrs& t, void* sh, int nz, int ir, int iz,
                                            unsigned long long amount) {
  unsigned long long* g = static_cast<unsigned long long*>(t.arz) + ir * nz + iz;
  if constexpr (usesShared<M>()) {
    if (ir < t.sharedNr && iz < t.sharedNz) {
      const unsigned lo = unsigned(amount);
      const unsigned old = atomicAdd(static_cast<unsigned*>(sh) + ir * t.sharedNz + iz, lo);
      const unsigned long long carry = (amount >> 32) + (old + lo < old ? 1ull : 0ull);
      if (carry) atomicAdd(g, carry << 32);
      return;
    }
  }
  atomicAdd(g, amount);
}

/// Per-thread state of the register cache: the last A_rz bin and its pending fixed-point sum.
struct RegisterCache {
  int ir = -1, iz = 0;
  unsigned long long amount = 0;
};

/// The absorption tally of one step (warp-uniform call).
template <TallyMethod M>
__device__ __forceinline__ void tallyAbsorb(const TallyPtrs& t, void* sh, int nz, bool valid,
                                            int ir, int iz, float w, RegisterCache& rc) {
  if constexpr (M == TallyMethod::WarpAggregatedDouble) {
    const unsigned mask = __ballot_sync(kFullMask, valid);
    if (valid) {
      const int i = ir * nz + iz;
      const unsigned peers = __match_any_sync(mask, i);
      const double sum = reducePeers(mask, peers, double(w));
      if ((threadIdx.x & 31) == unsigned(__ffs(peers) - 1)) atomicAdd(static_cast<double*>(t.arz) + i, sum);
    }
  } else if constexpr (M == TallyMethod::KahanFloatPair) {
    if (valid) {
      unsigned long long* bin = ir < t.sharedNr && iz < t.sharedNz
                                    ? static_cast<unsigned long long*>(sh) + ir * t.sharedNz + iz
                                    : static_cast<unsigned long long*>(t.arz) + ir * nz + iz;
      kahanAtomicAdd(bin, w);
    }
  } else if constexpr (usesRegisterCache<M>()) {
    if (valid) {
      if (ir != rc.ir || iz != rc.iz) {
        if (rc.ir >= 0) fixedAddArz<M>(t, sh, nz, rc.ir, rc.iz, rc.amount);
        rc.ir = ir;
        rc.iz = iz;
        rc.amount = 0;
      }
      rc.amount += toFixed(w);
    }
  } else if constexpr (usesShared<M>()) {
    if (valid) fixedAddArz<M>(t, sh, nz, ir, iz, toFixed(w));
  } else {
    if (valid) atomicAddBin<M>(t.arz, ir * nz + iz, w);
  }
}

/// Adds the block's shared-memory buffer into the global A_rz (after a __syncthreads()). Blocks
/// start at different bins so that they do not all update the same global bin at once.
template <TallyMethod M>
__device__ __forceinline__ void flushShared(const TallyPtrs& t, const void* sh, int nz) {
  const int n = t.sharedNr * t.sharedNz;
  if (n == 0) return;
  const int start = int(std::uint64_t(blockIdx.x) * std::uint64_t(n) / gridDim.x);
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    const int i = j + start < n ? j + start : j + start - n;
    const int g = (i / t.sharedNz) * nz + i % t.sharedNz;
    if constexpr (M == TallyMethod::KahanFloatPair) {
      const unsigned long long pair = static_cast<const unsigned long long*>(sh)[i];
      const float s = __uint_as_float(unsigned(pair)), c = __uint_as_float(unsigned(pair >> 32));
      unsigned long long* bin = static_cast<unsigned long long*>(t.arz) + g;
      if (s != 0.0f) kahanAtomicAdd(bin, s);
      if (c != 0.0f) kahanAtomicAdd(bin, -c);
    } else {
      const unsigned v = static_cast<const unsigned*>(sh)[i];
      if (v) atomicAdd(static_cast<unsigned long long*>(t.arz) + g, static_cast<unsigned long long>(v));
    }
  }
}

/// Element size of the method's global tally arrays [bytes].
inline std::size_t tallyElementBytes(TallyMethod m) { return m == TallyMethod::FloatAtomic ? 4 : 8; }

}  // namespace penumbra::mcml::cuda
