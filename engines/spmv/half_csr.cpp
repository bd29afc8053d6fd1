#include "spmv/half_csr.hpp"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "core/device.hpp"
#include "core/error.hpp"
#include "core/parallel_for.hpp"

namespace penumbra::spmv {

namespace {

/// Runs fn(t) for t in [0, n) on n threads (n small: one chunk per thread).
template <typename F>
void onThreads(int n, F&& fn) {
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(fn, t);
  fn(0);
  for (auto& th : pool) th.join();
}

}  // namespace

void HalfCsr::validate() const {
  auto fail = [](const std::string& m) { PENUMBRA_THROW(InvalidArgument, "CSR matrix: " + m); };
  if (rows < 0 || cols < 0) fail("negative size");
  if (std::int64_t(rowPtr.size()) != rows + 1) fail("row offsets must have rows + 1 entries");
  if (values.size() != colIdx.size()) fail("values and column indices differ in length");
  if (rowPtr.front() != 0) fail("first row offset is not 0");
  if (rowPtr.back() != nnz()) fail("last row offset is not the number of entries");
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t b = rowPtr[std::size_t(r)], e = rowPtr[std::size_t(r) + 1];
    if (e < b) fail("row offsets decrease at row " + std::to_string(r));
    for (std::int64_t k = b; k < e; ++k) {
      const std::int32_t c = colIdx[std::size_t(k)];
      if (c < 0 || c >= cols)
        fail("column " + std::to_string(c) + " out of range in row " + std::to_string(r));
      if (k > b && colIdx[std::size_t(k) - 1] >= c)
        fail("columns not strictly ascending in row " + std::to_string(r));
    }
  }
}

HalfCsr transpose(const HalfCsr& m, int threads) {
  // Parallel over column ranges of m (= row ranges of the result): thread t owns the result rows
  // [c0, c1) and scans every row of m, taking the contiguous run of entries with columns in
  // [c0, c1) (columns ascend within a row, so a binary search finds it). Rows of m are visited in
  // order, so each result row receives its entries in ascending old-row order; the result does
  // not depend on the thread count. Two passes: counts, then fill.
  HalfCsr t;
  t.rows = m.cols;
  t.cols = m.rows;
  t.scale = m.scale;
  t.rowPtr.assign(std::size_t(t.rows) + 1, 0);
  const int nt = int(std::max<std::int64_t>(1, std::min<std::int64_t>(resolveThreads(threads), m.cols)));
  std::vector<std::int32_t> bound(std::size_t(nt) + 1);
  for (int k = 0; k <= nt; ++k) bound[std::size_t(k)] = std::int32_t(m.cols * k / nt);
  auto runOf = [&](std::int64_t r, std::int32_t c0, std::int32_t c1) {
    const auto* b = m.colIdx.data() + m.rowPtr[std::size_t(r)];
    const auto* e = m.colIdx.data() + m.rowPtr[std::size_t(r) + 1];
    return std::make_pair(std::lower_bound(b, e, c0), std::lower_bound(b, e, c1));
  };
  onThreads(nt, [&](int k) {
    const std::int32_t c0 = bound[std::size_t(k)], c1 = bound[std::size_t(k) + 1];
    if (c0 == c1) return;
    for (std::int64_t r = 0; r < m.rows; ++r) {
      auto [b, e] = runOf(r, c0, c1);
      for (; b != e; ++b) ++t.rowPtr[std::size_t(*b) + 1];
    }
  });
  for (std::int64_t r = 0; r < t.rows; ++r) t.rowPtr[std::size_t(r) + 1] += t.rowPtr[std::size_t(r)];
  t.colIdx.resize(std::size_t(m.nnz()));
  t.values.resize(std::size_t(m.nnz()));
  PENUMBRA_REQUIRE(m.rows <= INT32_MAX, Unsupported,
                   "transpose: more than 2^31 rows cannot become 32-bit column indices");
  onThreads(nt, [&](int k) {
    const std::int32_t c0 = bound[std::size_t(k)], c1 = bound[std::size_t(k) + 1];
    if (c0 == c1) return;
    std::vector<std::int64_t> cursor(t.rowPtr.begin() + c0, t.rowPtr.begin() + c1);
    for (std::int64_t r = 0; r < m.rows; ++r) {
      auto [b, e] = runOf(r, c0, c1);
      for (; b != e; ++b) {
        const std::int64_t src = b - m.colIdx.data();
        const std::int64_t dst = cursor[std::size_t(*b - c0)]++;
        t.colIdx[std::size_t(dst)] = std::int32_t(r);
        t.values[std::size_t(dst)] = m.values[std::size_t(src)];
      }
    }
  });
  return t;
}

