// PlanController's photon side (declared in plan_controller.hpp): photon beams with jaws or a
// target-conformal aperture, and the collapsed-cone dose as a job whose result goes into the
// same DoseSetStore as the proton engine's, so every dose display, the DVHs, the profiling
// panel and the RT Dose export work on it unchanged.
#include <algorithm>
#include <cmath>

#include <QTime>
#include <QWidget>

#include "gui/jobs/job_runner.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/plan/plan_controller.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::gui {

namespace {

/// Bounding box of polygons (u0, u1, v0, v1), rounded outwards to whole mm; false when empty.
bool roundedBox(const BevPolygons& polygons, std::array<double, 4>& box) {
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
  for (const auto& poly : polygons)
    for (const auto& q : poly)
      for (int a = 0; a < 2; ++a) lo[a] = std::min(lo[a], q[a]), hi[a] = std::max(hi[a], q[a]);
  if (!(lo[0] < hi[0]) || !(lo[1] < hi[1])) return false;
  box = {std::floor(lo[0]), std::ceil(hi[0]), std::floor(lo[1]), std::ceil(hi[1])};
  return true;
}

const char* depositName(photon::DepositStrategy d) {
  return d == photon::DepositStrategy::Atomic ? "atomic" : "atomic-free";
}

// The engine's entry points. PENUMBRA_HAVE_PHOTON_DOSE is defined where penumbra_photon_dose
// is built (gui/CMakeLists.txt); without it photon beams can be planned and saved, and the dose
// job fails with a clear message.
#ifdef PENUMBRA_HAVE_PHOTON_DOSE
BevPolygons projectTarget(const photon::PhotonBeam& beam, const Mask& mask, double marginMm) {
  return photon::conformalAperture(beam, mask, marginMm);
}
photon::PhotonDoseResult runEngine(const photon::PhotonDoseRequest& r, const JobControl& jc) {
  return photon::computePhotonDose(r, jc);
}
#else
[[noreturn]] void notBuilt() {
  PENUMBRA_THROW(Unsupported, "this build of Penumbra has no photon dose engine (penumbra_photon_dose)");
}
BevPolygons projectTarget(const photon::PhotonBeam&, const Mask&, double) { notBuilt(); }
photon::PhotonDoseResult runEngine(const photon::PhotonDoseRequest&, const JobControl&) { notBuilt(); }
#endif

}  // namespace

PlanController::PhotonModelProvider defaultPhotonModelProvider() {
#ifdef PENUMBRA_HAVE_PHOTON_DOSE
  return [] { return photon::defaultPhotonModel(); };
#else
  return []() -> std::shared_ptr<const photon::PhotonBeamModel> { notBuilt(); };
#endif
}

int PlanController::addPhotonBeamOnTarget(const QString& targetName, double gantryDeg, double couchDeg,
                                          double collimatorDeg, double fieldSizeMm) {
  const auto& scene = state_->scene();
  if (!scene) return -1;
  PhotonField field;
  photon::PhotonBeam& b = field.beam;
  b.name = QString("X G%1").arg(gantryDeg).toStdString();
  b.gantryDeg = gantryDeg;
  b.couchDeg = couchDeg;
  b.collimatorDeg = collimatorDeg;
  b.sadMm = 1000;
  const double half = 0.5 * std::max(1.0, fieldSizeMm);
  b.x1Mm = -half, b.x2Mm = half, b.y1Mm = -half, b.y2Mm = half;
  b.monitorUnits = 100;
  QString target = targetName;
  if (!targetCentroid(targetName, b.isocenter)) {
    b.isocenter = scene->worldOf(scene->centreIndex());
    emit message(tr("No target '%1': isocentre at the CT centre.").arg(targetName));
    target.clear();
  }
  return plan_->addPhotonBeam(std::move(field), target);  // outline made via photonShapesStale
}

bool PlanController::setConformalAperture(int index, const QString& targetName, double marginMm) {
  if (index < 0 || index >= plan_->beamCount() || !plan_->beam(index).isPhoton()) {
    emit message(tr("Conformal aperture: choose a photon beam."));
    return false;
  }
  const Structure* target = findStructure(targetName);
  if (!target || target->mask.empty()) {
    emit message(tr("Conformal aperture: no structure '%1' with a mask.").arg(targetName));
    return false;
  }
  const PlannedBeam& p = plan_->beam(index);
  BevPolygons aperture, outline;
  try {
    aperture = projectTarget(photonEngineBeam(p), target->mask, std::max(0.0, marginMm));
    if (const Structure* t = findStructure(p.targetName); t && !t->mask.empty())
      outline = projectTarget(photonEngineBeam(p), t->mask, 0.0);
  } catch (const Error& e) {
    emit message(tr("Conformal aperture failed: %1").arg(QString::fromStdString(e.message())));
    return false;
  }
  std::array<double, 4> jaws{};
  if (!roundedBox(aperture, jaws)) {
    emit message(tr("Conformal aperture: %1 does not project onto the isocentre plane of %2.")
                     .arg(targetName, QString::fromStdString(p.beam.name)));
    return false;
  }
  const photon::PhotonBeam& b = p.photon.beam;
  plan_->setPhotonSettings(index, b.collimatorDeg, b.sadMm, jaws, b.monitorUnits);
  plan_->setPhotonShapes(index, targetName, std::max(0.0, marginMm), std::move(aperture), std::move(outline));
  return true;
}

void PlanController::setOpenField(int index) {
  if (index < 0 || index >= plan_->beamCount() || !plan_->beam(index).isPhoton()) return;
  const PhotonField& f = plan_->beam(index).photon;
  plan_->setPhotonShapes(index, {}, f.apertureMarginMm, {}, f.targetOutline);
}

