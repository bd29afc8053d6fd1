#pragma once
// The NIST PSTAR water table from shared/data, read independently of the engine's fits, and
// log-log interpolation in it: the yardstick of the proton physics tests.
#include <cmath>
#include <string>
#include <vector>

#include "proton/physics/csv_table.hpp"
#include "test_data.hpp"

namespace penumbra::test {

inline constexpr const char* kPstarFile = "reference/nist_pstar_water_protons_50-250MeV.csv";

struct PstarTable {
  std::vector<double> energyMeV, csdaRangeCm, stoppingPowerMeVcm2g;

  static PstarTable load() {
    const auto csv = proton::readNumericCsv(dataPath(kPstarFile), 7);
    PstarTable t;
    for (const auto& r : csv.rows) {
      t.energyMeV.push_back(r[0]);
      t.stoppingPowerMeVcm2g.push_back(r[3]);
      t.csdaRangeCm.push_back(r[4] / 1.0);  // g/cm^2 -> cm at 1.000 g/cm^3
    }
    return t;
  }

  // CSDA range [cm], log-log interpolation between rows (50-250 MeV only).
  double rangeCm(double e) const {
    const std::size_t n = energyMeV.size();
    std::size_t i = 1;
    while (i < n - 1 && energyMeV[i] < e) ++i;
    const double t = std::log(e / energyMeV[i - 1]) / std::log(energyMeV[i] / energyMeV[i - 1]);
    return std::exp(std::log(csdaRangeCm[i - 1]) +
                    t * std::log(csdaRangeCm[i] / csdaRangeCm[i - 1]));
  }
};

}  // namespace penumbra::test
