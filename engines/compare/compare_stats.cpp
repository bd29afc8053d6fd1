// Statistics of a comparison: class counts, pass rate, mean, maximum and percentiles of gamma
// (from a fine histogram), difference statistics and per-structure pass rates. The CPU sums its
// volumes here (sumPoints); the CUDA backend sums on the GPU (cuda/compare_stats_kernel.cuh)
// into the same PointSummary, and both end in summarise().
#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/compare_internal.hpp"
#include "core/parallel_for.hpp"

namespace penumbra::compare::detail {

namespace {

/// Value below which `fraction` of the histogram's points lie, linear within the bin.
double percentile(const std::vector<std::int64_t>& h, std::int64_t total, double binWidth,
                  double fraction) {
  if (total <= 0) return 0;
  const double target = fraction * double(total);
  double below = 0;
  for (std::size_t b = 0; b < h.size(); ++b) {
    if (h[b] > 0 && below + double(h[b]) >= target) {
      const double within = (target - below) / double(h[b]);
      return (double(b) + within) * binWidth;
    }
    below += double(h[b]);
  }
  return double(h.size()) * binWidth;
}

}  // namespace

PointSummary sumPoints(const CompareRequest& r, const PointSetup<double>& s, int threads,
                       const CompareResult& out) {
  const Grid& g = r.reference->grid;
  const double cap = r.criteria.gammaCap;
  const double ddGy = 1.0 / s.invDdGlobal;
  const std::size_t slice = std::size_t(g.dims[0]) * g.dims[1];
  const float* ref = r.reference->data.data();
  const float* gamma = out.gamma.data.data();
  const float* diff = out.difference.data.data();
  const std::uint8_t* mask = r.mask ? r.mask->data.data() : nullptr;
  PointSummary sums;
  sums.runs.resize(std::size_t(g.dims[2]));
  std::vector<std::vector<std::int64_t>> histograms(sums.runs.size());
  parallelFor(sums.runs.size(), threads, JobControl{}, [&](std::size_t k, int) {
    PointSums p;
    std::vector<std::int64_t> h(s.gamma ? kGammaHistogramBins : 0, 0);
    for (std::size_t i = k * slice; i < (k + 1) * slice; ++i) {
      if (addPoint(p, ref[i], diff[i], gamma[i], !mask || mask[i], s.cutoffGy, ddGy, s.gamma) &&
          s.gamma)
        ++h[std::size_t(gammaBin(gamma[i], cap))];
    }
    sums.runs[k] = p;
    histograms[k] = std::move(h);
  });
  if (s.gamma) {
    sums.histogram.assign(kGammaHistogramBins, 0);
    for (const auto& h : histograms)
      for (std::size_t b = 0; b < h.size(); ++b) sums.histogram[b] += h[b];
  }
  return sums;
}

void summarise(const CompareRequest& r, const PointSetup<double>& s, const PointSummary& sums,
               CompareResult& out) {
  const Grid& g = r.reference->grid;
  const double cap = r.criteria.gammaCap;
  PointSums all;
  for (const PointSums& p : sums.runs) mergeSums(all, p);  // index order: deterministic

  out.referencePoints = std::int64_t(g.voxelCount());
  out.belowCutoff = all.belowCutoff;
  out.outsideMask = all.outsideMask;
  out.outsideEvaluated = all.outsideEvaluated;

  DifferenceStatistics& d = out.differenceStats;
  d.points = all.evaluated;
  if (all.evaluated > 0) {
    const double n = double(all.evaluated);
    d.meanGy = all.dSum / n;
    d.sdGy = std::sqrt(std::max(0.0, all.dSum2 / n - d.meanGy * d.meanGy));
    d.minGy = all.dMin;
    d.maxGy = all.dMax;
    d.meanAbsGy = all.dAbs / n;
    const double pct = 100.0 / out.normalisationGy;
    d.meanPercent = d.meanGy * pct;
    d.minPercent = d.minGy * pct;
    d.maxPercent = d.maxGy * pct;
    d.withinDosePercent = 100.0 * double(all.within) / n;
  }

  GammaStatistics& gs = out.gammaStats;
  gs.depthLimitedPoints = sums.depthLimited;
  if (s.gamma) {
    gs.evaluatedPoints = all.evaluated;
    gs.passedPoints = all.passed;
    gs.binWidth = cap / kGammaHistogramBins;
    gs.histogram = sums.histogram;
    if (all.evaluated > 0) {
      gs.passRatePercent = 100.0 * double(all.passed) / double(all.evaluated);
      gs.mean = all.gammaSum / double(all.evaluated);
      gs.max = all.gammaMax;
      gs.p50 = percentile(gs.histogram, all.evaluated, gs.binWidth, 0.50);
      gs.p90 = percentile(gs.histogram, all.evaluated, gs.binWidth, 0.90);
      gs.p95 = percentile(gs.histogram, all.evaluated, gs.binWidth, 0.95);
      gs.p99 = percentile(gs.histogram, all.evaluated, gs.binWidth, 0.99);
      // Read off bins of cap / 2000: never report a percentile above the largest value.
      for (double* p : {&gs.p50, &gs.p90, &gs.p95, &gs.p99}) *p = std::min(*p, gs.max);
    }
  }

  const float* gamma = out.gamma.data.data();
  out.structures.clear();
  for (const StructureMask& sm : r.structures) {
    StructurePassRate sp;
    sp.name = sm.name;
    double sum = 0;
    const std::uint8_t* m = sm.mask->data.data();
    for (std::size_t i = 0; i < g.voxelCount(); ++i) {
      if (!m[i] || std::isnan(gamma[i])) continue;
      ++sp.evaluatedPoints;
      sp.passedPoints += gamma[i] <= 1.0f;
      sum += gamma[i];
    }
    sp.passRatePercent = sp.evaluatedPoints > 0
                             ? 100.0 * double(sp.passedPoints) / double(sp.evaluatedPoints)
                             : std::numeric_limits<double>::quiet_NaN();
    sp.meanGamma = sp.evaluatedPoints > 0 ? sum / double(sp.evaluatedPoints) : 0;
    out.structures.push_back(sp);
  }
}

}  // namespace penumbra::compare::detail
