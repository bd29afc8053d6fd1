#include "gui/shell/batch_runner.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>

#include <QCoreApplication>
#include <QDockWidget>
#include <QImage>

#include "core/kernel_profile.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/optimise/optimise_controller.hpp"
#include "gui/optimise/optimise_panel.hpp"
#include "gui/overlays/dose_surface_display.hpp"
#include "gui/plan/beam_editor_panel.hpp"
#include "gui/plan/bev_panel.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui/views/slice_view.hpp"

namespace penumbra::gui {

EventLoopProbe::EventLoopProbe(int intervalMs, QObject* parent) : QObject(parent), intervalMs_(intervalMs) {
  timer_.setTimerType(Qt::PreciseTimer);
  timer_.setInterval(intervalMs);
  connect(&timer_, &QTimer::timeout, this, [this] {
    const auto now = std::chrono::steady_clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - last_).count();
    samples_.push_back(std::max(0.0, ms - intervalMs_));
    last_ = now;
  });
}

void EventLoopProbe::start() {
  samples_.clear();
  last_ = std::chrono::steady_clock::now();
  timer_.start();
}

void EventLoopProbe::stop() { timer_.stop(); }

double EventLoopProbe::medianMs() const { return medianOf(samples_); }

double EventLoopProbe::maxMs() const {
  return samples_.empty() ? 0 : *std::max_element(samples_.begin(), samples_.end());
}

BatchRunner::BatchRunner(MainWindow* window, BatchOptions options, QObject* parent)
    : QObject(parent), window_(window), options_(std::move(options)) {}

void BatchRunner::onSceneReady() {
  PlanningWorkspace* ws = window_->planning();
  if (options_.optimise()) return runOptimise();
  if (!options_.demoPlan && !options_.benchLatency) {
    // An opened dose (--open-dose) may still have DVH jobs: the DVH screenshot waits for them.
    if (!options_.compareScreenshot.isEmpty()) return whenDisplaysIdle([this] { runCompare(); });
    whenDisplaysIdle([this] { emit done(grabAndBench()); });
    return;
  }
  if (options_.benchLatency) probe_ = new EventLoopProbe(10, this);
  connect(ws, &PlanningWorkspace::demoPlanFinished, this, [this](bool ok, const QString& message) {
    std::printf("%s\n", qPrintable(message));
    std::fflush(stdout);
    if (!ok) return emit done(6);
    // The latency probe starts from an idle window: the demo plan's DVH job done.
    if (probe_) return whenDisplaysIdle([this] { benchLatency(); });
    afterPlan();
  });
  if (!ws->runDemoPlan(90)) emit done(6);
}

void BatchRunner::afterPlan() {
  PlanningWorkspace* ws = window_->planning();
  // Slices through the isocentre, so that the screenshots show the target and its dose.
  const auto& scene = window_->viewState()->scene();
  if (scene && ws->plan()->beamCount() > 0)
    window_->viewState()->setCrosshair(scene->grid().worldToIndex(ws->plan()->beam(0).beam.isocenter));
  auto grab = [this] {
    whenDisplaysIdle([this] {
      printPlanQuality();
      QTimer::singleShot(200, this, [this] { emit done(grabAndBench()); });
    });
  };
  if (options_.robustnessRun) return runRobustness(grab);
  grab();
}

void BatchRunner::printPlanQuality() {
  PlanningWorkspace* ws = window_->planning();
  const auto set = ws->doseSets()->current();
  if (!set || ws->plan()->beamCount() == 0) return;
  const QString target = ws->plan()->beam(0).targetName;
  const DoseSetDvhs* dvhs = ws->dvhs()->forDoseSet(set->id);
  const dvh::DvhResult* t = dvhs ? dvhs->find(target) : nullptr;
  const double rx = ws->plan()->prescriptionGy();
  if (!t || !(rx > 0)) return;
  // V95/V107 on the curve for the current prescription (the DVH job may have used another).
  const double v95 = 100 * dvh::volumeAtDoseCc(t->curve, 0.95 * rx) / t->stats.volumeCc;
  const double v107 = 100 * dvh::volumeAtDoseCc(t->curve, 1.07 * rx) / t->stats.volumeCc;
  std::printf("plan quality: %s D95 %.1f %%, V95 %.1f %%, V107 %.1f %%, Dmax %.1f %% of %.2f Gy (%s)\n",
              qPrintable(target), 100 * t->stats.d95Gy / rx, v95, v107, 100 * t->stats.maxGy / rx, rx,
              qPrintable(set->name));
  std::fflush(stdout);
}

