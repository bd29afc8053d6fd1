#include "proton/physics/bragg_kleeman.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace penumbra::proton {

double BraggKleeman::rangeCm(double energyMeV) const {
  return energyMeV > 0.0 ? alpha * std::pow(energyMeV, p) : 0.0;
}

double BraggKleeman::energyMeV(double rangeCm) const {
  return rangeCm > 0.0 ? std::pow(rangeCm / alpha, 1.0 / p) : 0.0;
}

namespace {

double logRangeCubic(double x) {
  const auto& c = kRangeLogCubicWater;
  return c[0] + x * (c[1] + x * (c[2] + x * c[3]));
}

double logSlopeCubic(double x) {
  const auto& c = kRangeLogCubicWater;
  return c[1] + x * (2.0 * c[2] + x * 3.0 * c[3]);
}

// Below kLowEnergyMeV the cubic would be extrapolated ever further (it turns over below
// 0.05 MeV, and the scattering integral evaluates residual ranges down to 1e-60 cm), so the
// relation continues as the Bragg-Kleeman power law through the cubic's value at 10 MeV.
// Against PSTAR (plastimatch's copy): 5 MeV +0.014 mm, 2 MeV -0.001 mm. The slopes there
// (1.72 cubic, 1.76 power law) differ by 2.7 %.
constexpr double kLowEnergyMeV = 10.0;
const double kLnLowEnergy = std::log(kLowEnergyMeV);
const double kLnLowRange = logRangeCubic(kLnLowEnergy);

double logRange(double x) {
  if (x >= kLnLowEnergy) return logRangeCubic(x);
  return kLnLowRange + kBraggKleemanWater.p * (x - kLnLowEnergy);
}

double logSlope(double x) { return x >= kLnLowEnergy ? logSlopeCubic(x) : kBraggKleemanWater.p; }

}  // namespace

double rangeCm(double energyMeV) {
  PENUMBRA_REQUIRE(energyMeV > 0.0 && std::isfinite(energyMeV), InvalidArgument,
                   "proton energy must be positive, got " + std::to_string(energyMeV) + " MeV");
  return std::exp(logRange(std::log(energyMeV)));
}

double rangeDerivativeCmPerMeV(double energyMeV) {
  const double x = std::log(energyMeV);
  return rangeCm(energyMeV) * logSlope(x) / energyMeV;
}

double energyForRange(double range) {
  if (!(range > 0.0)) return 0.0;
  const double target = std::log(range);
  if (target < kLnLowRange)
    return std::exp(kLnLowEnergy + (target - kLnLowRange) / kBraggKleemanWater.p);
  // Newton on the cubic from the power-law guess. The cubic is monotone for 0.05 MeV < E <
  // 40 GeV (its slope's roots lie at x = -3.0 and 10.6) with slope 1.7-1.8 over 10-300 MeV,
  // so Newton converges in 3-5 steps to full precision.
  double x = std::max(std::log(kBraggKleemanWater.energyMeV(range)), kLnLowEnergy);
  for (int it = 0; it < 50; ++it) {
    const double dx = (logRangeCubic(x) - target) / logSlopeCubic(x);
    x -= dx;
    if (std::fabs(dx) < 1e-15) break;
  }
  return std::exp(x);
}

std::vector<double> fitLogPolynomial(const std::vector<double>& energyMeV,
                                     const std::vector<double>& range, int degree) {
  PENUMBRA_REQUIRE(degree >= 1 && degree <= 6, InvalidArgument, "fit degree must be 1..6");
  PENUMBRA_REQUIRE(
      energyMeV.size() == range.size() && energyMeV.size() > static_cast<std::size_t>(degree),
      InvalidArgument, "range fit needs more points than coefficients");
  const int n = degree + 1;
  // Normal equations in a centred variable: ln E spans 3.9-5.5, so raw powers up to x^6 in
  // the normal matrix would cost ~8 digits; centring and scaling keeps it well conditioned.
  double lo = 1e300, hi = -1e300;
  for (double e : energyMeV) {
    PENUMBRA_REQUIRE(e > 0.0, InvalidArgument, "range fit: energies must be positive");
    lo = std::min(lo, std::log(e));
    hi = std::max(hi, std::log(e));
  }
  const double mid = 0.5 * (lo + hi), half = hi > lo ? 0.5 * (hi - lo) : 1.0;
  std::vector<double> A(n * n, 0.0), b(n, 0.0);
  for (std::size_t i = 0; i < energyMeV.size(); ++i) {
    PENUMBRA_REQUIRE(range[i] > 0.0, InvalidArgument, "range fit: ranges must be positive");
    const double s = (std::log(energyMeV[i]) - mid) / half;
    const double y = std::log(range[i]);
    std::vector<double> pw(2 * n, 1.0);
    for (int k = 1; k < 2 * n; ++k) pw[k] = pw[k - 1] * s;
    for (int r = 0; r < n; ++r) {
      b[r] += y * pw[r];
      for (int c = 0; c < n; ++c) A[r * n + c] += pw[r + c];
    }
  }
  // Gaussian elimination with partial pivoting (n <= 7).
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r)
      if (std::fabs(A[r * n + c]) > std::fabs(A[piv * n + c])) piv = r;
    for (int k = 0; k < n; ++k) std::swap(A[c * n + k], A[piv * n + k]);
    std::swap(b[c], b[piv]);
    PENUMBRA_REQUIRE(A[c * n + c] != 0.0, InvalidArgument, "range fit: singular system");
    for (int r = c + 1; r < n; ++r) {
      const double f = A[r * n + c] / A[c * n + c];
      for (int k = c; k < n; ++k) A[r * n + k] -= f * A[c * n + k];
      b[r] -= f * b[c];
    }
  }
  std::vector<double> cs(n);
  for (int r = n - 1; r >= 0; --r) {
    double v = b[r];
    for (int k = r + 1; k < n; ++k) v -= A[r * n + k] * cs[k];
    cs[r] = v / A[r * n + r];
  }
  // Expand sum cs_k ((x - mid)/half)^k into powers of x.
  std::vector<double> out(n, 0.0);
  for (int k = 0; k < n; ++k) {
    // (x - mid)^k / half^k = sum_j C(k,j) x^j (-mid)^(k-j) / half^k
    double binom = 1.0;
    for (int j = 0; j <= k; ++j) {
      if (j > 0) binom = binom * (k - j + 1) / j;
      out[j] += cs[k] * binom * std::pow(-mid, k - j) / std::pow(half, k);
    }
  }
  return out;
}

BraggKleeman fitBraggKleeman(const std::vector<double>& energyMeV,
                             const std::vector<double>& range) {
  const auto c = fitLogPolynomial(energyMeV, range, 1);
  return BraggKleeman{std::exp(c[0]), c[1]};
}

}  // namespace penumbra::proton
