// Range-energy relation: the shipped constants must be what a fit to NIST PSTAR gives, and the
// relation must reproduce PSTAR to well under a millimetre over the clinical range.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/calibration.hpp"
#include "core/error.hpp"
#include "proton/physics/bragg_kleeman.hpp"
#include "pstar_reference.hpp"

namespace penumbra::proton {
namespace {

using test::PstarTable;

TEST(ProtonRangeEnergy, RefitFromPstarAgreesWithShippedConstants) {
  PENUMBRA_REQUIRE_DATA(test::kPstarFile);
  const auto pstar = PstarTable::load();
  ASSERT_EQ(pstar.energyMeV.size(), 17u);
  const BraggKleeman bk = fitBraggKleeman(pstar.energyMeV, pstar.csdaRangeCm);
  std::printf("Bragg-Kleeman fit: alpha = %.10g cm MeV^-p, p = %.10g\n", bk.alpha, bk.p);
  EXPECT_NEAR(bk.alpha / kBraggKleemanWater.alpha, 1.0, 1e-9);
  EXPECT_NEAR(bk.p, kBraggKleemanWater.p, 1e-9);
  const auto c = fitLogPolynomial(pstar.energyMeV, pstar.csdaRangeCm, 3);
  for (int k = 0; k < 4; ++k) {
    std::printf("log-log cubic c%d = %.17g\n", k, c[k]);
    EXPECT_NEAR(c[k], kRangeLogCubicWater[k], 1e-8 * (1.0 + std::fabs(c[k])));
  }
}

TEST(ProtonRangeEnergy, CubicReproducesPstarRowsWithinHalfATenthMillimetre) {
  PENUMBRA_REQUIRE_DATA(test::kPstarFile);
  const auto pstar = PstarTable::load();
  double worstCubic = 0.0, worstPower = 0.0;
  for (std::size_t i = 0; i < pstar.energyMeV.size(); ++i) {
    const double e = pstar.energyMeV[i], r = pstar.csdaRangeCm[i];
    const double dCubic = 10.0 * (rangeCm(e) - r);
    const double dPower = 10.0 * (kBraggKleemanWater.rangeCm(e) - r);
    std::printf("E = %5.0f MeV  PSTAR %7.3f cm  cubic %+7.3f mm  power law %+7.3f mm\n", e, r,
                dCubic, dPower);
    worstCubic = std::max(worstCubic, std::fabs(dCubic));
    worstPower = std::max(worstPower, std::fabs(dPower));
  }
  EXPECT_LT(worstCubic, 0.05);  // measured 0.049 mm (PSTAR rounding is 0.05 mm at 11.46 cm)
  // Why the cubic exists: the single power law is off by more than the 1 mm acceptance.
  EXPECT_GT(worstPower, 1.0);
}

TEST(ProtonRangeEnergy, PowerLawFailsAndCubicPassesOneMillimetreAt70To230MeV) {
  PENUMBRA_REQUIRE_DATA(test::kPstarFile);
  const auto pstar = PstarTable::load();
  double worstPower = 0.0;
  for (double e : {70.0, 100.0, 150.0, 200.0, 230.0}) {
    const double ref = pstar.rangeCm(e);
    EXPECT_NEAR(rangeCm(e), ref, 0.01) << e << " MeV";  // 0.1 mm
    worstPower = std::max(worstPower, std::fabs(kBraggKleemanWater.rangeCm(e) - ref));
  }
  EXPECT_GT(worstPower, 0.1);  // 3.2 mm at 230 MeV
}

TEST(ProtonRangeEnergy, EnergyForRangeInvertsRange) {
  for (double e = 1.0; e <= 300.0; e *= 1.07) {
    EXPECT_NEAR(energyForRange(rangeCm(e)) / e, 1.0, 1e-12) << e;
    const double h = 1e-5 * e;
    const double numeric = (rangeCm(e + h) - rangeCm(e - h)) / (2 * h);
    EXPECT_NEAR(rangeDerivativeCmPerMeV(e) / numeric, 1.0, 1e-7) << e;
  }
  EXPECT_EQ(energyForRange(0.0), 0.0);
  EXPECT_EQ(energyForRange(-1.0), 0.0);
  EXPECT_THROW(rangeCm(0.0), Error);
  EXPECT_THROW(rangeCm(-5.0), Error);
}

TEST(ProtonRangeEnergy, WaterHasStoppingPowerRatioOne) {
  const auto curve = CalibrationCurve::load(std::string(PENUMBRA_SOURCE_DIR) +
                                            "/resources/calibration/hu_to_spr_matrad_default.csv");
  EXPECT_DOUBLE_EQ(curve(0.0), 1.0);
}

}  // namespace
}  // namespace penumbra::proton
