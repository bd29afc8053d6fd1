// PlanFileActions (plan_file_actions.hpp): what every entry shares, the session's export state
// (reset for a new patient) and how errors and notes reach the user. The entries themselves:
// case files in plan_file_case.cpp, DICOM RT exports in plan_file_export.cpp, RT Dose imports
// in plan_file_import.cpp, an imported dose's prescription in plan_file_prescription.cpp, the
// menu and its file dialogs in plan_file_menu.cpp.
#include "gui/shell/plan_file_actions.hpp"

#include <QMessageBox>

#include "case/case_file.hpp"  // complete io::CaseFile for pendingCase_'s deleter
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"

namespace penumbra::gui {

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

}  // namespace penumbra::gui
