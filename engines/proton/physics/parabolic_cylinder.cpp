#include "proton/physics/parabolic_cylinder.hpp"

#include <array>
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "proton/physics/quadrature.hpp"

namespace penumbra::proton {

namespace {

constexpr double kSqrt2Pi = 2.5066282746310002;
// Half-width of the window kept around the Gaussian's centre: exp(-12^2/2) = 5e-32.
constexpr double kWindow = 12.0;
// Beyond this zeta the asymptotic series is used (see header).
constexpr double kAsymptoticZeta = 15.0;

void checkOrder(double nu) {
  PENUMBRA_REQUIRE(
      nu >= 0.2 && std::isfinite(nu), InvalidArgument,
      "parabolic cylinder function: order -nu needs nu >= 0.2, got nu = " + std::to_string(nu));
}

// Int_0^L t^(nu-1) exp(zeta t - t^2/2) dt for zeta <= 0, without the exp(-zeta^2/2) factor.
// The integrand decays like exp(-|zeta| t), so the window shrinks as 40/|zeta| (exp(-40)).
double integralNegativeZeta(double nu, double zeta) {
  const double upper = zeta < -40.0 / kWindow ? 40.0 / -zeta : kWindow;
  return integrateTanhSinh(
      [&](double t, double dA, double) {
        return std::pow(dA, nu - 1.0) * std::exp(zeta * t - 0.5 * t * t);
      },
      0.0, upper);
}


// Asymptotic series: Taylor expansion of t^(nu-1) about zeta against the Gaussian's even moments.
double smearedPowerAsymptotic(double nu, double zeta) {
  const double m = nu - 1.0;
  const double z2 = 1.0 / (zeta * zeta);
  const double t1 = m * (m - 1.0) * 0.5 * z2;
  const double t2 = t1 * (m - 2.0) * (m - 3.0) * 0.25 * z2;
  const double t3 = t2 * (m - 4.0) * (m - 5.0) / 6.0 * z2;
  return kSqrt2Pi * std::pow(zeta, m) * (1.0 + t1 + t2 + t3);
}

// W_nu and W_{nu+1} from one set of nodes: t^nu = t * t^(nu-1) and the Gaussian are shared.
std::array<double, 2> smearedPowerPairQuadrature(double nu, double zeta) {
  if (zeta <= 0.0) {
    // Int t^(nu-1) exp(zeta t - t^2/2) dt: decays like exp(-|zeta| t), window 40/|zeta|.
    const double upper = zeta < -40.0 / kWindow ? 40.0 / -zeta : kWindow;
    auto w = integrateTanhSinhN<2>(
        [&](double, double dA, double) {
          const double g = std::pow(dA, nu - 1.0) * std::exp(zeta * dA - 0.5 * dA * dA);
          return std::array<double, 2>{g, g * dA};
        },
        0.0, upper);
    const double scale = std::exp(-0.5 * zeta * zeta);
    return {scale * w[0], scale * w[1]};
  }
  // Split at the Gaussian's centre; the lower piece starts at 0 (singular end, evaluated from
  // dA exactly) or, far from 0, where the Gaussian has fallen below exp(-72).
  const double lo = zeta > kWindow ? zeta - kWindow : 0.0;
  auto lower = integrateTanhSinhN<2>(
      [&](double t, double dA, double) {
        const double tt = lo == 0.0 ? dA : t;
        const double g = std::pow(tt, nu - 1.0) * std::exp(-0.5 * (tt - zeta) * (tt - zeta));
        return std::array<double, 2>{g, g * tt};
      },
      lo, zeta);
  auto upper = integrateTanhSinhN<2>(
      [&](double t, double, double) {
        const double g = std::pow(t, nu - 1.0) * std::exp(-0.5 * (t - zeta) * (t - zeta));
        return std::array<double, 2>{g, g * t};
      },
      zeta, zeta + kWindow);
  return {lower[0] + upper[0], lower[1] + upper[1]};
}

}  // namespace

std::array<double, 2> gaussianSmearedPowerPair(double nu, double zeta) {
  checkOrder(nu);
  if (zeta >= kAsymptoticZeta)
    return {smearedPowerAsymptotic(nu, zeta), smearedPowerAsymptotic(nu + 1.0, zeta)};
  return smearedPowerPairQuadrature(nu, zeta);
}

double gaussianSmearedPower(double nu, double zeta) {
  checkOrder(nu);
  if (zeta >= kAsymptoticZeta) return smearedPowerAsymptotic(nu, zeta);
  return smearedPowerPairQuadrature(nu, zeta)[0];
}

double scaledParabolicCylinderD(double nu, double zeta) {
  return gaussianSmearedPower(nu, zeta) / std::tgamma(nu);
}

double parabolicCylinderD(double a, double x) {
  const double nu = -a;
  checkOrder(nu);
  // x >= 0: exp(-x^2/4) * Int t^(nu-1) exp(-x t - t^2/2) dt (no overflow anywhere).
  if (x >= 0.0) return std::exp(-0.25 * x * x) * integralNegativeZeta(nu, -x) / std::tgamma(nu);
  // x < 0: D grows like exp(x^2/4); use the scaled form and undo the scaling.
  return std::exp(0.25 * x * x) * scaledParabolicCylinderD(nu, -x);
}

}  // namespace penumbra::proton
