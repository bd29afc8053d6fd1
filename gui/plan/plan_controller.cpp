#include "gui/plan/plan_controller.hpp"

#include <algorithm>
#include <cmath>

#include <QTime>
#include <QMessageBox>
#include <QPushButton>

#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/view_state.hpp"
#include "gui/plan/live_dose_job.hpp"  // prepareProtonTables
#include "proton/proton_dose.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::gui {

Grid coveringGrid(const Grid& ct, double spacingMm) {
  Vec3 lo, hi;
  ct.worldBounds(lo, hi);
  Grid g;
  g.spacing = {spacingMm, spacingMm, spacingMm};
  for (int a = 0; a < 3; ++a) {
    const double extent = hi[a] - lo[a];
    g.dims[a] = std::max(1, int(std::floor(extent / spacingMm)));
    // Centre the voxel centres in the box.
    g.origin[a] = lo[a] + 0.5 * (extent - (g.dims[a] - 1) * spacingMm);
  }
  return g;
}

namespace {
bool sameWeights(const std::vector<proton::ProtonBeam>& a, const std::vector<proton::ProtonBeam>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].layers.size() != b[i].layers.size()) return false;
    for (std::size_t l = 0; l < a[i].layers.size(); ++l) {
      const auto& sa = a[i].layers[l].spots;
      const auto& sb = b[i].layers[l].spots;
      if (sa.size() != sb.size()) return false;
      for (std::size_t s = 0; s < sa.size(); ++s)
        if (std::abs(sa[s].weight - sb[s].weight) > 1e-9 * std::max(1.0, sa[s].weight)) return false;
    }
  }
  return true;
}
}  // namespace

bool sameMonitorUnits(const std::vector<photon::PhotonBeam>& a, const std::vector<photon::PhotonBeam>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].name != b[i].name ||
        std::abs(a[i].monitorUnits - b[i].monitorUnits) > 1e-9 * std::max(1.0, a[i].monitorUnits))
      return false;
  return true;
}

PlanController::PlanController(ViewState* state, PlanModel* plan, DoseSetStore* store,
                               JobRunner* jobs, QWidget* dialogParent, QObject* parent)
    : QObject(parent), state_(state), plan_(plan), store_(store), jobs_(jobs), dialogParent_(dialogParent) {
  photonModel_ = defaultPhotonModelProvider();
  connect(plan_, &PlanModel::photonShapesStale, this, &PlanController::updatePhotonShapes);
  connect(store_, &DoseSetStore::doseSetRemoved, this, [this] {
    for (auto it = photonSnapshots_.begin(); it != photonSnapshots_.end();)
      it = store_->indexOfId(it->first) < 0 ? photonSnapshots_.erase(it) : std::next(it);
  });
}

const Structure* PlanController::findStructure(const QString& name) const {
  const auto& scene = state_->scene();
  return scene ? scene->patient().structures.find(name.toStdString()) : nullptr;
}

bool PlanController::targetCentroid(const QString& targetName, Vec3& lps) const {
  const Structure* s = findStructure(targetName);
  if (!s || s->mask.empty()) return false;
  try {
    lps = proton::targetCentroid(s->mask);  // mask on the imported CT grid: LPS either way
    return true;
  } catch (const Error&) {
    return false;
  }
}

int PlanController::addBeamOnTarget(const QString& targetName, double gantryDeg, double couchDeg) {
  const auto& scene = state_->scene();
  if (!scene) return -1;
  proton::ProtonBeam beam;
  beam.name = QString("G%1").arg(gantryDeg).toStdString();
  beam.gantryDeg = gantryDeg;
  beam.couchDeg = couchDeg;
  if (!targetCentroid(targetName, beam.isocenter)) {
    beam.isocenter = scene->worldOf(scene->centreIndex());
    emit message(tr("No target '%1': isocentre at the CT centre.").arg(targetName));
  }
  return plan_->addBeam(std::move(beam), targetName);
}

