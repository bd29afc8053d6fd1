// Tabulated depth-dose curves: loading, interpolation, and interchangeability with the model.
#include "proton/physics/depth_dose_table.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "proton/physics/beam_model.hpp"
#include "proton/physics/energy_tables.hpp"
#include "pstar_reference.hpp"

namespace penumbra::proton {
namespace {

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("penumbra_proton_" + name)).string();
}

void writeFile(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ProtonDepthDoseTable, LoadsCsvAndInterpolatesLinearly) {
  const std::string path = tempPath("idd_small.csv");
  writeFile(path,
            "# measured with a Bragg peak chamber (made-up numbers)\n"
            "# energy_MeV: 100\n"
            "z_cm,idd_MeV_cm2_per_g\n"
            "0.0, 4.0\n1.0; 5.0\n2.0,9.0\n3.0,1.0\n");
  const auto t = DepthDoseTable::load(path);
  EXPECT_EQ(t.size(), 4u);
  EXPECT_DOUBLE_EQ(t.energyMeV(), 100.0);
  EXPECT_DOUBLE_EQ(t(0.0), 4.0);
  EXPECT_DOUBLE_EQ(t(0.5), 4.5);
  EXPECT_DOUBLE_EQ(t(1.0), 5.0);
  EXPECT_DOUBLE_EQ(t(1.25), 6.0);
  EXPECT_DOUBLE_EQ(t(2.75), 3.0);
  EXPECT_DOUBLE_EQ(t(3.0), 1.0);
  EXPECT_DOUBLE_EQ(t(-1.0), 4.0);  // upstream of the first point: first value
  EXPECT_DOUBLE_EQ(t(3.5), 0.0);   // beyond the table: no dose
  EXPECT_DOUBLE_EQ(t.integral(), 4.5 + 7.0 + 5.0);
  EXPECT_DOUBLE_EQ(t.distalDepthCm(0.5), 2.0 + 4.5 / 8.0);
  std::filesystem::remove(path);
}

TEST(ProtonDepthDoseTable, MalformedFilesGiveTypedErrors) {
  const std::string path = tempPath("idd_bad.csv");
  writeFile(path, "z_cm,idd\n0,1\n1,abc\n");
  try {
    DepthDoseTable::load(path);
    FAIL() << "expected a Format error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Format);
    EXPECT_NE(e.message().find(":3:"), std::string::npos) << e.message();
  }
  writeFile(path, "0,1\n0,2\n");  // depths not increasing
  EXPECT_THROW(DepthDoseTable::load(path), Error);
  writeFile(path, "0,1,2\n");  // three columns
  EXPECT_THROW(DepthDoseTable::load(path), Error);
  std::filesystem::remove(path);
  EXPECT_THROW(DepthDoseTable::load(tempPath("does_not_exist.csv")), Error);
}

TEST(ProtonDepthDoseTable, SaveLoadRoundTripsExactly) {
  const auto t = BortfeldDepthDoseModel({}, 0.008).tabulate(120.0, 0.05, 12.0);
  const std::string path = tempPath("idd_roundtrip.csv");
  t.save(path, "Bortfeld model, 120 MeV, 0.8 % energy spread");
  const auto u = DepthDoseTable::load(path);
  EXPECT_EQ(u.energyMeV(), 120.0);
  ASSERT_EQ(u.size(), t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(u.depthsCm()[i], t.depthsCm()[i]);
    EXPECT_EQ(u.values()[i], t.values()[i]);
  }
  std::filesystem::remove(path);
}

