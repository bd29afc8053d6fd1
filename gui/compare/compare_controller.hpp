#pragma once
/// The logic behind the Compare panel (issue 13, item 3): runs compareDoses() (engines/compare)
/// on two dose sets of the DoseSetStore as a job on the JobRunner's worker thread, with the
/// open patient's structures resampled onto the reference grid for per-structure pass rates,
/// and puts the result into the ComparisonModel on the GUI thread. A failed comparison (doses
/// that do not overlap, NaN voxels, bad criteria: the engine's InvalidArgument) is reported
/// through finished(false, message) and never stops the application.
///
/// The worker reads only immutable inputs (the dose sets and the patient, shared_ptr<const>)
/// and writes only the job's own result object; Qt and VTK objects stay on the GUI thread.
#include <memory>

#include <QObject>
#include <QPointer>
#include <QString>

#include "compare/compare.hpp"
#include "core/device.hpp"

namespace penumbra::gui {

class ComparisonModel;
struct DoseRunOptions;
struct DoseSet;
class DoseSetStore;
class Job;
class JobRunner;
class PlanController;
class ViewState;

/// What the user asked for in the panel.
struct CompareSettings {
  int referenceId = -1;  ///< dose set A (the reference: the result lives on its grid)
  int evaluatedId = -1;  ///< dose set B
  compare::GammaCriteria criteria;
  Backend backend = Backend::Auto;  ///< CUDA when a GPU is usable, else the CPU
  bool perStructure = true;         ///< pass rates of the patient's structures
};

class CompareController : public QObject {
  Q_OBJECT
public:
  CompareController(ViewState* state, DoseSetStore* doseSets, JobRunner* jobs,
                    ComparisonModel* model, QObject* parent = nullptr);

  ComparisonModel* model() const { return model_; }
  DoseSetStore* doseSets() const { return doseSets_; }
  JobRunner* jobs() const { return jobs_; }

  /// Submits the comparison as a job; null (reason in finished(false, ...)) when it cannot
  /// start: no patient, a dose set missing, or one already running.
  Job* compute(const CompareSettings& settings);
  /// The comparison job queued or running, or null.
  Job* activeJob() const;
  bool isRunning() const;
  /// "Compare backends" (backend_comparison.cpp): recomputes the plan of the current dose set
  /// through `plan` on the other backend (CUDA for a CPU dose when a GPU is usable, the CPU for
  /// a CUDA dose; without a GPU, the CPU with the other ray-tracing variant), then compares the
  /// current set (A) with the new one (B) with `settings`' criteria. False (the reason in
  /// finished(false, ...)) when the current set was not computed from this plan or the dose job
  /// cannot start.
  bool compareOtherBackend(PlanController* plan, CompareSettings settings);
  /// The dose run compareOtherBackend() makes for `set` (starting from `last`), and in `what` its
  /// description ("CUDA", "CPU, classic DDA"). Public for tests.
  static DoseRunOptions otherBackendOptions(const DoseSet& set, const DoseRunOptions& last, bool gpuUsable,
                                            QString* what);

  /// The settings of the last compute() call.
  const CompareSettings& lastSettings() const { return last_; }

public slots:
  void cancel();

signals:
  void started(penumbra::gui::Job* job);
  /// ok: the model holds the new comparison and `message` is its one-line summary; else
  /// `message` says why there is none (the engine's words, or "cancelled").
  void finished(bool ok, const QString& message);
  /// Engine notes (partial overlap, depth-limited points, backend fallback) for the log.
  void message(const QString& text);

private:
  ViewState* state_;
  DoseSetStore* doseSets_;
  JobRunner* jobs_;
  ComparisonModel* model_;
  QPointer<Job> job_;
  CompareSettings last_;
};

/// "Gamma 3 %/3 mm global: 97.8 % pass (123 456 points)": the headline of a result.
QString passRateHeadline(const compare::GammaCriteria& criteria, const compare::CompareResult& result);
/// A count with thin-space thousands separators, as in the headline ("123 456").
QString groupedCount(long long n);

}  // namespace penumbra::gui
