#pragma once
/// Piecewise-linear calibration curves: HU -> relative electron density (photons) and
/// HU -> stopping-power ratio (protons). Loaded from two-column CSV files in
/// resources/calibration/ ('#' starts a comment; an optional header line is skipped).
#include <string>
#include <utility>
#include <vector>

namespace penumbra {

class CalibrationCurve {
public:
  CalibrationCurve() = default;
  /// Points must have strictly increasing x (HU); throws InvalidArgument otherwise.
  CalibrationCurve(std::string name, std::vector<std::pair<double, double>> points);

  /// Reads a CSV; a malformed line throws Format naming the file and line number.
  static CalibrationCurve load(const std::string& path);

  /// Linear interpolation; constant extrapolation beyond the first and last points.
  double operator()(double hu) const;

  const std::string& name() const { return name_; }
  const std::vector<std::pair<double, double>>& points() const { return points_; }

private:
  std::string name_;
  std::vector<std::pair<double, double>> points_;
};

}  // namespace penumbra
