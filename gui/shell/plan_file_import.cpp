// PlanFileActions: Import RT Dose onto the open CT, and a folder of doses and structures opened
// without CT on a blank image made on the dose grid (plan_file_actions.hpp; an import with no
// CT open becomes the latter). Both read in a job; the dose shown then gets its prescription
// (plan_file_prescription.cpp).
#include <memory>

#include <QDir>
#include <QFileInfo>

#include "dicom/rt_dose_reader.hpp"
#include "dicom/rt_plan_prescription.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/view_state.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"

namespace penumbra::gui {

namespace {

QString joined(const std::vector<std::string>& lines) {
  QStringList out;
  for (const auto& l : lines) out << QString::fromStdString(l);
  return out.join('\n');
}

}  // namespace

Job* PlanFileActions::importRtDose(const QString& file) {
  const auto& scene = window_->viewState()->scene();
  if (!scene) return openDoseWithoutCt(QFileInfo(file).absolutePath());
  auto result = std::make_shared<io::RtDoseImport>();
  auto rx = std::make_shared<io::PlanPrescription>();
  const std::string path = file.toStdString();
  const std::string folder = QFileInfo(file).absolutePath().toStdString();
  Job* job = ws_->jobs()->submit(tr("Import RT Dose %1").arg(QFileInfo(file).fileName()),
                                 [path, folder, result, rx](const JobControl&) {
                                   *result = io::readRtDose(path);
                                   // Its plan: the one it references, in its own folder.
                                   if (result->ok()) *rx = findPrescription(folder, result->info, false);
                                 });
  const std::weak_ptr<const Patient> forPatient = scene->sharedPatient();
  connect(job, &Job::succeeded, this, [this, result, rx, file, forPatient] {
    const auto& now = window_->viewState()->scene();
    if (!now || now->sharedPatient() != forPatient.lock()) return;  // another patient since
    for (const auto& w : result->messages.warnings) emit message(tr("RT Dose: %1").arg(QString::fromStdString(w)));
    if (!result->ok())
      return showError(tr("Import RT Dose failed"), tr("%1: %2").arg(file, joined(result->messages.errors)));
    const Patient& p = now->patient();
    const std::string& doseFor = result->info.frameOfReferenceUid;
    if (!doseFor.empty() && !p.frameOfReferenceUid.empty() && doseFor != p.frameOfReferenceUid)
      return showError(tr("RT Dose not imported"),
                       tr("%1 is in another frame of reference than the open CT (dose: %2, CT: %3). A dose can "
                          "only be shown on the images it was planned on; open its CT first.")
                           .arg(QFileInfo(file).fileName(), QString::fromStdString(doseFor),
                                QString::fromStdString(p.frameOfReferenceUid)));
    if (doseFor.empty())
      emit message(tr("RT Dose %1 has no frame of reference: assumed to be the CT's.").arg(file));
    DoseSet set;
    set.dose = std::move(result->dose);
    const QString label = QString::fromStdString(result->info.seriesDescription);
    set.name = tr("Imported %1").arg(label.isEmpty() ? QFileInfo(file).fileName() : label);
    set.dose.label = set.name.toStdString();
    set.messages = result->messages.warnings;
    if (set.dose.unit != "Gy") emit message(tr("%1: dose in %2, not Gy").arg(set.name, QString::fromStdString(set.dose.unit)));
    const int index = ws_->doseSets()->add(std::move(set));
    emit message(tr("%1: max %2 Gy").arg(ws_->doseSets()->at(index)->name).arg(ws_->doseSets()->at(index)->maxGy, 0, 'f', 3));
    applyPrescription(*rx, result->info, {}, {});
    emit doseImported(index);
  });
  connect(job, &Job::failed, this, [this, job] { showError(tr("Import RT Dose failed"), job->errorMessage()); });
  return job;
}

Job* PlanFileActions::openDoseWithoutCt(const QString& folder) {
  auto result = std::make_shared<io::DoseStructuresImport>();
  auto rx = std::make_shared<io::PlanPrescription>();
  const std::string path = folder.toStdString();
  Job* job = ws_->jobs()->submit(tr("Import doses and structures from %1").arg(QDir(folder).dirName()),
                                 [path, result, rx](const JobControl& jc) {
                                   *result = io::importDoseAndStructures(path, {}, jc);
                                   // The plan of the first dose (the one shown), anywhere in the folder.
                                   if (result->ok() && !result->hasCt)
                                     *rx = findPrescription(path, result->doses.front().info, true);
                                 });
  connect(job, &Job::succeeded, this, [this, result, rx, folder] {
    for (const auto& w : result->messages.warnings) emit message(tr("import: %1").arg(QString::fromStdString(w)));
    if (!result->ok())
      return showError(tr("Import RT Dose failed"), tr("%1: %2").arg(folder, joined(result->messages.errors)));
    if (result->hasCt) {
      // The folder has its CT: open it normally; the user imports the dose onto it.
      showNote(tr("Import RT Dose"), tr("%1 contains a CT: it is opened with its structures; import the RT "
                                        "Dose again (File > Import RT Dose) to show the dose on it.").arg(folder));
      window_->openFolder(folder, {}, MainWindow::ImportConfirm::Auto);
      return;
    }
    const QString note = showDoseOnlyPatient(*result, folder);
    applyPrescription(*rx, result->doses.front().info, tr("Opened without CT"), note);
    emit doseOnlyOpened(note);
  });
  connect(job, &Job::failed, this, [this, job] { showError(tr("Import RT Dose failed"), job->errorMessage()); });
  return job;
}

QString PlanFileActions::showDoseOnlyPatient(const io::DoseStructuresImport& import, const QString& folder) {
  // A blank CT (air) on the first dose's grid: the views, contours and DVHs work as usual; the
  // structure masks are already on that grid (importDoseAndStructures).
  const DoseVolume& first = import.doses.front().dose;
  auto patient = std::make_shared<Patient>();
  patient->ct = CtVolume(first.grid(), std::int16_t(-1000));
  patient->structures = import.structures;
  const io::RtDoseInfo& info = import.doses.front().info;
  patient->name = info.patientName;
  patient->id = info.patientId;
  patient->frameOfReferenceUid = info.frameOfReferenceUid;
  const auto& d = first.grid().dims;
  patient->ctDescription = tr("no CT: blank image on the dose grid (%1 x %2 x %3)").arg(d[0]).arg(d[1]).arg(d[2]).toStdString();
  QStringList notes;
  for (const auto& w : import.messages.warnings)
    if (QString::fromStdString(w).contains("no CT")) notes << QString::fromStdString(w);
  const QString note = notes.isEmpty() ? tr("No CT in this folder: structures and dose are shown without anatomy.")
                                       : notes.join('\n');
  window_->viewState()->setScene(std::make_shared<const PatientScene>(std::move(patient)));
  doseOnly_ = true;
  updateActions();
  window_->setWindowTitle(tr("Penumbra - %1 (no CT)").arg(QString::fromStdString(info.patientName)));
  for (const auto& r : import.doses) {
    DoseSet set;
    set.dose = r.dose;
    const QString label = QString::fromStdString(r.info.seriesDescription);
    set.name = tr("Imported %1").arg(label.isEmpty() ? QFileInfo(QString::fromStdString(r.info.file)).fileName() : label);
    set.messages = r.messages.warnings;
    ws_->doseSets()->add(std::move(set));
  }
  emit message(note);
  return tr("%1\n\n%2: %3, %4. Isodose levels and V95/V107 are in % of the prescription.")
      .arg(note, folder, countOf(import.doses.size(), "dose"), countOf(import.structures.structures.size(), "structure"));
}

}  // namespace penumbra::gui
