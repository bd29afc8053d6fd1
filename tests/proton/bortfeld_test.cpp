// Bortfeld's analytical Bragg curve: against a numerical convolution (independent of the
// parabolic cylinder functions), against PSTAR ranges, and against its own energy balance.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <vector>

#include "core/error.hpp"
#include "proton/physics/bortfeld_bragg_curve.hpp"
#include "proton/physics/depth_dose_table.hpp"
#include "proton/physics/parabolic_cylinder.hpp"
#include "pstar_reference.hpp"

namespace penumbra::proton {
namespace {

const double kPi = std::acos(-1.0);

// Dhat convolved with a Gaussian of the curve's sigma, by brute force. The substitution
// r = R0 - z' = u^p turns r^(1/p - 1) dr into p du, so the integrand is smooth and the midpoint
// rule converges as h^2 (no special functions involved).
double numericalConvolution(const BortfeldBraggCurve& c, double z, int n = 40000) {
  const double p = c.parameters().p, r0 = c.rangeCm(), s = c.sigmaCm();
  const double uMax = std::pow(r0, 1.0 / p), h = uMax / n;
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    const double u = (i + 0.5) * h;
    const double r = std::pow(u, p);
    const double jac = p * std::pow(u, p - 1.0);
    const double g =
        std::exp(-0.5 * (z - (r0 - r)) * (z - (r0 - r)) / (s * s)) / (std::sqrt(2.0 * kPi) * s);
    sum += c.unstraggled(r0 - r) * jac * g;
  }
  return sum * h;
}

TEST(ProtonBortfeld, MatchesNumericalConvolutionOfUnstraggledCurve) {
  for (double e : {70.0, 150.0, 230.0}) {
    const BortfeldBraggCurve c(e, 0.008 * e);
    DepthDoseTable t = BortfeldDepthDoseModel({}, 0.008).tabulate(e, 0.01, c.rangeCm() + 2.0);
    const double peak = t.peakValue();
    double worst = 0.0;
    // Plateau every 5 mm, then every 0.2 sigma through the peak and the distal fall-off.
    std::vector<double> depths;
    for (double z = 0.5 * c.rangeCm(); z < c.rangeCm() - 5.0 * c.sigmaCm(); z += 0.5)
      depths.push_back(z);
    for (double k = -5.0; k <= 4.0; k += 0.2) depths.push_back(c.rangeCm() + k * c.sigmaCm());
    for (double z : depths)
      worst = std::max(worst, std::fabs(c(z) - numericalConvolution(c, z)) / peak);
    std::printf("E = %5.1f MeV  sigma = %.4f cm  max |analytic - numeric| = %.2e of peak\n", e,
                c.sigmaCm(), worst);
    EXPECT_LT(worst, 1e-3);  // brief: 1 %; measured ~1e-6
  }
}

TEST(ProtonBortfeld, EqualsLiteralClosedFormWithParabolicCylinderFunctions) {
  const BortfeldBraggCurve c(150.0, 1.0);
  const auto& par = c.parameters();
  const double p = par.p, r0 = c.rangeCm(), s = c.sigmaCm(), a = c.alphaEff();
  for (double z : {5.0, 10.0, 14.0, 15.0, 15.5, 15.8, 16.0, 16.3, 17.0}) {
    const double zeta = (r0 - z) / s;
    // Bortfeld eq. (27), term for term, with D written as exp(-zeta^2/4) D(-zeta).
    const double pre = std::tgamma(1.0 / p) * std::pow(s, 1.0 / p) /
                       (std::sqrt(2.0 * kPi) * par.densityGPerCm3 * p * std::pow(a, 1.0 / p) *
                        (1.0 + par.beta * r0));
    const double lit = pre * (scaledParabolicCylinderD(1.0 / p, zeta) / s +
                              (par.beta / p + par.gamma * par.beta + par.epsilon / r0) *
                                  scaledParabolicCylinderD(1.0 / p + 1.0, zeta));
    EXPECT_NEAR(c(z) / lit, 1.0, 1e-12) << "z = " << z;
  }
}

TEST(ProtonBortfeld, PlateauTendsToUnstraggledCurve) {
  // Far upstream the convolution only adds the curvature term (1-nu)(2-nu)/2 (sigma/r)^2
  // (~0.31 (sigma/r)^2 for nu = 1/p), so the ratio must approach 1 within (sigma/r)^2.
  const BortfeldBraggCurve c(200.0, 1.2);
  for (double z : {0.0, 2.0, 10.0, 20.0}) {
    const double ratio = c(z) / c.unstraggled(z);
    const double bound = std::pow(c.sigmaCm() / (c.rangeCm() - z), 2);
    EXPECT_GT(ratio, 1.0) << z;
    EXPECT_LT(ratio - 1.0, bound) << z;
  }
}

TEST(ProtonBortfeld, R80WithinOneMillimetreOfPstarCsdaRange) {
  PENUMBRA_REQUIRE_DATA(test::kPstarFile);
  const auto pstar = test::PstarTable::load();
  // Mono-energetic beams and beams with the generic beam model's energy spread (1.0 % at
  // 70 MeV falling to 0.5 % at 230 MeV, resources/beam/generic_pbs_beam_model.csv).
  for (double e : {70.0, 100.0, 150.0, 200.0, 230.0}) {
    for (double spreadPct : {0.0, 1.0 - 0.5 * (e - 70.0) / 160.0}) {
      const BortfeldDepthDoseModel model({}, 0.01 * spreadPct);
      const auto t = model.tabulate(e, 0.001, rangeCm(e) + 1.5);
      const double r80 = t.distalDepthCm(0.8), ref = pstar.rangeCm(e);
      std::printf(
          "E = %5.1f MeV  spread %.2f %%  sigma %.3f cm  R80 = %7.3f cm  PSTAR %7.3f cm"
          "  diff %+6.3f mm\n",
          e, spreadPct, model.curve(e).sigmaCm(), r80, ref, 10.0 * (r80 - ref));
      EXPECT_NEAR(r80, ref, 0.1) << e << " MeV";
    }
  }
}

TEST(ProtonBortfeld, IntegralEqualsEnergyDepositedPerProton) {
  for (double eps : {0.0, 0.1}) {
    BortfeldParameters par;
    par.epsilon = eps;
    for (double e : {70.0, 150.0, 230.0}) {
      const BortfeldBraggCurve c(e, 0.007 * e, par);
      // Trapezoid on 0.1 mm; the straggled curve is smooth, so this is accurate to ~1e-5.
      const auto t = BortfeldDepthDoseModel(par, 0.007).tabulate(e, 0.01, c.rangeCm() + 2.0);
      const double numeric = t.integral() * par.densityGPerCm3;
      const double analytic = energyDepositedPerProtonMeV(e, par);
      std::printf(
          "E = %5.1f MeV eps = %.1f  integral %.4f MeV  analytic %.4f MeV  (%+.2e)"
          "  nuclear loss %.2f %%\n",
          e, eps, numeric, analytic, numeric / analytic - 1.0, 100.0 * (1 - analytic / e));
      EXPECT_NEAR(numeric / analytic, 1.0, 0.005);
    }
  }
  // With epsilon = 0 the balance is E0 minus the escaping part of the nuclear-released energy.
  BortfeldParameters par;
  const double e = 150.0, r0 = rangeCm(e), p = par.p, b = par.beta;
  const double carriedOff = e * b * r0 * p / ((p + 1.0) * (1.0 + b * r0));
  EXPECT_NEAR(energyDepositedPerProtonMeV(e, par), e - (1.0 - par.gamma) * carriedOff, 1e-10);
  par.gamma = 1.0;  // everything local: all of E0 is deposited
  EXPECT_NEAR(energyDepositedPerProtonMeV(e, par), e, 1e-10);
}

TEST(ProtonBortfeld, RejectsBadInput) {
  EXPECT_THROW(BortfeldBraggCurve(-1.0), Error);
  EXPECT_THROW(BortfeldBraggCurve(100.0, -0.5), Error);
  BortfeldParameters bad;
  bad.gamma = 1.5;
  EXPECT_THROW(BortfeldBraggCurve(100.0, 0.0, bad), Error);
  EXPECT_EQ(BortfeldBraggCurve(100.0)(-1.0), 0.0);
}

}  // namespace
}  // namespace penumbra::proton