Job* PlanController::generateSpots(int beamIndex, const QString& targetName,
                                   const proton::SpotGenerationOptions& options) {
  const auto& scene = state_->scene();
  const Structure* target = findStructure(targetName);
  if (!scene || beamIndex < 0 || beamIndex >= plan_->beamCount() || !target || target->mask.empty()) {
    emit message(tr("Cannot generate spots: choose a beam and a target structure with a mask."));
    return nullptr;
  }
  if (plan_->beam(beamIndex).isPhoton()) {
    emit message(tr("Cannot generate spots: %1 is a photon beam (shape its field instead).")
                     .arg(QString::fromStdString(plan_->beam(beamIndex).beam.name)));
    return nullptr;
  }
  const proton::ProtonBeam& b = plan_->beam(beamIndex).beam;
  const proton::BeamPlacement placement{b.name, b.gantryDeg, b.couchDeg, b.isocenter,
                                        b.virtualSourceDistanceMm};
  auto patient = scene->sharedPatient();  // keeps the CT and mask alive on the worker
  auto result = std::make_shared<proton::SpotGenerationResult>();
  Job* job = jobs_->submit(tr("Spots for %1 on %2").arg(QString::fromStdString(b.name), targetName),
                           [patient, target, placement, options, result](const JobControl& jc) {
                             jc.report(0.05, "spot generation: stopping powers and BEV rays");
                             *result = proton::generateSpots(patient->ct, {}, target->mask, placement, options);
                             jc.checkCancel();
                             jc.report(1.0, "spot generation: done");
                           });
  // The beam is identified by name: the user may delete or add beams while the job runs.
  const QString beamName = QString::fromStdString(b.name);
  connect(job, &Job::succeeded, this, [this, result, options, targetName, beamName] {
    for (int i = 0; i < plan_->beamCount(); ++i) {
      if (QString::fromStdString(plan_->beam(i).beam.name) != beamName) continue;
      for (const auto& m : result->messages) emit message(QString::fromStdString(m));
      emit message(tr("%1: %2, %3 on %4")
                       .arg(beamName, countOf(qsizetype(result->beam.layers.size()), "layer"),
                            countOf(qsizetype(result->beam.spotCount()), "spot"), targetName));
      plan_->setSpots(i, std::move(*result), options, targetName);
      emit spotsGenerated(i);
      return;
    }
  });
  connect(job, &Job::failed, this, [this, job] {
    emit message(tr("Spot generation failed: %1").arg(job->errorMessage()));
    if (showDialogs_) {
      auto* box = new QMessageBox(QMessageBox::Critical, tr("Spot generation failed"), job->errorMessage(),
                                  QMessageBox::Ok, dialogParent_);
      box->setObjectName("jobErrorDialog");
      box->setAttribute(Qt::WA_DeleteOnClose);
      box->setModal(false);
      box->show();
      errorDialog_ = box;
    }
  });
  return job;
}

Job* PlanController::computeDose(const DoseRunOptions& options) {
  if (plan_->photonBeamCount() == 0) return computeProtonDose(options);
  Job* first = plan_->totalSpots() > 0 ? computeProtonDose(options) : nullptr;
  Job* photons = computePhotonDose(options);
  return first ? first : photons;
}

