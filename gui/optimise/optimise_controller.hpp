#pragma once
/// Spot-weight optimisation as a job (issue 5, item 5): builds the dose-deposition matrix D of
/// the current plan with the proton engine (matrix output, relative cut-off as a setting), runs
/// projected L-BFGS (engines/optimise) on the SpMV engine, then the full proton engine with the
/// optimised weights; the result is a new dose set and the plan's spot weights.
///
/// While it runs:
///  - every iteration record is queued to the GUI thread (iterationRecorded: the objective plot);
///  - the current dose d = D w is published as one "live" dose set of the DoseSetStore
///    (replaced in place), at most every `publishSeconds`: dose wash, isodoses and DVHs follow
///    it (its DVH jobs run beside the optimisation job). The optimiser hands its iterate to the
///    callback at that interval (OptimiserOptions::iterateIntervalSeconds): one uninterrupted
///    run, the L-BFGS memory kept, d the optimiser's own product - no extra product.
///  - Stop (the job's cancel) ends the optimiser at its next iteration with the best weights:
///    the job ends Cancelled, the plan gets the best weights, the live dose set stays (named
///    "stopped"), and the final dose is computed by a follow-up dose job (PlanController).
#include <memory>
#include <vector>

#include <QObject>
#include <QPointer>
#include <QString>

#include "gui/plan/plan_controller.hpp"
#include "optimise/objective.hpp"
#include "optimise/optimise.hpp"
#include "optimise/robust_optimise.hpp"
#include "robust/scenario.hpp"
// QPointer<Job> needs the complete type wherever this header's moc output is compiled.
#include "gui/jobs/job_runner.hpp"

namespace penumbra::gui {

class DoseSetStore;
class PlanModel;
class ViewState;

/// One row of the objectives table.
struct ObjectiveRow {
  QString structure;
  optimise::StructureRole role = optimise::StructureRole::Target;
  optimise::TermType kind = optimise::TermType::Uniform;
  double levelGy = 0;
  double weight = 1;
  /// Exact: the panel compares its table, as read back from the widgets, with these.
  bool operator==(const ObjectiveRow&) const = default;
};

struct OptimiseSettings {
  double relativeCutoff = 1e-3;  ///< matrix entries below this fraction of their column max dropped
  int maxIterations = 150;
  double publishSeconds = 1.0;   ///< live dose at most this often
  Backend spmvBackend = Backend::Auto;
  bool finalDose = true;         ///< full proton engine with the optimised weights at the end
  bool finalDoseAfterStop = true;
  /// Robust optimisation (issue 16, item 3): one dose matrix per error scenario (built on the
  /// dose backend, memory checked first) and optimise::optimiseRobust in `robustMode`; false:
  /// the nominal plan only. The scenarios are the Robustness panel's.
  bool robust = false;
  optimise::RobustMode robustMode = optimise::RobustMode::CompositeWorstCase;
  robust::ScenarioOptions scenarios;
};

/// What the last run produced (GUI thread).
struct OptimiseOutcome {
  std::vector<double> weights;
  optimise::OptimiseState state = optimise::OptimiseState::Converged;
  int iterations = 0;
  double objective = 0;
  double optimiseSeconds = 0;
  double iterationsPerSecond = 0;
  double matrixSeconds = 0;
  std::int64_t rows = 0, cols = 0, nnz = 0;
  std::int64_t objectiveVoxels = 0;  ///< distinct dose voxels in any objective
  QString backend;
  /// Robust runs: the scenarios optimised over (0: a nominal run), the worst scenario's name
  /// and its objective value at the result.
  int scenarios = 0;
  QString worstScenario;
  double worstScenarioObjective = 0;
  int finalDoseSetId = -1;  ///< -1: none (yet)
};

class OptimiseController : public QObject {
  Q_OBJECT
public:
  OptimiseController(ViewState* state, PlanModel* plan, DoseSetStore* store, JobRunner* jobs,
                     PlanController* controller, QObject* parent = nullptr);

  /// Defaults from the structure kinds and the prescription Rx: a target gets uniform Rx
  /// (weight 1), min 0.97 Rx and max 1.04 Rx (weight 20); the external contour (outside the
  /// targets) max 0.8 Rx; an organ at risk max 0.5 Rx. Other structures get none.
  std::vector<ObjectiveRow> defaultObjectives() const;

  /// Starts the job; null (reason in message()) without spots or objectives.
  Job* start(const std::vector<ObjectiveRow>& rows, const OptimiseSettings& settings,
             const DoseRunOptions& dose);
  /// The running (or last) optimisation job.
  Job* job() const { return job_.data(); }
  bool isRunning() const;
  /// Asks the running job to stop (keeps the best weights).
  void stop();
  const OptimiseOutcome& outcome() const { return outcome_; }
  /// Objective per accepted iteration of the current/last run (index = iteration).
  const std::vector<optimise::IterationRecord>& history() const { return history_; }
  int liveDoseSetId() const { return liveId_; }

signals:
  void started(penumbra::gui::Job* job);
  void iterationRecorded(int iteration, double objective, double elapsedSeconds);
  void liveDosePublished(int doseSetId);
  /// The job ended (any state); outcome() is up to date.
  void finished(penumbra::gui::Job* job);
  void message(const QString& text);

private:
  struct Shared;
  void publishLive(std::shared_ptr<const Volume<float>> dose, int iteration, double objective);
  void onJobFinished(Job* job, std::shared_ptr<Shared> shared);

  ViewState* state_;
  PlanModel* plan_;
  DoseSetStore* store_;
  JobRunner* jobs_;
  PlanController* controller_;
  QPointer<Job> job_;
  OptimiseOutcome outcome_;
  std::vector<optimise::IterationRecord> history_;
  int liveId_ = -1;
  int run_ = 0;
  DoseRunOptions doseOptions_;
  bool finalAfterStop_ = true;
};

}  // namespace penumbra::gui
