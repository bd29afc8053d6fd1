// Gamma against closed forms and an independent brute-force search: the values the exact
// search must reproduce to within its tolerance (never below the true minimum).
#include <gtest/gtest.h>

#include <cmath>

#include "compare_test_support.hpp"

namespace penumbra::compare {
namespace {

using namespace compare::test;

constexpr double kTol = 1e-3;  // GammaCriteria::tolerance default

/// Every evaluated gamma within [lo, hi]; returns the number of evaluated points.
std::int64_t expectAllWithin(const CompareResult& r, double lo, double hi) {
  std::int64_t n = 0, bad = 0;
  for (float g : r.gamma.data) {
    if (std::isnan(g)) continue;
    ++n;
    if (!(g >= lo && g <= hi) && bad++ < 5) ADD_FAILURE() << "gamma " << g << " not in [" << lo << ", " << hi << "]";
  }
  EXPECT_EQ(bad, 0);
  return n;
}

TEST(GammaClosedForm, UniformDoseScaledByOnePlusEGivesEOverDd) {
  // Reference 2 Gy everywhere; evaluated 2 (1 + e) on another grid that covers it. Moving does
  // not change the dose, so gamma = e / DD exactly.
  const Grid gr = makeGrid(20, 18, 16, {2.5, 2.5, 2.5}, {0, 0, 0});
  const Grid ge = makeGrid(30, 30, 30, {2, 2, 2}, {-5, -5, -5});
  auto ref = sample(gr, [](Vec3) { return 2.0; });
  for (const double e : {0.015, 0.045}) {
    auto eval = sample(ge, [&](Vec3) { return 2.0 * (1 + e); });
    const CompareResult r = compareDoses(request(ref, eval, 3, 3));
    const double want = e / 0.03;
    // float storage of 2 (1 + e) moves gamma by up to 2e-6.
    const std::int64_t n = expectAllWithin(r, want - 1e-5, want + kTol + 1e-5);
    EXPECT_EQ(n, 20 * 18 * 16);
    EXPECT_EQ(r.gammaStats.evaluatedPoints, n);
    EXPECT_DOUBLE_EQ(r.gammaStats.passRatePercent, want <= 1 ? 100.0 : 0.0);
    EXPECT_NEAR(r.gammaStats.p50, want, r.gammaStats.binWidth + kTol);
    EXPECT_NEAR(r.gammaStats.mean, want, kTol);
    EXPECT_NEAR(r.differenceStats.meanGy, -2.0 * e, 1e-6);
    EXPECT_NEAR(r.differenceStats.sdGy, 0.0, 1e-5);
    EXPECT_NEAR(r.differenceStats.meanPercent, -100 * e, 1e-4);
    EXPECT_EQ(r.outsideEvaluated, 0);
  }
}

/// Gamma of a linear ramp of gradient g (Gy/mm) against itself shifted by s mm along the
/// gradient: min over the shift direction of d^2/DTA^2 + g^2 (d - s)^2 / DD^2, which is
/// s / sqrt(DTA^2 + (DD / g)^2).
double rampGamma(double s, double g, double dtaMm, double ddGy) {
  return std::fabs(s) / std::sqrt(dtaMm * dtaMm + (ddGy / g) * (ddGy / g));
}

struct RampCase {
  const char* name;
  Mat3 evalDirection;
};

TEST(GammaClosedForm, ShiftedLinearRampOnMismatchedAndRotatedGrids) {
  const Vec3 n{1.0 / 3, 2.0 / 3, 2.0 / 3};  // unit gradient direction, oblique to every axis
  const double g = 0.02;                    // Gy/mm
  const Grid gr = makeGrid(14, 12, 10, {2, 2.5, 3}, {10, 10, 10});
  const double c = std::cos(0.5), sn = std::sin(0.5);
  const RampCase cases[] = {
      {"axis-aligned", Mat3{}},
      {"rotated 0.5 rad about z", Mat3::fromColumns({c, sn, 0}, {-sn, c, 0}, {0, 0, 1})},
  };
  for (const RampCase& rc : cases) {
    // The evaluated grid, centred on the reference box, reaches at least 10 mm beyond it in
    // every direction, so every minimiser (s / 2 along n, at most 3.2 mm away) lies inside.
    const Grid ge = makeGrid(40, 44, 48, {1.7, 1.9, 1.3}, {0, 0, 0}, rc.evalDirection);
    Grid geo = ge;
    geo.origin = Vec3{23, 23.75, 23.5} - rc.evalDirection * Vec3{20 * 1.7, 22 * 1.9, 24 * 1.3};
    auto ramp = [&](double shift) {
      return [=](Vec3 p) { return 1.0 + g * (n.x * p.x + n.y * p.y + n.z * p.z - shift); };
    };
    auto ref = sample(gr, ramp(0));
    for (const double s : {3.0, 6.0, 0.9995 * std::sqrt(18.0), 1.0005 * std::sqrt(18.0)}) {
      auto eval = sample(geo, ramp(s));
      CompareRequest req = request(ref, eval, 3, 3);
      req.criteria.normalisation = Normalisation::Value;
      req.criteria.normalisationGy = 2.0;  // DD = 0.06 Gy, DD / g = 3 mm
      req.criteria.cutoffPercent = 0;
      const CompareResult r = compareDoses(req);
      const double want = rampGamma(s, g, 3, 0.06);
      SCOPED_TRACE(std::string(rc.name) + ", shift " + std::to_string(s));
      EXPECT_EQ(expectAllWithin(r, want - 1e-5, want + kTol + 1e-5), 14 * 12 * 10);
      // Pass/fail is decided exactly, also within the tolerance of 1.
      EXPECT_DOUBLE_EQ(r.gammaStats.passRatePercent, want <= 1 ? 100.0 : 0.0);
      EXPECT_EQ(r.gammaStats.depthLimitedPoints, 0);
    }
    // A maximum search distance of 1 mm: the minimiser (1.5 mm away) is out of reach, the best
    // point is 1 mm along n: gamma^2 = (1 + (1 - 3)^2) / 9.
    auto eval = sample(geo, ramp(3.0));
    CompareRequest req = request(ref, eval, 3, 3);
    req.criteria.normalisation = Normalisation::Value;
    req.criteria.normalisationGy = 2.0;
    req.criteria.maxSearchMm = 1.0;
    const CompareResult r = compareDoses(req);
    const double want = std::sqrt(5.0) / 3;
    EXPECT_GT(expectAllWithin(r, want - 1e-5, want + kTol + 1e-5), 0);
  }
}

/// The piecewise-linear profile through samples f[i] at x0 + i dx, at x.
double linearProfile(const std::vector<float>& f, double x0, double dx, double x) {
  double t = (x - x0) / dx;
  t = std::clamp(t, 0.0, double(f.size() - 1));
  const std::size_t i = std::min<std::size_t>(std::size_t(t), f.size() - 2);
  return f[i] + (t - double(i)) * (double(f[i + 1]) - f[i]);
}

TEST(GammaClosedForm, ShiftedGaussianAgreesWithABruteForceLineSearch) {
  // A dose that varies along x only: the minimum lies on the x line through the reference
  // point (moving in y or z only adds distance), and along x the evaluated dose is the
  // piecewise-linear interpolant of its samples. A search on steps of 1e-5 DTA along that line
  // is the independent answer.
  const double sigma = 8, x0 = 40, shift = 1.5, dta = 2;
  auto gauss = [&](double s) {
    return [=](Vec3 p) { return 2.0 * std::exp(-(p.x - x0 - s) * (p.x - x0 - s) / (2 * sigma * sigma)); };
  };
  const Grid gr = makeGrid(41, 3, 3, {2, 2, 2}, {0, 0, 0});
  const Grid ge = makeGrid(50, 4, 4, {1.7, 1.5, 1.5}, {-1, -0.5, -0.5});
  auto ref = sample(gr, gauss(0));
  auto eval = sample(ge, gauss(shift));
  std::vector<float> line(std::size_t(ge.dims[0]));
  for (int i = 0; i < ge.dims[0]; ++i) line[std::size_t(i)] = eval->at(i, 0, 0);
  for (const bool local : {false, true}) {
    CompareRequest req = request(ref, eval, 2, dta);
    req.criteria.local = local;
    const CompareResult r = compareDoses(req);
    int checked = 0;
    for (int i = 0; i < gr.dims[0]; ++i) {
      const float g = r.gamma.at(i, 1, 1);
      const double dr = ref->at(i, 1, 1);
      if (std::isnan(g)) {
        EXPECT_LT(dr, 0.1 * r.normalisationGy + 1e-6);
        continue;
      }
      const double xr = gr.indexToWorld({double(i), 1, 1}).x;
      const double dd = 0.02 * (local ? dr : r.normalisationGy);
      double best = 4.0;  // cap^2
      for (double d = -2 * dta; d <= 2 * dta; d += 1e-5 * dta) {
        const double x = xr + d;
        if (x < ge.origin.x - 1e-9 || x > ge.origin.x + 49 * 1.7 + 1e-9) continue;
        const double dv = (linearProfile(line, ge.origin.x, 1.7, x) - dr) / dd;
        best = std::min(best, d * d / (dta * dta) + dv * dv);
      }
      const double brute = std::sqrt(best);
      EXPECT_GE(g, brute - 2e-5) << "x = " << xr << (local ? " (local)" : " (global)");
      EXPECT_LE(g, brute + kTol + 1e-6) << "x = " << xr << (local ? " (local)" : " (global)");
      ++checked;
    }
    EXPECT_GT(checked, 12);
  }
}

TEST(GammaClosedForm, GammaIsCappedAndTheHistogramEndsThere) {
  const Grid gr = makeGrid(10, 10, 10, {3, 3, 3}, {0, 0, 0});
  auto ref = sample(gr, [](Vec3) { return 1.0; });
  auto eval = sample(gr, [](Vec3) { return 10.0; });
  CompareRequest req = request(ref, eval, 3, 3);
  req.criteria.gammaCap = 1.5;
  const CompareResult r = compareDoses(req);
  expectAllWithin(r, 1.5 - 1e-6, 1.5 + 1e-6);
  EXPECT_EQ(r.gammaStats.passedPoints, 0);
  EXPECT_EQ(r.gammaStats.histogram.back(), 1000);
  EXPECT_NEAR(r.gammaStats.p99, 1.5, r.gammaStats.binWidth);
}

}  // namespace
}  // namespace penumbra::compare