void BatchRunner::whenDisplaysIdle(std::function<void()> then) {
  PlanningWorkspace* ws = window_->planning();
  auto* once = new QObject(this);
  auto check = [this, ws, once, then] {
    if (ws->doseSurfaces()->isBuilding() || ws->dvhs()->isBusy()) return;
    // Queued: the DVH job's own finished() handlers run first.
    QTimer::singleShot(0, this, [once, then] {
      if (!once->property("fired").toBool()) {
        once->setProperty("fired", true);
        once->deleteLater();
        then();
      }
    });
  };
  connect(ws->doseSurfaces(), &DoseSurfaceDisplay::surfacesUpdated, once, check);
  connect(ws->dvhs(), &DvhStore::dvhsChanged, once, check);
  connect(ws->jobs(), &JobRunner::jobFinished, once, check);
  check();
}

int BatchRunner::grabDock(const char* dockName, const QString& file, QSize size, const char* what) {
  auto* dock = window_->findChild<QDockWidget*>(dockName);
  if (dock) {
    // Floated and enlarged for a readable picture.
    dock->setFloating(true);
    dock->resize(size);
    dock->show();
    dock->raise();
    QCoreApplication::processEvents();
  }
  const QImage image = dock ? dock->grab().toImage() : QImage();
  if (image.isNull() || !image.save(file)) {
    std::fprintf(stderr, "penumbra: could not save the %s screenshot to %s\n", what, qPrintable(file));
    return 5;
  }
  std::printf("%s saved to %s (%dx%d)\n", what, qPrintable(file), image.width(), image.height());
  return 0;
}

int BatchRunner::grabAndBench() {
  if (options_.benchRenders > 0) {
    const int n = options_.benchRenders;
    const QSize px = window_->sliceView(SliceOrientation::Axial)->framebufferSizePx();
    const double still = window_->benchmarkSliceRender(SliceOrientation::Axial, n, false);
    const double scroll = window_->benchmarkSliceRender(SliceOrientation::Axial, n, true);
    if (still < 0 || scroll < 0) {
      std::fprintf(stderr, "penumbra: --bench-render: the axial view could not render\n");
      return 4;
    }
    std::printf("render axial slice view: median %.3f ms over %d renders (%dx%d px)\n", still, n,
                px.width(), px.height());
    std::printf("render axial slice view with slice change: median %.3f ms over %d renders (%dx%d px)\n",
                scroll, n, px.width(), px.height());
  }
  if (!options_.screenshot.isEmpty()) {
    const QImage image = window_->grabWindowImage();
    if (image.isNull() || !image.save(options_.screenshot)) {
      std::fprintf(stderr, "penumbra: could not save the screenshot to %s\n", qPrintable(options_.screenshot));
      return 5;
    }
    std::printf("screenshot saved to %s (%dx%d)\n", qPrintable(options_.screenshot), image.width(), image.height());
  }
  if (!options_.bevScreenshot.isEmpty()) {
    auto* dock = window_->findChild<QDockWidget*>("bevDock");
    auto* bev = window_->findChild<BevPanel*>("bevPanel");
    if (dock && bev) {
      // Floated and enlarged for a readable picture, on a middle layer.
      dock->setFloating(true);
      dock->resize(560, 620);
      const auto& plan = *window_->planning()->plan();
      if (plan.currentBeam() >= 0) bev->setLayer(int(plan.beam(plan.currentBeam()).beam.layers.size()) / 2);
      QCoreApplication::processEvents();
    }
    const QImage image = dock ? dock->grab().toImage() : QImage();
    if (image.isNull() || !image.save(options_.bevScreenshot)) {
      std::fprintf(stderr, "penumbra: could not save the BEV screenshot to %s\n", qPrintable(options_.bevScreenshot));
      return 5;
    }
    std::printf("beam's-eye view saved to %s (%dx%d)\n", qPrintable(options_.bevScreenshot), image.width(),
                image.height());
  }
  if (!options_.dvhScreenshot.isEmpty())
    if (const int rc = grabDock("dvhDock", options_.dvhScreenshot, QSize(1000, 600), "DVH panel")) return rc;
  if (!options_.profilingScreenshot.isEmpty())
    if (const int rc = grabDock("profilingDock", options_.profilingScreenshot, QSize(1000, 420), "kernel profiling panel"))
      return rc;
  std::fflush(stdout);
  return 0;
}

