// Projected L-BFGS on small hand-checkable problems (CPU SpMV engine): closed-form optima of
// diagonal dose matrices (including a spot clamped to 0), the gradient against finite
// differences, monotone decrease at every iteration, cancel keeping the best weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "optimise/optimise.hpp"
#include "optimise_test_support.hpp"

namespace penumbra::optimise {
namespace {

spmv::SpmvOptions cpuOptions() {
  spmv::SpmvOptions o;
  o.backend = Backend::Cpu;
  return o;
}

OptimiserOptions tightOptions() {
  OptimiserOptions o;
  o.maxIterations = 500;
  o.relativeDecrease = 0;  // run to the projected-gradient / rounding stop
  o.projectedGradient = 1e-13;
  return o;
}

// f = 1/5 sum_{v<5} (d_v - 2)^2 + 4 d_3 + 0.2 d_4 + (d_5 - 3)^2 + 3 max(d_5 - 2, 0)^2, d = diag(a)
// w. Stationarity per voxel (each spot drives one voxel):
//   v = 0, 1, 2: d = 2                    -> w = 2 / a
//   v = 3: (2/5)(d - 2) + 4 = 0  -> d = -8 -> unconstrained w = -2 < 0: clamped to w = 0
//   v = 4: (2/5)(d - 2) + 0.2 = 0 -> d = 1.5
//   v = 5: 2 (d - 3) + 6 (d - 2) = 0 -> d = 2.25 (above the max level: the overdose term is active)
TEST(OptimiseDiagonal, ClosedFormOptimumWithClampToZero) {
  const std::vector<float> a{0.5f, 1.f, 2.f, 4.f, 1.f, 2.f};
  const spmv::SpmvEngine engine(test::diagonalCsr(a), cpuOptions());
  PlanObjective obj({targetObjective("PTV", test::range(0, 5), 2.0),
                     organAtRiskObjective("OAR-mean-3", {3}, 0, 0, 4.0),
                     organAtRiskObjective("OAR-mean-4", {4}, 0, 0, 0.2),
                     targetObjective("boost", {5}, 3.0),
                     organAtRiskObjective("OAR-max-5", {5}, 2.0, 3.0)});
  const OptimiseResult res =
      optimiseSpotWeights(engine, obj, std::vector<double>(6, 1.0), tightOptions());
  const std::vector<double> expected{4.0, 2.0, 1.0, 0.0, 1.5, 1.125};
  ASSERT_EQ(res.weights.size(), expected.size());
  // A line search on f can place the optimum only to ~sqrt(machine epsilon) relative: closer, the
  // decrease (w - w*)^2 is below the rounding of f itself. So 1e-7, not 1e-12.
  for (std::size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(res.weights[i], expected[i], 1e-7 * std::max(1.0, expected[i])) << "spot " << i;
  EXPECT_EQ(res.weights[3], 0.0) << "the projection must clamp exactly to 0";
  // f at the optimum: 1/5 (4 * 0 + (0 - 2)^2) + 0.2 * 1.5 + 1/5 (1.5 - 2)^2 ... written out:
  const double fStar = (4.0 + 0.25) / 5.0 + 0.2 * 1.5 + 0.75 * 0.75 + 3 * 0.25 * 0.25;
  EXPECT_NEAR(res.objective, fStar, 1e-12);
  EXPECT_NE(res.state, OptimiseState::Stopped);
  EXPECT_EQ(res.backend, Backend::Cpu);
}

// Min-dose term: (d - 1)^2 + (d - 1.5)^2 below 1.5 -> d = 1.25, w = 0.625 with a = 2.
TEST(OptimiseDiagonal, MinDoseTerm) {
  const spmv::SpmvEngine engine(test::diagonalCsr({2.f}), cpuOptions());
  PlanObjective obj({targetObjective("PTV", {0}, 1.0, 1.0, 1.5, 1.0)});
  const OptimiseResult res = optimiseSpotWeights(engine, obj, {3.0}, tightOptions());
  EXPECT_NEAR(res.weights[0], 0.625, 1e-10);
  EXPECT_NEAR(res.objective, 2 * 0.25 * 0.25, 1e-14);
}

PlanObjective randomProblemObjective(std::int64_t rows) {
  const std::int64_t half = rows / 2;
  return PlanObjective({targetObjective("PTV", test::range(0, half), 2.0, 1.0, 1.9, 5.0, 2.1, 5.0),
                        organAtRiskObjective("OAR", test::range(half / 2, rows), 0.8, 2.0, 0.3)});
}

TEST(OptimiseObjective, GradientMatchesFiniteDifferences) {
  const std::int64_t rows = 200, cols = 40;
  const spmv::SpmvEngine engine(test::randomDoseCsr(rows, cols, 0.2, 7), cpuOptions());
  const PlanObjective obj = randomProblemObjective(rows);
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.0, 0.5);
  std::vector<double> w(cols);
  for (double& x : w) x = u(rng);
  std::vector<double> d, r, g;
  engine.multiply(spmv::Product::D, w, d);
  const double f = obj.evaluate(d, &r);
  engine.multiply(spmv::Product::Dt, r, g);
  ASSERT_GT(f, 0);
  double gmax = 0;
  for (double x : g) gmax = std::max(gmax, std::abs(x));
  ASSERT_GT(gmax, 0);
  const double h = 1e-5;
  for (std::int64_t i = 0; i < cols; ++i) {
    std::vector<double> wp = w, wm = w, dp, dm;
    wp[std::size_t(i)] += h;
    wm[std::size_t(i)] -= h;
    engine.multiply(spmv::Product::D, wp, dp);
    engine.multiply(spmv::Product::D, wm, dm);
    const double fd = (obj.evaluate(dp) - obj.evaluate(dm)) / (2 * h);
    EXPECT_NEAR(fd, g[std::size_t(i)], 1e-6 * std::max(std::abs(g[std::size_t(i)]), gmax))
        << "spot " << i;
  }
  // The curvature along a dose direction q is the derivative of r.q along q (central difference
  // of the residual: exact on each quadratic piece when the step crosses no kink).
  std::vector<double> q(std::size_t(rows), 0.0);
  for (std::size_t v = 0; v < q.size(); ++v) q[v] = u(rng) - 0.25;
  const double t = 1e-6;
  std::vector<double> dp = d, dm = d, rp, rm;
  for (std::size_t v = 0; v < q.size(); ++v) dp[v] += t * q[v], dm[v] -= t * q[v];
  obj.evaluate(dp, &rp);
  obj.evaluate(dm, &rm);
  double second = 0;
  for (std::size_t v = 0; v < q.size(); ++v) second += (rp[v] - rm[v]) * q[v] / (2 * t);
  ASSERT_GT(obj.curvature(d, q), 0);
  EXPECT_NEAR(second, obj.curvature(d, q), 1e-6 * obj.curvature(d, q));
}

TEST(OptimiseSolver, ObjectiveNeverIncreasesAndReachesKkt) {
  const std::int64_t rows = 400, cols = 80;
  const spmv::SpmvEngine engine(test::randomDoseCsr(rows, cols, 0.15, 3), cpuOptions());
  const PlanObjective obj = randomProblemObjective(rows);
  OptimiserOptions opt = tightOptions();
  opt.maxIterations = 300;
  int callbacks = 0;
  double lastTime = -1;
  const OptimiseResult res = optimiseSpotWeights(engine, obj, std::vector<double>(cols, 1.0), opt,
                                                 {}, [&](const IterationRecord& rec) {
                                                   EXPECT_EQ(rec.iteration, callbacks);
                                                   EXPECT_GE(rec.elapsedSeconds, lastTime);
                                                   lastTime = rec.elapsedSeconds;
                                                   ++callbacks;
                                                 });
  ASSERT_EQ(int(res.history.size()), res.iterations + 1);
  EXPECT_EQ(callbacks, res.iterations + 1);
  EXPECT_GT(res.iterations, 5);
  for (std::size_t k = 1; k < res.history.size(); ++k)
    ASSERT_LE(res.history[k].objective, res.history[k - 1].objective) << "iteration " << k;
  EXPECT_LT(res.objective, 0.9 * res.initialObjective);  // conflicting goals: f* is far from 0
  // The returned dose is D w of the returned weights, and f(dose) the returned objective.
  std::vector<double> d, r, g;
  engine.multiply(spmv::Product::D, res.weights, d);
  ASSERT_EQ(d, res.dose);
  EXPECT_EQ(obj.evaluate(d, &r), res.objective);
  // KKT for w >= 0: g_i ~ 0 where w_i > 0, g_i >= 0 where w_i = 0.
  engine.multiply(spmv::Product::Dt, r, g);
  double gmax = 0;
  for (double x : g) gmax = std::max(gmax, std::abs(x));
  int zeros = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    ASSERT_GE(res.weights[i], 0.0);
    if (res.weights[i] > 0) {
      EXPECT_LT(std::abs(g[i]), 1e-6) << "spot " << i;
    } else {
      EXPECT_GT(g[i], -1e-6) << "spot " << i;
      ++zeros;
    }
  }
  std::printf("random 400x80: %d iterations, f %.6g -> %.6g, %d spots at 0, %s\n", res.iterations,
              res.initialObjective, res.objective, zeros, res.stopReason.c_str());
}

TEST(OptimiseSolver, CancelKeepsBestWeights) {
  const std::int64_t rows = 400, cols = 80;
  const spmv::SpmvEngine engine(test::randomDoseCsr(rows, cols, 0.15, 5), cpuOptions());
  const PlanObjective obj = randomProblemObjective(rows);
  CancelToken cancel;
  const JobControl job{nullptr, &cancel};
  const OptimiseResult res = optimiseSpotWeights(engine, obj, std::vector<double>(cols, 1.0), {},
                                                 job, [&](const IterationRecord& rec) {
                                                   if (rec.iteration == 3) cancel.requestCancel();
                                                 });
  EXPECT_EQ(res.state, OptimiseState::Stopped);
  EXPECT_EQ(res.iterations, 3);
  double best = res.history.front().objective;
  for (const auto& rec : res.history) best = std::min(best, rec.objective);
  EXPECT_EQ(res.objective, best);
  std::vector<double> d;
  engine.multiply(spmv::Product::D, res.weights, d);
  EXPECT_EQ(obj.evaluate(d), res.objective);
}

TEST(OptimiseSolver, CallbackCarriesTheIterateWhenAsked) {
  const std::int64_t rows = 400, cols = 80;
  const spmv::SpmvEngine engine(test::randomDoseCsr(rows, cols, 0.15, 7), cpuOptions());
  const PlanObjective obj = randomProblemObjective(rows);
  OptimiserOptions opt;
  opt.maxIterations = 8;
  opt.iterateIntervalSeconds = 0;  // every iteration
  std::vector<double> lastWeights, lastDose;
  int withIterate = 0;
  const OptimiseResult res = optimiseSpotWeights(
      engine, obj, std::vector<double>(cols, 1.0), opt, {}, [&](const IterationRecord& rec) {
        ASSERT_TRUE(rec.weights && rec.dose);
        std::vector<double> d;
        engine.multiply(spmv::Product::D, *rec.weights, d);
        EXPECT_EQ(d, *rec.dose);
        EXPECT_EQ(obj.evaluate(d), rec.objective);
        lastWeights = *rec.weights;
        lastDose = *rec.dose;
        ++withIterate;
      });
  EXPECT_EQ(withIterate, res.iterations + 1);
  EXPECT_EQ(lastWeights, res.weights);
  EXPECT_EQ(lastDose, res.dose);
  // Not asked: no iterate (the GPU would download two vectors per iteration for nothing).
  opt.iterateIntervalSeconds = -1;
  optimiseSpotWeights(engine, obj, std::vector<double>(cols, 1.0), opt, {},
                      [&](const IterationRecord& rec) { EXPECT_FALSE(rec.weights || rec.dose); });
}

TEST(OptimiseSolver, RejectsInconsistentInput) {
  const spmv::SpmvEngine engine(test::diagonalCsr({1.f, 2.f}), cpuOptions());
  const PlanObjective obj({targetObjective("PTV", {0, 1}, 2.0)});
  EXPECT_THROW(optimiseSpotWeights(engine, obj, {1.0}), Error);
  EXPECT_THROW(
      optimiseSpotWeights(engine, PlanObjective({targetObjective("PTV", {0, 2}, 2.0)}), {1.0, 1.0}),
      Error);
  EXPECT_THROW(
      optimiseSpotWeights(engine, PlanObjective({targetObjective("PTV", {}, 2.0)}), {1.0, 1.0}),
      Error);
}

TEST(OptimiseStatistics, D95FromVoxelDoses) {
  std::vector<double> dose(100);
  for (std::size_t i = 0; i < dose.size(); ++i) dose[i] = double(i + 1);  // 1 .. 100 Gy
  const auto st = voxelDoseStatistics(dose, test::range(0, 100));
  EXPECT_EQ(st.d95Gy, 6.0);  // voxels 6..100 (95 of them) receive >= 6 Gy
  EXPECT_EQ(st.maxGy, 100.0);
  EXPECT_EQ(st.minGy, 1.0);
  EXPECT_DOUBLE_EQ(st.meanGy, 50.5);
}

}  // namespace
}  // namespace penumbra::optimise
