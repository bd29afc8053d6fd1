#pragma once
/// Laterally integrated depth-dose curves as tables, and the interface through which the dose
/// engine gets them, whether they come from Bortfeld's model or from measured beam data.
///
/// The dose engine never evaluates the analytical model per voxel: per energy it asks a
/// DepthDoseModel for tabulate(E0, dz, zmax), a curve on a fine uniform WEPL grid, and
/// interpolates linearly in it (on the GPU, one texture or array per energy). So a measured
/// IDD (e.g. from a Bragg-peak chamber in a water tank, commissioning data) and the analytical
/// model are interchangeable behind the same call.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "proton/physics/bortfeld_bragg_curve.hpp"

namespace penumbra::proton {

/// IDD(z): z in cm of water (strictly increasing), IDD in MeV cm^2/g per proton.
class DepthDoseTable {
 public:
  DepthDoseTable() = default;
  /// Throws InvalidArgument unless sizes match, there are >= 2 points, z increases strictly
  /// and all values are finite and >= 0.
  DepthDoseTable(std::vector<double> zCm, std::vector<double> idd, double energyMeV = 0.0);

  /// Two columns "z_cm,idd_MeV_cm2_per_g" ('#' comments, optional header). A comment of the
  /// form "# energy_MeV: 150" sets energyMeV(). Throws Io / Format.
  static DepthDoseTable load(const std::string& path);
  /// Writes the same format (17 significant digits, so save/load round-trips exactly).
  void save(const std::string& path, const std::string& provenance = {}) const;

  /// Linear interpolation; the first value for z below the first depth, 0 beyond the last.
  double operator()(double zCm) const;

  /// Resampled on z_i = i * dzCm, i = 0..ceil(zmaxCm/dzCm).
  DepthDoseTable resample(double dzCm, double zmaxCm) const;

  /// Integral of IDD over depth by the trapezoid rule [MeV cm^3/g]; times density [g/cm^3]
  /// it is the energy deposited per proton [MeV].
  double integral() const;
  /// Depth of the maximum [cm] (parabola through the three samples around the largest one).
  double peakDepthCm() const;
  double peakValue() const;
  /// Depth beyond the peak where IDD falls to `fraction` of the peak value [cm]: R80 for 0.8.
  /// Linear interpolation between samples. Throws InvalidArgument if it never falls that low.
  double distalDepthCm(double fraction) const;

  double energyMeV() const { return energy_; }
  const std::vector<double>& depthsCm() const { return z_; }
  const std::vector<double>& values() const { return d_; }
  std::size_t size() const { return z_.size(); }

 private:
  std::vector<double> z_, d_;
  double energy_ = 0.0;
};

/// Source of per-energy depth-dose curves for the dose engine.
class DepthDoseModel {
 public:
  virtual ~DepthDoseModel() = default;
  /// IDD of a pencil beam of nominal energy energyMeV on z_i = i dz, 0 <= z_i <= zmax [cm].
  virtual DepthDoseTable tabulate(double energyMeV, double dzCm, double zmaxCm) const = 0;
  virtual std::string name() const = 0;
};

/// Bortfeld's model; the energy spread per energy comes from a callable (the beam model).
class BortfeldDepthDoseModel : public DepthDoseModel {
 public:
  /// Maps nominal energy [MeV] to the 1-sigma energy spread [MeV].
  using SpreadFn = std::function<double(double energyMeV)>;
  /// relativeEnergySpread: sigma_E / E0 (e.g. 0.007 for 0.7 %), the same at every energy.
  explicit BortfeldDepthDoseModel(const BortfeldParameters& params = {},
                                  double relativeEnergySpread = 0.0);
  /// Energy spread per energy from a callable, e.g. [&](double e) { return beam.energySpreadMeV(e);
  /// }
  BortfeldDepthDoseModel(const BortfeldParameters& params, SpreadFn spreadMeV);

  DepthDoseTable tabulate(double energyMeV, double dzCm, double zmaxCm) const override;
  std::string name() const override { return "Bortfeld 1997 analytical"; }
  BortfeldBraggCurve curve(double energyMeV) const;

 private:
  BortfeldParameters params_;
  SpreadFn spread_;
};

/// Measured (or externally computed) curves, one table per energy. Between two tabulated
/// energies the curve is interpolated in range-scaled depth: D(z) = (1-w) D1(z R1/R) + w
/// D2(z R2/R), with R1, R2 the tables' R80, w linear in energy and R placed between R1 and R2
/// as the CSDA range relation places R(E). This keeps the peak sharp, where interpolation at
/// fixed z would give two half peaks. Energies outside the tabulated span are refused.
class TabulatedDepthDoseModel : public DepthDoseModel {
 public:
  /// The table must carry its energy (energyMeV() > 0); replaces one of the same energy.
  void add(DepthDoseTable table);
  DepthDoseTable tabulate(double energyMeV, double dzCm, double zmaxCm) const override;
  std::string name() const override { return "tabulated depth-dose"; }
  std::size_t size() const { return tables_.size(); }

 private:
  std::map<double, DepthDoseTable> tables_;
};

}  // namespace penumbra::proton
