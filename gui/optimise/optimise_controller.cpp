#include "gui/optimise/optimise_controller.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <QMetaObject>
#include <QWidget>
#include <QTime>

#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/view_state.hpp"
#include "gui/optimise/nominal_matrix.hpp"
#include "gui/optimise/robust_optimise_run.hpp"
#include "proton/proton_dose.hpp"
#include "spmv/spmv.hpp"

namespace penumbra::gui {

namespace {

using Clock = std::chrono::steady_clock;

bool sameGrid(const Grid& a, const Grid& b) {
  if (a.dims != b.dims) return false;
  for (int c = 0; c < 3; ++c)
    if (std::abs(a.spacing[c] - b.spacing[c]) > 1e-9 || std::abs(a.origin[c] - b.origin[c]) > 1e-6) return false;
  return true;  // Grid requires orthonormal directions; CT and covering grids are axis-aligned
}

/// Dose-grid voxels (rows of D) whose centre lies in a mask voxel (nearest neighbour).
std::vector<std::int64_t> voxelsOnGrid(const Mask& m, const Grid& g) {
  if (sameGrid(m.grid, g)) return optimise::voxelsOfMask(m);
  std::vector<std::int64_t> out;
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = 0; i < g.dims[0]; ++i) {
        const Vec3 q = m.grid.worldToIndex(g.indexToWorld(Vec3{double(i), double(j), double(k)}));
        const int a = int(std::lround(q.x)), b = int(std::lround(q.y)), c = int(std::lround(q.z));
        if (m.grid.containsIndex(a, b, c) && m.at(a, b, c)) out.push_back(std::int64_t(g.linearIndex(i, j, k)));
      }
  return out;
}

}  // namespace

/// Written by the worker, read on the GUI thread after the job finished.
struct OptimiseController::Shared {
  OptimiseOutcome outcome;
  std::vector<proton::ProtonBeam> beams;  ///< with the optimised weights
  std::optional<proton::ProtonDoseResult> finalDose;
  std::shared_ptr<const Volume<float>> lastDose;  ///< D w of the best weights
};

OptimiseController::OptimiseController(ViewState* state, PlanModel* plan, DoseSetStore* store,
                                       JobRunner* jobs, PlanController* controller, QObject* parent)
    : QObject(parent), state_(state), plan_(plan), store_(store), jobs_(jobs), controller_(controller) {
  connect(state_, &ViewState::sceneChanged, this, [this] {
    liveId_ = -1;
    history_.clear();
    outcome_ = {};
  });
}

bool OptimiseController::isRunning() const { return job_ && !job_->isFinished(); }

void OptimiseController::stop() {
  if (isRunning()) job_->cancel();
}

std::vector<ObjectiveRow> OptimiseController::defaultObjectives() const {
  std::vector<ObjectiveRow> rows;
  const auto& scene = state_->scene();
  if (!scene) return rows;
  const double rx = plan_->prescriptionGy();
  using optimise::StructureRole;
  using optimise::TermType;
  for (const auto& s : scene->patient().structures.structures) {
    if (s.mask.empty()) continue;
    const QString name = QString::fromStdString(s.name);
    switch (s.kind) {
      case StructureKind::Target:
        rows.push_back({name, StructureRole::Target, TermType::Uniform, rx, 1.0});
        rows.push_back({name, StructureRole::Target, TermType::MinDose, 0.97 * rx, 20.0});
        rows.push_back({name, StructureRole::Target, TermType::MaxDose, 1.04 * rx, 20.0});
        break;
      case StructureKind::External:
        rows.push_back({name, StructureRole::OrganAtRisk, TermType::MaxDose, 0.8 * rx, 1.0});
        break;
      case StructureKind::OrganAtRisk:
        rows.push_back({name, StructureRole::OrganAtRisk, TermType::MaxDose, 0.5 * rx, 1.0});
        break;
      case StructureKind::Other: break;
    }
  }
  return rows;
}

