#pragma once
// The tally methods of the CUDA MCML engine (issue 6; Liu et al. 2018 compare the atomic
// ones, Lo et al. 2009 introduced the shared-memory buffer and the register cache). Each
// method is a compile-time switch of the one kernel; all are called at a warp-uniform point
// (every lane of the warp, `valid` says whether the lane has something to add).
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

/// Kahan-compensated float pair (sum, compensation) updated atomically by a 64-bit CAS.
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

/// Where the tallies of one launch live (element type depends on the method).
struct TallyPtrs {
  void* arz;
  void* rd;
  void* tt;
  double* rouletteGain;
  int sharedNr, sharedNz;  ///< buffered region (shared-memory methods)
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
  return M == TallyMethod::SharedBuffer || M == TallyMethod::SharedRegister;
}
template <TallyMethod M>
constexpr bool usesRegisterCache() {
  return M == TallyMethod::RegisterCache || M == TallyMethod::SharedRegister;
}

/// Fixed-point add of an already converted amount into A_rz bin i: the shared buffer when the
/// bin lies in the high-fluence region near the source, else global memory.
template <TallyMethod M>
__device__ __forceinline__ void fixedAddArz(const TallyPtrs& t, unsigned long long* sh, int nz,
                                            int i, unsigned long long amount) {
  if constexpr (usesShared<M>()) {
    const int ir = i / nz, iz = i - ir * nz;
    if (ir < t.sharedNr && iz < t.sharedNz) {
      atomicAdd(sh + ir * t.sharedNz + iz, amount);
      return;
    }
  }
  atomicAdd(static_cast<unsigned long long*>(t.arz) + i, amount);
}

/// Per-thread state of the register cache: the last A_rz bin and its pending fixed-point sum.
struct RegisterCache {
  int index = -1;
  unsigned long long amount = 0;
};

/// The absorption tally of one step (warp-uniform call).
template <TallyMethod M>
__device__ __forceinline__ void tallyAbsorb(const TallyPtrs& t, unsigned long long* sh, int nz,
                                            bool valid, int i, float w, RegisterCache& rc) {
  if constexpr (M == TallyMethod::WarpAggregatedDouble) {
    const unsigned mask = __ballot_sync(kFullMask, valid);
    if (valid) {
      const unsigned peers = __match_any_sync(mask, i);
      const double sum = reducePeers(mask, peers, double(w));
      if ((threadIdx.x & 31) == unsigned(__ffs(peers) - 1)) atomicAdd(static_cast<double*>(t.arz) + i, sum);
    }
  } else if constexpr (usesRegisterCache<M>()) {
    if (valid) {
      if (i != rc.index) {
        if (rc.index >= 0) fixedAddArz<M>(t, sh, nz, rc.index, rc.amount);
        rc.index = i;
        rc.amount = 0;
      }
      rc.amount += toFixed(w);
    }
  } else if constexpr (usesShared<M>()) {
    if (valid) fixedAddArz<M>(t, sh, nz, i, toFixed(w));
  } else {
    if (valid) atomicAddBin<M>(t.arz, i, w);
  }
}

/// Element size of the method's global tally arrays [bytes].
inline std::size_t tallyElementBytes(TallyMethod m) { return m == TallyMethod::FloatAtomic ? 4 : 8; }

}  // namespace penumbra::mcml::cuda
