#include "proton/physics/bortfeld_bragg_curve.hpp"

#include <cmath>
#include <string>

#include "core/error.hpp"
#include "proton/physics/parabolic_cylinder.hpp"

namespace penumbra::proton {

namespace {
constexpr double kSqrt2Pi = 2.5066282746310002;

void checkParameters(const BortfeldParameters& p) {
  PENUMBRA_REQUIRE(p.p > 1.0 && p.p < 3.0, InvalidArgument,
                   "Bortfeld model: exponent p must lie in (1, 3)");
  PENUMBRA_REQUIRE(p.beta >= 0.0 && p.gamma >= 0.0 && p.gamma <= 1.0 && p.epsilon >= 0.0,
                   InvalidArgument,
                   "Bortfeld model: need beta >= 0, 0 <= gamma <= 1, epsilon >= 0");
  PENUMBRA_REQUIRE(p.densityGPerCm3 > 0.0 && p.stragglingCoefficient >= 0.0, InvalidArgument,
                   "Bortfeld model: density must be positive, straggling coefficient >= 0");
}
}  // namespace

BortfeldBraggCurve::BortfeldBraggCurve(double energyMeV, double energySpreadMeV,
                                       const BortfeldParameters& params)
    : par_(params), e0_(energyMeV) {
  checkParameters(par_);
  PENUMBRA_REQUIRE(energySpreadMeV >= 0.0 && std::isfinite(energySpreadMeV), InvalidArgument,
                   "Bortfeld model: energy spread must be >= 0 MeV");
  r0_ = penumbra::proton::rangeCm(energyMeV);  // validates energyMeV
  alpha_ = r0_ / std::pow(e0_, par_.p);
  sigmaMono_ = par_.stragglingCoefficient * std::pow(r0_, par_.stragglingExponent);
  sigmaE_ = energySpreadMeV * rangeDerivativeCmPerMeV(e0_);
  sigma_ = std::hypot(sigmaMono_, sigmaE_);
  prefactor_ = e0_ * std::pow(r0_, -1.0 / par_.p) / (par_.densityGPerCm3 * (1.0 + par_.beta * r0_));
  c2_ = par_.beta / par_.p + par_.gamma * par_.beta + par_.epsilon / r0_;
}

double BortfeldBraggCurve::unstraggled(double zCm) const {
  if (zCm < 0.0 || zCm >= r0_) return 0.0;
  const double r = r0_ - zCm;
  const double ip = 1.0 / par_.p;
  return prefactor_ * (ip * std::pow(r, ip - 1.0) + c2_ * std::pow(r, ip));
}

double BortfeldBraggCurve::operator()(double zCm) const {
  if (zCm < 0.0) return 0.0;
  if (sigma_ <= 0.0) return unstraggled(zCm);
  const double ip = 1.0 / par_.p;
  const double zeta = (r0_ - zCm) / sigma_;
  // exp(-zeta^2/4) D_{-nu}(-zeta) Gamma(nu) = gaussianSmearedPower(nu, zeta); the Gamma
  // functions of the closed form cancel against it (see header), leaving:
  const auto w = gaussianSmearedPowerPair(ip, zeta);
  const double w1 = w[0], w2 = w[1];
  return prefactor_ / kSqrt2Pi *
         (ip * std::pow(sigma_, ip - 1.0) * w1 + c2_ * std::pow(sigma_, ip) * w2);
}

double energyDepositedPerProtonMeV(double energyMeV, const BortfeldParameters& params) {
  checkParameters(params);
  const double r0 = penumbra::proton::rangeCm(energyMeV);
  const double p = params.p, b = params.beta;
  return energyMeV *
         (1.0 + b * r0 * (1.0 + params.gamma * p) / (p + 1.0) + params.epsilon * p / (p + 1.0)) /
         (1.0 + b * r0);
}

}  // namespace penumbra::proton
