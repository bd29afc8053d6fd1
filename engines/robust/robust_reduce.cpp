// ScenarioReducer (robust_reduce.hpp): one multi-threaded pass over each scenario's dose that
// updates the voxel-wise minimum, maximum and sum and, over the structures' mask runs, their
// histograms, sums, minima and maxima.
#include "robust/robust_reduce.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/parallel_for.hpp"

namespace penumbra::robust::detail {

namespace {

/// Voxels per work item of the voxel-wise pass (256 KiB of dose).
constexpr std::size_t kVoxelChunk = std::size_t(1) << 16;
/// Most bins below the nominal maximum: a finer requested bin width is refused (the per-thread
/// histograms grow with it). The default width gives 500.
constexpr double kMaxNominalBins = 20000;
/// Histograms reach this many times the nominal's bins; higher doses (no physical scenario
/// comes near) count in the last bin, with a message, while the maxima stay exact.
constexpr int kBinHeadroom = 8;

struct StructItem {
  int structure;
  std::size_t runBegin, runEnd;
};

struct ChunkStat {
  double sum = 0;
  float min = std::numeric_limits<float>::infinity();
  float max = -std::numeric_limits<float>::infinity();
};

}  // namespace

struct ScenarioReducer::Impl {
  Grid grid;
  std::vector<RobustStructure> structures;
  std::size_t voxels = 0;
  int scenarios = 0;
  int threads = 1;
  float scale = 1;
  double requestedBinWidth = 0;
  std::vector<MaskRuns> runs;
  std::vector<bool> target;
  std::vector<StructItem> items;  ///< every structure's chunks, structure by structure
  std::vector<ChunkStat> itemStats;
  Volume<float> minV, maxV, sumV, worstV, spreadV, nominal;
  bool prepared = false;
  int added = 0;
  // Histograms: per thread and structure, kept zero between passes up to top.
  int capBin = 0;
  float invWidth = 0;
  std::vector<std::vector<std::uint32_t>> hist;  ///< [t * S + s]
  std::vector<int> histTop;                      ///< highest touched bin + 1
  std::vector<std::uint64_t> clipped;            ///< per thread
  std::vector<std::vector<ScenarioHistogram>> results;  ///< [s][k]

  std::size_t structureCount() const { return runs.size(); }
  std::size_t voxelChunks() const { return (voxels + kVoxelChunk - 1) / kVoxelChunk; }

  /// Voxel-wise update of one chunk; `first`: initialise (the nominal). Returns the chunk's max.
  float voxelChunk(std::size_t c, const float* dose, bool first) {
    const std::size_t b = c * kVoxelChunk, e = std::min(voxels, b + kVoxelChunk);
    float* mn = minV.data.data();
    float* mx = maxV.data.data();
    float* sm = sumV.data.data();
    const float s = scale;
    float top = 0;
    if (first) {
      for (std::size_t v = b; v < e; ++v) {
        const float x = dose[v] * s;
        mn[v] = x;
        mx[v] = x;
        sm[v] = x;
        top = x > top ? x : top;
      }
    } else {
      for (std::size_t v = b; v < e; ++v) {
        const float x = dose[v] * s;
        mn[v] = x < mn[v] ? x : mn[v];
        mx[v] = x > mx[v] ? x : mx[v];
        sm[v] += x;
      }
    }
    return top;
  }

  /// Histogram, sum, minimum and maximum of one structure chunk, counted by thread t.
  void structureItem(std::size_t i, const float* dose, int t) {
    const StructItem& it = items[i];
    const MaskRuns& r = runs[std::size_t(it.structure)];
    std::vector<std::uint32_t>& h = hist[std::size_t(t) * structureCount() + std::size_t(it.structure)];
    std::uint32_t* hp = h.data();
    const float s = scale, inv = invWidth, capF = float(capBin);
    ChunkStat st;
    int top = 0;
    std::uint64_t over = 0;
    for (std::size_t q = it.runBegin; q < it.runEnd; ++q) {
      const float* d = dose + r.start[q];
      for (std::uint32_t v = 0; v < r.length[q]; ++v) {
        const float x = d[v] * s;
        st.sum += double(x);
        st.min = x < st.min ? x : st.min;
        st.max = x > st.max ? x : st.max;
        const float y = x * inv;
        // !(x > 0) also sends NaN to bin 0; y >= capF (and inf) to the last bin.
        int bin = 0;
        if (x > 0) {
          if (y < capF) bin = int(y);
          else bin = capBin, ++over;
        }
        ++hp[bin];
        top = bin >= top ? bin + 1 : top;
      }
    }
    itemStats[i] = st;
    int& ht = histTop[std::size_t(t) * structureCount() + std::size_t(it.structure)];
    ht = std::max(ht, top);
    clipped[std::size_t(t)] += over;
  }

