#include "gui/plan/live_dose_controller.hpp"

#include <algorithm>

#include <QAction>
#include <QKeySequence>
#include <QStringList>
#include <QWidget>  // plan_controller.hpp's QPointer<QWidget>

#include "core/patient.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/view_state.hpp"

namespace penumbra::gui {

namespace {
const char* gridName(LiveGrid g) { return g == LiveGrid::Preview ? "preview" : "full"; }
QString backendName(Backend b) { return b == Backend::Cuda ? QStringLiteral("GPU") : QStringLiteral("CPU"); }
double largestSpacing(const Grid& g) { return std::max({g.spacing[0], g.spacing[1], g.spacing[2]}); }
}  // namespace

LiveDoseController::LiveDoseController(PlanController* controller, std::function<DoseRunOptions()> options,
                                       QObject* parent)
    : QObject(parent), controller_(controller), options_(std::move(options)) {
  action_ = new QAction(tr("&Live dose"), this);
  action_->setObjectName("actionLiveDose");
  action_->setCheckable(true);
  action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  action_->setToolTip(tr("Live dose (Ctrl+L): recompute the edited beam's dose at every edit (a coarse "
                         "preview while you edit on the CPU, the full grid when you stop)"));
  connect(action_, &QAction::toggled, this, &LiveDoseController::setOn);
  merge_.setSingleShot(true);
  merge_.setInterval(0);
  connect(&merge_, &QTimer::timeout, this, &LiveDoseController::onEditsMerged);
  settle_.setSingleShot(true);
  settle_.setInterval(300);
  connect(&settle_, &QTimer::timeout, this, &LiveDoseController::onSettled);
  PlanModel* plan = controller_->plan();
  connect(plan, &PlanModel::beamChanged, this, &LiveDoseController::onEdited);
  connect(plan, &PlanModel::spotsChanged, this, &LiveDoseController::onEdited);
  // Indices shift: every cached beam dose may belong to another beam now.
  connect(plan, &PlanModel::beamAdded, this, [this](int b) { dropCaches(), onEdited(b); });
  connect(plan, &PlanModel::beamRemoved, this, [this] { dropCaches(), onEdited(-1); });
  connect(controller_->viewState(), &ViewState::sceneChanged, this, &LiveDoseController::onSceneChanged);
  connect(controller_->doseSets(), &DoseSetStore::doseSetRemoved, this, [this] {
    if (controller_->doseSets()->indexOfId(liveId_) < 0) liveId_ = -1;
  });
}

LiveDoseController::~LiveDoseController() = default;

void LiveDoseController::setOn(bool on) {
  if (on == on_) return;
  on_ = on;
  action_->setChecked(on);
  if (on) {
    // Turning live dose on again is the user's way to try the GPU again after a fault.
    cpuFallback_ = false;
    lastFullMs_ = -1;
    dropCaches();
    const int b = controller_->plan()->currentBeam();
    onEdited(b >= 0 ? b : -1);
  } else {
    merge_.stop();
    settle_.stop();
    pending_ = false;
    if (running_.job) {
      running_.superseded = true;
      running_.job->cancel();
    }
    setStatus({});
  }
  emit toggled(on);
}

void LiveDoseController::dropCaches() {
  cache_.clear();
  revisions_.assign(std::size_t(controller_->plan()->beamCount()), 0);
  ++cacheEpoch_;
}

void LiveDoseController::onEdited(int beam) {
  if (!on_ || applying_) return;
  PlanModel* plan = controller_->plan();
  revisions_.resize(std::size_t(plan->beamCount()), 0);
  if (beam >= 0 && beam < plan->beamCount()) {
    ++revisions_[std::size_t(beam)];
    modality_ = plan->beam(beam).isPhoton() ? LiveModality::Photon : LiveModality::Proton;
  }
  ++generation_;
  merge_.start();  // the rest of this user action's signals (regrown aperture, outline) first
  settle_.start();
}

void LiveDoseController::onEditsMerged() {
  request(usePreview(options_()) ? LiveGrid::Preview : LiveGrid::Full);
}

void LiveDoseController::onSettled() { request(LiveGrid::Full); }

void LiveDoseController::editsFinished() {
  if (!on_ || !settle_.isActive()) return;
  settle_.stop();
  // The last move's request goes out first (a preview, if no job is busy with an older edit).
  if (merge_.isActive()) {
    merge_.stop();
    onEditsMerged();
  }
  request(LiveGrid::Full);
}

double LiveDoseController::fullSpacingMm(const DoseRunOptions& o) const {
  if (o.doseGridMm > 0) return o.doseGridMm;
  const auto& scene = controller_->viewState()->scene();
  return scene ? largestSpacing(scene->patient().ct.grid) : 1.0;
}

double LiveDoseController::previewSpacingMm(const DoseRunOptions& o) const {
  const double full = fullSpacingMm(o);
  const double preview = previewMm_ > 0 ? previewMm_ : std::max(4.0, 2 * full);
  return preview > full * 1.01 ? preview : 0;
}

bool LiveDoseController::usePreview(const DoseRunOptions& o) const {
  if (previewSpacingMm(o) <= 0) return false;
  if (cpuFallback_ || o.backend == Backend::Cpu) return true;
  if (gpu_ < 0) gpu_ = selectBackend(o.backend).backend == Backend::Cuda ? 1 : 0;  // asked once
  // A GPU that computes the full grid within kSlowGpuMs needs no preview.
  return gpu_ == 0 || lastFullMs_ < 0 || lastFullMs_ > kSlowGpuMs;
}

void LiveDoseController::request(LiveGrid grid) {
  if (!on_) return;
  // A job started after the edit builds its input from the plan as it is then: a request that
  // job (or the result on screen) already answers needs no second run.
  const bool running = running_.job && !running_.superseded && running_.generation == generation_ &&
                       running_.grid >= grid;
  const bool shown = published_.generation == generation_ && published_.grid >= grid;
  if (running || shown) return;
  pending_ = true;
  pendingGrid_ = grid;
  if (running_.job) {
    // The running job ends at its next cancel check; the latest request starts after it.
    if (running_.generation < generation_ && !running_.superseded) {
      running_.superseded = true;
      running_.job->cancel();
    }
    return;
  }
  startPending();
}

bool LiveDoseController::buildInput(LiveGrid grid, LiveDoseInput& in, LivePublication& what) {
  const auto& scene = controller_->viewState()->scene();
  const PlanModel* plan = controller_->plan();
  if (!scene) return false;
  const DoseRunOptions o = options_();
  in.modality = modality_;
  in.patient = scene->sharedPatient();
  const double previewMm = previewSpacingMm(o);
  const double spacing = grid == LiveGrid::Preview && previewMm > 0 ? previewMm : o.doseGridMm;
  if (spacing > 0) in.doseGrid = coveringGrid(in.patient->ct.grid, spacing);
  in.backend = cpuFallback_ ? Backend::Cpu : o.backend;
  in.variant = o.variant;
  in.cpuThreads = o.cpuThreads;
  in.photonParams.polarCones = o.photon.polarCones;
  in.photonParams.azimuthalCones = o.photon.azimuthalCones;
  in.photonParams.variant = o.variant;
  in.photonParams.deposit = o.photon.deposit;
  in.photonParams.cpuThreads = o.cpuThreads;
  in.photonModel = controller_->photonModelProvider();
  in.spr = spr_;
  in.probe = probe_;
  // The cached beam doses hold for these engine settings only.
  const std::string signature = std::to_string(int(o.variant)) + "/" + std::to_string(o.photon.polarCones) + "x" +
                                std::to_string(o.photon.azimuthalCones) + "/" + std::to_string(int(o.photon.deposit)) +
                                "/" + std::to_string(o.doseGridMm) + "/" + std::to_string(previewMm);
  if (signature != cacheSignature_) dropCaches(), cacheSignature_ = signature;
  revisions_.resize(std::size_t(plan->beamCount()), 0);
  const auto& cache = cache_[grid];
  for (int b = 0; b < plan->beamCount(); ++b) {
    const PlannedBeam& p = plan->beam(b);
    if (p.isPhoton() != (modality_ == LiveModality::Photon)) continue;
    LiveBeamTask t;
    t.index = b;
    t.revision = revisions_[std::size_t(b)];
    t.name = p.beam.name;
    if (const auto c = cache.find(b); c != cache.end() && c->second.revision == t.revision) t.cached = c->second.dose;
    if (p.isPhoton()) {
      t.photon = photonEngineBeam(p);
      what.photonBeams.push_back(t.photon);
    } else {
      t.proton = p.beam;
      t.spotOptions = p.options;
      const Structure* s = in.patient->structures.find(p.targetName.toStdString());
      if (s && !s->mask.empty()) t.target = &s->mask;  // the patient (captured) owns it
      what.protonBeams.push_back(t.proton);
    }
    in.beams.push_back(std::move(t));
  }
  what.generation = generation_;
  what.grid = grid;
  what.spacingMm = spacing > 0 ? spacing : largestSpacing(in.patient->ct.grid);
  what.modality = modality_;
  return !in.beams.empty();
}

void LiveDoseController::startPending() {
  pending_ = false;
  const LiveGrid grid = pendingGrid_;
  auto input = std::make_shared<LiveDoseInput>();
  LivePublication what;
  if (!buildInput(grid, *input, what)) {
    setStatus(tr("live: no %1 beam to compute").arg(modality_ == LiveModality::Photon ? "photon" : "proton"));
    return;
  }
  Running run;
  run.generation = generation_;
  run.grid = grid;
  run.requested = input->backend;
  // The worker takes the input out of the box and drops it when done: finished jobs stay in
  // the job list, and must not keep cached dose volumes (or a closed patient) alive.
  auto box = std::make_shared<std::shared_ptr<LiveDoseInput>>(std::move(input));
  auto out = std::make_shared<LiveDoseOutput>();
  const QString title = grid == LiveGrid::Preview
                            ? tr("Live dose %1 (preview %2 mm)").arg(++runNumber_).arg(what.spacingMm, 0, 'g', 3)
                            : tr("Live dose %1 (full grid)").arg(++runNumber_);
  Job* job = controller_->jobs()->submitBeside(title, [box, out](const JobControl& jc) {
    const std::shared_ptr<const LiveDoseInput> in = std::move(*box);
    *out = runLiveDose(*in, jc);
  });
  run.job = job;
  running_ = run;
  const int epoch = cacheEpoch_;
  connect(job, &Job::finished, this, [this, job, out, run, epoch, what] { onJobFinished(job, out, run, epoch, what); });
  if (published_.generation == 0 || grid == LiveGrid::Preview)
    setStatus(grid == LiveGrid::Preview ? tr("live: preview %1 mm...").arg(what.spacingMm, 0, 'g', 3)
                                        : tr("live: computing..."));
}

void LiveDoseController::onJobFinished(Job* job, const std::shared_ptr<LiveDoseOutput>& out, Running run, int epoch,
                                       const LivePublication& what) {
  // Cancelled by a newer edit, by turning live off or by a new patient (running_ reset), or
  // by the user (Jobs dock): only the last is news.
  bool superseded = true;
  if (running_.job == job) {
    superseded = running_.superseded;
    running_ = {};
  }
  if (job->state() == Job::State::Done && epoch == cacheEpoch_) {
    // Beam doses still valid for the plan as it is now go to the cache, even from a result
    // that is too old to show: the next run then skips those beams.
    auto& cache = cache_[run.grid];
    for (const auto& c : out->computed)
      if (c.index >= 0 && c.index < int(revisions_.size()) && revisions_[std::size_t(c.index)] == c.revision)
        cache[c.index] = {c.revision, c.dose};
    if (out->spr) spr_ = out->spr;
  }
  if (job->state() == Job::State::Done && on_) {
    const bool newest = run.generation == generation_;
    const bool notOlder = run.generation > published_.generation ||
                          (run.generation == published_.generation && run.grid >= published_.grid);
    if (newest && notOlder && !out->dose.empty()) {
      LivePublication p = what;
      p.backend = out->computed.empty() ? published_.backend : out->backend;
      p.wallMs = out->wallMs;
      if (epoch == cacheEpoch_) applySpots(*out);
      publish(*out, std::move(p));
    } else if (newest && out->dose.empty()) {
      for (const auto& m : out->messages) emit message(QString::fromStdString(m));
      setStatus(tr("live: no dose (no beam with spots or a target)"));
    }
  } else if (job->state() == Job::State::Failed && on_) {
    emit message(tr("Live dose failed: %1").arg(job->errorMessage()));
    const bool gpuFault = job->errorCode() == ErrorCode::OutOfMemory || job->errorCode() == ErrorCode::Cuda;
    if (gpuFault && run.requested != Backend::Cpu && !cpuFallback_) {
      // Out of GPU memory or a driver error: keep the last good dose, go on on the CPU. Other
      // errors (a missing beam model, an invalid plan) would fail on the CPU just the same.
      cpuFallback_ = true;
      setStatus(tr("live: GPU failed (%1): CPU preview").arg(job->errorMessage().left(80)));
      if (!pending_) request(usePreview(options_()) ? LiveGrid::Preview : LiveGrid::Full);
    } else {
      setStatus(tr("live: failed, last dose kept: %1").arg(job->errorMessage().left(80)));
    }
  } else if (job->state() == Job::State::Cancelled && on_ && !superseded) {
    // The user cancelled this edit: no full grid for it either, until the next edit.
    settle_.stop();
    pending_ = false;
    setStatus(tr("live: cancelled, last dose kept"));
  }
  *out = {};  // the job (kept in the job list) must not hold the volumes
  if (pending_ && on_ && !running_.job) startPending();
}

void LiveDoseController::applySpots(const LiveDoseOutput& out) {
  PlanModel* plan = controller_->plan();
  applying_ = true;  // the plan gets what the dose was computed with: not a new edit
  for (const auto& s : out.spots) {
    if (s.index < 0 || s.index >= plan->beamCount() || revisions_[std::size_t(s.index)] != s.revision) continue;
    const PlannedBeam& p = plan->beam(s.index);
    if (p.isPhoton() || !p.beam.layers.empty()) continue;
    const proton::SpotGenerationOptions options = p.options;
    const QString target = p.targetName;
    plan->setSpots(s.index, s.result, options, target);
  }
  applying_ = false;
}

void LiveDoseController::publish(LiveDoseOutput& out, LivePublication what) {
  DoseSetStore* store = controller_->doseSets();
  const bool photons = what.modality == LiveModality::Photon;
  const bool preview = what.grid == LiveGrid::Preview;
  QStringList angles;
  if (photons)
    for (const auto& b : what.photonBeams) angles << QString::number(b.gantryDeg);
  else
    for (const auto& b : what.protonBeams) angles << QString::number(b.gantryDeg);
  DoseSet set;
  set.dose.dose = std::move(out.dose);
  set.dose.unit = "Gy";
  set.dose.engine = photons ? "photon collapsed cone (CCCS)" : "proton pencil beam";
  set.dose.backend = toString(what.backend);
  set.dose.computeSeconds = what.wallMs / 1000.0;
  set.dose.parameters = std::string("live=") + gridName(what.grid) + "\ngrid=" + std::to_string(what.spacingMm) +
                        " mm\ngeneration=" + std::to_string(what.generation) +
                        "\ngantry=" + angles.join(',').toStdString() + "\ndevice=" + out.device;
  set.name = tr("Live: %1, %2, %3")
                 .arg(photons ? tr("photons") : tr("protons"), countOf(qsizetype(angles.size()), "beam"),
                      preview ? tr("preview %1 mm").arg(what.spacingMm, 0, 'g', 3) : tr("full grid"));
  set.dose.label = set.name.toStdString();
  set.beams = std::move(out.protonBeams);
  set.profiles = std::move(out.profiles);
  set.messages = std::move(out.messages);
  set.live = true;  // its DVH jobs run beside the queue, and a newer version cancels the older's
  // Engine notes (a fallback, a beam without dose) once, not at every edit.
  QStringList notes;
  for (const auto& m : set.messages) notes << QString::fromStdString(m);
  for (const auto& n : notes)
    if (!lastNotes_.contains(n)) emit message(tr("Live dose: %1").arg(n));
  lastNotes_ = notes;
  const int index = store->indexOfId(liveId_);
  if (index >= 0) {
    store->replace(index, std::move(set));
    store->setCurrentIndex(index);
  } else {
    liveId_ = store->at(store->add(std::move(set)))->id;
  }
  what.doseSetId = liveId_;
  if (!preview && what.backend == Backend::Cuda) lastFullMs_ = what.wallMs;
  setStatus(preview ? tr("live: preview %1 mm, refining...").arg(what.spacingMm, 0, 'g', 3)
                    : tr("live: %1 ms (%2)").arg(what.wallMs, 0, 'f', 0).arg(backendName(what.backend)));
  published_ = std::move(what);
  // The user stopped editing while the preview ran: the full grid follows now.
  if (preview && !settle_.isActive() && !pending_) request(LiveGrid::Full);
  emit resultShown(published_.generation);
}

void LiveDoseController::setStatus(const QString& text) {
  if (text == status_) return;
  status_ = text;
  emit statusChanged(text);
}

void LiveDoseController::onSceneChanged() {
  // The patient closed: its GPU memory goes back, whether live was on or not (the GPU caches
  // serve every dose run of the patient, live or Compute dose). The workspace cancels every
  // job and clears the store; what is left here is the old patient's state.
  releaseEngineGpuCaches();
  merge_.stop();
  settle_.stop();
  pending_ = false;
  running_ = {};
  ++generation_;  // a result for the old patient is never shown
  dropCaches();
  spr_.reset();
  liveId_ = -1;
  published_ = {};
  cpuFallback_ = false;
  lastFullMs_ = -1;
  lastNotes_.clear();
  if (on_) setStatus(tr("live: on"));
}

}  // namespace penumbra::gui
