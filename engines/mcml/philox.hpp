#pragma once
/// Philox4x32-10 counter-based random numbers (Salmon, Moraes, Dror and Shaw, "Parallel random
/// numbers: as easy as 1, 2, 3", SC'11), header-only so the CPU reference and the CUDA engine
/// draw the same numbers: a given (seed, packet index, step) gives the same four 32-bit words
/// on both. No state besides the counter, so a persistent GPU thread that starts a new packet
/// just changes the counter.
#include <cstdint>

#if defined(__CUDACC__)
#define PENUMBRA_HD __host__ __device__ __forceinline__
#else
#define PENUMBRA_HD inline
#endif

namespace penumbra::mcml {

struct Philox4 {
  std::uint32_t v[4];
};

PENUMBRA_HD std::uint32_t philoxMulHi(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return std::uint32_t((std::uint64_t(a) * b) >> 32);
#endif
}

/// The ten rounds of Philox4x32 on counter c with key (k0, k1).
PENUMBRA_HD Philox4 philox4x32_10(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2,
                                  std::uint32_t c3, std::uint32_t k0, std::uint32_t k1) {
  constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  constexpr std::uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
#if defined(__CUDACC__)
#pragma unroll
#endif
  for (int r = 0; r < 10; ++r) {
    const std::uint32_t hi0 = philoxMulHi(M0, c0), lo0 = M0 * c0;
    const std::uint32_t hi1 = philoxMulHi(M1, c2), lo1 = M1 * c2;
    const std::uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
    k0 += W0;
    k1 += W1;
  }
  return Philox4{{c0, c1, c2, c3}};
}

/// The random block of step `step` of packet `packet` under `seed`: counter (step, packet lo,
/// packet hi, 0), key (seed lo, seed hi).
PENUMBRA_HD Philox4 packetRandom(std::uint64_t seed, std::uint64_t packet, std::uint32_t step) {
  return philox4x32_10(step, std::uint32_t(packet), std::uint32_t(packet >> 32), 0u,
                       std::uint32_t(seed), std::uint32_t(seed >> 32));
}

/// Uniform in the open interval (0, 1) from the top 24 bits: (k + 0.5) 2^-24, exact in float and
/// double, so both backends see the same value and -log(u) never sees 0.
template <typename Real>
PENUMBRA_HD Real uniformOpen(std::uint32_t x) {
  return Real(x >> 8) * Real(5.9604644775390625e-08) + Real(2.98023223876953125e-08);
}

}  // namespace penumbra::mcml
