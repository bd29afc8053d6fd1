#pragma once
// Small fp16 CSR dose matrices for the optimiser tests: diagonal (hand-checkable) and seeded
// random non-negative ones (values exact in fp16, scale 1).
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "spmv/half_csr.hpp"
#include "spmv/half_float.hpp"

namespace penumbra::optimise::test {

/// diag(a): a values must be exactly representable in fp16 (powers of two, small integers).
inline spmv::HalfCsr diagonalCsr(const std::vector<float>& a) {
  spmv::HalfCsr m;
  m.rows = m.cols = std::int64_t(a.size());
  m.rowPtr.push_back(0);
  for (std::size_t i = 0; i < a.size(); ++i) {
    m.colIdx.push_back(std::int32_t(i));
    m.values.push_back(spmv::floatToHalfBits(a[i]));
    m.rowPtr.push_back(std::int64_t(i + 1));
  }
  return m;
}

/// rows x cols with about `density` of the entries non-zero, values k / 64 (k in 1..128): exact
/// in fp16, non-negative like a dose-deposition matrix.
inline spmv::HalfCsr randomDoseCsr(std::int64_t rows, std::int64_t cols, double density,
                                   std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> k(1, 128);
  spmv::HalfCsr m;
  m.rows = rows;
  m.cols = cols;
  m.rowPtr.push_back(0);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c)
      if (u(rng) < density) {
        m.colIdx.push_back(std::int32_t(c));
        m.values.push_back(spmv::floatToHalfBits(float(k(rng)) / 64.f));
      }
    m.rowPtr.push_back(m.nnz());
  }
  return m;
}

inline std::vector<std::int64_t> range(std::int64_t begin, std::int64_t end) {
  std::vector<std::int64_t> v;
  for (std::int64_t i = begin; i < end; ++i) v.push_back(i);
  return v;
}

}  // namespace penumbra::optimise::test