Job* PlanController::computeProtonDose(const DoseRunOptions& options) {
  const auto& scene = state_->scene();
  if (!scene || plan_->totalSpots() == 0) {
    emit message(tr("Cannot compute dose: no beam has spots (generate spots first)."));
    return nullptr;
  }
  lastOptions_ = options;
  auto patient = scene->sharedPatient();
  auto request = std::make_shared<proton::ProtonDoseRequest>();
  request->ct = std::shared_ptr<const CtVolume>(patient, &patient->ct);  // aliasing: no copy
  request->beams = plan_->engineBeams();
  if (options.doseGridMm > 0) request->doseGrid = coveringGrid(patient->ct.grid, options.doseGridMm);
  request->backend = options.backend;
  request->variant = options.variant;
  request->params.cpuThreads = options.cpuThreads;
  auto result = std::make_shared<proton::ProtonDoseResult>();
  const int run = ++runNumber_;
  Job* job = jobs_->submit(tr("Proton dose %1 (%2, %3)")
                               .arg(run)
                               .arg(countOf(qsizetype(request->beams.size()), "beam"),
                                    countOf(qsizetype(plan_->totalSpots()), "spot")),
                           [request, result](const JobControl& jc) {
                             prepareProtonTables(request->beams, jc);  // with cancel checks
                             *result = proton::computeProtonDose(*request, jc);
                           });
  const QString when = QTime::currentTime().toString("HH:mm:ss");
  const std::weak_ptr<const Patient> forPatient = patient;
  connect(job, &Job::succeeded, this, [this, result, request, run, when, forPatient] {
    // A dose for a patient that is no longer open is dropped.
    if (!state_->scene() || state_->scene()->sharedPatient() != forPatient.lock()) return;
    DoseSet set;
    set.dose.dose = std::move(result->dose);
    set.dose.unit = "Gy";
    set.dose.engine = "proton pencil beam";
    set.dose.backend = toString(result->backend);
    set.dose.computeSeconds = result->elapsedMs / 1000.0;
    set.dose.parameters = std::string("variant=") + toString(request->variant) +
                          "\ndevice=" + result->device;
    set.name = tr("Dose %1: %2, %3, %4").arg(run).arg(countOf(qsizetype(request->beams.size()), "beam"),
                   QString::fromStdString(set.dose.backend).toUpper(), when);
    set.dose.label = set.name.toStdString();
    set.beams = request->beams;
    set.profiles = std::move(result->profiles);
    set.messages = std::move(result->messages);
    for (const auto& m : set.messages) emit message(QString::fromStdString(m));
    const double seconds = set.dose.computeSeconds;
    const int index = store_->add(std::move(set));
    emit message(tr("%1 computed in %2 s, max %3 Gy")
                     .arg(store_->at(index)->name)
                     .arg(seconds, 0, 'f', 2)
                     .arg(store_->at(index)->maxGy, 0, 'f', 3));
    emit doseComputed(index);
  });
  connect(job, &Job::failed, this, [this, job, options] { onDoseFailed(job, options); });
  return job;
}

void PlanController::onDoseFailed(Job* job, const DoseRunOptions& options, bool photons) {
  emit message(tr("Dose computation failed: %1").arg(job->errorMessage()));
  if (!showDialogs_) return;
  const bool gpuOom = job->errorCode() == ErrorCode::OutOfMemory && options.backend != Backend::Cpu;
  auto* box = new QMessageBox(QMessageBox::Critical, tr("Dose computation failed"), job->errorMessage(),
                              QMessageBox::Ok, dialogParent_);
  box->setObjectName("jobErrorDialog");
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setModal(false);
  if (photons && job->errorMessage().startsWith(kPhotonModelFailure))
    box->setInformativeText(tr("The photon dose engine needs the 6 MV beam data (spectrum, kernels and "
                               "attenuation tables): a folder holding photon-beam/ and reference/, found "
                               "through $PENUMBRA_DATA or next to the sources as ../shared/data. The proton "
                               "engine and the rest of the application are not affected."));
  if (gpuOom) {
    box->setInformativeText(tr("The plan does not fit in the GPU's memory. The CPU backend computes "
                               "the same dose with host memory (slower)."));
    QPushButton* cpu = box->addButton(tr("Run on CPU"), QMessageBox::AcceptRole);
    cpu->setObjectName("runOnCpuButton");
    connect(cpu, &QPushButton::clicked, this, [this, options, photons] {
      DoseRunOptions o = options;
      o.backend = Backend::Cpu;
      photons ? computePhotonDose(o) : computeProtonDose(o);
    });
  }
  box->show();
  errorDialog_ = box;
}

