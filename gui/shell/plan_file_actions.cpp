#include "gui/shell/plan_file_actions.hpp"

#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QMainWindow>
#include <QMessageBox>
#include <QPushButton>
#include <QRegularExpression>
#include <QVBoxLayout>

#include "case/case_file.hpp"
#include "dicom/rt_dose_reader.hpp"
#include "dicom/rt_dose_writer.hpp"
#include "dicom/rt_ion_plan_writer.hpp"
#include "dicom/rt_plan_prescription.hpp"
#include "dicom/rt_plan_writer.hpp"
#include "gui/dose/dose_panel.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/view_state.hpp"
#include "gui/shell/case_session.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"

namespace penumbra::gui {

namespace {

QString fileSafe(QString s) {
  s.replace(QRegularExpression("[^A-Za-z0-9._-]+"), "_");
  s.remove(QRegularExpression("^_+|_+$"));
  return s.isEmpty() ? QString("unnamed") : s;
}

QString joined(const std::vector<std::string>& lines) {
  QStringList out;
  for (const auto& l : lines) out << QString::fromStdString(l);
  return out.join('\n');
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

PlanFileActions::PlanFileActions(MainWindow* window, PlanningWorkspace* ws)
    : QObject(ws), window_(window), ws_(ws) {
  connect(window->viewState(), &ViewState::sceneChanged, this, [this] {
    // A new patient: a new study for its exports; the dose-only flag is set again by
    // showDoseOnlyPatient() right after its own setScene().
    doseOnly_ = false;
    studyUid_.clear();
    planSopUid_.clear();
    planBeams_.clear();
    exportedDoses_.clear();
    updateActions();
  });
  connect(ws->doseSets(), &DoseSetStore::doseSetAdded, this, &PlanFileActions::updateActions);
  connect(ws->doseSets(), &DoseSetStore::doseSetRemoved, this, &PlanFileActions::updateActions);
  connect(ws->plan(), &PlanModel::planChanged, this, &PlanFileActions::updateActions);
}

PlanFileActions::~PlanFileActions() = default;

void PlanFileActions::showError(const QString& title, const QString& text) {
  emit message(title + ": " + text);
  if (showDialogs_) {
    auto* box = new QMessageBox(QMessageBox::Critical, title, text, QMessageBox::Ok, window_);
    box->setObjectName("fileErrorDialog");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setModal(false);
    box->show();
    lastDialog_ = box;
  }
  emit failed(text);
}

void PlanFileActions::showNote(const QString& title, const QString& text) {
  emit message(title + ": " + text);
  if (!showDialogs_) return;
  auto* box = new QMessageBox(QMessageBox::Information, title, text, QMessageBox::Ok, window_);
  box->setObjectName("importNoteDialog");
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setModal(false);
  box->show();
  lastDialog_ = box;
}

// ---- case files ---------------------------------------------------------------------------

bool PlanFileActions::saveCase(const QString& path) {
  const auto& scene = window_->viewState()->scene();
  if (!scene || window_->patientFolder().isEmpty() || doseOnly_) {
    showError(tr("Cannot save the case"),
              tr("A case records the DICOM folder of a CT: open a CT first (a dose shown without CT "
                 "cannot be saved as a case)."));
    return false;
  }
  try {
    io::CaseFile c = caseFromSession(*ws_, *window_->viewState(), path, window_->patientFolder(),
                                     window_->patientSeriesKey(), fractions_);
    DoseSetStore* store = ws_->doseSets();
    for (const auto& [id, file] : exportedDoses_) {
      const int index = store->indexOfId(id);
      if (index >= 0 && QFileInfo::exists(file))
        c.doseSets.push_back({store->at(index)->name.toStdString(),
                              io::relativeToCase(path.toStdString(), file.toStdString())});
    }
    io::writeCaseFile(path.toStdString(), c);
  } catch (const std::exception& e) {
    showError(tr("Cannot save the case"), QString::fromUtf8(e.what()));
    return false;
  }
  emit message(tr("Case saved to %1").arg(path));
  emit caseSaved(path);
  return true;
}

bool PlanFileActions::openCase(const QString& path) {
  auto c = std::make_unique<io::CaseFile>();
  try {
    *c = io::readCaseFile(path.toStdString());
  } catch (const std::exception& e) {
    showError(tr("Cannot open the case"), QString::fromUtf8(e.what()));
    return false;
  }
  const QString folder = QString::fromStdString(io::resolveCasePath(path.toStdString(), c->data.dicomFolder));
  if (!QFileInfo(folder).isDir()) {
    showError(tr("Cannot open the case"), tr("The case's DICOM folder %1 does not exist.").arg(folder));
    return false;
  }
  pendingCase_ = std::move(c);
  pendingCasePath_ = path;
  delete caseWait_;
  caseWait_ = new QObject(this);  // one-shot connections: deleted by whichever fires first
  connect(window_, &MainWindow::patientLoaded, caseWait_, [this] {
    caseWait_->deleteLater();
    applyOpenedCase();
  });
  auto fail = [this](const QString& why) {
    caseWait_->deleteLater();
    pendingCase_.reset();
    emit caseOpened(false, why);
  };
  connect(window_, &MainWindow::importFailed, caseWait_, fail);
  connect(window_, &MainWindow::importCancelled, caseWait_, [fail] { fail(tr("import cancelled")); });
  emit message(tr("Opening case %1: importing %2").arg(path, folder));
  if (!window_->openFolder(folder, QString::fromStdString(pendingCase_->data.seriesKey),
                           MainWindow::ImportConfirm::Auto)) {
    delete caseWait_;
    pendingCase_.reset();
    showError(tr("Cannot open the case"), tr("An import is already running."));
    return false;
  }
  return true;
}

void PlanFileActions::applyOpenedCase() {
  if (!pendingCase_) return;
  const io::CaseFile c = std::move(*pendingCase_);
  pendingCase_.reset();
  fractions_ = std::max(1, c.prescription.fractions);
  QStringList warnings;
  const int beams = applyCaseToSession(c, *ws_, *window_->viewState(), &warnings);
  for (const QString& w : warnings) emit message(tr("Case: warning: %1").arg(w));
  // Doses exported with the case come back as dose sets (RT Dose import jobs).
  for (const auto& d : c.doseSets) {
    const QString file = QString::fromStdString(io::resolveCasePath(pendingCasePath_.toStdString(), d.file));
    if (QFileInfo::exists(file)) importRtDose(file);
    else emit message(tr("Case: dose file %1 not found; skipped.").arg(file));
  }
  const QString text = tr("Case %1 opened: %2, %3").arg(pendingCasePath_, countOf(beams, "beam"), countOf(qsizetype(ws_->plan()->totalSpots()), "spot"));
  emit message(text);
  emit caseOpened(true, text);
}

// ---- RT export ------------------------------------------------------------------------------

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

// ---- RT Dose import -------------------------------------------------------------------------

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

// ---- prescription of an imported dose -------------------------------------------------------

io::PlanPrescription PlanFileActions::findPrescription(const std::string& folder, const io::RtDoseInfo& dose,
                                                       bool recursive) {
  try {
    return io::findPlanPrescription(folder, dose.referencedPlanSopInstanceUid, recursive);
  } catch (const std::exception& e) {
    io::PlanPrescription none;
    none.messages.warn(e.what());
    return none;
  }
}

void PlanFileActions::applyPrescription(const io::PlanPrescription& rx, const io::RtDoseInfo& dose,
                                        const QString& noteTitle, const QString& note) {
  const QString doseName = QFileInfo(QString::fromStdString(dose.file)).fileName();
  const QString planName = QFileInfo(QString::fromStdString(rx.file)).fileName();
  QStringList planNotes;
  for (const auto& w : rx.messages.warnings) planNotes << QString::fromStdString(w);
  for (const auto& e : rx.messages.errors) planNotes << QString::fromStdString(e);
  for (const QString& n : planNotes) emit message(tr("RT Plan: %1").arg(n));
  std::string how;
  const double gy = io::prescriptionForDose(rx, dose.doseSummationType, &how);
  if (gy > 0) {
    const QString source = QString::fromStdString(rx.sourceText);
    ws_->plan()->setPrescription(gy, tr("%1, %2").arg(planName, source));
    const QString text =
        tr("Prescription %1 Gy from %2 (%3): %4").arg(gy, 0, 'f', 1).arg(planName, source, QString::fromStdString(how));
    emit message(text);
    emit prescriptionResolved(gy, true, text);
    if (!note.isEmpty()) showNote(noteTitle, note + "\n\n" + text);
    return;
  }
  const QString why = rx.file.empty() ? tr("no RT Plan of this dose was found") : tr("its RT Plan %1 states none").arg(planName);
  const QString text = tr("No prescription for %1: %2.").arg(doseName, why);
  if (showDialogs_) {
    QString details = text;
    if (!planNotes.isEmpty()) details += "\n- " + planNotes.join("\n- ");
    details += "\n\n" + tr("Dose maximum: %1 %2 (%3). Enter the prescription the dose is to be shown against:")
                            .arg(dose.maxDose, 0, 'f', 2)
                            .arg(QString::fromStdString(dose.doseUnits), QString::fromStdString(dose.doseSummationType));
    askPrescription(noteTitle.isEmpty() ? tr("Prescription") : noteTitle, note.isEmpty() ? details : note + "\n\n" + details,
                    doseName);
    return;
  }
  const double kept = ws_->plan()->prescriptionGy();
  const QString keptText = text + tr(" Doses are shown against %1 Gy (kept); set the prescription in the Dose panel.").arg(kept, 0, 'f', 2);
  emit message(keptText);
  emit prescriptionResolved(kept, false, keptText);
}

void PlanFileActions::askPrescription(const QString& title, const QString& text, const QString& doseName) {
  auto* dialog = new QDialog(window_);
  dialog->setObjectName("prescriptionDialog");
  dialog->setWindowTitle(title);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  auto* layout = new QVBoxLayout(dialog);
  auto* label = new QLabel(text);
  label->setObjectName("prescriptionDialogText");
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  label->setMinimumWidth(480);
  layout->addWidget(label);
  auto* form = new QFormLayout;
  auto* spin = new QDoubleSpinBox;
  spin->setObjectName("prescriptionDialogSpin");
  spin->setRange(0.01, 1000);
  spin->setDecimals(2);
  spin->setSuffix(tr(" Gy"));
  spin->setValue(ws_->plan()->prescriptionGy());
  form->addRow(tr("Prescription"), spin);
  layout->addLayout(form);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons->button(QDialogButtonBox::Cancel)->setText(tr("Keep %1 Gy").arg(ws_->plan()->prescriptionGy(), 0, 'f', 2));
  layout->addWidget(buttons);
  connect(buttons, &QDialogButtonBox::accepted, dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::reject);
  connect(dialog, &QDialog::accepted, this, [this, spin, doseName] {
    const double gy = spin->value();
    ws_->plan()->setPrescription(gy, tr("entered for %1").arg(doseName));
    const QString text = tr("Prescription %1 Gy entered for %2").arg(gy, 0, 'f', 2).arg(doseName);
    emit message(text);
    emit prescriptionResolved(gy, false, text);
  });
  connect(dialog, &QDialog::rejected, this, [this, doseName] {
    const double gy = ws_->plan()->prescriptionGy();
    const QString text = tr("No prescription for %1: doses are shown against %2 Gy (kept).").arg(doseName).arg(gy, 0, 'f', 2);
    emit message(text);
    emit prescriptionResolved(gy, false, text);
  });
  lastDialog_ = dialog;
  dialog->open();  // window-modal, non-blocking
}

}  // namespace penumbra::gui
