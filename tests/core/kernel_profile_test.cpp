#include <gtest/gtest.h>

#include "core/kernel_profile.hpp"

using namespace penumbra;

TEST(KernelProfile, DerivedRatesFollowTrafficModel) {
  KernelProfile p;
  p.medianMs = 2.0;
  p.bytes = 8.6e9;  // 8.6 GB in 2 ms = 4300 GB/s
  p.flops = 4e9;
  p.peakBandwidthGBs = 4300;
  EXPECT_NEAR(p.gbPerS(), 4300, 1e-9);
  EXPECT_NEAR(p.pctPeakBandwidth(), 100, 1e-9);
  EXPECT_NEAR(p.gflopPerS(), 2000, 1e-9);
  KernelProfile zero;
  EXPECT_EQ(zero.gbPerS(), 0);
}

TEST(KernelProfile, MedianOfEvenAndOdd) {
  EXPECT_DOUBLE_EQ(medianOf({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(medianOf({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(medianOf({}), 0);
}

TEST(KernelProfile, HookRecordsAndJsonHasFields) {
  ProfilerHook hook;
  int calls = 0;
  auto p = timeHost("sum", "cpu-ref", [&] { ++calls; }, 5, 2);
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(p.repetitions, 5);
  hook.record(p);
  ASSERT_EQ(hook.records().size(), 1u);
  const std::string json = profilesToJson(hook.records());
  EXPECT_NE(json.find("\"kernel\": \"sum\""), std::string::npos);
  EXPECT_NE(json.find("\"time_ms\""), std::string::npos);
  EXPECT_NE(json.find("\"pct_peak_bw\""), std::string::npos);
}
