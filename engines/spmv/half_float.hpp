#pragma once
/// IEEE 754 binary16 ("half") conversion on the host, for the fp16 values of the dose-deposition
/// matrix (the SpMV engine reads them as __half on the GPU, so the bit patterns must be exactly
/// what the hardware's __float2half_rn would produce).
///
/// floatToHalfBits rounds to nearest, ties to even, like __float2half_rn and the x86 F16C
/// instruction vcvtps2ph with rounding mode 0: overflow goes to +-inf (values at or above 65520,
/// the midpoint between 65504 and 2^16), results below 2^-14 become subnormal (rounded once, not
/// twice), below 2^-25 they round to +-0, NaN stays NaN (quiet, payload's top bits kept).
/// Checked exhaustively in tests/proton/proton_geometry_test.cpp (HalfFloat): every half
/// round-trips, and every midpoint between neighbouring halves rounds to the even one.
/// (Moved here from engines/proton: the SpMV engine owns the fp16 matrix format.)
#include <cstdint>
#include <cstring>

namespace penumbra::spmv {

inline std::uint32_t floatBits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bitsToFloat(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// float -> binary16 bits, round to nearest even.
inline std::uint16_t floatToHalfBits(float value) {
  const std::uint32_t x = floatBits(value);
  const std::uint16_t sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t absx = x & 0x7FFFFFFFu;
  if (absx >= 0x7F800000u) {  // inf or NaN
    if (absx == 0x7F800000u) return sign | 0x7C00u;
    return static_cast<std::uint16_t>(sign | 0x7E00u | ((absx >> 13) & 0x03FFu));  // quiet NaN
  }
  if (absx >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520: rounds to inf
  const int exp = static_cast<int>(absx >> 23) - 127;
  if (exp >= -14) {
    // Normal half: keep 10 mantissa bits, round the 13 dropped bits to nearest even. A carry
    // out of the mantissa correctly bumps the exponent (and 65504 + carry cannot happen: the
    // overflow threshold above caught it).
    std::uint32_t mant = absx & 0x007FFFFFu;
    std::uint32_t h = (static_cast<std::uint32_t>(exp + 15) << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
  }
  if (exp < -25) return sign;  // below half the smallest subnormal (2^-25): +-0
  // Subnormal half: value = m * 2^-24 with m = full significand (with its hidden bit) shifted.
  const std::uint32_t full = (absx & 0x007FFFFFu) | 0x00800000u;  // 24-bit significand
  const int shift = -exp - 14 + 13;                                // 14..24
  std::uint32_t h = full >> shift;
  const std::uint32_t rest = full & ((1u << shift) - 1u);
  const std::uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (h & 1u))) ++h;  // may carry into the normal range
  return static_cast<std::uint16_t>(sign | h);
}

/// binary16 bits -> float (exact: every half is a float).
inline float halfBitsToFloat(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1Fu;
  const std::uint32_t mant = h & 0x03FFu;
  if (exp == 0x1Fu) return bitsToFloat(sign | 0x7F800000u | (mant << 13));
  if (exp == 0) {
    // Subnormal or zero: mant * 2^-24, exact in float.
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return bitsToFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

}  // namespace penumbra::spmv