  /// Merges the threads' histograms and the chunk statistics of scenario k, zeroing the former.
  void collect(int k) {
    const std::size_t S = structureCount();
    std::size_t item = 0;
    for (std::size_t s = 0; s < S; ++s) {
      ScenarioHistogram& out = results[s][std::size_t(k)];
      int top = 0;
      for (int t = 0; t < threads; ++t) top = std::max(top, histTop[std::size_t(t) * S + s]);
      out.counts.assign(std::size_t(top), 0);
      for (int t = 0; t < threads; ++t) {
        std::vector<std::uint32_t>& h = hist[std::size_t(t) * S + s];
        int& ht = histTop[std::size_t(t) * S + s];
        for (int b = 0; b < ht; ++b) {
          out.counts[std::size_t(b)] += h[std::size_t(b)];
          h[std::size_t(b)] = 0;
        }
        ht = 0;
      }
      ChunkStat total;
      const std::size_t chunks = runs[s].chunkBegin.size() - 1;
      for (std::size_t c = 0; c < chunks; ++c, ++item) {  // in chunk order: reproducible sums
        total.sum += itemStats[item].sum;
        total.min = std::min(total.min, itemStats[item].min);
        total.max = std::max(total.max, itemStats[item].max);
      }
      out.sumGy = total.sum;
      out.minGy = runs[s].voxels > 0 ? double(total.min) : 0;
      out.maxGy = runs[s].voxels > 0 ? double(total.max) : 0;
    }
  }
};

ScenarioReducer::ScenarioReducer(const Grid& grid, const std::vector<RobustStructure>& structures,
                                 int scenarios, double binWidthGy, double doseScale, int threads)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.grid = grid;
  m.voxels = grid.voxelCount();
  m.scenarios = scenarios;
  m.threads = std::max(1, threads);
  m.scale = float(doseScale);
  m.requestedBinWidth = binWidthGy;
  m.structures = structures;
  m.results.assign(structures.size(), std::vector<ScenarioHistogram>(std::size_t(scenarios)));
  m.clipped.assign(std::size_t(m.threads), 0);
}

ScenarioReducer::~ScenarioReducer() = default;

void ScenarioReducer::prepare() {
  Impl& m = *impl_;
  if (m.prepared) return;
  // Minimum, maximum and sum: zero-filled by std::vector, page by page (about 5 ms per
  // 6-million-voxel volume), so on three threads at once. The worst case and the spread take
  // over two scenario doses once reduced instead of being allocated.
  struct Joined {  // joins the fills on every path: a joinable std::thread must not be destroyed
    std::vector<std::thread> threads;
    ~Joined() {
      for (std::thread& t : threads) t.join();
    }
  } fill;
  std::mutex failureMutex;
  std::exception_ptr failure;
  for (Volume<float>* v : {&m.minV, &m.maxV, &m.sumV})
    fill.threads.emplace_back([v, &m, &failureMutex, &failure] {
      try {
        *v = Volume<float>(m.grid);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failureMutex);
        if (!failure) failure = std::current_exception();
      }
    });
  m.runs.resize(m.structures.size());
  for (std::size_t s = 0; s < m.structures.size(); ++s) {
    m.runs[s] = maskRuns(*m.structures[s].mask, m.threads);
    m.target.push_back(m.structures[s].kind == StructureKind::Target);
    for (std::size_t c = 0; c + 1 < m.runs[s].chunkBegin.size(); ++c)
      m.items.push_back({int(s), m.runs[s].chunkBegin[c], m.runs[s].chunkBegin[c + 1]});
    if (m.runs[s].voxels == 0)
      messages_.push_back("structure '" + m.structures[s].name +
                          "' has no voxel on the dose grid: no DVH and no table rows");
  }
  m.itemStats.resize(m.items.size());
  for (std::thread& t : fill.threads) t.join();
  fill.threads.clear();
  if (failure) std::rethrow_exception(failure);
  m.prepared = true;
}

