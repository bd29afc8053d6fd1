#include "spmv/gather_lines.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"

namespace penumbra::spmv {

namespace {

/// Distinct values of v[0..n) >> shift (v sorted).
int distinctSorted(const std::array<std::int64_t, 32>& v, int n, int shift) {
  int d = 0;
  for (int i = 0; i < n; ++i)
    if (i == 0 || (v[std::size_t(i)] >> shift) != (v[std::size_t(i - 1)] >> shift)) ++d;
  return d;
}

/// The slices of rows r0..r0 + R - 1.
void countGroup(const HalfCsr& m, std::int64_t r0, int R, GatherLines& g) {
  const std::int64_t per = 32 / R;
  std::array<std::int64_t, 32> pos{}, end{}, bytes{};
  const std::int64_t rEnd = std::min(m.rows, r0 + R);
  const int n = int(rEnd - r0);
  for (int i = 0; i < n; ++i) {
    pos[std::size_t(i)] = m.rowPtr[std::size_t(r0 + i)];
    end[std::size_t(i)] = m.rowPtr[std::size_t(r0 + i) + 1];
  }
  for (;;) {
    std::int64_t bound = INT64_MAX;
    bool open = false;
    for (int i = 0; i < n; ++i) {
      const std::size_t k = std::size_t(i);
      if (pos[k] >= end[k]) continue;
      open = true;
      bound =
          std::min<std::int64_t>(bound, m.colIdx[std::size_t(std::min(pos[k] + per, end[k]) - 1)]);
    }
    if (!open) return;
    int taken = 0;
    for (int i = 0; i < n; ++i) {
      const std::size_t k = std::size_t(i);
      for (std::int64_t c = 0; c < per && pos[k] < end[k] && m.colIdx[std::size_t(pos[k])] <= bound;
           ++c, ++pos[k])
        bytes[std::size_t(taken++)] = 8 * std::int64_t(m.colIdx[std::size_t(pos[k])]);
    }
    std::sort(bytes.begin(), bytes.begin() + taken);
    ++g.slices;
    g.entries += taken;
    g.lines += distinctSorted(bytes, taken, 7);
    g.sectors += distinctSorted(bytes, taken, 5);
  }
}

}  // namespace

GatherLines countGatherLines(const HalfCsr& m, int rowsPerSlice, int threads) {
  PENUMBRA_REQUIRE(
      rowsPerSlice >= 1 && rowsPerSlice <= 32 && 32 % rowsPerSlice == 0, InvalidArgument,
      "countGatherLines: rows per slice must divide 32, not " + std::to_string(rowsPerSlice));
  const std::int64_t groups = (m.rows + rowsPerSlice - 1) / rowsPerSlice;
  const int nt = std::max(1, threads > 0 ? threads : int(std::thread::hardware_concurrency()));
  std::vector<GatherLines> part(static_cast<std::size_t>(nt));
  std::atomic<std::int64_t> next{0};
  auto work = [&](int t) {
    constexpr std::int64_t kBatch = 256;
    for (std::int64_t b; (b = next.fetch_add(kBatch)) < groups;)
      for (std::int64_t gi = b; gi < std::min(groups, b + kBatch); ++gi)
        countGroup(m, gi * rowsPerSlice, rowsPerSlice, part[std::size_t(t)]);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < nt; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  GatherLines g;
  for (const GatherLines& p : part) {  // integers in doubles: the order does not change the sums
    g.slices += p.slices;
    g.entries += p.entries;
    g.lines += p.lines;
    g.sectors += p.sectors;
  }
  return g;
}

}  // namespace penumbra::spmv
