// PlanFileActions: Save Case and Open Case (plan_file_actions.hpp). Open Case re-imports the
// case's DICOM folder through the main window's import job and restores the session when the
// patient has loaded (applyOpenedCase), so it is asynchronous: caseOpened() tells the outcome.
#include <algorithm>
#include <memory>

#include <QFileInfo>

#include "case/case_file.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/view_state.hpp"
#include "gui/shell/case_session.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"

namespace penumbra::gui {

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

}  // namespace penumbra::gui
