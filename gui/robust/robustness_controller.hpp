#pragma once
/// The logic behind the Robustness panel (issue 16, item 4): runs evaluateRobustness
/// (engines/robust) on the plan's proton beams as a job (worker thread, progress, cancel),
/// puts the result into the RobustnessModel on the GUI thread, and adds the worst-case dose and
/// the spread to the DoseSetStore on request, where the views, the DVH and the Compare
/// workspace find them.
///
/// Backend: the GPU when one is usable, else the Plan dock's choice. Dose grid: the panel's, or
/// the Plan dock's. Limits: the Optimise panel's objectives (robustness_inputs.hpp).
///
/// Live refresh: with live dose on and a usable GPU, once the user has run an evaluation of the
/// open patient, every live result on the full grid (the plan after an edit, spots placed again
/// where the edit removed them) asks for a new evaluation. As the live dose does it: at most one evaluation runs and one request waits
/// (the latest); a running evaluation of an older plan is cancelled and its result dropped.
/// Without a GPU nothing runs by itself (21 CPU dose runs per edit would bury the machine);
/// liveStatus() says to press Run.
///
/// Faults: a failed run (OutOfMemory, a CUDA error, bad settings) or a cancelled one keeps the
/// last good evaluation on screen and says why (finished(false, ...)). Nothing here waits for a
/// worker; the worker reads only the input it was given and writes only its own result.
#include <QObject>
#include <QPointer>
#include <QString>
#include <functional>
#include <memory>
#include <vector>

// QPointer<Job> needs the complete type wherever this header's moc output is compiled.
#include "gui/jobs/job_runner.hpp"
#include "gui/model/robustness_model.hpp"
#include "gui/optimise/optimise_controller.hpp"

namespace penumbra::gui {

class LiveDoseController;
class PlanController;

class RobustnessController : public QObject {
  Q_OBJECT
 public:
  using DoseOptionsFn = std::function<DoseRunOptions()>;
  using ObjectivesFn = std::function<std::vector<ObjectiveRow>()>;

  RobustnessController(PlanController* planner, RobustnessModel* model, DoseOptionsFn doseOptions,
                       ObjectivesFn objectives, QObject* parent = nullptr);

  RobustnessModel* model() const { return model_; }
  /// Follows `live`'s results (live refresh, above); null: none.
  void setLiveDose(LiveDoseController* live);

  /// The scenarios the current settings give (empty, with `error` set, when refused).
  std::vector<robust::Scenario> scenarios(QString* error = nullptr) const;

  /// "Run": evaluates the plan now (queued behind running jobs). Null (reason in
  /// finished(false, ...)) without a patient or proton spots, with bad settings, or while one
  /// runs.
  Job* run();
  Job* activeJob() const { return running_.job.data(); }
  bool isRunning() const { return running_.job && !running_.job->isFinished(); }

  /// Adds the current evaluation's worst-case dose (or its spread) as a dose set and makes it
  /// current; returns its store index, -1 without an evaluation.
  int addWorstCaseDoseSet();
  int addSpreadDoseSet();

  /// What the live refresh does: empty while live dose is off; "robustness: press Run (no GPU
  /// for live refresh)" without a GPU; "robustness: press Run once, then it follows each edit"
  /// before the first evaluation; else "robustness: refreshed after each edit".
  QString liveStatus() const { return liveStatus_; }
  bool liveRefreshActive() const;
  /// Tests: refresh live on the CPU as if a GPU were present.
  void setLiveRefreshWithoutGpu(bool on);
  /// A usable GPU (asked once).
  static bool gpuUsable();

 public slots:
  void cancel();

 signals:
  void started(penumbra::gui::Job* job);
  /// ok: the model holds the new evaluation and `message` is its summary; else `message` says
  /// why not (the last good evaluation stays).
  void finished(bool ok, const QString& message);
  void liveStatusChanged(const QString& text);
  /// A user-facing line for the Messages dock.
  void message(const QString& text);

 private:
  struct Running {
    QPointer<Job> job;
    int revision = 0;
    int number = 0;
    bool live = false;
    bool superseded = false;  ///< cancelled by a newer plan, not by the user
  };

  Job* start(bool live);
  void requestLive();
  void onJobFinished(Job* job, std::shared_ptr<robust::RobustnessResult> result, Running run);
  void updateLiveStatus();
  int addDoseSet(bool worst);

  PlanController* planner_;
  RobustnessModel* model_;
  DoseOptionsFn doseOptions_;
  ObjectivesFn objectives_;
  QPointer<LiveDoseController> live_;
  Running running_;
  bool pending_ = false;
  bool withoutGpu_ = false;
  int runNumber_ = 0;
  QString liveStatus_;
};

/// "21 scenarios in 1.2 s (CPU), 2 of 12 rows flagged".
QString robustnessSummary(const robust::RobustnessResult& result);

}  // namespace penumbra::gui
