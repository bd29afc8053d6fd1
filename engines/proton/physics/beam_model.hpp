#pragma once
/// Per-energy beam data of a scanned proton machine: the spot size in air at isocentre and the
/// energy spread, read from a CSV in resources/beam/ with three columns
///   energy_MeV, sigma_x_iso_air_mm, energy_spread_percent
/// ('#' comment lines carry the provenance; they are kept and shown to the user).
/// Values between rows are interpolated linearly in energy; energies outside the file's range
/// are refused (a planning system must not extrapolate commissioning data silently).
#include <string>
#include <vector>

namespace penumbra::proton {

struct BeamModelEntry {
  double energyMeV = 0.0;            ///< nominal kinetic energy [MeV]
  double sigmaAirMm = 0.0;           ///< 1-sigma spot size in air at isocentre [mm]
  double energySpreadPercent = 0.0;  ///< 1-sigma energy spread, % of the energy
};

class BeamModel {
 public:
  BeamModel() = default;
  /// Entries must have strictly increasing energy, sigma > 0, spread >= 0 (InvalidArgument).
  BeamModel(std::string name, std::vector<BeamModelEntry> entries);
  /// Throws Io / Format (with file and line) for unreadable or malformed files.
  static BeamModel load(const std::string& path);

  double spotSigmaMm(double energyMeV) const;          ///< [mm]
  double energySpreadPercent(double energyMeV) const;  ///< [%]
  double energySpreadMeV(double energyMeV) const;      ///< [MeV]
  double minEnergyMeV() const;
  double maxEnergyMeV() const;

  const std::string& name() const { return name_; }
  /// The file's '#' comment lines: where the numbers come from.
  const std::vector<std::string>& provenance() const { return provenance_; }
  const std::vector<BeamModelEntry>& entries() const { return entries_; }

 private:
  BeamModelEntry interpolate(double energyMeV) const;
  std::string name_;
  std::vector<BeamModelEntry> entries_;
  std::vector<std::string> provenance_;
};

}  // namespace penumbra::proton
