// Robust optimisation on the BOXPHANTOM plan (issue 16, item 3's test): per-scenario dose
// matrices from the proton engine (CPU), their memory check and cancel, and the claim:
// under range +-3.5 % and setup +-3 mm scenarios the composite-worst-case plan's worst target
// D95 is higher than the nominally optimised plan's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "optimise/robust_optimise.hpp"
#include "robust/robust_matrices.hpp"
#include "robust/scenario.hpp"
#include "test_robust_problem.hpp"

namespace penumbra::optimise {
namespace {

robust::ScenarioMatrixOptions cpuProducts() {
  robust::ScenarioMatrixOptions o;
  o.spmv.backend = Backend::Cpu;
  return o;
}

double minD95(const std::vector<VoxelDoseStatistics>& st) {
  double m = st.at(0).d95Gy;
  for (const auto& s : st) m = std::min(m, s.d95Gy);
  return m;
}

TEST(RobustOptimiseBoxPhantom, RobustPlanHasTheBetterWorstCaseTargetD95) {
  // An 8 mm dose grid (target 8^3 voxels, 2.2e5 rows, 7.7e6 entries per scenario) and 40
  // iterations keep the test near 30 s on 2 cores; at 6 mm and 150 iterations it took 95 s and
  // gave the same verdict (worst D95 1.67 -> 1.86 Gy).
  const test::RobustBoxProblem p = test::robustBoxProblem(8.0);
  robust::ScenarioOptions so;  // +-3.5 %, +-3 mm along L, P, S
  so.combine = false;          // 1 + 2 + 6 = 9 scenarios
  const std::vector<robust::Scenario> scenarios = robust::makeScenarios(so);
  ASSERT_EQ(scenarios.size(), 9u);
  ASSERT_TRUE(scenarios[0].isNominal());
  const robust::ScenarioMatrices set =
      robust::buildScenarioMatrices(p.plan, scenarios, cpuProducts());
  ASSERT_EQ(set.spmv.size(), 9u);
  // The memory rule's first entry estimate is of the right size (a best guess: the exact
  // check follows the first matrix).
  const double ratio = set.estimate.entriesPerScenario / double(set.entries[0]);
  std::printf("entries: estimated %.4g, built %lld (ratio %.2f); built in %.1f s\n",
              set.estimate.entriesPerScenario, (long long)set.entries[0], ratio,
              set.elapsedMs / 1000);
  EXPECT_GT(ratio, 0.7);
  EXPECT_LT(ratio, 1.5);
  const auto engines = set.engines();
  const std::vector<double> w0 = planWeights(p.plan.beams);

  OptimiserOptions o;
  o.maxIterations = 40;  // the same budget for both plans
  const OptimiseResult nominal = optimiseSpotWeights(*engines[0], p.objective, w0, o);
  RobustOptions ro;
  ro.optimiser = o;
  const RobustOptimiseResult robustPlan = optimiseRobust(engines, p.objective, w0, ro);

  const auto nominalStats = scenarioStatistics(engines, nominal.weights, p.targetVoxels);
  const auto robustStats = scenarioStatistics(engines, robustPlan.weights, p.targetVoxels);
  std::printf("target D95 [Gy] per scenario (prescription %.2f Gy):\n", p.rx);
  for (std::size_t s = 0; s < scenarios.size(); ++s)
    std::printf("  %-22s nominal plan %.4f   robust plan %.4f\n", scenarios[s].name.c_str(),
                nominalStats[s].d95Gy, robustStats[s].d95Gy);
  std::printf(
      "worst case: nominal plan %.4f, robust plan %.4f (%d iterations, %d rounds: %s; nominal %d: "
      "%s)\n",
      minD95(nominalStats), minD95(robustStats), robustPlan.iterations, robustPlan.rounds,
      robustPlan.stopReason.c_str(), nominal.iterations, nominal.stopReason.c_str());

  // The nominal plan is a good nominal plan (near the prescription where it was planned) ...
  EXPECT_GT(nominalStats[0].d95Gy, 0.95 * p.rx);
  // ... and the robust plan holds the target better in its worst scenario: the test
  // (measured: 1.67 -> 1.81 Gy, the nominal plan's worst being range +3.5 %).
  EXPECT_GT(minD95(robustStats), minD95(nominalStats) + 0.02 * p.rx);
  // It is the minimax plan: its worst scenario objective is the lower one.
  double nominalWorst = 0;
  for (const auto& d : scenarioDoses(engines, nominal.weights))
    nominalWorst = std::max(nominalWorst, p.objective.evaluate(d));
  EXPECT_LT(robustPlan.objective, nominalWorst);
  EXPECT_NE(robustPlan.state, OptimiseState::Stopped);
}

TEST(RobustOptimiseMatrices, MemoryRefusalNamesTheSizesAndWhatFits) {
  const test::RobustBoxProblem p = test::robustBoxProblem(6.0);
  robust::ScenarioMatrixOptions o = cpuProducts();
  const robust::ScenarioMatrixEstimate full = robust::estimateScenarioMatrices(p.plan, 21, o);
  EXPECT_GT(full.hostBytes, 21 * 12.0 * full.entriesPerScenario);  // D and D^T, 6 B per entry each
  EXPECT_FALSE(full.onDevice);
  o.hostLimitBytes = full.hostBytes / 3;  // a lowered limit
  const robust::ScenarioMatrixEstimate limited = robust::estimateScenarioMatrices(p.plan, 21, o);
  std::string message;
  try {
    robust::refuseIfTooBig(limited);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    message = e.message();
  }
  std::printf("%s\n", message.c_str());
  ASSERT_FALSE(message.empty()) << "no refusal";
  EXPECT_EQ(message.rfind("21 scenario matrices need " + formatBytes(full.hostBytes) +
                              " of host memory, " + formatBytes(o.hostLimitBytes) + " available",
                          0),
            0u)
      << message;
  // The remedies it names do fit: the scenario count, and the coarser grid.
  const auto at = message.find("use at most ");
  ASSERT_NE(at, std::string::npos) << message;
  const int fit = std::stoi(message.substr(at + 12));
  EXPECT_GE(fit, 1);
  EXPECT_LT(fit, 21);
  EXPECT_LE(robust::estimateScenarioMatrices(p.plan, std::size_t(fit), o).hostBytes,
            o.hostLimitBytes);
  EXPECT_GT(robust::estimateScenarioMatrices(p.plan, std::size_t(fit + 1), o).hostBytes,
            o.hostLimitBytes);
  const auto grid = message.find("dose grid of >= ");
  ASSERT_NE(grid, std::string::npos) << message;
  const double coarser = std::stod(message.substr(grid + 16));
  EXPECT_GT(coarser, 6.0);
  EXPECT_LE(robust::estimateScenarioMatrices(test::robustBoxProblem(coarser).plan, 21, o).hostBytes,
            o.hostLimitBytes)
      << "the suggested " << coarser << " mm grid does not fit either";
  // The build refuses before it builds anything (no progress reported, at once).
  struct Count : ProgressSink {
    int reports = 0;
    void report(double, std::string_view) override { ++reports; }
  } count;
  JobControl job;
  job.progress = &count;
  robust::ScenarioOptions so;
  EXPECT_THROW(robust::buildScenarioMatrices(p.plan, robust::makeScenarios(so), o, job), Error);
  EXPECT_EQ(count.reports, 0);
}

TEST(RobustOptimiseMatrices, ChecksAgainWithTheFirstMatrixTrueSize) {
  // At 8 mm the first estimate of BOXPHANTOM's entries is ~10 % low (a best guess): a limit just
  // above it passes the first check, and the true size of the first matrix must stop the build
  // before the second.
  const test::RobustBoxProblem p = test::robustBoxProblem(8.0);
  robust::ScenarioOptions so;
  so.combine = false;
  const std::vector<robust::Scenario> all = robust::makeScenarios(so);
  const std::vector<robust::Scenario> three{all[0], all[1], all[2]};
  robust::ScenarioMatrixOptions o = cpuProducts();
  const robust::ScenarioMatrixEstimate first = robust::estimateScenarioMatrices(p.plan, 3, o);
  o.hostLimitBytes = first.hostBytes * 1.02;
  struct Stages : ProgressSink {
    std::vector<std::string> seen;
    void report(double, std::string_view stage) override { seen.emplace_back(stage); }
  } stages;
  JobControl job;
  job.progress = &stages;
  std::string message;
  try {
    robust::buildScenarioMatrices(p.plan, three, o, job);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    message = e.message();
  }
  ASSERT_FALSE(message.empty()) << "the set was built: the first matrix's size was not checked";
  std::printf("%s\n", message.c_str());
  EXPECT_EQ(message.rfind("3 scenario matrices need ", 0), 0u) << message;
  EXPECT_NE(message.find("from the first matrix"), std::string::npos) << message;
  ASSERT_FALSE(stages.seen.empty());
  for (const std::string& s : stages.seen) EXPECT_EQ(s.rfind("scenario matrix 1 of 3", 0), 0u) << s;
}

TEST(RobustOptimiseMatrices, CancelBetweenScenariosAndProgressPerScenario) {
  const test::RobustBoxProblem p = test::robustBoxProblem(12.0);  // coarse: a cheap build
  robust::ScenarioOptions so;
  so.rangePercent = 0;
  const std::vector<robust::Scenario> scenarios = robust::makeScenarios(so);  // nominal + 6 shifts
  // Cancel once the second scenario's build reports.
  struct CancelAtSecond : ProgressSink {
    CancelToken* cancel = nullptr;
    std::vector<std::string> stages;
    void report(double, std::string_view stage) override {
      stages.emplace_back(stage);
      if (stage.rfind("scenario matrix 2 of 7", 0) == 0) cancel->requestCancel();
    }
  } sink;
  CancelToken cancel;
  sink.cancel = &cancel;
  JobControl job{&sink, &cancel};
  bool cancelled = false;
  try {
    robust::buildScenarioMatrices(p.plan, scenarios, cpuProducts(), job);
  } catch (const CancelledError&) {
    cancelled = true;
  }
  EXPECT_TRUE(cancelled);
  ASSERT_FALSE(sink.stages.empty());
  EXPECT_EQ(sink.stages.front().rfind("scenario matrix 1 of 7", 0), 0u) << sink.stages.front();
  for (const std::string& s : sink.stages)
    EXPECT_EQ(s.find("scenario matrix 3"), std::string::npos) << s;
  // Without a cancel: one engine per scenario, each a different matrix of the same shape.
  const robust::ScenarioMatrices set =
      robust::buildScenarioMatrices(p.plan, {scenarios[0], scenarios[1]}, cpuProducts());
  ASSERT_EQ(set.spmv.size(), 2u);
  const spmv::HalfCsr &a = set.spmv[0]->matrix(spmv::Product::D),
                      &b = set.spmv[1]->matrix(spmv::Product::D);
  EXPECT_EQ(a.rows, b.rows);
  EXPECT_EQ(a.cols, b.cols);
  EXPECT_GT(a.nnz(), 0);
  EXPECT_TRUE(a.colIdx != b.colIdx || a.values != b.values)
      << "the shift scenario's matrix is the nominal one";
}

}  // namespace
}  // namespace penumbra::optimise
