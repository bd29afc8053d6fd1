#pragma once
// Shared by the comparison's front end (compare.cpp), its statistics (compare_stats.cpp) and its
// backends (CPU in compare.cpp, CUDA in cuda/compare_cuda.cu). Not part of the engine's API.
#include <cmath>
#include <cstdint>
#include <vector>

#include "compare/compare.hpp"
#include "compare/compare_point.hpp"

namespace penumbra::compare::detail {

/// What validate() learns from the volumes while checking them.
struct VolumeFacts {
  double referenceMax = 0, evaluatedMax = 0;
};
VolumeFacts checkVolumes(const CompareRequest& request, int threads, const JobControl& job);

/// Criteria and geometry turned into numbers for the per-point code.
PointSetup<double> makePointSetup(const CompareRequest& request, double normalisationGy);
/// The same in float for the GPU search (positions stay double).
PointSetup<float> toFloat(const PointSetup<double>& s);

/// Sums over a run of reference points (a slice on the CPU, a fixed chunk of points on the
/// GPU): the class counts and the sums behind the statistics. Plain data, written as is by the
/// CUDA statistics kernel.
struct PointSums {
  std::int64_t evaluated = 0, passed = 0, belowCutoff = 0, outsideMask = 0, outsideEvaluated = 0;
  std::int64_t within = 0;  ///< |A - B| <= DD
  double gammaSum = 0, gammaMax = 0;
  double dSum = 0, dSum2 = 0, dAbs = 0;
  double dMin = HUGE_VAL, dMax = -HUGE_VAL;
};

/// What a backend hands the statistics: the sums of its runs of points in index order (merged
/// in that order, so the result does not depend on the thread count), the fine gamma histogram
/// (integer counts, any order) and the number of depth-limited points.
struct PointSummary {
  std::vector<PointSums> runs;
  std::vector<std::int64_t> histogram;  ///< kGammaHistogramBins, or empty without gamma
  std::int64_t depthLimited = 0;
};

/// Adds the sums of o to a (host and device).
PENUMBRA_GAMMA_HD void mergeSums(PointSums& a, const PointSums& o) {
  a.evaluated += o.evaluated;
  a.passed += o.passed;
  a.belowCutoff += o.belowCutoff;
  a.outsideMask += o.outsideMask;
  a.outsideEvaluated += o.outsideEvaluated;
  a.within += o.within;
  a.gammaSum += o.gammaSum;
  a.gammaMax = o.gammaMax > a.gammaMax ? o.gammaMax : a.gammaMax;
  a.dSum += o.dSum;
  a.dSum2 += o.dSum2;
  a.dAbs += o.dAbs;
  a.dMin = o.dMin < a.dMin ? o.dMin : a.dMin;
  a.dMax = o.dMax > a.dMax ? o.dMax : a.dMax;
}

/// Adds one point to a run's sums: its class from its difference (NaN: outside the evaluated
/// dose), mask value and reference dose, then its difference and gamma. The CPU and the CUDA
/// statistics kernel share it, so both count alike. True for an evaluated point.
PENUMBRA_GAMMA_HD bool addPoint(PointSums& p, float ref, float d, float gamma, bool inMask,
                                float cutoffGy, double ddGy, bool withGamma) {
  if (d != d) {
    ++p.outsideEvaluated;
    return false;
  }
  if (!inMask) {
    ++p.outsideMask;
    return false;
  }
  if (!(ref >= cutoffGy)) {
    ++p.belowCutoff;
    return false;
  }
  ++p.evaluated;
  const double dd = d, ad = dd < 0 ? -dd : dd;
  p.dSum += dd;
  p.dSum2 += dd * dd;
  p.dAbs += ad;
  p.dMin = dd < p.dMin ? dd : p.dMin;
  p.dMax = dd > p.dMax ? dd : p.dMax;
  if (ad <= ddGy) ++p.within;
  if (withGamma) {
    const double gv = gamma;
    p.passed += gv <= 1.0;
    p.gammaSum += gv;
    p.gammaMax = gv > p.gammaMax ? gv : p.gammaMax;
  }
  return true;
}

/// Histogram bin of a gamma value (both backends bin alike).
PENUMBRA_GAMMA_HD int gammaBin(double g, double cap) {
  const int b = int(g / cap * kGammaHistogramBins);
  return b < 0 ? 0 : (b > kGammaHistogramBins - 1 ? kGammaHistogramBins - 1 : b);
}

/// The CPU's sums, one run per slice, from result.gamma and result.difference.
PointSummary sumPoints(const CompareRequest& request, const PointSetup<double>& setup,
                       int threads, const CompareResult& result);

/// Fills result.gammaStats, differenceStats, the class counts and the per-structure pass
/// rates (from result.gamma) out of a backend's sums.
void summarise(const CompareRequest& request, const PointSetup<double>& setup,
               const PointSummary& sums, CompareResult& result);

/// The CUDA backend (cuda/compare_cuda.cu, or compare_nocuda.cpp without CUDA). Sets gamma and
/// difference (grid and data), profiles and device, and returns its sums (computed on the GPU).
PointSummary runCompareCuda(const CompareRequest& request, const PointSetup<double>& setup,
                            CompareResult& result, const JobControl& job);
/// Drops what the CUDA backend keeps between calls (nothing without CUDA).
void releaseGpuCache();

/// The CUDA backend's buffers kept from earlier calls against what `request` needs: `held`
/// bytes in all (they count as free: the run reuses them) and `toGrow` bytes it would allocate
/// beyond them (0: nothing to allocate, so no free-memory check is needed).
struct GpuCacheUse {
  double held = 0, toGrow = 0;
};
GpuCacheUse gpuCacheUse(const CompareRequest& request);

}  // namespace penumbra::compare::detail
