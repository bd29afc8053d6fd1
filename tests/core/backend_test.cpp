#include <gtest/gtest.h>

#include "core/device.hpp"
#include "core/error.hpp"

using namespace penumbra;

TEST(Backend, ParsesNames) {
  EXPECT_EQ(parseBackend("CPU"), Backend::Cpu);
  EXPECT_EQ(parseBackend("cuda"), Backend::Cuda);
  EXPECT_EQ(parseBackend("auto"), Backend::Auto);
  EXPECT_THROW(parseBackend("opencl"), Error);
}

TEST(Backend, CpuRequestIsHonoured) {
  const auto c = selectBackend(Backend::Cpu);
  EXPECT_EQ(c.backend, Backend::Cpu);
  EXPECT_FALSE(c.fellBack);
}

TEST(Backend, AutoAndCudaAgreeWithDeviceQuery) {
  std::string why;
  const auto devices = queryCudaDevices(&why);
  for (Backend req : {Backend::Auto, Backend::Cuda}) {
    const auto c = selectBackend(req);
    if (devices.empty()) {
      // No usable GPU: fall back to the CPU and tell the user why.
      EXPECT_EQ(c.backend, Backend::Cpu);
      EXPECT_TRUE(c.fellBack);
      EXPECT_FALSE(why.empty());
      EXPECT_NE(c.message.find("CPU"), std::string::npos);
    } else {
      EXPECT_EQ(c.backend, Backend::Cuda);
      ASSERT_TRUE(c.device.has_value());
      EXPECT_FALSE(c.device->name.empty());
      EXPECT_GT(c.device->multiprocessors, 0);
      EXPECT_GT(c.device->totalMemoryBytes, 0u);
    }
  }
}

TEST(Backend, FormatsBytes) {
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(1.5 * 1024 * 1024 * 1024), "1.5 GiB");
}
