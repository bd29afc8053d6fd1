// Gamma of the brain SRS RayStation case (IMRT against VMAT RT Dose, the same 3 mm grid) against
// pymedphys 0.41's numbers, generated once by scripts/reference/pymedphys_gamma.py and stored
// with the command that made them (tests/compare/reference/pymedphys_brain_gamma.json): no
// Python at test time. pymedphys searches the evaluated dose's trilinear interpolant on shells of
// sub-steps (DTA / interp_fraction); its minimum is over a subset of the points ours covers, so
// its gamma can only be higher: our pass rate may not be below its pass rate at any
// interp_fraction (beyond float noise), and agrees with its finest run within 0.5 points.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "compare/compare.hpp"
#include "dicom/rt_dose_reader.hpp"
#include "test_data.hpp"

namespace penumbra::compare {
namespace {

const char* kImrt =
    "patients/brain-srs-raystation/imrt/RD1.2.752.243.1.1.20180405114728128.4000.85245.dcm";
const char* kVmat =
    "patients/brain-srs-raystation/vmat/RD1.2.752.243.1.1.20180405120828294.3200.66183.dcm";

nlohmann::json reference() {
  std::ifstream in(std::string(PENUMBRA_SOURCE_DIR) +
                   "/tests/compare/reference/pymedphys_brain_gamma.json");
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in);
}

TEST(CompareBrainPymedphys, PassRatesAgreeWithPymedphysAndNeverFallBelowIt) {
  PENUMBRA_REQUIRE_DATA(kImrt);
  PENUMBRA_REQUIRE_DATA(kVmat);
  const io::RtDoseImport a = io::readRtDose(test::dataPath(kImrt));
  const io::RtDoseImport b = io::readRtDose(test::dataPath(kVmat));
  ASSERT_TRUE(a.ok() && b.ok());
  const nlohmann::json ref = reference();
  for (const double crit : {3.0, 2.0}) {
    CompareRequest r;
    r.reference = std::make_shared<Volume<float>>(a.dose.dose);
    r.evaluated = std::make_shared<Volume<float>>(b.dose.dose);
    r.referenceFrame = a.info.frameOfReferenceUid;
    r.evaluatedFrame = b.info.frameOfReferenceUid;
    r.criteria.dosePercent = crit;
    r.criteria.distanceMm = crit;
    r.criteria.cutoffPercent = 10;
    r.backend = Backend::Cpu;
    const CompareResult ours = compareDoses(r);
    SCOPED_TRACE(std::to_string(crit) + " %/mm: ours " + std::to_string(ours.gammaStats.passRatePercent) + " %");
    EXPECT_EQ(ours.gammaStats.depthLimitedPoints, 0);
    int finest = 0, runs = 0;
    double finestRate = 0;
    for (const auto& run : ref.at("runs")) {
      if (run.at("dose_percent_threshold").get<double>() != crit) continue;
      ++runs;
      const double rate = run.at("pass_rate_percent").get<double>();
      const int frac = run.at("interp_fraction").get<int>();
      // Same points: the reference voxels at or above 10 % of the reference maximum.
      EXPECT_EQ(ours.gammaStats.evaluatedPoints, run.at("evaluated_points").get<std::int64_t>());
      EXPECT_GE(ours.gammaStats.passRatePercent, rate - 0.01) << "interp_fraction " << frac;
      if (frac > finest) {
        finest = frac;
        finestRate = rate;
      }
    }
    ASSERT_GT(runs, 0) << "no pymedphys run at this criterion in the reference file";
    EXPECT_NEAR(ours.gammaStats.passRatePercent, finestRate, 0.5) << "pymedphys interp_fraction " << finest;
  }
}

}  // namespace
}  // namespace penumbra::compare
