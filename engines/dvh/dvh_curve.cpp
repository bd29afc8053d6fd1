// Cumulative curve and statistics from a finished histogram; reading doses and volumes off a
// cumulative curve by linear interpolation between bin edges (never the nearest bin: with
// 0.01 Gy bins that would be harmless, but the interpolation is what makes D98 independent of
// the bin width, e.g. for the 0.2 Gy bins the GUI may ask for on a large plan).
#include <algorithm>
#include <cmath>
#include <limits>

#include "dvh/dvh.hpp"
#include "dvh/dvh_internal.hpp"

namespace penumbra::dvh {

namespace detail {

void fillCurveAndStatistics(const DoseHistogram& hist, const DoseMoments& moments,
                            const DvhOptions& options, DvhResult& result) {
  DvhCurve& curve = result.curve;
  curve.binWidthGy = hist.binWidth();
  const std::vector<double> cumMm3 = hist.cumulativeAtEdges();
  // Keep the edges up to the first one that no volume reaches.
  std::size_t last = cumMm3.size() - 1;
  while (last > 0 && cumMm3[last - 1] <= 0) --last;
  curve.doseGy.resize(last + 1);
  curve.volumeCc.resize(last + 1);
  curve.volumePercent.resize(last + 1);
  const double total = moments.volume;
  for (std::size_t k = 0; k <= last; ++k) {
    curve.doseGy[k] = double(k) * curve.binWidthGy;
    curve.volumeCc[k] = cumMm3[k] / 1000.0;
    curve.volumePercent[k] = total > 0 ? 100.0 * cumMm3[k] / total : 0.0;
  }

  DvhStatistics& s = result.stats;
  s.volumeCc = total / 1000.0;
  if (total <= 0) return;
  s.minGy = moments.minDose;
  s.maxGy = moments.maxDose;
  s.meanGy = moments.doseVolume / total;
  // The histogram smears each sample over its cell's dose range, so interpolated Dxx may
  // fall a fraction of a cell outside the sampled extremes: clamp them into [Dmin, Dmax].
  auto dPct = [&](double pct) {
    return std::clamp(doseAtVolumePercent(curve, pct), s.minGy, s.maxGy);
  };
  s.d99Gy = dPct(99);
  s.d98Gy = dPct(98);
  s.d95Gy = dPct(95);
  s.d50Gy = dPct(50);
  s.d5Gy = dPct(5);
  s.d2Gy = dPct(2);
  s.d1Gy = dPct(1);
  s.d0_03ccGy = s.volumeCc <= 0.03 ? s.minGy
                                   : std::clamp(doseAtVolumeCc(curve, 0.03), s.minGy, s.maxGy);
  s.prescriptionGy = options.prescriptionGy;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (options.prescriptionGy > 0) {
    s.v95Percent = 100.0 * volumeAtDoseCc(curve, 0.95 * options.prescriptionGy) / s.volumeCc;
    s.v107Percent = 100.0 * volumeAtDoseCc(curve, 1.07 * options.prescriptionGy) / s.volumeCc;
  } else {
    s.v95Percent = s.v107Percent = nan;
  }
}

}  // namespace detail

double doseAtVolumeCc(const DvhCurve& curve, double volumeCc) {
  const auto& v = curve.volumeCc;
  if (v.empty()) return 0;
  // v is non-increasing: find the last edge that still has >= volumeCc.
  const auto it = std::partition_point(v.begin(), v.end(), [&](double x) { return x >= volumeCc; });
  if (it == v.begin()) return 0;  // more than the whole structure asked for
  const std::size_t k = std::size_t(it - v.begin()) - 1;
  if (k + 1 >= v.size()) return curve.doseGy[k];
  const double drop = v[k] - v[k + 1];
  const double t = drop > 0 ? (v[k] - volumeCc) / drop : 0.0;
  return curve.doseGy[k] + t * (curve.doseGy[k + 1] - curve.doseGy[k]);
}

double doseAtVolumePercent(const DvhCurve& curve, double percent) {
  if (curve.volumeCc.empty() || curve.volumeCc[0] <= 0) return 0;
  return doseAtVolumeCc(curve, curve.volumeCc[0] * percent / 100.0);
}

double volumeAtDoseCc(const DvhCurve& curve, double doseGy) {
  const auto& v = curve.volumeCc;
  if (v.empty()) return 0;
  if (doseGy <= 0) return v[0];
  const double x = doseGy / curve.binWidthGy;
  const std::size_t k = std::size_t(std::floor(x));
  if (k + 1 >= v.size()) return k < v.size() && x == double(k) ? v[k] : 0.0;
  const double t = x - double(k);
  return v[k] + t * (v[k + 1] - v[k]);
}

}  // namespace penumbra::dvh