Job* OptimiseController::start(const std::vector<ObjectiveRow>& rows, const OptimiseSettings& settings,
                               const DoseRunOptions& doseOptions) {
  const auto& scene = state_->scene();
  if (!scene || plan_->totalSpots() == 0) {
    emit message(tr("Cannot optimise: no beam has spots (generate spots first)."));
    return nullptr;
  }
  if (rows.empty()) {
    emit message(tr("Cannot optimise: the objectives table is empty."));
    return nullptr;
  }
  if (isRunning()) {
    emit message(tr("An optimisation is already running."));
    return nullptr;
  }
  doseOptions_ = doseOptions;
  finalAfterStop_ = settings.finalDose && settings.finalDoseAfterStop;
  auto patient = scene->sharedPatient();
  auto request = std::make_shared<proton::ProtonDoseRequest>();
  request->ct = std::shared_ptr<const CtVolume>(patient, &patient->ct);
  request->beams = plan_->engineBeams();
  if (doseOptions.doseGridMm > 0) request->doseGrid = coveringGrid(patient->ct.grid, doseOptions.doseGridMm);
  request->variant = doseOptions.variant;
  request->params.cpuThreads = doseOptions.cpuThreads;
  auto shared = std::make_shared<Shared>();
  history_.clear();
  outcome_ = {};
  QPointer<OptimiseController> self(this);
  const int run = ++run_;

  Job* job = jobs_->submit(
      tr("Optimise %1 (%2, %3%4)")
          .arg(run)
          .arg(countOf(qsizetype(request->beams.size()), "beam"), countOf(qsizetype(plan_->totalSpots()), "spot"),
               settings.robust ? tr(", robust %1").arg(optimise::toString(settings.robustMode)) : QString()),
      [patient, request, rows, settings, doseOptions, shared, self](const JobControl& jc) {
        // 1. Objectives on the dose grid.
        jc.report(0.0, "optimise: objectives");
        const Grid grid = request->doseGrid.voxelCount() > 0 ? request->doseGrid : patient->ct.grid;
        std::map<QString, std::vector<std::int64_t>> voxels;
        std::set<std::int64_t> targetVoxels;
        for (const auto& r : rows) {
          if (voxels.count(r.structure)) continue;
          const Structure* s = patient->structures.find(r.structure.toStdString());
          if (!s || s->mask.empty())
            throw Error(ErrorCode::InvalidArgument, "structure '" + r.structure.toStdString() + "' has no mask");
          voxels[r.structure] = voxelsOnGrid(s->mask, grid);
          if (r.role == optimise::StructureRole::Target)
            targetVoxels.insert(voxels[r.structure].begin(), voxels[r.structure].end());
          jc.checkCancel();
        }
        std::vector<optimise::StructureObjective> structures;
        for (const auto& r : rows) {
          auto it = std::find_if(structures.begin(), structures.end(),
                                 [&](const auto& so) { return so.name == r.structure.toStdString(); });
          if (it == structures.end()) {
            optimise::StructureObjective so;
            so.name = r.structure.toStdString();
            so.role = r.role;
            so.voxels = voxels[r.structure];
            // The external contour counts outside the targets only (it contains them).
            const Structure* s = patient->structures.find(so.name);
            if (s && s->kind == StructureKind::External && r.role == optimise::StructureRole::OrganAtRisk)
              so.voxels.erase(std::remove_if(so.voxels.begin(), so.voxels.end(),
                                             [&](std::int64_t v) { return targetVoxels.count(v) > 0; }),
                              so.voxels.end());
            structures.push_back(std::move(so));
            it = structures.end() - 1;
          }
          it->terms.push_back({r.kind, r.levelGy, r.weight});
        }
        std::set<std::int64_t> all;
        for (const auto& so : structures) all.insert(so.voxels.begin(), so.voxels.end());
        shared->outcome.objectiveVoxels = std::int64_t(all.size());
        const optimise::PlanObjective objective(std::move(structures));

        // 2. The iterate's consumer: the objective plot and, at most every publishSeconds, the
        // live dose (on the GPU that is the loop's only download).
        Grid doseGrid = grid;
        std::vector<double> w = optimise::planWeights(request->beams);
        optimise::OptimiserOptions o;
        o.maxIterations = std::max(1, settings.maxIterations);
        o.iterateIntervalSeconds = settings.publishSeconds;
        const auto cb = [&](const optimise::IterationRecord& r) {
          optimise::IterationRecord g = r;
          g.weights.reset();
          g.dose.reset();
          QMetaObject::invokeMethod(
              self, [self, g] {
                if (!self) return;
                self->history_.push_back(g);
                emit self->iterationRecorded(g.iteration, g.objective, g.elapsedSeconds);
              },
              Qt::QueuedConnection);
          jc.report(0.4 + 0.5 * std::min(1.0, double(r.iteration) / settings.maxIterations),
                    "optimise: iteration " + std::to_string(r.iteration) + ", f = " + std::to_string(r.objective));
          if (!r.dose || r.iteration == 0) return;  // iteration 0: the starting dose, not news
          auto dose = std::make_shared<Volume<float>>(doseGrid, 0.0f);
          for (std::size_t v = 0; v < r.dose->size() && v < dose->data.size(); ++v) dose->data[v] = float((*r.dose)[v]);
          const int it = r.iteration;
          const double f = r.objective;
          QMetaObject::invokeMethod(
              self, [self, dose, it, f] { if (self) self->publishLive(dose, it, f); }, Qt::QueuedConnection);
        };

        optimise::OptimiseResult res;
        if (settings.robust) {
          // 3r. One D_s per scenario (memory checked first), then the robust objective.
          proton::ProtonDoseRequest mreq = *request;
          mreq.backend = doseOptions.backend;
          res = runRobustOptimisation(mreq, objective, w, settings, doseOptions.cpuThreads, o, jc, cb, shared->outcome);
        } else {
          // 3. D (on the GPU, where it stays, when the products go there: nominal_matrix.hpp),
          // then projected L-BFGS in one run (see the header).
          const std::unique_ptr<spmv::SpmvEngine> engine =
              makeNominalEngine(*request, objective, settings, doseOptions.cpuThreads, jc, shared->outcome, doseGrid);
          res = optimise::optimiseSpotWeights(*engine, objective, w, o, JobControl{nullptr, jc.cancel}, cb);
        }
        w = res.weights;
        shared->outcome.objective = res.objective;
        auto dose = std::make_shared<Volume<float>>(doseGrid, 0.0f);
        for (std::size_t v = 0; v < res.dose.size() && v < dose->data.size(); ++v) dose->data[v] = float(res.dose[v]);
        shared->lastDose = dose;
        const optimise::OptimiseState state = jc.cancelled() ? optimise::OptimiseState::Stopped : res.state;
        const int done = res.iterations;
        const double elapsedBase = res.elapsedSeconds;
        shared->outcome.weights = w;
        shared->outcome.state = state;
        shared->outcome.iterations = done;
        shared->outcome.optimiseSeconds = elapsedBase;
        shared->outcome.iterationsPerSecond = elapsedBase > 0 ? done / elapsedBase : 0;
        shared->beams = request->beams;
        optimise::setPlanWeights(shared->beams, w);
        jc.checkCancel();  // Stop: the job ends Cancelled, the GUI keeps the best weights

        // 4. The final dose from the full engine with the optimised weights.
        if (!settings.finalDose) return;
        proton::ProtonDoseRequest freq = *request;
        freq.beams = shared->beams;
        freq.backend = doseOptions.backend;
        ScaledSink finalSink(jc, 0.9, 0.1);
        shared->finalDose = proton::computeProtonDose(freq, JobControl{&finalSink, jc.cancel});
        jc.report(1.0, "optimise: done");
      });
  job_ = job;
  connect(job, &Job::finished, this, [this, job, shared] { onJobFinished(job, shared); });
  emit started(job);
  return job;
}

