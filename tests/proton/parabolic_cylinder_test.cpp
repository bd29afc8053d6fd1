// Parabolic cylinder functions D_{-nu}(x) against closed forms and the three-term recurrence.
#include "proton/physics/parabolic_cylinder.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "proton/physics/bragg_kleeman.hpp"

namespace penumbra::proton {
namespace {

const double kPi = std::acos(-1.0);

double dMinusOne(double x) {  // DLMF 12.7.5
  return std::exp(0.25 * x * x) * std::sqrt(kPi / 2.0) * std::erfc(x / std::sqrt(2.0));
}

TEST(ProtonParabolicCylinder, OrderMinusOneMatchesErfcForm) {
  for (double x = -10.0; x <= 10.0; x += 0.25)
    EXPECT_NEAR(parabolicCylinderD(-1.0, x) / dMinusOne(x), 1.0, 1e-12) << "x = " << x;
}

TEST(ProtonParabolicCylinder, OrderMinusTwoMatchesRecurrenceClosedForm) {
  // D_{-2}(x) = exp(-x^2/4) - x D_{-1}(x); the closed form cancels for x > 5, so stop there.
  for (double x = -10.0; x <= 5.0; x += 0.25) {
    const double ref = std::exp(-0.25 * x * x) - x * dMinusOne(x);
    EXPECT_NEAR(parabolicCylinderD(-2.0, x) / ref, 1.0, 1e-11) << "x = " << x;
  }
}

TEST(ProtonParabolicCylinder, OrderMinusHalfMatchesBesselK) {
  // D_{-1/2}(x) = sqrt(x / (2 pi)) K_{1/4}(x^2 / 4), x > 0 (DLMF 12.7.10).
  for (double x = 0.5; x <= 10.0; x += 0.5) {
    const double ref = std::sqrt(x / (2.0 * kPi)) * std::cyl_bessel_k(0.25, 0.25 * x * x);
    EXPECT_NEAR(parabolicCylinderD(-0.5, x) / ref, 1.0, 1e-12) << "x = " << x;
  }
}

TEST(ProtonParabolicCylinder, BortfeldOrdersAtZeroAndRecurrence) {
  const double p = kBraggKleemanWater.p;
  for (double a : {-1.0 / p, -1.0 / p - 1.0}) {
    // D_a(0) = 2^(a/2) sqrt(pi) / Gamma((1 - a)/2) (DLMF 12.2.6 with U(a',0)).
    const double ref = std::pow(2.0, 0.5 * a) * std::sqrt(kPi) / std::tgamma(0.5 * (1.0 - a));
    EXPECT_NEAR(parabolicCylinderD(a, 0.0) / ref, 1.0, 1e-13) << "a = " << a;
  }
  // D_{a+1}(x) - x D_a(x) + a D_{a-1}(x) = 0 with a = -1/p - 1 (DLMF 12.8.1).
  const double a = -1.0 / p - 1.0;
  for (double x = -8.0; x <= 8.0; x += 0.5) {
    const double t0 = parabolicCylinderD(a + 1.0, x);
    const double t1 = x * parabolicCylinderD(a, x);
    const double t2 = a * parabolicCylinderD(a - 1.0, x);
    const double scale = std::max({std::fabs(t0), std::fabs(t1), std::fabs(t2)});
    EXPECT_LT(std::fabs(t0 - t1 + t2) / scale, 1e-12) << "x = " << x;
  }
}

TEST(ProtonParabolicCylinder, ScaledFormMatchesAndIsContinuousAtAsymptoticSwitch) {
  const double nu = 1.0 / kBraggKleemanWater.p;
  for (double zeta = -8.0; zeta <= 8.0; zeta += 0.5) {
    const double direct = std::exp(-0.25 * zeta * zeta) * parabolicCylinderD(-nu, -zeta);
    EXPECT_NEAR(scaledParabolicCylinderD(nu, zeta) / direct, 1.0, 1e-12) << zeta;
  }
  for (double n : {nu, nu + 1.0}) {
    const double below = gaussianSmearedPower(n, 15.0 - 1e-9);
    const double above = gaussianSmearedPower(n, 15.0 + 1e-9);
    EXPECT_NEAR(below / above, 1.0, 1e-8) << "nu = " << n;
  }
  // Deep beyond the peak the function underflows gracefully to zero, never NaN.
  EXPECT_GE(scaledParabolicCylinderD(nu, -60.0), 0.0);
  EXPECT_LT(scaledParabolicCylinderD(nu, -60.0), 1e-300);
  EXPECT_THROW(parabolicCylinderD(-0.1, 1.0), Error);
}

}  // namespace
}  // namespace penumbra::proton
