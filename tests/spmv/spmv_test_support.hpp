#pragma once
// Seeded random fp16 CSR matrices and vectors for the SpMV tests, and the comparison used by
// every CUDA test: max |gpu - cpu| / max |cpu| (norm-wise), non-finite outputs counted apart.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "spmv/half_csr.hpp"
#include "spmv/half_float.hpp"

namespace penumbra::spmv::test {

/// Row lengths uniform in [0, maxLen] (with `emptyFraction` of rows forced empty), columns
/// distinct and ascending, values random fp16 in +-[2^-8, 2] (signed) or (0, 2].
inline HalfCsr randomCsr(std::int64_t rows, std::int64_t cols, std::int64_t maxLen, std::uint32_t seed,
                         bool signedValues = true, double emptyFraction = 0.3) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  HalfCsr m;
  m.rows = rows;
  m.cols = cols;
  m.rowPtr.assign(std::size_t(rows) + 1, 0);
  std::vector<std::int32_t> pick;
  for (std::int64_t r = 0; r < rows; ++r) {
    std::int64_t len = u(rng) < emptyFraction ? 0 : std::int64_t(u(rng) * double(maxLen + 1));
    len = std::min(len, cols);
    // Distinct columns: Floyd's sampling, then sort.
    pick.clear();
    for (std::int64_t j = cols - len; j < cols; ++j) {
      const std::int32_t t = std::int32_t(std::uniform_int_distribution<std::int64_t>(0, j)(rng));
      if (std::find(pick.begin(), pick.end(), t) == pick.end()) pick.push_back(t);
      else pick.push_back(std::int32_t(j));
    }
    std::sort(pick.begin(), pick.end());
    for (std::int32_t c : pick) {
      double v = std::ldexp(1.0, -8) + u(rng) * 2.0;
      if (signedValues && u(rng) < 0.5) v = -v;
      m.colIdx.push_back(c);
      m.values.push_back(floatToHalfBits(float(v)));
    }
    m.rowPtr[std::size_t(r) + 1] = std::int64_t(m.colIdx.size());
  }
  return m;
}

inline std::vector<double> randomVector(std::int64_t n, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) x = u(rng);
  return v;
}

struct Comparison {
  double relError = 0;       ///< max |a - ref| / max |ref|
  std::size_t nonFinite = 0; ///< outputs left poisoned (NaN) or broken
  double maxAbsRef = 0;
};

inline Comparison compareToReference(const std::vector<double>& a, const std::vector<double>& ref) {
  Comparison c;
  double worst = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    c.maxAbsRef = std::max(c.maxAbsRef, std::fabs(ref[i]));
    if (!std::isfinite(a[i])) {
      ++c.nonFinite;
      continue;
    }
    worst = std::max(worst, std::fabs(a[i] - ref[i]));
  }
  c.relError = c.maxAbsRef > 0 ? worst / c.maxAbsRef : worst;
  return c;
}

}  // namespace penumbra::spmv::test
