#pragma once
// What the SpMV layouts' tests check of a matrix that went through an encoding (or to the GPU
// and back): it comes back array by array, and the layout's CPU product equals multiplyCpu's
// bit for bit.
// (Call through ASSERT_NO_FATAL_FAILURE: a failure here ends the caller's check too.)
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "spmv/spmv.hpp"
#include "spmv_test_support.hpp"

namespace penumbra::spmv::test {

inline void expectSameCsr(const HalfCsr& back, const HalfCsr& m, const std::string& what) {
  ASSERT_EQ(back.rows, m.rows) << what;
  ASSERT_EQ(back.cols, m.cols) << what;
  ASSERT_EQ(back.scale, m.scale) << what;
  ASSERT_EQ(back.rowPtr, m.rowPtr) << what;
  ASSERT_EQ(back.colIdx, m.colIdx) << what;
  ASSERT_EQ(back.values, m.values) << what;
}

/// multiply(x, y) is the layout's y = A x; x random (seed 77), y poisoned with -1 first.
template <typename Multiply>
void expectProductBitForBit(const HalfCsr& m, Multiply&& multiply, const std::string& what) {
  const auto x = randomVector(m.cols, 77);
  std::vector<double> ref(std::size_t(m.rows)), y(std::size_t(m.rows), -1.0);
  multiplyCpu(m, x.data(), ref.data(), 3);
  multiply(x.data(), y.data());
  if (y.empty()) return;  // an empty matrix: memcmp must not see the vectors' null data
  ASSERT_EQ(0, std::memcmp(ref.data(), y.data(), y.size() * sizeof(double)))
      << what << ": not bit for bit";
}

}  // namespace penumbra::spmv::test
