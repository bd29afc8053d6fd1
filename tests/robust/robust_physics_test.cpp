// What a scenario does to the dose (CPU reference): a shift scenario is the dose of the plan with
// its isocentres moved, bit for bit, alone and inside an evaluation; a range scenario in water
// moves the distal R80 by the scaling of the water-equivalent depth.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "../proton/proton_dose_test_support.hpp"
#include "robust/robustness.hpp"
#include "robust_test_support.hpp"

namespace penumbra::robust {
namespace {

proton::ProtonDoseRequest movedByHand(proton::ProtonDoseRequest r, Vec3 shift) {
  for (proton::ProtonBeam& b : r.beams)
    b.isocenter = Vec3{b.isocenter.x + shift.x, b.isocenter.y + shift.y, b.isocenter.z + shift.z};
  return r;
}

bool sameBits(const Volume<float>& a, const Volume<float>& b) {
  return a.data.size() == b.data.size() &&
         std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0;
}

TEST(RobustPhysics, ShiftScenarioIsTheShiftedPlanBitForBit) {
  const RobustnessRequest req = test::randomRequest(2468, 20);
  const Vec3 shift{2.0, -1.25, 3.0};
  const proton::ProtonDoseResult nominal = proton::computeProtonDose(req.plan);
  const proton::ProtonDoseResult byHand = proton::computeProtonDose(movedByHand(req.plan, shift));
  const proton::ProtonDoseResult scenario =
      proton::computeProtonDose(applyScenario(req.plan, Scenario{"s", 0, shift}));
  EXPECT_TRUE(sameBits(scenario.dose, byHand.dose));
  EXPECT_GT(proton::test::maxOf(byHand.dose.data), 0.0);
  EXPECT_FALSE(sameBits(nominal.dose, byHand.dose)) << "the shift must change the dose";

  // Inside an evaluation of {nominal, shift}: the voxel-wise minimum and maximum are those of
  // the two engine doses, bit for bit.
  RobustnessRequest two = req;
  two.scenarios = {Scenario{"nominal", 0, Vec3{}}, Scenario{"shift", 0, shift}};
  const RobustnessResult r = evaluateRobustness(two);
  ASSERT_EQ(r.minimum.dose.data.size(), byHand.dose.data.size());
  for (std::size_t v = 0; v < byHand.dose.data.size(); ++v) {
    const float a = nominal.dose.data[v], b = byHand.dose.data[v];
    ASSERT_EQ(r.minimum.dose.data[v], std::min(a, b)) << v;
    ASSERT_EQ(r.maximum.dose.data[v], std::max(a, b)) << v;
  }
  EXPECT_TRUE(sameBits(r.nominal.dose, nominal.dose));
}

/// R80 [mm along y] of the laterally integrated depth dose of `dose`.
double r80(const Volume<float>& dose) {
  const std::vector<double> c = proton::test::laterallyIntegrated(dose);
  return proton::test::distalFallPosition(c, dose.grid.origin.y, dose.grid.spacing.y);
}

TEST(RobustPhysics, RangeScenarioMovesR80ByTheScaledDepth) {
  // Water from y = -100 mm (air, SPR 0.001, in front), one 130 MeV spot along +y: R80 ~ 20 mm.
  const auto phantom = proton::test::slabPhantom();
  const proton::ProtonDoseRequest nominal =
      proton::test::physicsRequest(phantom, proton::test::singleSpotBeam(130));
  const double surface = -100, airWepl = 20 * 0.001;  // 20 mm of air before the water
  const double z0 = r80(proton::computeProtonDose(nominal).dose) - surface;
  ASSERT_GT(z0, 100);
  ASSERT_LT(z0, 140);
  const double halfVoxel = 0.5 * nominal.doseGrid.spacing.y;
  for (double r : {3.5, -3.5, 2.0}) {
    const double f = 1 + r / 100;
    // The same water-equivalent depth at 1/f of the geometric depth (the air scales too).
    const double expected = (z0 + airWepl) / f - airWepl;
    const double z = r80(proton::computeProtonDose(applyScenario(nominal, Scenario{"r", r, Vec3{}})).dose) - surface;
    std::printf("range error %+.1f %%: R80 depth %.3f mm (nominal %.3f), expected %.3f mm\n", r, z, z0,
                expected);
    EXPECT_NEAR(z, expected, halfVoxel) << "range error " << r << " %: R80 moved by " << z - z0
                                        << " mm, expected " << expected - z0 << " mm";
    EXPECT_GT(std::fabs(z - z0), 2.0) << "the scenario must move the peak";
  }
}

}  // namespace
}  // namespace penumbra::robust