double PlanController::normaliseCurrentDose(const QString& targetName, NormalisationMode mode) {
  const int index = store_->currentIndex();
  const auto set = store_->current();
  const Structure* target = findStructure(targetName);
  if (!set || !target || target->mask.empty()) {
    emit message(tr("Normalise: needs a dose set and a target structure."));
    return 0;
  }
  // Dose at the target's voxel centres (mask on the imported CT grid), trilinear.
  std::vector<double> doses;
  const Mask& m = target->mask;
  for (int k = 0; k < m.grid.dims[2]; ++k)
    for (int j = 0; j < m.grid.dims[1]; ++j)
      for (int i = 0; i < m.grid.dims[0]; ++i) {
        double gy = 0;
        if (m.at(i, j, k) && sampleDose(set->dose.dose, m.grid.indexToWorld(Vec3{double(i), double(j), double(k)}), gy))
          doses.push_back(gy);
      }
  if (doses.empty()) {
    emit message(tr("Normalise: the dose grid does not cover %1.").arg(targetName));
    return 0;
  }
  double reference = 0;
  if (mode == NormalisationMode::TargetMean) {
    for (double d : doses) reference += d;
    reference /= double(doses.size());
  } else {
    std::nth_element(doses.begin(), doses.begin() + std::ptrdiff_t(doses.size() / 2), doses.end());
    reference = doses[doses.size() / 2];
  }
  if (!(reference > 0)) {
    emit message(tr("Normalise: no dose in %1.").arg(targetName));
    return 0;
  }
  const double rx = plan_->prescriptionGy();
  const double factor = rx / reference;
  // A photon dose set: the plan's MU are scaled when they are still the ones it was computed
  // for (same test as for proton spot weights below).
  const auto photons = photonSnapshots_.find(set->id);
  if (photons != photonSnapshots_.end()) {
    const bool sameMu = sameMonitorUnits(plan_->photonEngineBeams(), photons->second);
    DoseSet scaled = *set;
    for (float& v : scaled.dose.dose.data) v = float(v * factor);
    for (auto& b : photons->second) b.monitorUnits *= factor;
    scaled.normalisation = set->normalisation * factor;
    scaled.normalisationNote = tr("%1 %2 = %3 Gy")
                                   .arg(targetName, mode == NormalisationMode::TargetMean ? "mean" : "D50")
                                   .arg(rx, 0, 'f', 2);
    store_->replace(index, std::move(scaled));
    if (sameMu) plan_->scaleMonitorUnits(factor);
    else emit message(tr("Normalise: the photon beams changed since this dose was computed; their MU are kept."));
    emit message(tr("Normalised %1: %2 (x %3)")
                     .arg(store_->at(index)->name, store_->at(index)->normalisationNote)
                     .arg(factor, 0, 'g', 5));
    return factor;
  }
  DoseSet scaled = *set;
  for (float& v : scaled.dose.dose.data) v = float(v * factor);
  for (auto& b : scaled.beams)
    for (auto& l : b.layers)
      for (auto& s : l.spots) s.weight *= factor;
  scaled.normalisation = set->normalisation * factor;
  scaled.normalisationNote = tr("%1 %2 = %3 Gy")
                                 .arg(targetName, mode == NormalisationMode::TargetMean ? "mean" : "D50")
                                 .arg(rx, 0, 'f', 2);
  // The plan's weights are scaled too when they are still the ones this dose was computed
  // for (a plan edited since keeps its weights: the note says so).
  const bool samePlan = sameWeights(plan_->engineBeams(), set->beams);
  store_->replace(index, std::move(scaled));
  if (samePlan) plan_->scaleWeights(factor);
  else emit message(tr("Normalise: the plan changed since this dose was computed; its spot weights are kept."));
  emit message(tr("Normalised %1: %2 (x %3)")
                   .arg(store_->at(index)->name, store_->at(index)->normalisationNote)
                   .arg(factor, 0, 'g', 5));
  return factor;
}

}  // namespace penumbra::gui
