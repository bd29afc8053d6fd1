#pragma once
/// Per-energy lookup tables of the dose engine and the machine they come from.
///
/// The engine's inner loop never evaluates physics: per energy it interpolates two tables on a
/// uniform water-equivalent depth grid, built once on the host in double precision from the
/// physics models of engines/proton/physics (and kept in a cache, since a plan reuses a few
/// dozen energies and re-planning reuses all of them):
///   idd(z)    laterally integrated dose per proton [MeV cm^2/g] (Bortfeld or measured tables)
///   sigma(z)  total lateral sigma [mm] = sqrt(sigma_air(E)^2 + sigma_MCS(E, z)^2)
/// sigma_air is the beam model's spot size in air at the isocentre, used at every depth: the
/// three-column beam model carries no divergence, so the spot's in-air size is taken as constant
/// over the few centimetres the patient spans around the isocentre.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/resource_dir.hpp"
#include "proton/physics/beam_model.hpp"
#include "proton/physics/depth_dose_table.hpp"
#include "proton/physics/mcs_highland.hpp"

namespace penumbra::proton {

/// Tables of one energy on z_i = i * dzMm, i = 0..size-1. Beyond the last depth the dose is 0.
struct LayerTable {
  double energyMeV = 0;
  double dzMm = 0;               ///< WEPL step [mm]
  double r80Mm = 0;              ///< distal 80 % depth of the IDD [mm]
  double energyDepositedMeV = 0; ///< integral of the IDD times 1 g/cm^3 [MeV per proton]
  double sigmaAirMm = 0;         ///< in-air spot sigma at isocentre [mm]
  double sigmaMaxMm = 0;         ///< largest total sigma in the table [mm]
  std::vector<double> idd;       ///< [MeV cm^2/g]
  std::vector<double> sigmaMm;   ///< total lateral sigma [mm]

  double zMaxMm() const { return dzMm * double(idd.size() - 1); }
};

/// A scanned proton machine: beam model, depth-dose source, and a thread-safe cache of tables.
class ProtonMachine {
public:
  /// depthDose null: Bortfeld's model with the beam model's energy spread per energy.
  /// iddStepMm: depth step of the tables (0.1 mm resolves the sharpest Bragg peak of the
  /// generic model, sigma ~0.6 mm at 50 MeV, to < 0.1 % by linear interpolation).
  explicit ProtonMachine(BeamModel beam, std::shared_ptr<const DepthDoseModel> depthDose = {},
                         double iddStepMm = 0.1, HighlandParameters mcs = {});

  /// The generic beam model of resources/beam/generic_pbs_beam_model.csv with Bortfeld's curve,
  /// loaded once per process. The resources folder is $PENUMBRA_RESOURCES if set, else the
  /// source tree's resources/ (compiled in).
  static std::shared_ptr<ProtonMachine> generic();

  /// Tables for one energy, built on first use (~60-170 ms each on one core) and cached.
  /// Throws InvalidArgument for energies outside the beam model.
  std::shared_ptr<const LayerTable> table(double energyMeV) const;
  /// Builds the missing tables of all energies on up to `threads` threads (0: all cores).
  void prepare(const std::vector<double>& energiesMeV, int threads = 0) const;

  /// Largest total lateral sigma of an energy [mm]: sqrt(sigma_air^2 + sigma_MCS(R0)^2)
  /// (sigma_MCS grows with depth and is held beyond the range). Cached: the culling radius of
  /// every layer needs it, and one quadrature costs ~0.1 ms.
  double maxSigmaMm(double energyMeV) const;

  const BeamModel& beamModel() const { return beam_; }
  const DepthDoseModel& depthDoseModel() const { return *depthDose_; }
  double iddStepMm() const { return iddStepMm_; }
  std::size_t cachedCount() const;

private:
  std::shared_ptr<const LayerTable> build(double energyMeV) const;

  BeamModel beam_;
  std::shared_ptr<const DepthDoseModel> depthDose_;
  double iddStepMm_;
  HighlandParameters mcs_;
  mutable std::mutex mutex_;
  mutable std::map<double, std::shared_ptr<const LayerTable>> cache_;
  mutable std::map<double, double> maxSigma_;
};

}  // namespace penumbra::proton
