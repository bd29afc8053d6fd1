// PlanFileActions: the DICOM RT exports, RT Dose, RT Ion Plan (proton beams) and RT Plan
// (photon beams) (plan_file_actions.hpp). Each writes in a job through the io writers; the
// session's exports share one study, and an RT Dose references the last exported RT Ion Plan
// when its spots are the ones that plan holds.
#include <algorithm>
#include <cmath>
#include <memory>

#include <QFileInfo>
#include <QRegularExpression>

#include "dicom/rt_dose_writer.hpp"
#include "dicom/rt_ion_plan_writer.hpp"
#include "dicom/rt_plan_writer.hpp"
#include "gui/dose/dose_panel.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"

namespace penumbra::gui {

namespace {

QString fileSafe(QString s) {
  s.replace(QRegularExpression("[^A-Za-z0-9._-]+"), "_");
  s.remove(QRegularExpression("^_+|_+$"));
  return s.isEmpty() ? QString("unnamed") : s;
}

bool sameSpots(const std::vector<proton::ProtonBeam>& a, const std::vector<proton::ProtonBeam>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].name != b[i].name || a[i].layers.size() != b[i].layers.size()) return false;
    for (std::size_t l = 0; l < a[i].layers.size(); ++l) {
      const auto& sa = a[i].layers[l].spots;
      const auto& sb = b[i].layers[l].spots;
      if (sa.size() != sb.size()) return false;
      for (std::size_t s = 0; s < sa.size(); ++s)
        if (std::abs(sa[s].weight - sb[s].weight) > 1e-9 * std::max(1.0, std::abs(sa[s].weight))) return false;
    }
  }
  return true;
}

}  // namespace

QString PlanFileActions::suggestedRtDoseName(int doseSetIndex) const {
  const auto set = ws_->doseSets()->at(doseSetIndex);
  const Patient* p = window_->patient();
  const QString id = p ? QString::fromStdString(p->id.empty() ? p->name : p->id) : QString("patient");
  return "RD_" + fileSafe(id) + "_" + fileSafe(set ? set->name.section(':', 0, 0) : QString("dose")) + ".dcm";
}

QString PlanFileActions::suggestedRtIonPlanName() const {
  const Patient* p = window_->patient();
  const QString id = p ? QString::fromStdString(p->id.empty() ? p->name : p->id) : QString("patient");
  return "RP_" + fileSafe(id) + "_Penumbra.dcm";
}

QString PlanFileActions::suggestedRtPlanName() const {
  const Patient* p = window_->patient();
  const QString id = p ? QString::fromStdString(p->id.empty() ? p->name : p->id) : QString("patient");
  return "RP_" + fileSafe(id) + "_Penumbra_photons.dcm";
}

Job* PlanFileActions::exportRtDose(int doseSetIndex, const QString& path) {
  const auto set = ws_->doseSets()->at(doseSetIndex);
  const Patient* p = window_->patient();
  if (!set || !p) {
    showError(tr("Export RT Dose"), tr("No dose set to export."));
    return nullptr;
  }
  io::RtDoseWriteOptions o;
  if (!p->name.empty()) o.patientName = p->name;
  if (!p->id.empty()) o.patientId = p->id;
  o.frameOfReferenceUid = p->frameOfReferenceUid;
  o.studyInstanceUid = studyUid_;
  o.seriesDescription = set->name.toStdString();
  o.doseComment = set->dose.engine + (set->normalisationNote.isEmpty() ? "" : "; normalised: " + set->normalisationNote.toStdString());
  if (!planSopUid_.empty() && sameSpots(planBeams_, set->beams)) o.referencedPlanSopInstanceUid = planSopUid_;
  auto result = std::make_shared<io::RtDoseWriteResult>();
  const std::string file = path.toStdString();
  Job* job = ws_->jobs()->submit(tr("Export RT Dose %1").arg(QFileInfo(path).fileName()),
                                 [set, o, file, result](const JobControl&) { *result = io::writeRtDose(file, set->dose, o); });
  const int id = set->id;
  connect(job, &Job::succeeded, this, [this, result, path, id] {
    if (studyUid_.empty()) studyUid_ = result->studyInstanceUid;
    exportedDoses_[id] = QFileInfo(path).absoluteFilePath();
    for (const auto& w : result->warnings) emit message(tr("RT Dose: %1").arg(QString::fromStdString(w)));
    emit message(tr("RT Dose written to %1 (DoseGridScaling %2 Gy)").arg(path).arg(result->doseGridScaling, 0, 'g', 6));
    emit exported(path);
  });
  connect(job, &Job::failed, this, [this, job] { showError(tr("Export RT Dose failed"), job->errorMessage()); });
  return job;
}