void OptimiseController::publishLive(std::shared_ptr<const Volume<float>> dose, int iteration, double objective) {
  if (!isRunning()) return;  // a late queued dose after the job ended
  DoseSet set;
  set.dose.dose = *dose;
  set.dose.unit = "Gy";
  set.dose.engine = "optimiser D w";
  set.dose.parameters = "iteration=" + std::to_string(iteration);
  set.name = tr("Optimising: iteration %1, f = %2").arg(iteration).arg(objective, 0, 'g', 4);
  set.dose.label = set.name.toStdString();
  set.beams = plan_->engineBeams();
  set.live = true;
  const int index = store_->indexOfId(liveId_);
  if (index >= 0) {
    store_->replace(index, std::move(set));
    store_->setCurrentIndex(index);
  } else {
    liveId_ = store_->at(store_->add(std::move(set)))->id;
  }
  emit liveDosePublished(liveId_);
}

void OptimiseController::onJobFinished(Job* job, std::shared_ptr<Shared> shared) {
  outcome_ = shared->outcome;
  outcome_.finalDoseSetId = -1;
  const bool haveWeights = !outcome_.weights.empty() && outcome_.weights.size() == plan_->totalSpots();
  if (haveWeights) plan_->setEngineWeights(outcome_.weights);
  const int liveIndex = store_->indexOfId(liveId_);
  if (job->state() == Job::State::Done && shared->finalDose) {
    if (liveIndex >= 0) store_->remove(liveIndex);
    liveId_ = -1;
    DoseSet set;
    set.dose.dose = std::move(shared->finalDose->dose);
    set.dose.unit = "Gy";
    set.dose.engine = "proton pencil beam";
    set.dose.backend = toString(shared->finalDose->backend);
    set.dose.computeSeconds = shared->finalDose->elapsedMs / 1000.0;
    set.dose.parameters = "optimised=" + std::string(optimise::toString(outcome_.state)) +
                          "\niterations=" + std::to_string(outcome_.iterations) +
                          "\ndevice=" + shared->finalDose->device;
    set.name = tr("Optimised %1: %2, %3, %4")
                   .arg(run_)
                   .arg(countOf(qsizetype(shared->beams.size()), "beam"), countOf(outcome_.iterations, "iteration"),
                        QTime::currentTime().toString("HH:mm:ss"));
    set.dose.label = set.name.toStdString();
    set.beams = shared->beams;
    set.profiles = std::move(shared->finalDose->profiles);
    const int index = store_->add(std::move(set));
    outcome_.finalDoseSetId = store_->at(index)->id;
    emit message(tr("Optimisation %1 after %2 iterations (%3 it/s, %4), f = %5%7; final dose: %6")
                     .arg(optimise::toString(outcome_.state))
                     .arg(outcome_.iterations)
                     .arg(outcome_.iterationsPerSecond, 0, 'f', 1)
                     .arg(outcome_.backend)
                     .arg(outcome_.objective, 0, 'g', 5)
                     .arg(store_->at(index)->name)
                     .arg(outcome_.scenarios > 0 ? tr(" (robust over %1, worst: %2)")
                                                       .arg(countOf(outcome_.scenarios, "scenario"), outcome_.worstScenario)
                                                 : QString()));
  } else if (job->state() == Job::State::Cancelled && haveWeights) {
    // Stopped: the best weights are the plan's; the live dose set (D w) stays as the record.
    if (shared->lastDose) {
      DoseSet set;
      set.dose.dose = *shared->lastDose;
      set.dose.unit = "Gy";
      set.dose.engine = "optimiser D w";
      set.name = tr("Optimisation stopped at iteration %1 (D w)").arg(outcome_.iterations);
      set.dose.label = set.name.toStdString();
      set.beams = plan_->engineBeams();
      if (liveIndex >= 0) store_->replace(liveIndex, std::move(set));
      else store_->add(std::move(set));
    }
    liveId_ = -1;
    emit message(tr("Optimisation stopped after %1: best weights kept (f = %2).")
                     .arg(countOf(outcome_.iterations, "iteration"))
                     .arg(outcome_.objective, 0, 'g', 5));
    if (finalAfterStop_) {
      if (Job* dose = controller_->computeDose(doseOptions_))
        connect(dose, &Job::succeeded, this, [this] {
          if (const auto cur = store_->current()) outcome_.finalDoseSetId = cur->id;
        });
    }
  } else {
    if (liveIndex >= 0) store_->remove(liveIndex);
    liveId_ = -1;
    if (job->state() == Job::State::Failed) emit message(tr("Optimisation failed: %1").arg(job->errorMessage()));
    else if (job->state() == Job::State::Cancelled) emit message(tr("Optimisation cancelled before the first iteration."));
  }
  emit finished(job);
}

}  // namespace penumbra::gui