void PlanController::updatePhotonShapes(int index) {
  if (index < 0 || index >= plan_->beamCount() || !plan_->beam(index).isPhoton()) return;
  const PlannedBeam& p = plan_->beam(index);
  const PhotonField& f = p.photon;
  if (!f.apertureTarget.isEmpty() && findStructure(f.apertureTarget)) {
    // Conformal: the aperture (and the jaws around it) follow the new geometry.
    if (setConformalAperture(index, f.apertureTarget, f.apertureMarginMm)) return;
  }
  BevPolygons outline;
  if (const Structure* t = findStructure(p.targetName); t && !t->mask.empty()) {
    try {
      outline = projectTarget(photonEngineBeam(p), t->mask, 0.0);
    } catch (const Error& e) {
      emit message(tr("Target outline of %1: %2").arg(QString::fromStdString(p.beam.name),
                                                      QString::fromStdString(e.message())));
    }
  }
  // A conformal aperture whose structure is gone keeps its polygons (e.g. a restored case).
  plan_->setPhotonShapes(index, f.apertureTarget, f.apertureMarginMm, f.beam.aperture, std::move(outline));
}

Job* PlanController::computePhotonDose(const DoseRunOptions& options) {
  const auto& scene = state_->scene();
  if (!scene || plan_->photonBeamCount() == 0) {
    emit message(tr("Cannot compute a photon dose: the plan has no photon beam."));
    return nullptr;
  }
  lastOptions_ = options;
  auto patient = scene->sharedPatient();
  auto request = std::make_shared<photon::PhotonDoseRequest>();
  request->ct = std::shared_ptr<const CtVolume>(patient, &patient->ct);  // aliasing: no copy
  request->beams = plan_->photonEngineBeams();
  if (options.doseGridMm > 0) request->doseGrid = coveringGrid(patient->ct.grid, options.doseGridMm);
  request->backend = options.backend;
  request->params.polarCones = options.photon.polarCones;
  request->params.azimuthalCones = options.photon.azimuthalCones;
  request->params.variant = options.variant;
  request->params.deposit = options.photon.deposit;
  request->params.cpuThreads = options.cpuThreads;
  auto result = std::make_shared<photon::PhotonDoseResult>();
  const int run = ++runNumber_;
  double mu = 0;
  for (const auto& b : request->beams) mu += b.monitorUnits;
  // The engine never sees Qt: the job hands it a JobControl; the model comes from the provider
  // (the first call calibrates the model once per session, without a cancel check).
  Job* job = jobs_->submit(tr("Photon dose %1 (%2 beams, %3 MU)").arg(run).arg(request->beams.size()).arg(mu, 0, 'f', 0),
                           [request, result, provider = photonModel_](const JobControl& jc) {
                             jc.report(0.0, "photon dose: beam model");
                             try {
                               request->model = provider();
                             } catch (const CancelledError&) {
                               throw;
                             } catch (const Error& e) {
                               throw Error(e.code(), kPhotonModelFailure + e.message());
                             } catch (const std::exception& e) {
                               throw Error(ErrorCode::Io, kPhotonModelFailure + std::string(e.what()));
                             }
                             if (!request->model) throw Error(ErrorCode::Internal, kPhotonModelFailure + std::string("none"));
                             jc.checkCancel();
                             *result = runEngine(*request, jc);
                           });
  const QString when = QTime::currentTime().toString("HH:mm:ss");
  const std::weak_ptr<const Patient> forPatient = patient;
  connect(job, &Job::succeeded, this, [this, result, request, run, when, forPatient] {
    if (!state_->scene() || state_->scene()->sharedPatient() != forPatient.lock()) return;
    const photon::PhotonDoseParameters& par = request->params;
    DoseSet set;
    set.dose.dose = std::move(result->dose);
    set.dose.unit = "Gy";
    set.dose.engine = "photon collapsed cone (CCCS)";
    set.dose.backend = toString(result->backend);
    set.dose.computeSeconds = result->elapsedMs / 1000.0;
    set.dose.parameters = "model=" + (request->model ? request->model->name : std::string("?")) +
                          "\ncones=" + std::to_string(par.polarCones) + "x" + std::to_string(par.azimuthalCones) +
                          "\nvariant=" + toString(par.variant) + "\ndeposit=" + depositName(par.deposit) +
                          "\ndevice=" + result->device;
    set.name = tr("Dose %1: photons, %2, %3, %4").arg(run).arg(countOf(qsizetype(request->beams.size()), "beam"),
                   QString::fromStdString(set.dose.backend).toUpper(), when);
    set.dose.label = set.name.toStdString();
    set.profiles = std::move(result->profiles);
    set.messages = std::move(result->messages);
    const photon::EnergyBalance& e = result->energy;
    if (e.released > 0)
      set.messages.push_back(QString("energy: %1 % of the released energy deposited, %2 % escaped")
                                 .arg(100 * e.deposited / e.released, 0, 'f', 2)
                                 .arg(100 * e.escaped / e.released, 0, 'f', 2)
                                 .toStdString());
    for (const auto& m : set.messages) emit message(QString::fromStdString(m));
    const double seconds = set.dose.computeSeconds;
    const int index = store_->add(std::move(set));
    photonSnapshots_[store_->at(index)->id] = request->beams;
    emit message(tr("%1 computed in %2 s, max %3 Gy")
                     .arg(store_->at(index)->name)
                     .arg(seconds, 0, 'f', 2)
                     .arg(store_->at(index)->maxGy, 0, 'f', 3));
    emit doseComputed(index);
  });
  connect(job, &Job::failed, this, [this, job, options] { onDoseFailed(job, options, true); });
  return job;
}

}  // namespace penumbra::gui
