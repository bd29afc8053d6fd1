// core/format.hpp: the one copy of the number formatters that replaced the fmt/fmtG/g/num
// copies in app, engines and io. Messages compared by other suites depend on these texts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

#include "core/format.hpp"

using namespace penumbra;

namespace {

/// What the removed copies did: snprintf into a fixed buffer (32 to 96 bytes).
std::string fixedBufferCopy(const char* format, double v) {
  char b[32];
  std::snprintf(b, sizeof b, format, v);
  return b;
}

}  // namespace

TEST(Format, GWritesPrintfShortestForm) {
  EXPECT_EQ(formatG(3.5), "3.5");
  EXPECT_EQ(formatG(1e6), "1e+06");
  EXPECT_EQ(formatG(100000), "100000");
  EXPECT_EQ(formatG(123456789), "1.23457e+08");
  EXPECT_EQ(formatG(1e-5), "1e-05");
  EXPECT_EQ(formatG(-0.25), "-0.25");
  EXPECT_EQ(formatG(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(formatG(-std::numeric_limits<double>::max()), "-1.79769e+308");
}

TEST(Format, NumberUsesTheWholeFormat) {
  EXPECT_EQ(formatNumber("%.2f ms", 1.234), "1.23 ms");
  EXPECT_EQ(formatNumber(", occupancy %.0f %%", 87.5), ", occupancy 88 %");
  EXPECT_EQ(formatNumber("%12.4G", 0.000123456), "   0.0001235");
  EXPECT_EQ(formatNumber("%-14.6G", 0.5), "0.5           ");
  EXPECT_EQ(formatNumber("%8.2lf", 3.14159), "    3.14");
}

// The removed copies cut the text at their buffer (47 to 95 characters); the shared one never
// does. No message reached those lengths, so their texts are unchanged.
TEST(Format, NumberIsNeverCutShort) {
  const std::string wide = formatNumber("%200.1f", 1.5);
  ASSERT_EQ(wide.size(), 200u);
  EXPECT_EQ(wide.substr(195), "  1.5");
  EXPECT_EQ(wide.find_first_not_of(' '), 197u);

  // 2^400 is exact in double: all 121 digits of it, as a long fixed-point number prints.
  const std::string huge = formatNumber("%.0f", std::ldexp(1.0, 400));
  ASSERT_EQ(huge.size(), 121u);
  EXPECT_EQ(huge.substr(0, 10), "2582249878");
  EXPECT_EQ(huge.substr(117), "3376");
}

TEST(Format, SameTextAsTheRemovedCopies) {
  std::mt19937_64 rng(20261126);
  std::uniform_real_distribution<double> mantissa(-10.0, 10.0);
  std::uniform_int_distribution<int> exponent(-12, 12);
  for (int i = 0; i < 2000; ++i) {
    const double v = mantissa(rng) * std::pow(10.0, exponent(rng));
    for (const char* format : {"%g", "%.3g", "%.2f", "%.1f ms", "%12.4G", "%.4g Gy"}) {
      ASSERT_EQ(formatNumber(format, v), fixedBufferCopy(format, v)) << format << " of " << v;
    }
    ASSERT_EQ(formatG(v), fixedBufferCopy("%g", v)) << v;
  }
}