Job* PlanFileActions::exportRtIonPlan(const QString& path) {
  const Patient* p = window_->patient();
  const std::vector<proton::ProtonBeam> beams = ws_->plan()->engineBeams();
  if (!p || beams.empty()) {
    showError(tr("Export RT Ion Plan"),
              ws_->plan()->photonBeamCount() > 0
                  ? tr("No proton beam has spots: generate spots first. (Photon beams are exported with File > "
                       "Export RT Plan (photons).)")
                  : tr("No beam has spots: generate spots first."));
    return nullptr;
  }
  io::RtIonPlanWriteOptions o;
  if (!p->name.empty()) o.patientName = p->name;
  if (!p->id.empty()) o.patientId = p->id;
  o.frameOfReferenceUid = p->frameOfReferenceUid;
  o.studyInstanceUid = studyUid_;
  o.planName = "Penumbra plan";
  o.targetName = ws_->dosePanel()->normalisationTarget().toStdString();
  o.dosePerFractionGy = ws_->plan()->prescriptionGy();
  o.fractions = fractions_;
  auto result = std::make_shared<io::RtIonPlanWriteResult>();
  const std::string file = path.toStdString();
  Job* job = ws_->jobs()->submit(tr("Export RT Ion Plan %1").arg(QFileInfo(path).fileName()),
                                 [beams, o, file, result](const JobControl&) { *result = io::writeRtIonPlan(file, beams, o); });
  connect(job, &Job::succeeded, this, [this, result, path, beams] {
    if (studyUid_.empty()) studyUid_ = result->studyInstanceUid;
    planSopUid_ = result->sopInstanceUid;
    planBeams_ = beams;
    for (const auto& w : result->warnings) emit message(tr("RT Ion Plan: %1").arg(QString::fromStdString(w)));
    emit message(tr("RT Ion Plan written to %1").arg(path));
    emit exported(path);
  });
  connect(job, &Job::failed, this, [this, job] { showError(tr("Export RT Ion Plan failed"), job->errorMessage()); });
  return job;
}

Job* PlanFileActions::exportRtPlan(const QString& path) {
  const Patient* p = window_->patient();
  const std::vector<photon::PhotonBeam> beams = ws_->plan()->photonEngineBeams();
  if (!p || doseOnly_) {
    showError(tr("Export RT Plan"), tr("No patient with a CT is open: open one and add photon beams first."));
    return nullptr;
  }
  if (beams.empty()) {
    showError(tr("Export RT Plan"),
              tr("The plan has no photon beams: add one with Plan > Add photon beam. (Proton beams are "
                 "exported with File > Export RT Ion Plan.)"));
    return nullptr;
  }
  io::RtPlanWriteOptions o;
  if (!p->name.empty()) o.patientName = p->name;
  if (!p->id.empty()) o.patientId = p->id;
  o.frameOfReferenceUid = p->frameOfReferenceUid;
  o.studyInstanceUid = studyUid_;
  o.planName = "Penumbra photon plan";
  o.targetName = ws_->dosePanel()->normalisationTarget().toStdString();
  o.dosePerFractionGy = ws_->plan()->prescriptionGy();
  o.fractions = fractions_;
  auto result = std::make_shared<io::RtPlanWriteResult>();
  const std::string file = path.toStdString();
  Job* job = ws_->jobs()->submit(tr("Export RT Plan %1").arg(QFileInfo(path).fileName()),
                                 [beams, o, file, result](const JobControl&) { *result = io::writeRtPlan(file, beams, o); });
  connect(job, &Job::succeeded, this, [this, result, path, n = beams.size()] {
    if (studyUid_.empty()) studyUid_ = result->studyInstanceUid;
    for (const auto& w : result->warnings) emit message(tr("RT Plan: %1").arg(QString::fromStdString(w)));
    emit message(tr("RT Plan written to %1 (%2)").arg(path, countOf(qsizetype(n), "photon beam")));
    emit exported(path);
  });
  connect(job, &Job::failed, this, [this, job] { showError(tr("Export RT Plan failed"), job->errorMessage()); });
  return job;
}

}  // namespace penumbra::gui