void ScenarioReducer::add(int k, Volume<float>&& dose, const JobControl& job) {
  Impl& m = *impl_;
  PENUMBRA_REQUIRE(dose.data.size() == m.voxels, Internal,
                   "robustness: a scenario dose is not on the evaluation's dose grid");
  PENUMBRA_REQUIRE(k >= 0 && k < m.scenarios && (m.added > 0 || k == 0), Internal,
                   "robustness: scenario doses must start with the nominal");
  prepare();
  const float* d = dose.data.data();
  const std::size_t nv = m.voxelChunks();
  const std::size_t S = m.structureCount();
  if (m.added == 0) {
    // The nominal fixes the bin width (from its maximum), so its voxel-wise pass runs first.
    std::vector<float> chunkMax(nv, 0.f);
    parallelFor(nv, m.threads, job,
                [&](std::size_t c, int) { chunkMax[c] = m.voxelChunk(c, d, true); });
    const double top = double(*std::max_element(chunkMax.begin(), chunkMax.end()));
    binWidth_ = m.requestedBinWidth > 0 ? m.requestedBinWidth : top > 0 ? top / 500 : 0.01;
    const double bins = std::ceil(top / binWidth_);
    PENUMBRA_REQUIRE(bins <= kMaxNominalBins, InvalidArgument,
                     "robustness: DVH bin width " + formatG(binWidth_) + " Gy makes " +
                         formatG(bins) + " bins below the nominal maximum of " + formatG(top) +
                         " Gy; at most " + formatG(kMaxNominalBins) +
                         " (use a wider bin or 0: automatic)");
    m.capBin = kBinHeadroom * int(bins) + 64;
    m.invWidth = float(1.0 / binWidth_);
    m.hist.assign(std::size_t(m.threads) * S, std::vector<std::uint32_t>(std::size_t(m.capBin) + 1, 0));
    m.histTop.assign(std::size_t(m.threads) * S, 0);
    parallelFor(m.items.size(), m.threads, job,
                [&](std::size_t i, int t) { m.structureItem(i, d, t); });
    if (m.scale != 1.0f) {  // the kept nominal, scaled as the reductions saw it
      float* w = dose.data.data();
      const float s = m.scale;
      parallelFor(nv, m.threads, job, [&](std::size_t c, int) {
        for (std::size_t v = c * kVoxelChunk; v < std::min(m.voxels, (c + 1) * kVoxelChunk); ++v)
          w[v] *= s;
      });
    }
    m.nominal = std::move(dose);
  } else {
    parallelFor(nv + m.items.size(), m.threads, job, [&](std::size_t i, int t) {
      if (i < nv) m.voxelChunk(i, d, false);
      else m.structureItem(i - nv, d, t);
    });
    // Its memory becomes the worst case's or the spread's (overwritten by finish()).
    if (m.worstV.empty()) m.worstV = std::move(dose);
    else if (m.spreadV.empty()) m.spreadV = std::move(dose);
  }
  m.collect(k);
  ++m.added;
}

