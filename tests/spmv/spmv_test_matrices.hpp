#pragma once
// The matrices of the SpMV tests, in one place, for the StepCsr round trips and the kernel checks
// (CPU emulation and GPU): every matrix of spmv_cpu_test, matrix_io_test and spmv_cuda_test, and
// the awkward shapes of issue 14 (empty matrix, empty rows, one huge row, column gaps around the
// escape thresholds and beyond 2^24, first column far from 0, the largest column index).
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "proton/proton_phantoms.hpp"
#include "spmv/spmv.hpp"
#include "spmv/synthetic.hpp"
#include "spmv_test_support.hpp"

namespace penumbra::spmv::test {

struct NamedMatrix {
  std::string name;
  HalfCsr m;
};

/// [[1 0 2], [0 0 0], [0 -3 0.5]] with scale 2 (spmv_cpu_test's hand-checked product).
inline HalfCsr small3x3() {
  HalfCsr m;
  m.rows = m.cols = 3;
  m.rowPtr = {0, 2, 2, 4};
  m.colIdx = {0, 2, 1, 2};
  for (float v : {1.f, 2.f, -3.f, 0.5f}) m.values.push_back(floatToHalfBits(v));
  m.scale = 2;
  return m;
}

/// Rows given as column lists; values cycle through small signed fp16 numbers.
inline HalfCsr fromRows(std::int64_t cols, const std::vector<std::vector<std::int32_t>>& rows) {
  HalfCsr m;
  m.rows = std::int64_t(rows.size());
  m.cols = cols;
  m.rowPtr.push_back(0);
  for (const auto& r : rows) {
    for (std::int32_t c : r) {
      m.colIdx.push_back(c);
      m.values.push_back(floatToHalfBits(float(int(m.colIdx.size() % 13) - 6) / 4.f));
    }
    m.rowPtr.push_back(std::int64_t(m.colIdx.size()));
  }
  return m;
}

/// One row of n entries among empty rows (spmv_cuda_test's "one row of 1e6", gap in the middle).
inline HalfCsr hugeRow(int n) {
  HalfCsr m;
  m.rows = 70;
  m.cols = n + 3;
  m.rowPtr.assign(71, 0);
  for (int c = 0; c < n; ++c) {
    m.colIdx.push_back(c + 3 * (c >= n / 2));
    m.values.push_back(floatToHalfBits(float(1 + (c % 7)) / 8.f));
  }
  for (int r = 40; r < 71; ++r) m.rowPtr[std::size_t(r)] = n;
  return m;
}

/// Steps at and around both escape thresholds (14/15 for 4 bits, 254/255/256 for 8 bits),
/// 65535/65536 and beyond 2^24 inside rows; across rows: a step of 0 (a row starting at the
/// column where the previous one ended), a step back from the largest column to 0, a first
/// column far from 0; rows of 7, 8, 9 and 16 entries (group edges); empty rows between.
inline HalfCsr columnGaps() {
  const std::int32_t maxCol = INT32_MAX;
  std::vector<std::vector<std::int32_t>> rows;
  std::vector<std::int32_t> r0 = {5};
  for (std::int32_t gap : {254, 255, 256, 65535, 65536, (1 << 24) + 3, 14, 15, 1, 13, 16, 1 << 30})
    r0.push_back(r0.back() + gap);
  r0.push_back(maxCol);
  rows.push_back(r0);
  rows.push_back({maxCol});               // step 0 across rows
  rows.push_back({0, 1, 2, 16, 30, 45});  // back to 0, then 14 and 15
  rows.push_back({});
  rows.push_back({2000000000, 2000000001});  // far from 0
  rows.push_back({2000000001});              // step 0 again, then empty rows
  rows.push_back({});
  rows.push_back({});
  for (int len : {7, 8, 9, 16}) {
    std::vector<std::int32_t> r;
    for (int k = 0; k < len; ++k) r.push_back(1000 + 3 * k);
    rows.push_back(r);
  }
  rows.push_back({maxCol - 1, maxCol});
  return fromRows(std::int64_t(maxCol) + 1, rows);
}

/// Every matrix the existing SpMV tests use (without the proton engine's, which needs the proton
/// library: see the test files), plus their transposes where those tests take them.
/// The same matrix with values k/4 for k in [-8, 8] (exact in fp16): with an x of integers every
/// product and partial sum is a multiple of 1/4 far below 2^53, so any summation order is exact
/// and a kernel must equal the CPU reference bit for bit.
inline HalfCsr integerValued(HalfCsr m) {
  for (std::size_t e = 0; e < m.values.size(); ++e)
    m.values[e] = floatToHalfBits(float(int(e * 7 % 17) - 8) / 4.f);
  return m;
}

/// The inputs of a kernel emulation test of m: a random x (seed 5) with its CPU reference, and
/// m's integer-valued twin with an x of small integers, whose product any summation order gives
/// exactly, with its reference.
struct EmulationInputs {
  HalfCsr mi;
  std::vector<double> x, xi, ref, refi;
  explicit EmulationInputs(const HalfCsr& m)
      : mi(integerValued(m)),
        x(randomVector(m.cols, 5)),
        xi(std::size_t(m.cols)),
        ref(std::size_t(m.rows)),
        refi(std::size_t(m.rows)) {
    for (std::size_t k = 0; k < xi.size(); ++k) xi[k] = double(int(k % 11) - 5);
    multiplyCpu(m, x.data(), ref.data(), 2);
    multiplyCpu(mi, xi.data(), refi.data(), 2);
  }
};

/// The dose matrix the proton engine builds on the CPU for its seeded random phantom (seed 11,
/// 32 voxels a side): the real matrix of the SpMV kernel tests.
inline HalfCsr protonPhantomMatrix() {
  return proton::phantomDoseMatrix(proton::makeRandomPhantomCase(11, 32));
}

inline std::vector<NamedMatrix> existingTestMatrices() {
  std::vector<NamedMatrix> out;
  out.push_back({"3x3 hand-checked", small3x3()});
  out.push_back({"random 500x77", randomCsr(500, 77, 40, 3)});
  out.push_back({"random 20000x300", randomCsr(20000, 300, 200, 5)});
  out.push_back({"random 3000x200000 (wide)", randomCsr(3000, 200000, 300, 9)});
  out.push_back({"random 3000x5000", randomCsr(3000, 5000, 300, 10)});
  out.push_back({"random 5000x4000 long rows", randomCsr(5000, 4000, 3000, 12, true, 0.5)});
  out.push_back({"random 400x90", randomCsr(400, 90, 60, 21)});
  out.push_back({"io 60x45", randomCsr(60, 45, 20, 4)});
  out.push_back({"io 300x70", randomCsr(300, 70, 30, 8)});
  out.push_back({"io 2000x300", randomCsr(2000, 300, 40, 9)});
  out.push_back({"prostate-1/50", makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 50), 2)});
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    HalfCsr a = randomCsr(3000 + seed * 777, 1000 + seed * 13, 600, seed);
    out.push_back({"cuda random " + std::to_string(seed) + "^T", transpose(a)});
    out.push_back({"cuda random " + std::to_string(seed), std::move(a)});
  }
  HalfCsr p = makeSyntheticDoseMatrix(scaled(prostate1Spec(), 1.0 / 20), 2);
  out.push_back({"prostate-1/20^T", transpose(p)});
  out.push_back({"prostate-1/20", std::move(p)});
  out.push_back({"33 columns, 70 % empty rows", randomCsr(1001, 33, 33, 11, true, 0.7)});
  out.push_back({"300000 columns", randomCsr(2000, 300000, 400, 15)});
  return out;
}

/// The awkward shapes of issue 14 (the huge row is separate: it is slow to emulate).
inline std::vector<NamedMatrix> awkwardMatrices() {
  std::vector<NamedMatrix> out;
  HalfCsr empty;  // 0 x 0
  empty.rowPtr = {0};
  out.push_back({"0x0", empty});
  HalfCsr one;
  one.rows = one.cols = 1;
  one.rowPtr = {0, 1};
  one.colIdx = {0};
  one.values = {floatToHalfBits(0.75f)};
  out.push_back({"1x1", one});
  HalfCsr none;  // rows, but no entries
  none.rows = 5000;
  none.cols = 7;
  none.rowPtr.assign(5001, 0);
  out.push_back({"5000x7 without entries", none});
  out.push_back({"column gaps", columnGaps()});
  out.push_back({"one row of 5000", hugeRow(5000)});
  return out;
}

}  // namespace penumbra::spmv::test
