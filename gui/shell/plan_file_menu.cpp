// PlanFileActions: the File menu entries and their file dialogs (plan_file_actions.hpp).
#include <QAction>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QSettings>
#include <QStandardPaths>

#include "gui/dose/dvh_panel.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"

namespace penumbra::gui {

namespace {
constexpr const char* kExportDirKey = "files/exportDir";
}

void PlanFileActions::addTo(QMenu* file, QAction* before) {
  auto add = [&](const QString& text, const char* name, void (PlanFileActions::*slot)()) {
    auto* a = new QAction(text, file);
    a->setObjectName(name);
    connect(a, &QAction::triggered, this, slot);
    file->insertAction(before, a);
    return a;
  };
  add(tr("Open &Case..."), "actionOpenCase", &PlanFileActions::chooseOpenCase);
  QAction* save = add(tr("&Save Case..."), "actionSaveCase", &PlanFileActions::chooseSaveCase);
  save->setShortcut(QKeySequence::Save);
  file->insertSeparator(before);
  QAction* importDose = add(tr("&Import RT Dose..."), "actionImportRtDose", &PlanFileActions::chooseImportRtDose);
  importDose->setToolTip(tr("Show a dose from another planning system on the open CT (same frame of reference)"));
  add(tr("Open RT Dose and structures &without CT..."), "actionOpenDoseWithoutCt",
      &PlanFileActions::chooseOpenDoseWithoutCt);
  QAction* exportDose = add(tr("&Export RT Dose..."), "actionExportRtDose", &PlanFileActions::chooseExportRtDose);
  QAction* exportDvh = add(tr("Export &DVH (CSV)..."), "actionExportDvhCsv", &PlanFileActions::chooseExportDvhCsv);
  exportDvh->setToolTip(tr("The DVH curves shown in the DVH panel: structure, dose set, dose (Gy), volume (% and cc)"));
  QAction* exportPlan = add(tr("Export RT Ion &Plan..."), "actionExportRtIonPlan", &PlanFileActions::chooseExportRtIonPlan);
  exportPlan->setToolTip(tr("The proton beams with spots, as DICOM RT Ion Plan"));
  QAction* exportPhotons = add(tr("Export RT Plan (p&hotons)..."), "actionExportRtPlan", &PlanFileActions::chooseExportRtPlan);
  exportPhotons->setToolTip(tr("The photon beams (jaws, aperture, angles, MU), as DICOM RT Plan"));
  needPatient_ = {save};
  needDose_ = {exportDose, exportDvh};
  needSpots_ = {exportPlan};
  needPhotonBeams_ = {exportPhotons};
  exportDir_ = QSettings().value(kExportDirKey).toString();
  updateActions();
}

void PlanFileActions::updateActions() {
  const bool patient = window_->viewState()->scene() != nullptr;
  for (QAction* a : needPatient_) a->setEnabled(patient && !doseOnly_);
  for (QAction* a : needDose_) a->setEnabled(patient && ws_->doseSets()->count() > 0);
  for (QAction* a : needSpots_) a->setEnabled(patient && !doseOnly_ && ws_->plan()->totalSpots() > 0);
  for (QAction* a : needPhotonBeams_) a->setEnabled(patient && !doseOnly_ && ws_->plan()->photonBeamCount() > 0);
}

QString PlanFileActions::askSaveFile(const QString& title, const QString& name, const QString& filter) {
  QString dir = exportDir_;
  if (dir.isEmpty()) dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  // The dialog asks before replacing an existing file; the write itself is atomic.
  const QString path = QFileDialog::getSaveFileName(window_, title, dir + "/" + name, filter);
  if (!path.isEmpty()) {
    exportDir_ = QFileInfo(path).absolutePath();
    QSettings().setValue(kExportDirKey, exportDir_);
  }
  return path;
}

void PlanFileActions::chooseSaveCase() {
  const Patient* p = window_->patient();
  const QString name = p ? QString::fromStdString(p->id.empty() ? p->name : p->id) : QString("case");
  const QString path = askSaveFile(tr("Save case"), name + ".penumbra.json", tr("Penumbra case (*.json)"));
  if (!path.isEmpty()) saveCase(path);
}

void PlanFileActions::chooseOpenCase() {
  QString dir = exportDir_;
  if (dir.isEmpty()) dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  const QString path = QFileDialog::getOpenFileName(window_, tr("Open case"), dir, tr("Penumbra case (*.json);;All files (*)"));
  if (!path.isEmpty()) openCase(path);
}

void PlanFileActions::chooseExportRtDose() {
  const int index = ws_->doseSets()->currentIndex();
  if (index < 0) return;
  const QString path = askSaveFile(tr("Export RT Dose"), suggestedRtDoseName(index), tr("DICOM RT Dose (*.dcm)"));
  if (!path.isEmpty()) exportRtDose(index, path);
}

void PlanFileActions::chooseExportRtIonPlan() {
  const QString path = askSaveFile(tr("Export RT Ion Plan"), suggestedRtIonPlanName(), tr("DICOM RT Ion Plan (*.dcm)"));
  if (!path.isEmpty()) exportRtIonPlan(path);
}

void PlanFileActions::chooseExportRtPlan() {
  const QString path = askSaveFile(tr("Export RT Plan"), suggestedRtPlanName(), tr("DICOM RT Plan (*.dcm)"));
  if (!path.isEmpty()) exportRtPlan(path);
}

void PlanFileActions::chooseImportRtDose() {
  const QString dir = exportDir_.isEmpty() ? window_->patientFolder() : exportDir_;
  const QString path = QFileDialog::getOpenFileName(window_, tr("Import RT Dose"), dir,
                                                    tr("DICOM (*.dcm *.DCM);;All files (*)"));
  if (!path.isEmpty()) importRtDose(path);
}

void PlanFileActions::chooseExportDvhCsv() { ws_->dvhPanel()->chooseAndExportCsv(); }

void PlanFileActions::chooseOpenDoseWithoutCt() {
  const QString dir = QFileDialog::getExistingDirectory(window_, tr("Folder with RT Dose and RT Structure Set"),
                                                        window_->patientFolder());
  if (!dir.isEmpty()) openDoseWithoutCt(dir);
}

}  // namespace penumbra::gui