void ScenarioReducer::finish(RobustnessResult& out, const JobControl& job) {
  Impl& m = *impl_;
  PENUMBRA_REQUIRE(m.added == m.scenarios, Internal,
                   "robustness: " + std::to_string(m.added) + " of " +
                       std::to_string(m.scenarios) + " scenario doses were reduced");
  for (Volume<float>* v : {&m.worstV, &m.spreadV})  // fewer than three scenarios
    if (v->empty()) *v = Volume<float>(m.grid);
  // Mean, spread and (outside the targets) worst case, voxel by voxel. The float mean of equal
  // doses can round one ulp past them: clamped, so min <= mean <= max holds exactly.
  const float invK = 1.0f / float(m.scenarios);
  parallelFor(m.voxelChunks(), m.threads, job, [&](std::size_t c, int) {
    const std::size_t b = c * kVoxelChunk, e = std::min(m.voxels, b + kVoxelChunk);
    const float* mn = m.minV.data.data();
    const float* mx = m.maxV.data.data();
    float* sm = m.sumV.data.data();
    float* wc = m.worstV.data.data();
    float* sp = m.spreadV.data.data();
    for (std::size_t v = b; v < e; ++v) {
      const float mean = sm[v] * invK;
      sm[v] = mean < mn[v] ? mn[v] : mean > mx[v] ? mx[v] : mean;
      sp[v] = mx[v] - mn[v];
      wc[v] = mx[v];
    }
  });
  // Inside any target the worst case is the minimum; one target at a time, so that overlapping
  // targets never write one voxel from two threads.
  for (std::size_t s = 0; s < m.structureCount(); ++s) {
    if (!m.target[s]) continue;
    const MaskRuns& r = m.runs[s];
    parallelFor(r.chunkBegin.size() - 1, m.threads, job, [&](std::size_t c, int) {
      for (std::size_t q = r.chunkBegin[c]; q < r.chunkBegin[c + 1]; ++q)
        std::copy_n(m.minV.data.data() + r.start[q], r.length[q], m.worstV.data.data() + r.start[q]);
    });
  }
  out.nominal.dose = std::move(m.nominal);
  out.minimum.dose = std::move(m.minV);
  out.maximum.dose = std::move(m.maxV);
  out.mean.dose = std::move(m.sumV);
  out.worstCase.dose = std::move(m.worstV);
  out.spread.dose = std::move(m.spreadV);

  std::uint64_t clipped = 0;
  for (std::uint64_t c : m.clipped) clipped += c;
  if (clipped > 0)
    messages_.push_back(std::to_string(clipped) + " voxel doses above " +
                        formatG(binWidth_ * m.capBin) +
                        " Gy counted in the DVHs' last bin (their maxima are exact)");

  // Per structure: every scenario's curve on the structure's common length, statistics, band.
  out.structures.resize(m.structureCount());
  for (std::size_t s = 0; s < m.structureCount(); ++s) {
    StructureRobustness& sr = out.structures[s];
    const std::int64_t n = m.runs[s].voxels;
    sr.voxels = n;
    sr.binWidthGy = binWidth_;
    sr.scenarios.assign(std::size_t(m.scenarios), ScenarioDvh{});
    sr.bandLowPercent.clear();
    sr.bandHighPercent.clear();
    if (n == 0) continue;
    std::size_t bins = 0;
    for (const ScenarioHistogram& h : m.results[s]) bins = std::max(bins, h.counts.size());
    for (int k = 0; k < m.scenarios; ++k) {
      const ScenarioHistogram& h = m.results[s][std::size_t(k)];
      ScenarioDvh& dvh = sr.scenarios[std::size_t(k)];
      dvh.volumePercent = cumulativePercent(h.counts, n, bins);
      dvh.minGy = h.minGy;
      dvh.maxGy = h.maxGy;
      dvh.meanGy = h.sumGy / double(n);
      const auto at = [&](double fraction) {
        return doseAtFraction(h.counts, n, binWidth_, fraction, h.minGy, h.maxGy);
      };
      dvh.d98Gy = at(0.98);
      dvh.d95Gy = at(0.95);
      dvh.d50Gy = at(0.50);
      dvh.d2Gy = at(0.02);
      if (k == 0) {
        sr.bandLowPercent = dvh.volumePercent;
        sr.bandHighPercent = dvh.volumePercent;
      } else {
        for (std::size_t b = 0; b <= bins; ++b) {
          sr.bandLowPercent[b] = std::min(sr.bandLowPercent[b], dvh.volumePercent[b]);
          sr.bandHighPercent[b] = std::max(sr.bandHighPercent[b], dvh.volumePercent[b]);
        }
      }
    }
  }
}

}  // namespace penumbra::robust::detail
