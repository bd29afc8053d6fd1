#include "gui/optimise/robust_optimise_run.hpp"

#include <QWidget>  // plan_controller.hpp's QPointer<QWidget>
#include <chrono>
#include <numeric>

#include "robust/robust_matrices.hpp"

namespace penumbra::gui {

optimise::RobustOptimiseResult runRobustOptimisation(
    const proton::ProtonDoseRequest& plan, const optimise::PlanObjective& objective,
    const std::vector<double>& w, const OptimiseSettings& settings, int cpuThreads,
    const optimise::OptimiserOptions& optimiser, const JobControl& jc,
    const optimise::IterationCallback& onIteration, OptimiseOutcome& outcome) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<robust::Scenario> scenarios = robust::makeScenarios(settings.scenarios);
  proton::ProtonDoseRequest mreq = plan;
  mreq.params.computeDoseMatrix = true;
  mreq.params.doseMatrixRelativeCutoff = settings.relativeCutoff;
  robust::ScenarioMatrixOptions mo;
  mo.spmv.backend = settings.spmvBackend;
  mo.spmv.cpuThreads = cpuThreads;
  // Check, then run: S matrices are S times the largest thing a plan holds. The builder checks
  // again after its first matrix, with the true entry count.
  jc.report(0.0, "optimise: estimating " + std::to_string(scenarios.size()) + " scenario matrices");
  robust::refuseIfTooBig(robust::estimateScenarioMatrices(mreq, scenarios.size(), mo));
  ScaledSink matrixSink(jc, 0.0, 0.4);
  const robust::ScenarioMatrices set =
      robust::buildScenarioMatrices(mreq, scenarios, mo, JobControl{&matrixSink, jc.cancel});
  outcome.rows = set.estimate.rows;
  outcome.cols = set.estimate.cols;
  outcome.nnz = std::accumulate(set.entries.begin(), set.entries.end(), std::int64_t{0});
  outcome.backend =
      QString::fromStdString(set.device.empty() ? toString(set.spmvBackend) : set.device);
  outcome.matrixSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  outcome.scenarios = int(set.scenarios.size());
  objective.validate(set.estimate.rows);

  optimise::RobustOptions ro;
  ro.mode = settings.robustMode;
  ro.optimiser = optimiser;
  for (std::size_t s = 0; s < set.scenarios.size(); ++s)
    if (set.scenarios[s].isNominal()) ro.nominalScenario = int(s);
  jc.report(0.4, "optimise: robust (" + std::string(optimise::toString(ro.mode)) + ", " +
                     std::to_string(set.scenarios.size()) + " scenarios)");
  optimise::RobustOptimiseResult res = optimise::optimiseRobust(
      set.engines(), objective, w, ro, JobControl{nullptr, jc.cancel}, onIteration);
  if (res.worstScenario >= 0 && res.worstScenario < int(set.scenarios.size())) {
    outcome.worstScenario =
        QString::fromStdString(set.scenarios[std::size_t(res.worstScenario)].name);
    if (std::size_t(res.worstScenario) < res.scenarioObjectives.size())
      outcome.worstScenarioObjective = res.scenarioObjectives[std::size_t(res.worstScenario)];
  }
  return res;
}

}  // namespace penumbra::gui
