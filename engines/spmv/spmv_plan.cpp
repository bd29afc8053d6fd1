#include "spmv/spmv_plan.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "core/error.hpp"

namespace penumbra::spmv {

Delta16Columns buildDelta16Columns(const HalfCsr& m, int threads) {
  constexpr int S = Delta16Columns::kSlice;
  Delta16Columns c;
  const std::int64_t nnz = m.nnz();
  const std::int64_t nSlices = (nnz + S - 1) / S + 1;  // one spare: kernels may read a group past the end
  c.paddedNnz = nSlices * S;
  c.delta.assign(std::size_t(c.paddedNnz), 0);
  c.slices.assign(std::size_t(nSlices), SliceRecord{});
  std::vector<std::uint8_t> isWide(std::size_t(nSlices), 0);
  const int nt = std::max(1, threads > 0 ? threads : int(std::thread::hardware_concurrency()));
  auto parallel = [&](auto&& fn) {
    std::vector<std::thread> pool;
    for (int t = 0; t < nt; ++t)
      pool.emplace_back([&, t] {
        for (std::int64_t s = nSlices * t / nt; s < nSlices * (t + 1) / nt; ++s) fn(s);
      });
    for (auto& th : pool) th.join();
  };
  // Pass 1: base and width of every slice.
  parallel([&](std::int64_t s) {
    const std::int64_t b = s * S, e = std::min<std::int64_t>(nnz, b + S);
    if (b >= e) return;
    std::int32_t lo = m.colIdx[std::size_t(b)], hi = lo;
    for (std::int64_t k = b + 1; k < e; ++k) {
      lo = std::min(lo, m.colIdx[std::size_t(k)]);
      hi = std::max(hi, m.colIdx[std::size_t(k)]);
    }
    c.slices[std::size_t(s)].base = lo;
    isWide[std::size_t(s)] = std::int64_t(hi) - lo >= 65536;
  });
  std::int32_t nWide = 0;
  for (std::int64_t s = 0; s < nSlices; ++s)
    if (isWide[std::size_t(s)]) c.slices[std::size_t(s)].wide = nWide++;
  c.wideHigh.assign(std::size_t(nWide) * S, 0);
  // Pass 2: deltas (and high halves of wide slices).
  parallel([&](std::int64_t s) {
    const SliceRecord rec = c.slices[std::size_t(s)];
    for (std::int64_t k = s * S; k < std::min<std::int64_t>(nnz, (s + 1) * S); ++k) {
      const std::uint32_t d = std::uint32_t(m.colIdx[std::size_t(k)] - rec.base);
      c.delta[std::size_t(k)] = std::uint16_t(d & 0xFFFFu);
      if (rec.wide >= 0) c.wideHigh[std::size_t(rec.wide) * S + std::size_t(k - s * S)] = std::uint16_t(d >> 16);
    }
  });
  return c;
}

RowBins buildRowBins(const HalfCsr& m, std::int64_t longThreshold) {
  return buildRowBins(m.rowPtr.data(), m.rows, longThreshold);
}

RowBins buildRowBins(const std::int64_t* rowPtr, std::int64_t rows, std::int64_t longThreshold) {
  PENUMBRA_REQUIRE(rows <= INT32_MAX, Unsupported, "SpMV: more than 2^31 rows");
  PENUMBRA_REQUIRE(longThreshold >= 1, InvalidArgument, "SpMV: long-row threshold must be >= 1");
  RowBins b;
  b.longThreshold = longThreshold;
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::int64_t begin = rowPtr[r];
    const std::int64_t len = rowPtr[r + 1] - begin;
    if (len == 0) {
      appendEmptyRow(b.emptyRuns, std::int32_t(r));
      continue;
    }
    PENUMBRA_REQUIRE(len <= INT32_MAX, Unsupported, "SpMV: a row with more than 2^31 entries");
    const RowTask t{begin, std::int32_t(len), std::int32_t(r)};
    (len > longThreshold ? b.longRows : b.warpRows).push_back(t);
  }
  return b;
}

double delta16RealBytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::int64_t slices,
                        std::int64_t wideSlices, std::int64_t rowTasks, std::int64_t emptyRuns) {
  return 4.0 * double(nnz) + 8.0 * double(slices) +
         2.0 * Delta16Columns::kSlice * double(wideSlices) + 16.0 * double(rowTasks) +
         8.0 * double(emptyRuns) + 8.0 * double(rows + cols);
}

double delta16RealBytes(const HalfCsr& m) {
  constexpr int S = Delta16Columns::kSlice;
  const std::int64_t nnz = m.nnz(), slices = (nnz + S - 1) / S + 1;
  std::int64_t wide = 0;
  for (std::int64_t b = 0; b < nnz; b += S) {
    const auto [lo, hi] =
        std::minmax_element(m.colIdx.begin() + b, m.colIdx.begin() + std::min(nnz, b + S));
    wide += std::int64_t(*hi) - *lo >= 65536;
  }
  std::int64_t tasks = 0, runs = 0, emptyInRun = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    if (m.rowPtr[std::size_t(r) + 1] > m.rowPtr[std::size_t(r)]) {
      ++tasks;
      emptyInRun = 0;
    } else if (emptyInRun++ % RowBins::kEmptyRunMax == 0) {
      ++runs;
    }
  }
  return delta16RealBytes(m.rows, m.cols, nnz, slices, wide, tasks, runs);
}

}  // namespace penumbra::spmv
