// Statistics of a comparison from its gamma and difference volumes: class counts, pass rate,
// mean, maximum and percentiles of gamma (from a fine histogram), difference statistics and
// per-structure pass rates. The same code for both backends.
#include <algorithm>
#include <cmath>
#include <limits>

#include "compare/compare_internal.hpp"
#include "core/parallel_for.hpp"

namespace penumbra::compare::detail {

namespace {

struct Partial {
  std::int64_t evaluated = 0, passed = 0, belowCutoff = 0, outsideMask = 0, outsideEvaluated = 0;
  double gammaSum = 0, gammaMax = 0;
  double dSum = 0, dSum2 = 0, dAbs = 0;
  double dMin = std::numeric_limits<double>::infinity();
  double dMax = -std::numeric_limits<double>::infinity();
  std::int64_t within = 0;
  std::vector<std::int64_t> histogram;

  void merge(const Partial& o) {
    evaluated += o.evaluated;
    passed += o.passed;
    belowCutoff += o.belowCutoff;
    outsideMask += o.outsideMask;
    outsideEvaluated += o.outsideEvaluated;
    gammaSum += o.gammaSum;
    gammaMax = std::max(gammaMax, o.gammaMax);
    dSum += o.dSum;
    dSum2 += o.dSum2;
    dAbs += o.dAbs;
    dMin = std::min(dMin, o.dMin);
    dMax = std::max(dMax, o.dMax);
    within += o.within;
    if (histogram.empty()) histogram.assign(o.histogram.size(), 0);
    for (std::size_t b = 0; b < o.histogram.size(); ++b) histogram[b] += o.histogram[b];
  }
};

int binOf(double g, double cap) {
  const int b = int(g / cap * kGammaHistogramBins);
  return std::clamp(b, 0, kGammaHistogramBins - 1);
}

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

void summarise(const CompareRequest& r, const PointSetup<double>& s, int threads,
               std::int64_t depthLimited, CompareResult& out) {
  const Grid& g = r.reference->grid;
  const double cap = r.criteria.gammaCap;
  const double ddGy = 1.0 / s.invDdGlobal;
  const std::size_t slice = std::size_t(g.dims[0]) * g.dims[1];
  const float* ref = r.reference->data.data();
  const float* gamma = out.gamma.data.data();
  const float* diff = out.difference.data.data();
  const std::uint8_t* mask = r.mask ? r.mask->data.data() : nullptr;
  std::vector<Partial> parts(std::size_t(g.dims[2]));
  parallelFor(parts.size(), threads, JobControl{}, [&](std::size_t k, int) {
    Partial p;
    if (s.gamma) p.histogram.assign(kGammaHistogramBins, 0);
    for (std::size_t i = k * slice; i < (k + 1) * slice; ++i) {
      const float d = diff[i];
      if (std::isnan(d)) {
        ++p.outsideEvaluated;
        continue;
      }
      if (mask && !mask[i]) {
        ++p.outsideMask;
        continue;
      }
      if (!(ref[i] >= s.cutoffGy)) {
        ++p.belowCutoff;
        continue;
      }
      ++p.evaluated;
      p.dSum += d;
      p.dSum2 += double(d) * d;
      p.dAbs += std::fabs(d);
      p.dMin = std::min(p.dMin, double(d));
      p.dMax = std::max(p.dMax, double(d));
      if (std::fabs(d) <= ddGy) ++p.within;
      if (s.gamma) {
        const double gv = gamma[i];
        p.passed += gv <= 1.0;
        p.gammaSum += gv;
        p.gammaMax = std::max(p.gammaMax, gv);
        ++p.histogram[std::size_t(binOf(gv, cap))];
      }
    }
    parts[k] = std::move(p);
  });
  Partial all;
  for (const Partial& p : parts) all.merge(p);  // slice order: deterministic

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
  gs.depthLimitedPoints = depthLimited;
  if (s.gamma) {
    gs.evaluatedPoints = all.evaluated;
    gs.passedPoints = all.passed;
    gs.binWidth = cap / kGammaHistogramBins;
    gs.histogram = all.histogram;
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
