#pragma once
/// What the warp algorithms of the SpMV kernels share (segmented_steps_warp.hpp,
/// sliced_offset8_warp.hpp): each is written once for the GPU and for the CPU emulation of a warp
/// in the tests, so these helpers compile for both, and they add and multiply alike on both
/// (the emulation's results are compared with the GPU's bit for bit).
#include <cstdint>

#ifdef __CUDACC__
#define PENUMBRA_SPMV_HD __host__ __device__ __forceinline__
#define PENUMBRA_SPMV_UNROLL _Pragma("unroll")
#else
#define PENUMBRA_SPMV_HD inline
#define PENUMBRA_SPMV_UNROLL
#include <cmath>
#endif

namespace penumbra::spmv::warp {

/// a * b + c rounded once, on the GPU and on the host.
PENUMBRA_SPMV_HD double fmaD(double a, double b, double c) {
#ifdef __CUDA_ARCH__
  return fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// Bits set in v.
PENUMBRA_SPMV_HD std::uint32_t popc32(std::uint32_t v) {
#ifdef __CUDA_ARCH__
  return std::uint32_t(__popc(v));
#else
  return std::uint32_t(__builtin_popcount(v));
#endif
}

/// Butterfly sum over the warp: every lane ends with the same bits (each level adds the same two
/// numbers, in either order).
template <class W>
PENUMBRA_SPMV_HD double warpSum(W& w, double v) {
  for (int o = 16; o > 0; o >>= 1) v += w.shflXor(v, o);
  return v;
}

}  // namespace penumbra::spmv::warp
