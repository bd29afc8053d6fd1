// PlanFileActions: the prescription of an imported dose (plan_file_actions.hpp), read from the
// RT Plan the dose references; without one the user is asked ("prescriptionDialog"), or, with
// dialogs off, the prescription is kept. prescriptionResolved() tells which.
#include <QDialog>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "dicom/rt_dose_reader.hpp"
#include "dicom/rt_plan_prescription.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"

namespace penumbra::gui {

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
