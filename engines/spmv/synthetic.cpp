#include "spmv/synthetic.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "spmv/half_float.hpp"

namespace penumbra::spmv {

namespace {

/// Counter-based stream: splitmix64 of (seed, stream, counter).
struct Rng {
  std::uint64_t state;
  Rng(std::uint64_t seed, std::uint64_t stream) : state(seed * 0x9E3779B97F4A7C15ull ^ (stream + 0x632BE59BD9B4E019ull) * 0xBF58476D1CE4E5B9ull) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double normal() {  // Box-Muller
    const double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
};

struct RunInfo {
  std::int64_t first = 0;
  double centre = 0;  // column
  bool empty = true;
};

std::int64_t lengthOf(double z, double s, std::int64_t cols) {
  if (z <= 0) return 0;
  return std::clamp<std::int64_t>(std::llround(s * z), 1, cols);
}

}  // namespace

SyntheticSpec liver1Spec() {
  SyntheticSpec s;
  s.name = "liver-1";
  s.rows = 2970000;
  s.cols = 68000;
  s.nnz = 1480000000;
  s.seed = 2021;
  return s;
}

SyntheticSpec prostate1Spec() {
  SyntheticSpec s;
  s.name = "prostate-1";
  s.rows = 1030000;
  s.cols = 5090;
  s.nnz = 95000000;
  s.seed = 2021;
  return s;
}

SyntheticSpec scaled(SyntheticSpec s, double factor) {
  s.rows = std::max<std::int64_t>(1, std::llround(double(s.rows) * factor));
  s.nnz = std::max<std::int64_t>(1, std::llround(double(s.nnz) * factor));
  char b[32];
  std::snprintf(b, sizeof b, "/%ld", std::lround(1.0 / factor));
  s.name += b;
  return s;
}

HalfCsr makeSyntheticDoseMatrix(const SyntheticSpec& spec, int threads) {
  PENUMBRA_REQUIRE(spec.rows > 0 && spec.cols > 0 && spec.cols <= INT32_MAX && spec.nnz >= 0,
                   InvalidArgument, "synthetic matrix: bad size");
  PENUMBRA_REQUIRE(spec.columnDensity > 0 && spec.columnDensity <= 1 && spec.runRows >= 2,
                   InvalidArgument, "synthetic matrix: bad structure parameters");
  const int nt = std::max(1, threads > 0 ? threads : int(std::thread::hardware_concurrency()));
  // Runs (sequential: ~rows / 64 draws).
  std::vector<RunInfo> runs;
  std::vector<std::int32_t> runOfRow(std::size_t(spec.rows));
  std::vector<float> z(std::size_t(spec.rows), 0.f);
  {
    Rng rng(spec.seed, ~0ull);
    for (std::int64_t r = 0; r < spec.rows;) {
      const std::int64_t len = spec.runRows / 2 + std::int64_t(rng.next() % std::uint64_t(spec.runRows + 1));
      RunInfo info;
      info.first = r;
      info.empty = rng.uniform() < spec.emptyFraction;
      info.centre = rng.uniform() * double(spec.cols);
      const double runZ = std::exp(spec.lengthSigma * rng.normal());
      for (std::int64_t k = r; k < std::min(spec.rows, r + len); ++k) {
        runOfRow[std::size_t(k)] = std::int32_t(runs.size());
        if (!info.empty) z[std::size_t(k)] = float(runZ * std::exp(0.25 * Rng(spec.seed, std::uint64_t(k)).normal()));
      }
      runs.push_back(info);
      r += len;
    }
  }
  // One global length scale s so that the lengths add up to nnz (bisection on log s).
  auto total = [&](double s) {
    std::int64_t t = 0;
    for (float v : z) t += lengthOf(v, s, spec.cols);
    return t;
  };
  double lo = 1e-6, hi = double(spec.cols) * 10;
  for (int it = 0; it < 44 && spec.nnz > 0; ++it) {
    const double mid = std::sqrt(lo * hi);
    (total(mid) < spec.nnz ? lo : hi) = mid;
  }
  const double s = spec.nnz > 0 ? std::sqrt(lo * hi) : 0.0;

  HalfCsr m;
  m.rows = spec.rows;
  m.cols = spec.cols;
  m.rowPtr.assign(std::size_t(spec.rows) + 1, 0);
  for (std::int64_t r = 0; r < spec.rows; ++r)
    m.rowPtr[std::size_t(r) + 1] = m.rowPtr[std::size_t(r)] + lengthOf(z[std::size_t(r)], s, spec.cols);
  m.colIdx.resize(std::size_t(m.rowPtr.back()));
  m.values.resize(std::size_t(m.rowPtr.back()));

  std::atomic<std::int64_t> next{0};
  constexpr std::int64_t kChunk = 2048;
  auto fill = [&] {
    for (std::int64_t c; (c = next.fetch_add(kChunk)) < spec.rows;)
      for (std::int64_t r = c; r < std::min(spec.rows, c + kChunk); ++r) {
        const std::int64_t begin = m.rowPtr[std::size_t(r)];
        const std::int64_t L = m.rowPtr[std::size_t(r) + 1] - begin;
        if (L == 0) continue;
        Rng rng(spec.seed ^ 0x5DEECE66Dull, std::uint64_t(r));
        const std::int64_t W = std::min<std::int64_t>(
            spec.cols, std::max<std::int64_t>(L, std::int64_t(std::ceil(double(L) / spec.columnDensity))));
        const double centre = runs[std::size_t(runOfRow[std::size_t(r)])].centre +
                              (rng.uniform() - 0.5) * double(W) / 4.0;
        const std::int64_t start = std::clamp<std::int64_t>(std::llround(centre - double(W) / 2), 0, spec.cols - W);
        std::int64_t need = L, e = begin;
        for (std::int64_t i = 0; i < W && need > 0; ++i) {
          if (double(W - i) * rng.uniform() >= double(need)) continue;  // Knuth's algorithm S
          const std::int64_t col = start + i;
          const double t = (double(col) - centre) / (double(W) / 2);
          const double v = std::max(0x1.0p-10, (0.05 + 0.95 * rng.uniform()) * std::exp(-2.0 * t * t));
          m.colIdx[std::size_t(e)] = std::int32_t(col);
          m.values[std::size_t(e)] = floatToHalfBits(float(v));
          ++e;
          --need;
        }
      }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < nt; ++t) pool.emplace_back(fill);
  fill();
  for (auto& th : pool) th.join();
  return m;
}

}  // namespace penumbra::spmv
