#include "proton/physics/beam_model.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"

namespace penumbra::proton {
namespace {

const std::string kGeneric =
    std::string(PENUMBRA_SOURCE_DIR) + "/resources/beam/generic_pbs_beam_model.csv";

TEST(ProtonBeamModel, GenericModelIsLabelledAndPlausible) {
  const auto m = BeamModel::load(kGeneric);
  EXPECT_DOUBLE_EQ(m.minEnergyMeV(), 50.0);
  EXPECT_DOUBLE_EQ(m.maxEnergyMeV(), 250.0);
  bool labelled = false;
  for (const auto& c : m.provenance()) labelled |= c.find("GENERIC") != std::string::npos;
  EXPECT_TRUE(labelled) << "the generic beam model must say so in its header";
  double previous = 1e9;
  for (const auto& e : m.entries()) {
    EXPECT_GE(e.sigmaAirMm, 2.5);
    EXPECT_LE(e.sigmaAirMm, 7.5);
    EXPECT_LT(e.sigmaAirMm, previous);  // spots shrink with energy
    previous = e.sigmaAirMm;
    EXPECT_GE(e.energySpreadPercent, 0.4);
    EXPECT_LE(e.energySpreadPercent, 1.1);
  }
}

TEST(ProtonBeamModel, InterpolatesAndRefusesExtrapolation) {
  const auto m = BeamModel::load(kGeneric);
  EXPECT_NEAR(m.spotSigmaMm(75.0), 0.5 * (6.50 + 6.24), 1e-12);
  EXPECT_NEAR(m.energySpreadPercent(70.0), 1.0, 1e-12);
  EXPECT_NEAR(m.energySpreadMeV(70.0), 0.70, 1e-12);
  EXPECT_THROW(m.spotSigmaMm(40.0), Error);
  EXPECT_THROW(m.spotSigmaMm(260.0), Error);
}

TEST(ProtonBeamModel, MalformedFileGivesFormatError) {
  const auto path =
      (std::filesystem::temp_directory_path() / "penumbra_proton_beam_bad.csv").string();
  std::ofstream(path) << "energy_MeV,sigma,spread\n100,4.0,0.8\n90,4.5,0.9\n";
  try {
    BeamModel::load(path);
    FAIL() << "expected a Format error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Format);
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace penumbra::proton
