#pragma once
// The first line of every GPU test (label gpu): run where a CUDA device is usable, skip with the
// runtime's reason elsewhere (CI has no GPU), never fail for that.
#include <gtest/gtest.h>

#include <string>

#include "core/device.hpp"

#define REQUIRE_GPU()                                                       \
  do {                                                                      \
    std::string penumbra_why_;                                              \
    if (::penumbra::queryCudaDevices(&penumbra_why_).empty())               \
      GTEST_SKIP() << "no usable CUDA device: " << penumbra_why_;           \
  } while (0)