double csrBytes(std::int64_t rows, std::int64_t nnz) {
  return 8.0 * double(rows + 1) + 6.0 * double(nnz);
}

std::string SpmvMemoryEstimate::describe() const {
  return "D " + formatBytes(matrixBytes) + " + D^T " + formatBytes(transposeBytes) + " + vectors " +
         formatBytes(vectorBytes) + " = " + formatBytes(total());
}

SpmvMemoryEstimate estimateDeviceBytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                                       const SpmvLayouts& layouts) {
  // Layouts of cuda/spmv_device_matrix.cu per matrix with r rows. delta16: fp16 values and
  // 16-bit deltas (2 + 2 B per entry, padded), one 8-byte slice record per 256 entries, the high
  // halves of wide slices (worst case: every slice wide, 2 B per entry), 64-bit offsets, the row
  // plan (16 B per row at most); baseline: int32 indices (and the values and offsets). steps:
  // entries of rows padded to groups of 8 (2 B value + 1 B step at most), every step an escape
  // (4 B, a bound, not a case), 12 B of row starts per row, 32 B per task of at least 32 groups
  // (record and two sums) or per row. offset8: a slice holds 4 entries or more but at a row's
  // end (it ends early only before a fifth segment; at 16 offset bits, chosen only where it needs
  // no more slices, before a column 65536 past its first), so at most nnz / 4 + r slices in
  // chunks of 8, each chunk 256 x 4 B of values and offsets at most, 32 B of headers, an area of
  // at most 32 words,
  // and at most one task (12 B record, 16 B of sums, 4 B of order); 4 B per row. The worst case
  // (every entry its own segment) is 8 times the padding of full slices: a bound, not a case.
  auto one = [&](std::int64_t r) {
    const double n = double(nnz) + 512;
    double b = 0;
    if (layouts.delta16 || layouts.baseline) b += 2 * n + 8.0 * double(r + 1);
    if (layouts.delta16) b += 4 * n + n / 256 * 8 + 16.0 * double(r);
    if (layouts.baseline) b += 4 * n;
    if (layouts.steps) {
      const double padded = double(nnz) + 7.0 * double(r) + 8.0 * 64;
      b += 3 * padded + 4.0 * double(nnz) + 12.0 * double(r + 32) +
           32.0 * (padded / 8 / 32 + double(r) + 1);
    }
    if (layouts.offset8) {
      const double chunks = (double(nnz) / 4 + double(r)) / 8 + 1;
      b += chunks * (1024.0 + 32.0 + 128.0 + 32.0) + 128.0 + 4.0 * double(r);
    }
    return b;
  };
  SpmvMemoryEstimate e;
  e.matrixBytes = one(rows);
  e.transposeBytes = one(cols);
  e.vectorBytes = 2.0 * 8.0 * double(rows + cols);
  return e;
}

SpmvMemoryEstimate estimateDeviceBytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                                       bool withBaseline) {
  SpmvLayouts l;
  l.baseline = withBaseline;
  return estimateDeviceBytes(rows, cols, nnz, l);
}

SpmvMemoryEstimate estimateBeforeEncoding(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                                          const SpmvLayouts& layouts) {
  SpmvLayouts others = layouts;
  others.offset8 = false;
  SpmvMemoryEstimate e = estimateDeviceBytes(rows, cols, nnz, others);
  if (layouts.offset8) {
    // Entries, their headers (a slice of 32 at most), the 32 zero words after the areas.
    const double floor = 3.0 * double(nnz) + double(nnz) / 8.0 + 128.0;
    e.matrixBytes += floor;
    e.transposeBytes += floor;
  }
  return e;
}

void refuseIfTooBig(std::int64_t rows, std::int64_t cols, std::int64_t nnz,
                    const SpmvMemoryEstimate& estimate, double freeBytes,
                    const std::string& deviceName) {
  if (estimate.total() <= 0.95 * freeBytes) return;
  char size[160];
  std::snprintf(size, sizeof size, "%lld x %lld with %lld non-zeros (%s as fp16 CSR)",
                (long long)rows, (long long)cols, (long long)nnz, formatBytes(csrBytes(rows, nnz)).c_str());
  PENUMBRA_THROW(OutOfMemory, std::string("SpMV: the matrix ") + size + " needs " +
                                  estimate.describe() + " on the GPU, but " + deviceName +
                                  " has only " + formatBytes(freeBytes) +
                                  " free; use the CPU backend or a smaller dose grid");
}

}  // namespace penumbra::spmv
