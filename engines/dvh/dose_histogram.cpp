#include "dvh/dose_histogram.hpp"

#include <algorithm>
#include <cmath>

namespace penumbra::dvh::detail {

DoseHistogram::DoseHistogram(double binWidthGy, std::size_t bins)
    : width_(binWidthGy), bins_(bins), step_(bins + 2, 0.0), ramp_(bins + 3, 0.0) {}

void DoseHistogram::addPoint(double dose, double v) {
  const double top = double(bins_) * width_;
  dose = std::clamp(dose, 0.0, top);
  // F(edge k) counts volume with dose < edge k: the first edge strictly above the dose.
  std::size_t k = std::size_t(std::floor(dose / width_)) + 1;
  k = std::min(k, bins_ + 1);
  step_[k] += v;
  total_ += v;
}

void DoseHistogram::addUniform(double lo, double hi, double v) {
  const double top = double(bins_) * width_;
  lo = std::clamp(lo, 0.0, top);
  hi = std::clamp(hi, 0.0, top);
  if (!(hi - lo > 1e-9 * width_)) {
    addPoint(0.5 * (lo + hi), v);
    return;
  }
  // F gains v * clamp((e - lo) / (hi - lo), 0, 1) = rho * (relu(e - lo) - relu(e - hi)).
  // relu(e_k - a) for k >= ka = ceil(a / w) is (ka*w - a) + w*(k - ka): a step plus a ramp.
  const double rho = v / (hi - lo);
  auto addRelu = [&](double a, double sign) {
    const std::size_t ka = std::size_t(std::ceil(a / width_));
    if (ka > bins_) return;
    step_[ka] += sign * rho * (double(ka) * width_ - a);
    ramp_[ka + 1] += sign * rho * width_;
  };
  addRelu(lo, 1.0);
  addRelu(hi, -1.0);
  total_ += v;
}

void DoseHistogram::merge(const DoseHistogram& o) {
  for (std::size_t i = 0; i < step_.size(); ++i) step_[i] += o.step_[i];
  for (std::size_t i = 0; i < ramp_.size(); ++i) ramp_[i] += o.ramp_[i];
  total_ += o.total_;
}

std::vector<double> DoseHistogram::cumulativeAtEdges() const {
  std::vector<double> out(bins_ + 1);
  double stepSum = 0, slope = 0, rampSum = 0;
  for (std::size_t k = 0; k <= bins_; ++k) {
    stepSum += step_[k];
    slope += ramp_[k];
    rampSum += slope;
    // Rounding can leave -1e-12 where nothing is; the curve must be non-increasing and >= 0.
    out[k] = std::max(0.0, total_ - (stepSum + rampSum));
    if (k > 0) out[k] = std::min(out[k], out[k - 1]);
  }
  return out;
}

}  // namespace penumbra::dvh::detail
