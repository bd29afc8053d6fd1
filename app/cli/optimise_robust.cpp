// `penumbra-cli optimise --robust`: see optimise_robust.hpp.
#include "optimise_robust.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>

namespace penumbra::cli {

namespace {

int nominalIndex(const std::vector<robust::Scenario>& s) {
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s[i].isNominal()) return int(i);
  return 0;
}

double minD95(const std::vector<optimise::VoxelDoseStatistics>& st, std::size_t* at) {
  std::size_t k = 0;
  for (std::size_t s = 1; s < st.size(); ++s)
    if (st[s].d95Gy < st[k].d95Gy) k = s;
  if (at) *at = k;
  return st.empty() ? 0 : st[k].d95Gy;
}

}  // namespace

robust::ScenarioMatrices buildRobustMatrices(const proton::ProtonDoseRequest& plan,
                                             const std::vector<robust::Scenario>& scenarios) {
  robust::ScenarioMatrixOptions options;
  options.spmv.backend = plan.backend;
  const robust::ScenarioMatrixEstimate est =
      robust::estimateScenarioMatrices(plan, scenarios.size(), options);
  std::printf("robust: %s\n", est.describe().c_str());
  std::cout << std::flush;
  robust::ScenarioMatrices set = robust::buildScenarioMatrices(plan, scenarios, options);
  for (const std::string& m : set.messages) std::printf("note: %s\n", m.c_str());
  for (std::size_t s = 0; s < scenarios.size(); ++s)
    std::printf("  matrix %2zu %-28s %11lld entries  %7.2f s\n", s + 1, scenarios[s].name.c_str(),
                (long long)set.entries[s], set.buildMs[s] / 1000);
  std::printf("scenario matrices: %zu built on %s, products on %s (%s), %.1f s\n", scenarios.size(),
              toString(set.buildBackend), toString(set.spmvBackend), set.device.c_str(),
              set.elapsedMs / 1000);
  return set;
}

optimise::RobustOptimiseResult optimiseNominalAndRobust(
    const robust::ScenarioMatrices& set, const optimise::PlanObjective& objective,
    const std::vector<double>& w0, const std::vector<std::int64_t>& targetVoxels,
    optimise::RobustMode mode, const optimise::OptimiserOptions& options) {
  const std::vector<const spmv::SpmvEngine*> engines = set.engines();
  const int nominal = nominalIndex(set.scenarios);
  const optimise::OptimiseResult plain =
      optimise::optimiseSpotWeights(*engines[std::size_t(nominal)], objective, w0, options);
  std::printf("nominal optimisation: %s (%s) after %d iterations, %.2f s\n",
              optimise::toString(plain.state), plain.stopReason.c_str(), plain.iterations,
              plain.elapsedSeconds);
  optimise::RobustOptions ro;
  ro.mode = mode;
  ro.nominalScenario = nominal;
  ro.optimiser = options;
  const optimise::RobustOptimiseResult res = optimise::optimiseRobust(
      engines, objective, w0, ro, {}, [](const optimise::IterationRecord& r) {
        std::printf("  iter %4d  F %.6e  |pg| %.3e  step %.3g  %.3f s\n", r.iteration, r.objective,
                    r.projectedGradientNorm, r.step, r.elapsedSeconds);
      });
  std::printf(
      "robust optimisation (%s, %zu scenarios): %s (%s) after %d iterations in %d round(s), %.2f "
      "s, "
      "%.2f iterations/s on %s (%s)\n",
      optimise::toString(mode), engines.size(), optimise::toString(res.state),
      res.stopReason.c_str(), res.iterations, res.rounds, res.elapsedSeconds,
      res.iterationsPerSecond, toString(res.backend), res.device.c_str());

  const auto a = optimise::scenarioStatistics(engines, plain.weights, targetVoxels);
  const auto b = optimise::scenarioStatistics(engines, res.weights, targetVoxels);
  std::size_t nameWidth = 8;
  for (const auto& s : set.scenarios) nameWidth = std::max(nameWidth, s.name.size());
  std::printf("target D95 [Gy] per scenario (D_s w, %zu target voxels):\n  %-*s %12s %12s\n",
              targetVoxels.size(), int(nameWidth), "scenario", "nominal plan", "robust plan");
  for (std::size_t s = 0; s < engines.size(); ++s)
    std::printf("  %-*s %12.4f %12.4f\n", int(nameWidth), set.scenarios[s].name.c_str(), a[s].d95Gy,
                b[s].d95Gy);
  std::size_t wa = 0, wb = 0;
  const double da = minD95(a, &wa), db = minD95(b, &wb);
  std::printf("  %-*s %12.4f %12.4f   (nominal plan: %s; robust plan: %s)\n", int(nameWidth),
              "worst", da, db, set.scenarios[wa].name.c_str(), set.scenarios[wb].name.c_str());
  std::printf(
      "worst scenario objective: nominal plan %.6e, robust plan %.6e\n",
      [&] {
        double w = 0;
        for (const auto& d : optimise::scenarioDoses(engines, plain.weights))
          w = std::max(w, objective.evaluate(d));
        return w;
      }(),
      *std::max_element(res.scenarioObjectives.begin(), res.scenarioObjectives.end()));
  return res;
}

}  // namespace penumbra::cli
