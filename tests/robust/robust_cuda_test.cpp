// The robustness evaluation on the CUDA backend (gpu label; skips without a device): a shift
// scenario is the shifted plan's GPU dose bit for bit (whatever the engine's cache held), and
// every scenario's dose, so every reduction, matches the CPU reference within the proton
// engine's CUDA-vs-CPU tolerance (1e-3 of the maximum dose, tests/proton).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "proton/proton_dose.hpp"
#include "robust/robustness.hpp"
#include "robust_test_support.hpp"

namespace penumbra::robust {
namespace {

constexpr double kCudaTolerance = 1e-3;  // of the CPU's maximum dose, as tests/proton

double maxOf(const Volume<float>& v) {
  return v.data.empty() ? 0.0 : double(*std::max_element(v.data.begin(), v.data.end()));
}

/// Max |a - b| in units of `top` (b's maximum when 0); every voxel of a must be finite.
double relDiff(const Volume<float>& a, const Volume<float>& b, double top = 0) {
  EXPECT_EQ(a.data.size(), b.data.size());
  double worst = 0;
  for (std::size_t v = 0; v < a.data.size() && v < b.data.size(); ++v) {
    if (!std::isfinite(a.data[v])) return INFINITY;
    worst = std::max(worst, std::fabs(double(a.data[v]) - double(b.data[v])));
  }
  if (top <= 0) top = maxOf(b);
  return top > 0 ? worst / top : worst;
}

TEST(RobustCuda, ShiftScenarioIsTheShiftedPlanBitForBit) {
  ROBUST_REQUIRE_GPU();
  RobustnessRequest req = test::randomRequest(31, 32);
  req.plan.backend = Backend::Cuda;
  const Vec3 shift{-3, 0, 3};
  (void)proton::computeProtonDose(req.plan);  // the cache holds the nominal
  const proton::ProtonDoseResult scenario =
      proton::computeProtonDose(applyScenario(req.plan, Scenario{"s", 0, shift}));
  proton::releaseProtonGpuCache();
  proton::ProtonDoseRequest byHand = req.plan;
  for (auto& b : byHand.beams) b.isocenter = b.isocenter + shift;
  const proton::ProtonDoseResult moved = proton::computeProtonDose(byHand);
  ASSERT_EQ(scenario.backend, Backend::Cuda);
  ASSERT_EQ(scenario.dose.data.size(), moved.dose.data.size());
  EXPECT_EQ(0, std::memcmp(scenario.dose.data.data(), moved.dose.data.data(),
                           moved.dose.data.size() * sizeof(float)));
  EXPECT_GT(maxOf(moved.dose), 0.0);
}

TEST(RobustCuda, EvaluationMatchesTheCpuReference) {
  ROBUST_REQUIRE_GPU();
  RobustnessRequest req = test::randomRequest(1717, 40);
  ScenarioOptions o;
  o.combine = false;
  req.scenarios = makeScenarios(o);  // 9: both range values, six shifts
  const RobustnessResult cpu = evaluateRobustness(req);
  req.plan.backend = Backend::Cuda;
  // Poisoned start: whatever the cache holds from earlier tests, the evaluation must not see it.
  proton::releaseProtonGpuCache();
  const RobustnessResult gpu = evaluateRobustness(req);
  ASSERT_EQ(gpu.backend, Backend::Cuda);
  ASSERT_EQ(gpu.scenarios.size(), cpu.scenarios.size());
  EXPECT_GT(maxOf(cpu.nominal.dose), 0.0);
  EXPECT_LT(relDiff(gpu.nominal.dose, cpu.nominal.dose), kCudaTolerance);
  EXPECT_LT(relDiff(gpu.minimum.dose, cpu.minimum.dose), kCudaTolerance);
  EXPECT_LT(relDiff(gpu.maximum.dose, cpu.maximum.dose), kCudaTolerance);
  EXPECT_LT(relDiff(gpu.mean.dose, cpu.mean.dose), kCudaTolerance);
  EXPECT_LT(relDiff(gpu.worstCase.dose, cpu.worstCase.dose), kCudaTolerance);
  // The spread is a difference of two doses: twice the tolerance, of the dose maximum.
  EXPECT_LT(relDiff(gpu.spread.dose, cpu.spread.dose, maxOf(cpu.maximum.dose)), 2 * kCudaTolerance);
  // The table: the same rows, values within the dose tolerance plus one DVH bin (a voxel whose
  // dose crosses a bin edge moves a percentile by up to a bin).
  ASSERT_EQ(gpu.table.size(), cpu.table.size());
  const double top = maxOf(cpu.nominal.dose);
  for (std::size_t i = 0; i < cpu.table.size(); ++i) {
    const RobustnessRow &g = gpu.table[i], &c = cpu.table[i];
    EXPECT_EQ(g.structure, c.structure);
    EXPECT_EQ(g.metric, c.metric);
    const double tol = kCudaTolerance * top + cpu.structures[0].binWidthGy;
    EXPECT_NEAR(g.nominalGy, c.nominalGy, tol) << c.structure << " " << c.metric;
    EXPECT_NEAR(g.worstGy, c.worstGy, tol) << c.structure << " " << c.metric;
    EXPECT_NEAR(g.bestGy, c.bestGy, tol) << c.structure << " " << c.metric;
  }
}

}  // namespace
}  // namespace penumbra::robust