void BatchRunner::runOptimise() {
  PlanningWorkspace* ws = window_->planning();
  const auto& scene = window_->viewState()->scene();
  QString target;
  for (const auto& s : scene->patient().structures.structures)
    if (s.kind == StructureKind::Target && !s.mask.empty()) {
      target = QString::fromStdString(s.name);
      break;
    }
  if (target.isEmpty()) {
    std::fprintf(stderr, "penumbra: the case has no target structure\n");
    return emit done(6);
  }
  const proton::SpotGenerationOptions spotOptions = ws->beamEditor()->spotOptions();
  // Beams one after the other: spots for beam b, then the next beam, then the optimisation.
  auto next = std::make_shared<std::function<void(int)>>();
  *next = [this, ws, target, spotOptions, next](int b) {
    const double gantry[] = {0.0, 90.0};
    if (b == 2) {
      connect(ws->optimiser(), &OptimiseController::finished, this, [this](Job* job) {
        if (job->state() != Job::State::Done) {
          std::fprintf(stderr, "penumbra: optimisation %s %s\n", qPrintable(Job::stateName(job->state())),
                       qPrintable(job->errorMessage()));
          return emit done(6);
        }
        whenDisplaysIdle([this] { afterOptimise(); });
      });
      ws->optimisePanel()->optimise();
      if (!ws->optimiser()->isRunning()) emit done(6);
      return;
    }
    const int beam = ws->controller()->addBeamOnTarget(target, gantry[b]);
    Job* spots = ws->controller()->generateSpots(beam, target, spotOptions);
    if (!spots) return emit done(6);
    connect(spots, &Job::finished, this, [this, spots, next, b] {
      if (spots->state() != Job::State::Done) return emit done(6);
      (*next)(b + 1);
    });
  };
  (*next)(0);
}

void BatchRunner::afterOptimise() {
  PlanningWorkspace* ws = window_->planning();
  const OptimiseOutcome& o = ws->optimiser()->outcome();
  const auto set = ws->doseSets()->at(ws->doseSets()->indexOfId(o.finalDoseSetId));
  const DoseSetDvhs* dvhs = ws->dvhs()->forDoseSet(o.finalDoseSetId);
  const QString target = ws->plan()->beamCount() > 0 ? ws->plan()->beam(0).targetName : QString();
  const dvh::DvhResult* t = dvhs ? dvhs->find(target) : nullptr;
  const double rx = ws->plan()->prescriptionGy();
  if (options_.benchOptimise) {
    std::printf("optimise: %.2f iterations/s, backend %s, %zu spots, %lld voxels (dose grid, %lld in objectives), "
                "%lld non-zeros, %d iterations (%s, %.1f s; matrix %.1f s), %s D95 %.1f %% Dmax %.1f %% of %.2f Gy\n",
                o.iterationsPerSecond, qPrintable(o.backend), ws->plan()->totalSpots(), (long long)o.rows,
                (long long)o.objectiveVoxels, (long long)o.nnz, o.iterations, optimise::toString(o.state),
                o.optimiseSeconds, o.matrixSeconds, qPrintable(target), t ? 100 * t->stats.d95Gy / rx : -1.0,
                t ? 100 * t->stats.maxGy / rx : -1.0, rx);
    std::fflush(stdout);
  }
  if (!set || !t) {
    std::fprintf(stderr, "penumbra: no final dose or target DVH after the optimisation\n");
    return emit done(6);
  }
  if (!options_.optimiseScreenshot.isEmpty())
    if (const int rc = grabDock("optimiseDock", options_.optimiseScreenshot, QSize(560, 820), "Optimise panel"))
      return emit done(rc);
  emit done(grabAndBench());
}

