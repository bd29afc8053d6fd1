// The optimiser's GPU loop (optimise/cuda) against the host loop on the CPU engine: the same
// iterations (objectives within 1e-9 relative after 20 iterations: the sums differ in order
// only), bitwise reproducible run to run, the iterates handed to the callback, cancel, and the
// BOXPHANTOM plan reaching the CPU optimiser's objective. Skips without a usable GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "boxphantom_problem.hpp"
#include "core/device.hpp"
#include "optimise/optimise.hpp"
#include "optimise_test_support.hpp"
#include "gpu_test_support.hpp"

namespace penumbra::optimise {
namespace {

spmv::SpmvOptions on(Backend b) {
  spmv::SpmvOptions o;
  o.backend = b;
  return o;
}

PlanObjective randomObjective(std::int64_t rows) {
  // Overlapping structures, every term type: the residual gathers several terms per voxel.
  return PlanObjective({targetObjective("PTV", test::range(0, rows / 2), 2.0, 1.0, 1.9, 10.0, 2.1, 10.0),
                        organAtRiskObjective("OAR", test::range(rows / 3, rows), 1.0, 2.0, 0.5)});
}

OptimiserOptions fixedIterations(int n) {
  OptimiserOptions o;
  o.maxIterations = n;
  o.relativeDecrease = 0;
  o.projectedGradient = 0;
  return o;
}

TEST(OptimiseCuda, GpuLoopFollowsTheCpuLoopAndIsBitwiseReproducible) {
  REQUIRE_GPU();
  const std::int64_t rows = 6000, cols = 700;
  const spmv::HalfCsr m = test::randomDoseCsr(rows, cols, 0.02, 11);
  const spmv::SpmvEngine cpu(m, on(Backend::Cpu)), gpu(m, on(Backend::Cuda));
  ASSERT_EQ(gpu.backend(), Backend::Cuda);
  const PlanObjective obj = randomObjective(rows);
  const OptimiserOptions opt = fixedIterations(20);
  const std::vector<double> w0(std::size_t(cols), 1.0);
  const OptimiseResult a = optimiseSpotWeights(cpu, obj, w0, opt);
  const OptimiseResult b = optimiseSpotWeights(gpu, obj, w0, opt);
  const OptimiseResult c = optimiseSpotWeights(gpu, obj, w0, opt);
  EXPECT_FALSE(a.loopOnGpu);
  EXPECT_TRUE(b.loopOnGpu);
  ASSERT_EQ(a.iterations, 20);
  ASSERT_EQ(b.iterations, 20);
  for (int k = 0; k <= 20; ++k)
    EXPECT_NEAR(b.history[std::size_t(k)].objective, a.history[std::size_t(k)].objective,
                1e-9 * std::abs(a.history[std::size_t(k)].objective))
        << "iteration " << k;
  EXPECT_LT(b.objective, 0.95 * b.initialObjective);  // it did optimise (conflicting goals: 5.32 -> 4.71)
  // Run to run: the same bits (deterministic reductions, reproducible SpMV).
  ASSERT_EQ(b.weights.size(), c.weights.size());
  EXPECT_EQ(std::memcmp(b.weights.data(), c.weights.data(), b.weights.size() * 8), 0);
  EXPECT_EQ(std::memcmp(b.dose.data(), c.dose.data(), b.dose.size() * 8), 0);
  EXPECT_EQ(b.objective, c.objective);
  // The returned dose is the product of the returned weights, and f its objective.
  std::vector<double> d;
  gpu.multiply(spmv::Product::D, b.weights, d);
  EXPECT_EQ(d, b.dose);
  EXPECT_NEAR(obj.evaluate(d), b.objective, 1e-12 * std::abs(b.objective));
}

TEST(OptimiseCuda, CallbackCarriesTheIterateAndCancelStops) {
  REQUIRE_GPU();
  const std::int64_t rows = 3000, cols = 300;
  const spmv::SpmvEngine gpu(test::randomDoseCsr(rows, cols, 0.03, 12), on(Backend::Cuda));
  const PlanObjective obj = randomObjective(rows);
  OptimiserOptions opt = fixedIterations(50);
  opt.iterateIntervalSeconds = 0;  // every iteration
  CancelToken cancel;
  const JobControl job{nullptr, &cancel};
  std::vector<double> lastWeights, lastDose;
  int seen = 0;
  const OptimiseResult res = optimiseSpotWeights(
      gpu, obj, std::vector<double>(std::size_t(cols), 1.0), opt, job, [&](const IterationRecord& rec) {
        ASSERT_TRUE(rec.weights && rec.dose) << "iteration " << rec.iteration;
        // The iterate's dose is D w and its objective the record's.
        std::vector<double> d;
        gpu.multiply(spmv::Product::D, *rec.weights, d);
        EXPECT_EQ(d, *rec.dose) << "iteration " << rec.iteration;
        EXPECT_NEAR(obj.evaluate(d), rec.objective, 1e-12 * std::abs(rec.objective));
        lastWeights = *rec.weights;
        lastDose = *rec.dose;
        if (++seen == 6) cancel.requestCancel();
      });
  EXPECT_EQ(res.state, OptimiseState::Stopped);
  EXPECT_EQ(res.iterations, 5);
  EXPECT_EQ(res.weights, lastWeights);
  EXPECT_EQ(res.dose, lastDose);
  for (const IterationRecord& rec : res.history) EXPECT_FALSE(rec.weights || rec.dose);
}

TEST(OptimiseCuda, BoxPhantomReachesTheCpuObjective) {
  REQUIRE_GPU();
  test::BoxPhantomProblem p = test::boxPhantomProblem();
  const spmv::SpmvEngine cpu(p.matrix, on(Backend::Cpu)), gpu(p.matrix, on(Backend::Cuda));
  OptimiserOptions opt;
  opt.maxIterations = 60;
  const std::vector<double> w0 = planWeights(p.request.beams);
  const OptimiseResult a = optimiseSpotWeights(cpu, p.objective, w0, opt);
  const OptimiseResult b = optimiseSpotWeights(gpu, p.objective, w0, opt);
  EXPECT_TRUE(b.loopOnGpu);
  EXPECT_LE(b.objective, a.objective * (1 + 1e-6));
  const VoxelDoseStatistics st = voxelDoseStatistics(b.dose, voxelsOfMask(p.target));
  EXPECT_GE(st.d95Gy, 0.95 * p.rx);
  EXPECT_LE(st.maxGy, 1.07 * p.rx);
  std::printf("BOXPHANTOM 6 mm: CPU loop f %.9g (%d it, %.3f s), GPU loop f %.9g (%d it, %.3f s)\n",
              a.objective, a.iterations, a.elapsedSeconds, b.objective, b.iterations,
              b.elapsedSeconds);
}

}  // namespace
}  // namespace penumbra::optimise
