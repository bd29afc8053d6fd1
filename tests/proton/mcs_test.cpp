// Lateral spread by multiple Coulomb scattering, against an independent Fermi-Eyges
// computation and against the rule of thumb for the width at the end of range.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "proton/physics/bragg_kleeman.hpp"
#include "proton/physics/mcs_highland.hpp"
#include "pstar_reference.hpp"

namespace penumbra::proton {
namespace {

// Residual energy from the PSTAR table itself (inverse log-log interpolation), not from the
// engine's fit; below the table's 50 MeV a power law through its first two rows.
double pstarEnergyForRange(const test::PstarTable& t, double s) {
  const auto& e = t.energyMeV;
  const auto& r = t.csdaRangeCm;
  if (s <= 0.0) return 0.0;
  if (s < r[0]) {
    const double k = std::log(r[1] / r[0]) / std::log(e[1] / e[0]);
    return e[0] * std::pow(s / r[0], 1.0 / k);
  }
  std::size_t i = 1;
  while (i < r.size() - 1 && r[i] < s) ++i;
  const double u = std::log(s / r[i - 1]) / std::log(r[i] / r[i - 1]);
  return std::exp(std::log(e[i - 1]) + u * std::log(e[i] / e[i - 1]));
}

// Fermi-Eyges moments A_n = Int z'^n T(z') dz' by the midpoint rule on 20000 steps, then
// sigma^2 = F(z) (z^2 A0 - 2 z A1 + A2): a different quadrature and a different (moment) form
// of the same Highland / Fermi-Eyges model.
double independentSigmaMm(const test::PstarTable& t, double e0, double z) {
  const double r0 = t.rangeCm(e0), x0 = 36.08, m = 938.272;
  const int n = 20000;
  const double h = z / n;
  double a0 = 0, a1 = 0, a2 = 0;
  for (int i = 0; i < n; ++i) {
    const double zp = (i + 0.5) * h;
    const double e = pstarEnergyForRange(t, r0 - zp);
    const double pv = e * (e + 2 * m) / (e + m);
    const double tt = (14.1 / pv) * (14.1 / pv) / x0;
    a0 += tt * h;
    a1 += zp * tt * h;
    a2 += zp * zp * tt * h;
  }
  const double f = 1.0 + std::log10(z / x0) / 9.0;
  return 10.0 * f * std::sqrt(z * z * a0 - 2.0 * z * a1 + a2);
}

TEST(ProtonMcs, MatchesIndependentFermiEygesIntegral) {
  PENUMBRA_REQUIRE_DATA(test::kPstarFile);
  const auto pstar = test::PstarTable::load();
  for (double e : {100.0, 200.0}) {
    for (double frac : {0.25, 0.50, 0.75, 0.95}) {
      const double z = frac * rangeCm(e);
      const double mine = sigmaMcsMm(e, z), ref = independentSigmaMm(pstar, e, z);
      std::printf(
          "E = %5.1f MeV  z = %5.2f cm (%2.0f %% R)  sigma_MCS = %.4f mm  independent "
          "%.4f mm  (%+.2f %%)\n",
          e, z, 100 * frac, mine, ref, 100.0 * (mine / ref - 1.0));
      EXPECT_NEAR(mine / ref, 1.0, 0.05);
    }
  }
}

TEST(ProtonMcs, EndOfRangeWidthIsAboutTwoPercentOfRange) {
  // Rule of thumb for protons in water (Gottschalk): sigma_MCS at the end of range is
  // ~2.0-2.2 % of the range; accept 0.0215 R within 15 %.
  for (double e : {70.0, 100.0, 150.0, 200.0, 230.0}) {
    const double r = rangeCm(e);
    const double ratio = sigmaMcsMm(e, r) / (10.0 * r);
    std::printf("E = %5.1f MeV  R = %6.2f cm  sigma_MCS(R) = %.3f mm = %.4f R\n", e, r,
                sigmaMcsMm(e, r), ratio);
    EXPECT_NEAR(ratio / 0.0215, 1.0, 0.15);
  }
}

TEST(ProtonMcs, ShapeAndTabulation) {
  const double e = 150.0, r = rangeCm(e);
  EXPECT_EQ(sigmaMcsMm(e, 0.0), 0.0);
  double previous = 0.0;
  for (double z = 0.1; z < r; z += 0.5) {
    const double s = sigmaMcsMm(e, z);
    EXPECT_GT(s, previous) << z;
    previous = s;
  }
  EXPECT_DOUBLE_EQ(sigmaMcsMm(e, r + 3.0), sigmaMcsMm(e, r));  // frozen beyond the range
  const auto tab = tabulateSigmaMcsMm(e, 0.25, 80);
  for (std::size_t i = 0; i < tab.size(); ++i)
    EXPECT_DOUBLE_EQ(tab[i], sigmaMcsMm(e, std::min(0.25 * i, r)));
  EXPECT_DOUBLE_EQ(totalSigmaMm(3.0, 4.0), 5.0);
  EXPECT_THROW(sigmaMcsMm(-1.0, 1.0), Error);
}

}  // namespace
}  // namespace penumbra::proton

namespace penumbra::proton {
namespace {

TEST(ProtonMcs, ContinuousUpToTheEndOfRange) {
  // Regression: the scattering integral evaluates residual energies down to ~1e-60 cm of
  // residual range; the range-energy relation must stay monotone there (the bare log-log cubic
  // turns over below 0.05 MeV and gave sigma ~ 1e25 mm at z = R0 (1 - 1e-5)).
  for (double e : {70.0, 230.0}) {
    const double r = rangeCm(e), atEnd = sigmaMcsMm(e, r);
    for (int k = 2; k <= 14; ++k) {
      const double s = sigmaMcsMm(e, r * (1.0 - std::pow(10.0, -k)));
      EXPECT_LT(s, atEnd) << k;
      EXPECT_NEAR(s / atEnd, 1.0, 3.0 * std::pow(10.0, -k)) << k;
    }
  }
  double previous = 0.0;
  for (double range = 1e-60; range < 40.0; range *= 3.0) {
    const double en = energyForRange(range);
    ASSERT_TRUE(std::isfinite(en) && en > previous) << range;
    previous = en;
  }
}

}  // namespace
}  // namespace penumbra::proton