TEST(ProtonDepthDoseTable, TableFromModelReproducesR80AndEnergy) {
  PENUMBRA_REQUIRE_DATA(test::kPstarFile);
  const auto pstar = test::PstarTable::load();
  const BortfeldDepthDoseModel model({}, 0.007);
  for (double e : {70.0, 150.0, 230.0}) {
    // A table as the engine would use it (0.1 mm), against a 10 um reference.
    const auto fine = model.tabulate(e, 0.001, rangeCm(e) + 1.0);
    const auto coarse = model.tabulate(e, 0.01, rangeCm(e) + 2.0);
    const double r80Fine = fine.distalDepthCm(0.8), r80Coarse = coarse.distalDepthCm(0.8);
    std::printf("E = %5.1f MeV  R80 (0.1 mm table) = %.4f cm  (10 um) = %.4f cm  PSTAR %.4f cm\n",
                e, r80Coarse, r80Fine, pstar.rangeCm(e));
    EXPECT_NEAR(r80Coarse, r80Fine, 0.005);  // 0.05 mm
    EXPECT_NEAR(r80Coarse, pstar.rangeCm(e), 0.1);
    EXPECT_NEAR(coarse.integral() / energyDepositedPerProtonMeV(e), 1.0, 1e-3);
    // Resampling a table onto its own grid changes nothing.
    const auto same = coarse.resample(0.01, rangeCm(e) + 2.0);
    for (std::size_t i = 0; i < same.size(); i += 97)
      EXPECT_NEAR(same.values()[i], coarse.values()[i], 1e-12 * coarse.peakValue());
  }
}

TEST(ProtonDepthDoseTable, TabulatedModelIsInterchangeableWithAnalyticModel) {
  const BortfeldDepthDoseModel analytic({}, 0.007);
  TabulatedDepthDoseModel measured;
  for (double e : {140.0, 150.0, 160.0}) measured.add(analytic.tabulate(e, 0.01, 20.0));
  EXPECT_EQ(measured.size(), 3u);
  const DepthDoseModel* models[] = {&analytic, &measured};
  // At a tabulated energy both sources give the same curve.
  const auto a = models[0]->tabulate(150.0, 0.01, 20.0);
  const auto b = models[1]->tabulate(150.0, 0.01, 20.0);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a.values()[i], b.values()[i], 1e-12);
  // Between tabulated energies the range-scaled interpolation keeps R80 and the peak.
  const auto ai = models[0]->tabulate(145.0, 0.01, 20.0);
  const auto bi = models[1]->tabulate(145.0, 0.01, 20.0);
  double worst = 0.0;
  for (std::size_t i = 0; i < ai.size(); ++i)
    worst = std::max(worst, std::fabs(ai.values()[i] - bi.values()[i]));
  std::printf("145 MeV from 140/150 MeV tables: R80 %.4f vs %.4f cm, max diff %.2f %% of peak\n",
              bi.distalDepthCm(0.8), ai.distalDepthCm(0.8), 100.0 * worst / ai.peakValue());
  EXPECT_NEAR(bi.distalDepthCm(0.8), ai.distalDepthCm(0.8), 0.01);  // 0.1 mm
  EXPECT_LT(worst / ai.peakValue(), 0.02);
  EXPECT_THROW(measured.tabulate(130.0, 0.01, 20.0), Error);
}

TEST(ProtonDepthDoseTable, EnergyTablesForTheDoseEngine) {
  const auto beam = BeamModel::load(std::string(PENUMBRA_SOURCE_DIR) +
                                    "/resources/beam/generic_pbs_beam_model.csv");
  const BortfeldDepthDoseModel model({}, [&](double e) { return beam.energySpreadMeV(e); });
  const auto t = buildEnergyTables(150.0, model, beam, 0.01);
  ASSERT_EQ(t.idd.size(), t.sigmaMm.size());
  EXPECT_NEAR(t.idd.depthsCm().back(), rangeCm(150.0) + 2.0, 0.01);
  EXPECT_DOUBLE_EQ(t.sigmaMm.front(), beam.spotSigmaMm(150.0));
  for (std::size_t i = 1; i < t.sigmaMm.size(); ++i) ASSERT_GE(t.sigmaMm[i], t.sigmaMm[i - 1]);
  EXPECT_NEAR(t.energyDepositedMeV / energyDepositedPerProtonMeV(150.0), 1.0, 1e-3);
  EXPECT_NEAR(t.r80Cm, rangeCm(150.0), 0.01);
}

}  // namespace
}  // namespace penumbra::proton
