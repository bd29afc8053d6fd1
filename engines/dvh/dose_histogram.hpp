#pragma once
/// Differential dose histogram with O(1) deposits (internal to engines/dvh).
///
/// A sample of the structure is a small cell over which the dose varies; depositing its volume
/// as a point would turn a smooth gradient into a staircase of sample-spacing steps (1.6 % of
/// a 7 cm^3 sphere per 0.25 mm layer at 1 Gy/mm). So a sample may be deposited as a uniform
/// density over [lo, hi] Gy. The cumulative function F(d) (volume with dose < d) is kept at the
/// bin edges as a sum of steps and ramps stored as first and second differences, so a deposit
/// costs O(1) whatever the number of bins it spans; finish() integrates them once.
#include <cstddef>
#include <vector>

namespace penumbra::dvh::detail {

class DoseHistogram {
public:
  /// Bins [k*width, (k+1)*width), k < bins; deposits are clamped into [0, bins*width].
  DoseHistogram(double binWidthGy, std::size_t bins);

  /// Volume `v` (mm^3) at one dose.
  void addPoint(double doseGy, double v);
  /// Volume `v` (mm^3) spread uniformly over [lo, hi] Gy.
  void addUniform(double lo, double hi, double v);
  /// Adds another histogram of the same shape (threads merge their partial histograms).
  void merge(const DoseHistogram& other);

  /// Cumulative volume (mm^3) receiving >= edge k, k = 0..bins.
  std::vector<double> cumulativeAtEdges() const;

  double binWidth() const { return width_; }
  std::size_t bins() const { return bins_; }

private:
  double width_;
  std::size_t bins_;
  std::vector<double> step_;  ///< first differences of F at the edges
  std::vector<double> ramp_;  ///< second differences of F at the edges
  double total_ = 0;
};

/// Running sums that do not need the histogram: volume, dose-volume integral, extremes.
struct DoseMoments {
  double volume = 0;       ///< mm^3
  double doseVolume = 0;   ///< Gy mm^3
  double minDose = 1e300;  ///< Gy, over sample points of the structure
  double maxDose = -1e300;
  void add(double dose, double v) {
    volume += v;
    doseVolume += dose * v;
    seen(dose);
  }
  void seen(double dose) {
    if (dose < minDose) minDose = dose;
    if (dose > maxDose) maxDose = dose;
  }
  void merge(const DoseMoments& o) {
    volume += o.volume;
    doseVolume += o.doseVolume;
    if (o.minDose > o.maxDose) return;  // nothing seen (a thread that got no work)
    seen(o.minDose);
    seen(o.maxDose);
  }
};

}  // namespace penumbra::dvh::detail
