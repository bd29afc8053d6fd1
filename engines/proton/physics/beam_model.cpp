#include "proton/physics/beam_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "proton/physics/csv_table.hpp"

namespace penumbra::proton {

BeamModel::BeamModel(std::string name, std::vector<BeamModelEntry> entries)
    : name_(std::move(name)), entries_(std::move(entries)) {
  PENUMBRA_REQUIRE(!entries_.empty(), InvalidArgument, "beam model '" + name_ + "' is empty");
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const auto& e = entries_[i];
    PENUMBRA_REQUIRE(std::isfinite(e.energyMeV) && e.energyMeV > 0.0 &&
                         std::isfinite(e.sigmaAirMm) && e.sigmaAirMm > 0.0 &&
                         std::isfinite(e.energySpreadPercent) && e.energySpreadPercent >= 0.0,
                     InvalidArgument,
                     "beam model '" + name_ + "': energy and sigma must be > 0, spread >= 0");
    PENUMBRA_REQUIRE(i == 0 || e.energyMeV > entries_[i - 1].energyMeV, InvalidArgument,
                     "beam model '" + name_ + "': energies must increase strictly");
  }
}

BeamModel BeamModel::load(const std::string& path) {
  const CsvTable csv = readNumericCsv(path, 3);
  std::vector<BeamModelEntry> entries;
  for (const auto& r : csv.rows) entries.push_back({r[0], r[1], r[2]});
  const std::string name = path.substr(path.find_last_of('/') + 1);
  try {
    BeamModel m(name, std::move(entries));
    m.provenance_ = csv.comments;
    return m;
  } catch (const Error& e) {
    PENUMBRA_THROW(Format, path + ": " + e.message());
  }
}

double BeamModel::minEnergyMeV() const {
  return entries_.empty() ? 0.0 : entries_.front().energyMeV;
}
double BeamModel::maxEnergyMeV() const {
  return entries_.empty() ? 0.0 : entries_.back().energyMeV;
}

BeamModelEntry BeamModel::interpolate(double energyMeV) const {
  PENUMBRA_REQUIRE(!entries_.empty(), InvalidArgument, "beam model is empty");
  const double tol = 1e-9 * maxEnergyMeV();
  PENUMBRA_REQUIRE(
      energyMeV >= minEnergyMeV() - tol && energyMeV <= maxEnergyMeV() + tol, InvalidArgument,
      "energy " + std::to_string(energyMeV) + " MeV outside beam model '" + name_ + "' (" +
          std::to_string(minEnergyMeV()) + "-" + std::to_string(maxEnergyMeV()) + " MeV)");
  if (entries_.size() == 1) return entries_.front();
  auto it = std::lower_bound(entries_.begin(), entries_.end(), energyMeV,
                             [](const BeamModelEntry& e, double v) { return e.energyMeV < v; });
  if (it == entries_.begin()) return entries_.front();
  if (it == entries_.end()) return entries_.back();
  const auto& b = *it;
  const auto& a = *(it - 1);
  const double t = (energyMeV - a.energyMeV) / (b.energyMeV - a.energyMeV);
  return {energyMeV, a.sigmaAirMm + t * (b.sigmaAirMm - a.sigmaAirMm),
          a.energySpreadPercent + t * (b.energySpreadPercent - a.energySpreadPercent)};
}

double BeamModel::spotSigmaMm(double energyMeV) const { return interpolate(energyMeV).sigmaAirMm; }

double BeamModel::energySpreadPercent(double energyMeV) const {
  return interpolate(energyMeV).energySpreadPercent;
}

double BeamModel::energySpreadMeV(double energyMeV) const {
  return 0.01 * energySpreadPercent(energyMeV) * energyMeV;
}

}  // namespace penumbra::proton