void BatchRunner::benchLatency() {
  // Baseline first: the same probe for 2 s with no job (what the machine's own load costs).
  if (!baselineDone_) {
    baselineDone_ = true;
    probe_->start();
    QTimer::singleShot(2000, this, [this] {
      probe_->stop();
      std::printf("event-loop latency with no job (baseline, %zu ticks over 2.0 s): median %.2f ms, max %.2f ms\n",
                  probe_->latenciesMs().size(), probe_->medianMs(), probe_->maxMs());
      benchLatency();
    });
    return;
  }
  // A second run of the demo plan started from an idle window (the first run's result and
  // the spot generation have been drawn), measured from its start until its worker returns,
  // before the result is displayed.
  DoseRunOptions o;
  o.backend = Backend::Cpu;
  Job* job = window_->planning()->controller()->computeDose(o);
  if (!job) return emit done(7);
  probe_->start();
  connect(job, &Job::stateChanged, this, [this, job](Job::State s) {
    if (s == Job::State::Running || s == Job::State::Cancelling) return;
    probe_->stop();
    std::printf("event-loop latency during a CPU dose job (QTimer 10 ms, %zu ticks over %.1f s): "
                "median %.2f ms, max %.2f ms\n",
                probe_->latenciesMs().size(), job->elapsedSeconds(), probe_->medianMs(), probe_->maxMs());
    std::fflush(stdout);
  });
  connect(job, &Job::finished, this, [this] {
    if (const auto set = window_->planning()->doseSets()->current())
      for (const auto& p : set->profiles)
        std::printf("  %-26s %-12s %8.1f ms\n", p.kernel.c_str(), p.variant.c_str(), p.medianMs);
    std::fflush(stdout);
    QTimer::singleShot(0, this, [this] { cancelRun(0); });
  });
}

void BatchRunner::cancelRun(std::size_t which) {
  PlanningWorkspace* ws = window_->planning();
  if (which >= cancelAt_.size()) {
    const double worst = cancelMs_.empty() ? 0 : *std::max_element(cancelMs_.begin(), cancelMs_.end());
    std::printf("cancel latency: worst %.1f ms over %zu cancels\n", worst, cancelMs_.size());
    std::fflush(stdout);
    if (!options_.anyScreenshot()) return emit done(0);
    return afterPlan();
  }
  DoseRunOptions o;
  o.backend = Backend::Cpu;
  Job* job = ws->controller()->computeDose(o);
  if (!job) return emit done(7);
  const double at = cancelAt_[which];
  connect(job, &Job::progressChanged, this, [job, at](double f) {
    if (f >= at && job->state() == Job::State::Running) job->cancel();
  });
  connect(job, &Job::finished, this, [this, job, at, which] {
    if (job->state() == Job::State::Cancelled) {
      cancelMs_.push_back(job->cancelLatencyMs());
      std::printf("cancel at %.0f %% (stage '%s'): cancelled %.1f ms after the request\n", 100 * at,
                  qPrintable(job->stage()), job->cancelLatencyMs());
    } else {
      std::printf("cancel at %.0f %%: the job ended %s before the cancel landed\n", 100 * at,
                  qPrintable(Job::stateName(job->state())));
    }
    std::fflush(stdout);
    QTimer::singleShot(0, this, [this, which] { cancelRun(which + 1); });
  });
}

}  // namespace penumbra::gui
