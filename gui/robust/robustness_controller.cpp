#include "gui/robust/robustness_controller.hpp"

#include <QTime>
#include <QWidget>  // plan_controller.hpp's QPointer<QWidget>
#include <algorithm>

#include "core/device.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/view_state.hpp"
#include "gui/plan/live_dose_controller.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/robust/robustness_inputs.hpp"

namespace penumbra::gui {

QString robustnessSummary(const robust::RobustnessResult& r) {
  const auto flagged =
      std::count_if(r.table.begin(), r.table.end(), [](const auto& row) { return row.violated; });
  const QString where = r.backend == Backend::Cuda ? QStringLiteral("GPU") : QStringLiteral("CPU");
  return QObject::tr("%1 in %2 s (%3), %4 of %5 flagged")
      .arg(countOf(qsizetype(r.scenarios.size()), "scenario"))
      .arg(r.elapsedMs / 1000.0, 0, 'f', r.elapsedMs < 10000 ? 2 : 1)
      .arg(where)
      .arg(flagged)
      .arg(countOf(qsizetype(r.table.size()), "row"));
}

RobustnessController::RobustnessController(PlanController* planner, RobustnessModel* model,
                                           DoseOptionsFn doseOptions, ObjectivesFn objectives,
                                           QObject* parent)
    : QObject(parent),
      planner_(planner),
      model_(model),
      doseOptions_(std::move(doseOptions)),
      objectives_(std::move(objectives)) {
  // Any plan edit (beams, spots, weights, prescription) ends the bands' validity.
  connect(planner_->plan(), &PlanModel::planChanged, model_, &RobustnessModel::planEdited);
  connect(planner_->plan(), &PlanModel::prescriptionChanged, model_, &RobustnessModel::planEdited);
  connect(model_, &RobustnessModel::evaluationChanged, this, &RobustnessController::updateLiveStatus);
  connect(planner_->viewState(), &ViewState::sceneChanged, this, [this] {
    // The workspace cancels every job; what is left is the old patient's state.
    pending_ = false;
    if (running_.job) running_.superseded = true;
    model_->clear();
  });
}

bool RobustnessController::gpuUsable() {
  static const bool usable = selectBackend(Backend::Auto).backend == Backend::Cuda;
  return usable;
}

void RobustnessController::setLiveDose(LiveDoseController* live) {
  if (live_) disconnect(live_, nullptr, this, nullptr);
  live_ = live;
  if (!live) return updateLiveStatus();
  connect(live, &LiveDoseController::toggled, this, [this](bool on) {
    updateLiveStatus();
    if (!on) {
      pending_ = false;
      if (running_.job && running_.live && !running_.superseded) {
        running_.superseded = true;
        running_.job->cancel();
      }
    }
  });
  // A live result on the full grid is the plan after an edit, spots placed again: evaluate it.
  connect(live, &LiveDoseController::resultShown, this, [this] {
    if (live_ && live_->published().grid == LiveGrid::Full &&
        live_->published().modality == LiveModality::Proton)
      requestLive();
  });
  updateLiveStatus();
}

bool RobustnessController::liveRefreshActive() const {
  return live_ && live_->isOn() && (withoutGpu_ || gpuUsable());
}

void RobustnessController::setLiveRefreshWithoutGpu(bool on) {
  withoutGpu_ = on;
  updateLiveStatus();
}

void RobustnessController::updateLiveStatus() {
  QString text;
  if (live_ && live_->isOn())
    text = !liveRefreshActive()   ? tr("robustness: press Run (no GPU for live refresh)")
           : model_->current() ? tr("robustness: refreshed after each edit")
                               : tr("robustness: press Run once, then it follows each edit");
  if (text == liveStatus_) return;
  liveStatus_ = text;
  emit liveStatusChanged(text);
}

std::vector<robust::Scenario> RobustnessController::scenarios(QString* error) const {
  try {
    return robust::makeScenarios(model_->settings().scenarios);
  } catch (const std::exception& e) {
    if (error) *error = QString::fromStdString(e.what());
    return {};
  }
}

void RobustnessController::cancel() {
  pending_ = false;
  if (running_.job) running_.job->cancel();
}

Job* RobustnessController::run() {
  if (isRunning()) {
    if (!running_.live) {
      emit finished(false, tr("An evaluation is already running."));
      return nullptr;
    }
    // A live refresh gives way to the user's run.
    running_.superseded = true;
    running_.job->cancel();
  }
  pending_ = false;
  return start(false);
}

void RobustnessController::requestLive() {
  if (!liveRefreshActive()) return;
  if (isRunning()) {
    // Latest wins: the running evaluation of an older plan is dropped, this one waits.
    if (running_.revision != model_->planRevision() && !running_.superseded) {
      running_.superseded = true;
      running_.job->cancel();
    }
    pending_ = running_.revision != model_->planRevision() || running_.superseded;
    return;
  }
  // Only a table the user asked for is kept up to date (no GPU time for a panel never used),
  // and one that is this plan's already needs nothing.
  if (!model_->current() || !model_->isStale()) return;
  start(true);
}

Job* RobustnessController::start(bool live) {
  const auto& scene = planner_->viewState()->scene();
  PlanModel* plan = planner_->plan();
  QString why;
  if (!scene)
    why = tr("no patient is open");
  else if (plan->totalSpots() == 0)
    why = tr("no proton beam has spots (generate spots first)");
  QString scenarioError;
  if (why.isEmpty() && scenarios(&scenarioError).empty())
    why = tr("the scenario settings: %1").arg(scenarioError);
  if (!why.isEmpty()) {
    if (!live) emit finished(false, tr("Cannot evaluate robustness: %1.").arg(why));
    return nullptr;
  }
  const DoseRunOptions o = doseOptions_ ? doseOptions_() : DoseRunOptions{};
  // The GPU when present (the point of the issue: an evaluation in a fraction of a second),
  // the Plan dock's choice otherwise.
  const Backend backend = gpuUsable() ? Backend::Cuda : o.backend;
  const std::vector<ObjectiveRow> objectives =
      objectives_ ? objectives_() : std::vector<ObjectiveRow>{};
  auto input = std::make_shared<RobustnessInput>(makeRobustnessInput(
      scene->sharedPatient(), plan->engineBeams(), model_->settings(), o.doseGridMm, backend,
      o.variant, o.cpuThreads, objectives, plan->prescriptionGy()));
  const std::size_t n = input->scenarios.size();
  // The worker takes the input out of the box and drops it when done: finished jobs stay in
  // the job list and must not keep a closed patient alive.
  auto box = std::make_shared<std::shared_ptr<const RobustnessInput>>(std::move(input));
  auto result = std::make_shared<robust::RobustnessResult>();
  auto work = [box, result](const JobControl& jc) {
    const std::shared_ptr<const RobustnessInput> in = std::move(*box);
    jc.report(0, "robustness: structures on the dose grid");
    const robust::RobustnessRequest request = makeRobustnessRequest(*in, jc);
    *result = robust::evaluateRobustness(request, jc);
  };
  const QString title =
      tr("Robustness %1 (%2%3)")
          .arg(++runNumber_)
          .arg(countOf(qsizetype(n), "scenario"), live ? tr(", live") : QString());
  JobRunner* jobs = planner_->jobs();
  // A live refresh must not wait behind a long job (as the live dose); Run queues like any job.
  Job* job = live ? jobs->submitBeside(title, work) : jobs->submit(title, work);
  Running run;
  run.job = job;
  run.revision = model_->planRevision();
  run.number = runNumber_;
  run.live = live;
  running_ = run;
  connect(job, &Job::finished, this, [this, job, result, run] { onJobFinished(job, result, run); });
  emit started(job);
  return job;
}

void RobustnessController::onJobFinished(Job* job, std::shared_ptr<robust::RobustnessResult> result,
                                         Running run) {
  bool superseded = true;
  if (running_.job == job) {
    superseded = running_.superseded;
    running_ = {};
  }
  const bool newest = run.revision == model_->planRevision();
  if (job->state() == Job::State::Done && !superseded && (newest || !run.live)) {
    auto evaluation = std::make_shared<RobustnessEvaluation>();
    evaluation->result = std::make_shared<const robust::RobustnessResult>(std::move(*result));
    evaluation->planRevision = run.revision;
    evaluation->prescriptionGy = planner_->plan()->prescriptionGy();
    evaluation->when = QTime::currentTime().toString("HH:mm:ss");
    evaluation->runNumber = run.number;
    for (const auto& m : evaluation->result->messages)
      emit message(tr("Robustness: %1").arg(QString::fromStdString(m)));
    model_->setCurrent(evaluation);
    emit finished(true, robustnessSummary(*evaluation->result));
  } else if (job->state() == Job::State::Failed && !superseded) {
    const QString error = job->errorMessage();
    const QString text = job->errorCode() == ErrorCode::OutOfMemory
                             ? tr("Robustness does not fit: %1. Choose fewer scenarios or a "
                                  "coarser dose grid; the last "
                                  "table is kept.")
                                   .arg(error)
                             : tr("Robustness failed: %1. The last table is kept.").arg(error);
    emit message(text);
    emit finished(false, text);
  } else if (job->state() == Job::State::Cancelled && !superseded) {
    emit finished(false, tr("Robustness cancelled; the last table is kept."));
  }
  *result = {};  // the job (kept in the job list) must not hold the volumes
  if (pending_ && !isRunning()) {
    pending_ = false;
    requestLive();
  }
}

int RobustnessController::addWorstCaseDoseSet() { return addDoseSet(true); }
int RobustnessController::addSpreadDoseSet() { return addDoseSet(false); }

int RobustnessController::addDoseSet(bool worst) {
  const auto evaluation = model_->current();
  if (!evaluation || !evaluation->result) return -1;
  const robust::RobustnessResult& r = *evaluation->result;
  const DoseVolume& source = worst ? r.worstCase : r.spread;
  if (source.dose.data.empty()) return -1;
  DoseSet set;
  set.dose = source;
  set.dose.unit = "Gy";
  set.dose.engine = worst ? "robustness: worst case (minimum in targets, maximum elsewhere)"
                          : "robustness: spread (maximum - minimum over the scenarios)";
  set.dose.backend = toString(r.backend);
  set.dose.computeSeconds = r.elapsedMs / 1000.0;
  set.dose.parameters = "scenarios=" + std::to_string(r.scenarios.size()) + "\ndevice=" + r.device;
  // "Worst case 2: 21 scenarios, 12:03:04": the short name (up to the colon) is what the DVH
  // and Compare tables show. No beams: recomputing "this plan" would give the nominal dose.
  set.name = tr("%1 %2: %3, %4")
                 .arg(worst ? tr("Worst case") : tr("Spread"))
                 .arg(evaluation->runNumber)
                 .arg(countOf(qsizetype(r.scenarios.size()), "scenario"), evaluation->when);
  set.dose.label = set.name.toStdString();
  set.messages = r.messages;
  const int index = planner_->doseSets()->add(std::move(set));
  emit message(tr("Added the dose set %1.").arg(planner_->doseSets()->at(index)->name));
  return index;
}

}  // namespace penumbra::gui
