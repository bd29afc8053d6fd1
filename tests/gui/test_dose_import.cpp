// Issue 12, item 4 (and the status bar of item 6): an imported RT Dose is shown against its
// plan's prescription, not against the 2 Gy default.
//  - RayStation's brain SRS folder (File > Open RT Dose and structures without CT, as
//    --open-dose): its RT Plan states no prescription (no Dose Reference Sequence), so the user
//    is asked ("prescriptionDialog", naming the plan and why), and the answer becomes the
//    plan's prescription with its source in the status bar; with dialogs off (batch mode) the
//    prescription is kept and the message says so; the status bar no longer says "No patient";
//  - the same dose and structures next to an RT Plan that prescribes 12.4 Gy x 5 to PTV_ALL
//    (written with our RT Plan exporter, the dose re-written to reference it): 62 Gy is set
//    without a question, the message names the file and the dose reference, and PTV_ALL's V95
//    is read against 62 Gy (it was 100 % against 2 Gy);
//  - File > Import RT Dose onto an open CT (BOXPHANTOM): a FRACTION dose referencing a plan
//    of 2.5 Gy x 4 gets 2.5 Gy (per fraction).
// Waits on signals and conditions, never on fixed sleeps.
#include <cmath>
#include <memory>

#include <QApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "dicom/rt_dose_reader.hpp"
#include "dicom/rt_dose_writer.hpp"
#include "dicom/rt_plan_writer.hpp"
#include "gui/dose/dvh_panel.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui/views/vtk_view.hpp"
#include "gui_test_support.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::find;

namespace {
constexpr int kTimeoutMs = 300000;
const char* kImrt = "patients/brain-srs-raystation/imrt";
const char* kImrtPlan = "RP1.2.752.243.1.1.20180405114728127.3000.13138.dcm";
const char* kImrtDose = "RD1.2.752.243.1.1.20180405114728128.4000.85245.dcm";
const char* kImrtStructures = "RS1.2.752.243.1.1.20180405120828292.2900.76357.dcm";

photon::PhotonBeam openField() {
  photon::PhotonBeam b;
  b.name = "AP";
  b.monitorUnits = 100;
  return b;
}
}  // namespace

class DoseImportTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    if (!test::haveData(kImrt)) QSKIP("brain-srs-raystation not in the test data (set PENUMBRA_TEST_DATA)");
    window_ = std::make_unique<MainWindow>();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    ws_ = window_->planning();
    files_ = ws_->fileActions();
    QVERIFY(files_);
    ws_->controller()->setShowErrorDialogs(false);
  }

  void raystationPlanWithoutPrescriptionAsksTheUser() {
    auto* cursor = find<QLabel>(window_.get(), "cursorInfoLabel");
    QVERIFY(cursor);
    QCOMPARE(cursor->text(), QString("No patient"));
    QSignalSpy resolved(files_, &PlanFileActions::prescriptionResolved);
    QVERIFY(files_->openDoseWithoutCt(imrt()));
    QDialog* dialog = nullptr;
    QTRY_VERIFY_WITH_TIMEOUT((dialog = window_->findChild<QDialog*>("prescriptionDialog")) && dialog->isVisible(), kTimeoutMs);
    QVERIFY(files_->isDoseOnlyPatient());
    const QString text = find<QLabel>(dialog, "prescriptionDialogText")->text();
    qInfo("%s", qPrintable(text));
    QVERIFY2(text.contains("No prescription for") && text.contains(kImrtPlan) && text.contains("states none"),
             qPrintable(text));
    QVERIFY2(text.contains("no Dose Reference Sequence") && text.contains("5 fractions"), qPrintable(text));
    QVERIFY2(text.contains("no CT"), qPrintable(text));  // the dose-only note, in the same dialog
    QVERIFY(!window_->findChild<QMessageBox*>("importNoteDialog"));
    // Item 6: a dose shown without CT is a patient for the status bar.
    QVERIFY2(cursor->text() != "No patient", qPrintable(cursor->text()));
    QCOMPARE(resolved.count(), 0);  // waiting for the user

    auto* spin = find<QDoubleSpinBox>(dialog, "prescriptionDialogSpin");
    QVERIFY(spin);
    spin->setValue(40);
    QTest::mouseClick(dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok), Qt::LeftButton);
    QTRY_COMPARE(resolved.count(), 1);
    QCOMPARE(resolved.first().at(0).toDouble(), 40.0);
    QCOMPARE(resolved.first().at(1).toBool(), false);
    QCOMPARE(ws_->plan()->prescriptionGy(), 40.0);
    QVERIFY2(ws_->plan()->prescriptionSource().contains("entered"), qPrintable(ws_->plan()->prescriptionSource()));
    QVERIFY2(find<QLabel>(window_.get(), "prescriptionLabel")->text().startsWith("Rx 40.00 Gy: entered"),
             qPrintable(find<QLabel>(window_.get(), "prescriptionLabel")->text()));
  }

  void withDialogsOffThePrescriptionIsKeptAndSaid() {
    files_->setShowDialogs(false);
    ws_->plan()->setPrescriptionGy(2.0);
    QSignalSpy resolved(files_, &PlanFileActions::prescriptionResolved);
    QVERIFY(files_->openDoseWithoutCt(imrt()));
    QTRY_COMPARE_WITH_TIMEOUT(resolved.count(), 1, kTimeoutMs);
    const QString text = resolved.first().at(2).toString();
    qInfo("%s", qPrintable(text));
    QCOMPARE(resolved.first().at(0).toDouble(), 2.0);
    QCOMPARE(resolved.first().at(1).toBool(), false);
    QVERIFY2(text.startsWith(QString("No prescription for ") + kImrtDose) && text.contains("states none") &&
                 text.contains("2.00 Gy (kept)"),
             qPrintable(text));
    QCOMPARE(ws_->plan()->prescriptionGy(), 2.0);
    QVERIFY(!window_->findChild<QDialog*>("prescriptionDialog"));
    files_->setShowDialogs(true);
  }

  void planPrescriptionIsReadAndUsed() {
    // RS as is; our RT Plan prescribing 12.4 Gy x 5 to PTV_ALL; RayStation's dose written again
    // (same grid and frame of reference) with a reference to that plan.
    QTemporaryDir dir;
    QVERIFY(QFile::copy(imrt() + "/" + kImrtStructures, dir.filePath("RS.dcm")));
    io::RtDoseImport rd = io::readRtDose((imrt() + "/" + kImrtDose).toStdString());
    QVERIFY(rd.ok());
    io::RtPlanWriteOptions po;
    po.patientName = rd.info.patientName;
    po.patientId = rd.info.patientId;
    po.frameOfReferenceUid = rd.info.frameOfReferenceUid;
    po.targetName = "PTV_ALL";
    po.dosePerFractionGy = 12.4;
    po.fractions = 5;
    const io::RtPlanWriteResult plan = io::writeRtPlan(dir.filePath("RP.dcm").toStdString(), {openField()}, po);
    io::RtDoseWriteOptions dose;
    dose.patientName = rd.info.patientName;
    dose.patientId = rd.info.patientId;
    dose.frameOfReferenceUid = rd.info.frameOfReferenceUid;
    dose.referencedPlanSopInstanceUid = plan.sopInstanceUid;
    dose.referencedPlanSopClassUid = "1.2.840.10008.5.1.4.1.1.481.5";  // RT Plan Storage
    io::writeRtDose(dir.filePath("RD.dcm").toStdString(), rd.dose, dose);

    ws_->plan()->setPrescriptionGy(2.0);
    QSignalSpy resolved(files_, &PlanFileActions::prescriptionResolved);
    QVERIFY(files_->openDoseWithoutCt(dir.path()));
    QTRY_COMPARE_WITH_TIMEOUT(resolved.count(), 1, kTimeoutMs);
    const QString text = resolved.first().at(2).toString();
    qInfo("%s", qPrintable(text));
    QVERIFY(std::abs(resolved.first().at(0).toDouble() - 62.0) < 1e-9);
    QCOMPARE(resolved.first().at(1).toBool(), true);
    QCOMPARE(text, QString("Prescription 62.0 Gy from RP.dcm (DoseReference 'PTV_ALL'): 62.0 Gy over 5 fractions"));
    QVERIFY(std::abs(ws_->plan()->prescriptionGy() - 62.0) < 1e-9);
    QCOMPARE(ws_->plan()->prescriptionSource(), QString("RP.dcm, DoseReference 'PTV_ALL'"));
    QVERIFY(find<QLabel>(window_.get(), "prescriptionLabel")->text().startsWith("Rx 62.00 Gy: RP.dcm"));
    // No question; the dose-only note says which prescription is used.
    QVERIFY(!window_->findChild<QDialog*>("prescriptionDialog"));
    QMessageBox* note = nullptr;
    QTRY_VERIFY((note = window_->findChild<QMessageBox*>("importNoteDialog")) != nullptr);
    QVERIFY2(note->text().contains("Prescription 62.0 Gy from RP.dcm"), qPrintable(note->text()));
    note->close();

    // PTV_ALL (D95 44 Gy, max 62 Gy) against 62 Gy: V95 is a minority of the volume.
    auto* panel = find<DvhPanel>(window_.get(), "dvhPanel");
    const auto set = ws_->doseSets()->current();
    QVERIFY(panel && set);
    QTRY_VERIFY_WITH_TIMEOUT(ws_->dvhs()->forDoseSet(set->id) && !ws_->dvhs()->isBusy(), kTimeoutMs);
    const int row = panel->statisticsRow("PTV_ALL", set->id);
    QVERIFY(row >= 0);
    const double v95 = panel->statisticsTable()->item(row, DvhPanel::kV95)->data(Qt::UserRole).toDouble();
    qInfo("PTV_ALL V95 %.1f %% of 62 Gy", v95);
    QVERIFY2(v95 < 50, qPrintable(QString::number(v95)));
  }

  void importedFractionDoseOnACtGetsTheDosePerFraction() {
    if (!test::haveData("phantoms/BOXPHANTOM")) QSKIP("BOXPHANTOM not in the test data");
    QVERIFY(test::openBoxPhantom(*window_, kTimeoutMs));
    const Patient* p = window_->patient();
    QVERIFY(p && !files_->isDoseOnlyPatient());
    QTemporaryDir dir;
    io::RtPlanWriteOptions po;
    po.frameOfReferenceUid = p->frameOfReferenceUid;
    po.targetName = "OuterTarget";
    po.dosePerFractionGy = 2.5;
    po.fractions = 4;
    const io::RtPlanWriteResult plan = io::writeRtPlan(dir.filePath("RP_box.dcm").toStdString(), {openField()}, po);
    DoseVolume dose;
    dose.dose = Volume<float>(p->ct.grid, 2.5f);
    io::RtDoseWriteOptions o;
    o.frameOfReferenceUid = p->frameOfReferenceUid;
    o.referencedPlanSopInstanceUid = plan.sopInstanceUid;
    o.referencedPlanSopClassUid = "1.2.840.10008.5.1.4.1.1.481.5";
    o.doseSummationType = "FRACTION";
    io::writeRtDose(dir.filePath("RD_box.dcm").toStdString(), dose, o);

    QSignalSpy resolved(files_, &PlanFileActions::prescriptionResolved);
    QSignalSpy imported(files_, &PlanFileActions::doseImported);
    QVERIFY(files_->importRtDose(dir.filePath("RD_box.dcm")));
    QTRY_COMPARE_WITH_TIMEOUT(resolved.count(), 1, kTimeoutMs);
    QCOMPARE(imported.count(), 1);
    const QString text = resolved.first().at(2).toString();
    qInfo("%s", qPrintable(text));
    QVERIFY(std::abs(ws_->plan()->prescriptionGy() - 2.5) < 1e-9);
    QVERIFY2(text.startsWith("Prescription 2.5 Gy from RP_box.dcm (DoseReference 'OuterTarget')") &&
                 text.contains("per fraction (10.0 Gy / 4 fractions)"),
             qPrintable(text));
  }

  void cleanupTestCase() {
    if (ws_) ws_->jobs()->cancelAll();
    window_.reset();
  }

private:
  static QString imrt() { return QString::fromStdString(test::dataPath(kImrt)); }

  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
  PlanFileActions* files_ = nullptr;
};

int main(int argc, char** argv) {
  VtkView::setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("PenumbraTest");
  QApplication::setApplicationName("penumbra-gui-test");
  DoseImportTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_dose_import.moc"
