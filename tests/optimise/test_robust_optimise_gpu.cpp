// Robust optimisation with the products on the GPU against the CPU engines (the loop stays on
// the host in both): the same iterations, objectives within 1e-9 relative (the products agree
// but for summation order), and the per-scenario matrices built on the GPU having the CPU
// build's structure. Skips without a usable GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "core/device.hpp"
#include "core/error.hpp"
#include "optimise/robust_optimise.hpp"
#include "optimise_test_support.hpp"
#include "robust/robust_matrices.hpp"
#include "test_robust_problem.hpp"
#include "gpu_test_support.hpp"

namespace penumbra::optimise {
namespace {

spmv::SpmvOptions on(Backend b) {
  spmv::SpmvOptions o;
  o.backend = b;
  return o;
}

std::vector<const spmv::SpmvEngine*> pointers(
    const std::vector<std::unique_ptr<spmv::SpmvEngine>>& e) {
  std::vector<const spmv::SpmvEngine*> p;
  for (const auto& x : e) p.push_back(x.get());
  return p;
}

void expectSameIterations(const RobustOptimiseResult& cpu, const RobustOptimiseResult& gpu,
                          const char* what) {
  ASSERT_EQ(gpu.iterations, cpu.iterations) << what;
  ASSERT_EQ(gpu.history.size(), cpu.history.size()) << what;
  for (std::size_t k = 0; k < cpu.history.size(); ++k)
    EXPECT_NEAR(gpu.history[k].objective, cpu.history[k].objective,
                1e-9 * std::abs(cpu.history[k].objective))
        << what << ", iteration " << k;
  EXPECT_NEAR(gpu.objective, cpu.objective, 1e-9 * std::abs(cpu.objective)) << what;
  for (std::size_t s = 0; s < cpu.scenarioObjectives.size(); ++s)
    EXPECT_NEAR(gpu.scenarioObjectives[s], cpu.scenarioObjectives[s],
                1e-9 * cpu.scenarioObjectives[s])
        << what;
}

TEST(RobustOptimiseGpu, GpuProductsFollowTheCpuProducts) {
  REQUIRE_GPU();
  const std::int64_t rows = 6000, cols = 500;
  std::vector<std::unique_ptr<spmv::SpmvEngine>> cpu, gpu;
  for (std::uint32_t s = 0; s < 4; ++s) {
    const spmv::HalfCsr m = test::randomDoseCsr(rows, cols, 0.02, 40 + s);
    cpu.push_back(std::make_unique<spmv::SpmvEngine>(m, on(Backend::Cpu)));
    gpu.push_back(std::make_unique<spmv::SpmvEngine>(m, on(Backend::Cuda)));
    ASSERT_EQ(gpu.back()->backend(), Backend::Cuda);
  }
  const PlanObjective obj(
      {targetObjective("PTV", test::range(0, rows / 2), 2.0, 1.0, 1.9, 10.0, 2.1, 10.0),
       organAtRiskObjective("OAR", test::range(rows / 3, rows), 1.0, 2.0, 0.5)});
  RobustOptions ro;
  ro.optimiser.maxIterations = 12;  // a few in each of the three rounds
  ro.optimiser.relativeDecrease = 0;
  ro.optimiser.projectedGradient = 0;
  const std::vector<double> w0(std::size_t(cols), 1.0);
  for (RobustMode mode : {RobustMode::CompositeWorstCase, RobustMode::ExpectedValue}) {
    ro.mode = mode;
    const RobustOptimiseResult a = optimiseRobust(pointers(cpu), obj, w0, ro);
    const RobustOptimiseResult b = optimiseRobust(pointers(gpu), obj, w0, ro);
    EXPECT_EQ(b.backend, Backend::Cuda);
    EXPECT_EQ(a.iterations, 12);
    expectSameIterations(a, b, toString(mode));
  }
}

TEST(RobustOptimiseGpu, ScenarioMatricesBuiltOnTheGpu) {
  REQUIRE_GPU();
  test::RobustBoxProblem p = test::robustBoxProblem(6.0);
  robust::ScenarioOptions so;
  so.combine = false;
  so.rangePercent = 3.5;
  const std::vector<robust::Scenario> all = robust::makeScenarios(so);
  const std::vector<robust::Scenario> scenarios{all[0], all[1], all[2],
                                                all[3]};  // nominal, 2 range, 1 shift
  robust::ScenarioMatrixOptions cpuOptions, gpuOptions;
  cpuOptions.spmv.backend = Backend::Cpu;
  gpuOptions.spmv.backend = Backend::Cuda;
  const robust::ScenarioMatrices cpu = robust::buildScenarioMatrices(p.plan, scenarios, cpuOptions);
  p.plan.backend = Backend::Cuda;
  const robust::ScenarioMatrices gpu = robust::buildScenarioMatrices(p.plan, scenarios, gpuOptions);
  EXPECT_EQ(gpu.buildBackend, Backend::Cuda);
  EXPECT_EQ(gpu.spmvBackend, Backend::Cuda);
  EXPECT_TRUE(gpu.estimate.onDevice);
  EXPECT_TRUE(gpu.deviceResident) << "built and multiplied on the GPU, the matrices stay there";
  EXPECT_FALSE(gpu.spmv[0]->hasHostMatrices());
  EXPECT_FALSE(cpu.deviceResident);
  // The memory check counts what the build keeps: no host copy of D or D^T when they stay on
  // the GPU (before, it counted both, which could refuse a set that fits).
  const robust::ScenarioMatrixEstimate resident =
      robust::estimateScenarioMatrices(p.plan, scenarios.size(), gpuOptions);
  robust::ScenarioMatrixOptions keep = gpuOptions;
  keep.keepHostMatrices = true;
  const robust::ScenarioMatrixEstimate copies =
      robust::estimateScenarioMatrices(p.plan, scenarios.size(), keep);
  EXPECT_TRUE(resident.deviceResident);
  EXPECT_FALSE(copies.deviceResident);
  EXPECT_GE(copies.hostBytes - resident.hostBytes,
            double(scenarios.size()) * 12.0 * resident.entriesPerScenario)
      << resident.describe() << " / " << copies.describe();
  std::printf("built 4 scenario matrices: CPU %.0f ms, GPU %.0f ms\n", cpu.elapsedMs,
              gpu.elapsedMs);
  // design.md: the GPU build has the CPU's structure; a value may differ by one fp16 step.
  EXPECT_EQ(gpu.entries, cpu.entries);
  RobustOptions ro;
  ro.optimiser.maxIterations = 6;
  ro.optimiser.relativeDecrease = 0;
  ro.optimiser.projectedGradient = 0;
  const std::vector<double> w0 = planWeights(p.plan.beams);
  const RobustOptimiseResult a = optimiseRobust(cpu.engines(), p.objective, w0, ro);
  const RobustOptimiseResult b = optimiseRobust(gpu.engines(), p.objective, w0, ro);
  EXPECT_NEAR(b.objective, a.objective, 1e-4 * a.objective);
}

TEST(RobustOptimiseGpu, TooLittleGpuMemoryFallsBackUnderAutoAndIsRefusedUnderCuda) {
  REQUIRE_GPU();
  const test::RobustBoxProblem p = test::robustBoxProblem(12.0);
  const std::vector<robust::Scenario> two{robust::makeScenarios()[0], robust::makeScenarios()[1]};
  robust::ScenarioMatrixOptions o;
  o.deviceLimitBytes = 1e6;  // a lowered limit: 1 MB of GPU memory
  o.spmv.backend = Backend::Cuda;
  const robust::ScenarioMatrixEstimate strict = robust::estimateScenarioMatrices(p.plan, 2, o);
  EXPECT_TRUE(strict.onDevice);
  std::string message;
  try {
    robust::refuseIfTooBig(strict);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    message = e.message();
  }
  EXPECT_NE(message.find("of GPU memory"), std::string::npos) << message;
  EXPECT_NE(message.find("or the CPU for the products"), std::string::npos) << message;
  o.spmv.backend = Backend::Auto;
  const robust::ScenarioMatrixEstimate fallback = robust::estimateScenarioMatrices(p.plan, 2, o);
  EXPECT_FALSE(fallback.onDevice);
  EXPECT_FALSE(fallback.fallback.empty());
  EXPECT_NO_THROW(robust::refuseIfTooBig(fallback));
  const robust::ScenarioMatrices set = robust::buildScenarioMatrices(p.plan, two, o);
  EXPECT_EQ(set.spmvBackend, Backend::Cpu);
  ASSERT_FALSE(set.messages.empty());
  EXPECT_EQ(set.messages[0], fallback.fallback);
}

}  // namespace
}  // namespace penumbra::optimise
