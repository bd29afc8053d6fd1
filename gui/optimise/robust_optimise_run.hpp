#pragma once
/// The robust branch of the optimisation job (issue 16, item 3, in the Optimise panel): on the
/// job's worker thread, one dose-deposition matrix per error scenario of the Robustness panel's
/// settings (robust::buildScenarioMatrices: the memory estimate first, refused with
/// OutOfMemory naming what would fit), then optimise::optimiseRobust in the chosen mode
/// (expected value or composite worst case). No Qt objects are touched here; the iterate goes
/// to the controller's callback as in the nominal run.
#include <string_view>
#include <vector>

#include "core/progress.hpp"
#include "gui/optimise/optimise_controller.hpp"

namespace penumbra::gui {

/// Maps an engine's 0..1 progress into [base, base + span] of the job's.
class ScaledSink : public ProgressSink {
 public:
  ScaledSink(const JobControl& jc, double base, double span) : jc_(jc), base_(base), span_(span) {}
  void report(double f, std::string_view stage) override { jc_.report(base_ + span_ * f, stage); }

 private:
  const JobControl& jc_;
  double base_, span_;
};

/// Builds the scenario matrices of `plan` (its backend builds them; settings.spmvBackend runs
/// the products) for settings.scenarios and minimises settings.robustMode's objective from `w`.
/// Progress 0..0.4 for the matrices; the callback reports the iterations. Fills `outcome`'s
/// matrix figures (rows, spots, non-zeros summed over the scenarios, backend, seconds) and its
/// scenario fields. The result's dose is the nominal scenario's D w.
optimise::RobustOptimiseResult runRobustOptimisation(
    const proton::ProtonDoseRequest& plan, const optimise::PlanObjective& objective,
    const std::vector<double>& w, const OptimiseSettings& settings, int cpuThreads,
    const optimise::OptimiserOptions& optimiser, const JobControl& jc,
    const optimise::IterationCallback& onIteration, OptimiseOutcome& outcome);

}  // namespace penumbra::gui
