#pragma once
/// The File menu's planning entries (issue 4, item 5):
///   Save Case... / Open Case...          JSON case files (io/case): data location, plan,
///                                        settings and display (case_session.hpp); Open Case
///                                        re-imports the DICOM folder through the normal import
///                                        job, then restores the session;
///   Export RT Dose... / RT Ion Plan...   DICOM RT (io/dicom writers), as jobs, referencing the
///     / RT Plan (photons)...             open CT's patient and frame of reference (and one
///                                        study for every export of the session); a plan with
///                                        both modalities exports its proton beams as RT Ion
///                                        Plan and its photon beams as RT Plan;
///   Import RT Dose...                    a dose from another system becomes a dose set; one in
///                                        another frame of reference than the CT is refused;
///   Open RT Dose + structures (no CT)... a folder with doses and a structure set but no CT
///                                        (the importer's note is shown) opens on a blank CT
///                                        made on the dose grid.
/// An imported dose is shown against its plan's prescription: the RT Plan it references (or
/// the only one) in its folder is read (io/dicom/rt_plan_prescription.hpp) and the plan's
/// prescription set from it, in the dose's terms (the total for a PLAN dose, per fraction for a
/// FRACTION dose), with a message naming the file and the dose reference. Without one the user
/// is asked ("prescriptionDialog"); with dialogs off (batch mode, tests) the prescription is
/// kept and the message says so. prescriptionResolved() tells the outcome.
/// Every write goes through the io functions, which write atomically; errors reach the user in
/// a dialog ("fileErrorDialog"). The methods below are what the menu calls after its file
/// dialogs; tests call them directly.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <QObject>
#include <QPointer>
#include <QString>

#include "proton/proton_plan.hpp"

class QAction;
class QMenu;
class QWidget;

namespace penumbra::io {
struct CaseFile;
struct DoseStructuresImport;
struct PlanPrescription;
struct RtDoseInfo;
}

namespace penumbra::gui {

class Job;
class MainWindow;
class PlanningWorkspace;

class PlanFileActions : public QObject {
  Q_OBJECT
public:
  PlanFileActions(MainWindow* window, PlanningWorkspace* ws);
  ~PlanFileActions() override;

  /// Inserts the actions into `file` before `before` (objectNames actionSaveCase,
  /// actionOpenCase, actionExportRtDose, actionExportDvhCsv, actionExportRtIonPlan,
  /// actionExportRtPlan, actionImportRtDose, actionOpenDoseWithoutCt).
  void addTo(QMenu* file, QAction* before);

  /// Dialogs for errors and notes (on by default; tests turn them off and read the signals).
  void setShowDialogs(bool on) { showDialogs_ = on; }
  QWidget* lastDialog() const { return lastDialog_.data(); }

  /// Writes the session's case to `path` (atomically). False on error (shown).
  bool saveCase(const QString& path);
  /// Reads `path`, re-imports its DICOM folder and restores the session; caseOpened() tells
  /// the outcome. False when it could not start (error shown).
  bool openCase(const QString& path);

  /// "RD_<patient id>_<dose set>.dcm" / "RP_<patient id>_<label>.dcm" /
  /// "RP_<patient id>_<label>_photons.dcm".
  QString suggestedRtDoseName(int doseSetIndex) const;
  QString suggestedRtIonPlanName() const;
  QString suggestedRtPlanName() const;
  /// Writes the dose set at `doseSetIndex` as RT Dose (a job); exported() on success.
  Job* exportRtDose(int doseSetIndex, const QString& path);
  /// Writes the plan's proton beams (those with spots; photon beams are left out) as RT Ion
  /// Plan (a job); exported() on success.
  Job* exportRtIonPlan(const QString& path);
  /// Writes the plan's photon beams (jaws, aperture blocks, angles, MU; proton beams are left
  /// out) as RT Plan (a job); exported() on success. Without photon beams: an error, no job.
  Job* exportRtPlan(const QString& path);
  /// Reads an RT Dose file onto the open patient (a job); doseImported() on success. Without
  /// an open patient the file's folder is opened without CT (openDoseWithoutCt).
  Job* importRtDose(const QString& file);
  /// Imports the doses and structure set of a folder without CT (a job).
  Job* openDoseWithoutCt(const QString& folder);
  /// True while the open patient is a dose-only one (blank CT on the dose grid).
  bool isDoseOnlyPatient() const { return doseOnly_; }

signals:
  void message(const QString& text);
  void caseSaved(const QString& path);
  void caseOpened(bool ok, const QString& message);
  /// An RT Dose, RT Ion Plan or RT Plan was written.
  void exported(const QString& path);
  void doseImported(int doseSetIndex);
  /// A dose-only folder is open (its note is `note`).
  void doseOnlyOpened(const QString& note);
  /// Any of the operations failed; the message was shown.
  void failed(const QString& message);
  /// After a dose import: the prescription is `gy`, read from the dose's RT Plan (fromPlan) or
  /// kept / entered by the user; `text` says which, for the status bar and batch output.
  void prescriptionResolved(double gy, bool fromPlan, const QString& text);

private:
  void chooseSaveCase();
  void chooseOpenCase();
  void chooseExportRtDose();
  void chooseExportRtIonPlan();
  void chooseExportRtPlan();
  void chooseImportRtDose();
  void chooseOpenDoseWithoutCt();
  void chooseExportDvhCsv();
  QString askSaveFile(const QString& title, const QString& name, const QString& filter);
  void applyOpenedCase();
  /// Shows the dose-only patient; returns the note for the user (no dialog).
  QString showDoseOnlyPatient(const io::DoseStructuresImport& import, const QString& folder);
  /// Sets the plan's prescription from `rx` for a dose described by `dose`, or asks the user
  /// (dialogs on) or keeps it (dialogs off). `note` (may be empty) is shown above the question.
  void applyPrescription(const io::PlanPrescription& rx, const io::RtDoseInfo& dose, const QString& noteTitle,
                         const QString& note);
  void askPrescription(const QString& title, const QString& text, const QString& doseName);
  /// findPlanPrescription() that never throws (a missing folder becomes a warning); worker-safe.
  static io::PlanPrescription findPrescription(const std::string& folder, const io::RtDoseInfo& dose, bool recursive);
  void showError(const QString& title, const QString& text);
  void showNote(const QString& title, const QString& text);
  void updateActions();

  MainWindow* window_;
  PlanningWorkspace* ws_;
  QPointer<QWidget> lastDialog_;
  bool showDialogs_ = true;
  bool doseOnly_ = false;
  QString exportDir_;
  // Open Case in progress.
  std::unique_ptr<io::CaseFile> pendingCase_;
  QString pendingCasePath_;
  QPointer<QObject> caseWait_;
  int fractions_ = 1;
  // Exports of this session: one study for all, the last plan for dose references.
  std::string studyUid_;
  std::string planSopUid_;
  std::vector<proton::ProtonBeam> planBeams_;
  std::map<int, QString> exportedDoses_;  ///< dose-set id -> RT Dose file
  std::vector<QAction*> needPatient_, needDose_, needSpots_, needPhotonBeams_;
};

}  // namespace penumbra::gui
