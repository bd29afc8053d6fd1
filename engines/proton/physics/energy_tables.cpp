#include "proton/physics/energy_tables.hpp"

#include <cmath>

#include "core/error.hpp"
#include "proton/physics/bragg_kleeman.hpp"

namespace penumbra::proton {

EnergyTables buildEnergyTables(double energyMeV, const DepthDoseModel& depthDose,
                               const BeamModel& beam, double dzCm, double zmaxCm,
                               const HighlandParameters& mcs) {
  PENUMBRA_REQUIRE(dzCm > 0.0, InvalidArgument, "energy tables: dz must be positive");
  if (zmaxCm <= 0.0) zmaxCm = rangeCm(energyMeV) + 2.0;
  EnergyTables t;
  t.energyMeV = energyMeV;
  t.dzCm = dzCm;
  t.spotSigmaAirMm = beam.spotSigmaMm(energyMeV);
  t.idd = depthDose.tabulate(energyMeV, dzCm, zmaxCm);
  t.r80Cm = t.idd.distalDepthCm(0.8);
  t.energyDepositedMeV = t.idd.integral();
  t.sigmaMcsMm = tabulateSigmaMcsMm(energyMeV, dzCm, t.idd.size(), mcs);
  t.sigmaMm.resize(t.sigmaMcsMm.size());
  for (std::size_t i = 0; i < t.sigmaMm.size(); ++i)
    t.sigmaMm[i] = totalSigmaMm(t.spotSigmaAirMm, t.sigmaMcsMm[i]);
  return t;
}

}  // namespace penumbra::proton
