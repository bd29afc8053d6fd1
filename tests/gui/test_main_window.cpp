// Drives the real Penumbra main window: opens BOXPHANTOM through the same path as
// File > Open DICOM folder, checks the structure list, the contours drawn in the axial view,
// crosshair and window/level interaction, and the error path for a non-DICOM folder.
// Waits on signals and conditions (QSignalSpy / QTRY_*), never on fixed sleeps.
#include <memory>

#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>
#include <vtkCamera.h>
#include <vtkRenderer.h>

#include "import_dialog.hpp"
#include "main_window.hpp"
#include "marching_squares.hpp"
#include "patient_tree.hpp"
#include "slice_view.hpp"
#include "test_data.hpp"
#include "vtk_view.hpp"

using namespace penumbra;
using namespace penumbra::gui;

namespace {

constexpr int kImportTimeoutMs = 120000;

/// Pixels of `image` within `tol` of `rgb` in every channel.
int countColour(const QImage& image, const std::array<std::uint8_t, 3>& rgb, int tol = 3) {
  const QImage img = image.convertToFormat(QImage::Format_RGB32);
  int n = 0;
  for (int y = 0; y < img.height(); ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
    for (int x = 0; x < img.width(); ++x)
      if (std::abs(qRed(line[x]) - rgb[0]) <= tol && std::abs(qGreen(line[x]) - rgb[1]) <= tol &&
          std::abs(qBlue(line[x]) - rgb[2]) <= tol)
        ++n;
  }
  return n;
}

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);  // keep the user's recent folders untouched
    if (!test::haveData("phantoms/BOXPHANTOM"))
      QSKIP(qPrintable("test data not found: " + QString::fromStdString(test::dataPath("phantoms/BOXPHANTOM")) +
                       " (set PENUMBRA_TEST_DATA)"));
    window_ = std::make_unique<MainWindow>();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
  }

  void opensBoxPhantomThroughImportDialog() {
    QSignalSpy loaded(window_.get(), &MainWindow::patientLoaded);
    QSignalSpy ready(window_.get(), &MainWindow::sceneReady);
    const QString folder = QString::fromStdString(test::dataPath("phantoms/BOXPHANTOM"));
    QVERIFY(window_->openFolder(folder));
    QTRY_VERIFY_WITH_TIMEOUT(window_->importDialog() != nullptr, kImportTimeoutMs);
    ImportDialog* dialog = window_->importDialog();
    QCOMPARE(dialog->objectName(), QString("importDialog"));
    auto* report = dialog->findChild<QPlainTextEdit*>("doctorReportText");
    QVERIFY(report && !report->toPlainText().trimmed().isEmpty());
    QVERIFY(!dialog->selectedSeriesKey().isEmpty());
    auto* importButton = dialog->findChild<QPushButton*>("importButton");
    QVERIFY(importButton && importButton->isEnabled());
    QTest::mouseClick(importButton, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kImportTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kImportTimeoutMs);

    auto* tree = window_->findChild<PatientTree*>("patientTree");
    QVERIFY(tree);
    const QStringList names = tree->structureNames();
    QVERIFY2(names.contains("BODY") && names.contains("OuterTarget"), qPrintable(names.join(", ")));
    QTreeWidgetItem* target = tree->structureItem("OuterTarget");
    QVERIFY(target);
    QCOMPARE(target->checkState(0), Qt::Checked);
    QVERIFY(!target->icon(0).isNull());
    QVERIFY(tree->planBranch() != nullptr);
    QCOMPARE(tree->planBranch()->childCount(), 0);
  }

  void axialViewShowsTargetContourOnlyNearTarget() {
    requirePatient();
    const Structure* target = window_->patient()->structures.find("OuterTarget");
    QVERIFY(target);
    const MaskBounds b = maskBounds(target->mask);
    QVERIFY(!b.empty());
    auto* axial = window_->findChild<SliceView*>("axialView");
    QVERIFY(axial);
    ViewState* state = window_->viewState();

    state->setSliceIndex(SliceOrientation::Axial, (b.lo[2] + b.hi[2]) / 2);
    const int onTarget = countColour(axial->grabFramebuffer(), target->color);
    QVERIFY2(onTarget > 100, qPrintable(QString("target-coloured pixels: %1").arg(onTarget)));

    state->setSliceIndex(SliceOrientation::Axial, 5);
    const int farAway = countColour(axial->grabFramebuffer(), target->color);
    QCOMPARE(farAway, 0);
  }

  void hidingAStructureRemovesItsContour() {
    requirePatient();
    const Structure* target = window_->patient()->structures.find("OuterTarget");
    const MaskBounds b = maskBounds(target->mask);
    auto* coronal = window_->findChild<SliceView*>("coronalView");
    QVERIFY(coronal);
    window_->viewState()->setSliceIndex(SliceOrientation::Coronal, (b.lo[1] + b.hi[1]) / 2);
    QVERIFY(countColour(coronal->grabFramebuffer(), target->color) > 100);
    QTreeWidgetItem* item = window_->patientTree()->structureItem("OuterTarget");
    item->setCheckState(0, Qt::Unchecked);
    QCOMPARE(countColour(coronal->grabFramebuffer(), target->color), 0);
    item->setCheckState(0, Qt::Checked);
    QVERIFY(countColour(coronal->grabFramebuffer(), target->color) > 100);
  }

  void clickSetsCrosshairInAllViews() {
    requirePatient();
    auto* axial = window_->findChild<SliceView*>("axialView");
    ViewState* state = window_->viewState();
    state->setCrosshair(window_->viewState()->scene()->centreIndex());
    const int sagittalBefore = state->sliceIndex(SliceOrientation::Sagittal);
    const int axialBefore = state->sliceIndex(SliceOrientation::Axial);
    // Screen left in an axial view is patient right, i.e. smaller x and a lower sagittal index.
    const QPoint left(axial->width() / 2 - axial->width() / 8, axial->height() / 2);
    QTest::mouseClick(axial, Qt::LeftButton, Qt::NoModifier, left);
    QVERIFY(state->sliceIndex(SliceOrientation::Sagittal) < sagittalBefore);
    QCOMPARE(state->sliceIndex(SliceOrientation::Axial), axialBefore);  // same axial slice

    // A plain move (no button) over the view updates the status-bar read-out.
    QMouseEvent move(QEvent::MouseMove, QPointF(left), QPointF(axial->mapToGlobal(left)), Qt::NoButton,
                     Qt::NoButton, Qt::NoModifier);
    QApplication::sendEvent(axial, &move);
    auto* info = window_->findChild<QLabel*>("cursorInfoLabel");
    QVERIFY(info);
    // Inside BOXPHANTOM's water box: 0 HU.
    QVERIFY2(info->text().contains("LPS") && info->text().contains(" 0 HU"), qPrintable(info->text()));

    QTest::keyClick(axial, Qt::Key_PageUp);
    QCOMPARE(state->sliceIndex(SliceOrientation::Axial), axialBefore + 1);
  }

  void dragWindowLevelWheelScrollAndZoom() {
    requirePatient();
    auto* sagittal = window_->findChild<SliceView*>("sagittalView");
    QVERIFY(sagittal);
    ViewState* state = window_->viewState();
    state->setWindowLevel({400, 40});
    const QPoint p0(sagittal->width() / 2, sagittal->height() / 2), p1 = p0 + QPoint(40, 0);
    auto send = [&](QEvent::Type type, QPoint at, Qt::MouseButton button, Qt::MouseButtons held,
                    Qt::KeyboardModifiers mods = Qt::NoModifier) {
      QMouseEvent e(type, QPointF(at), QPointF(sagittal->mapToGlobal(at)), button, held, mods);
      QApplication::sendEvent(sagittal, &e);
    };
    // Left drag to the right widens the window; the level stays (no vertical motion).
    send(QEvent::MouseButtonPress, p0, Qt::LeftButton, Qt::LeftButton);
    send(QEvent::MouseMove, p1, Qt::NoButton, Qt::LeftButton);
    send(QEvent::MouseButtonRelease, p1, Qt::LeftButton, Qt::NoButton);
    QVERIFY(state->windowLevel().window > 400);
    QCOMPARE(state->windowLevel().level, 40.0);

    // The wheel steps slices; ctrl+wheel zooms (smaller parallel scale) without stepping.
    const int slice = state->sliceIndex(SliceOrientation::Sagittal);
    auto wheel = [&](Qt::KeyboardModifiers mods) {
      QWheelEvent e(QPointF(p0), QPointF(sagittal->mapToGlobal(p0)), QPoint(), QPoint(0, 120),
                    Qt::NoButton, mods, Qt::NoScrollPhase, false);
      QApplication::sendEvent(sagittal, &e);
    };
    wheel(Qt::NoModifier);
    QCOMPARE(state->sliceIndex(SliceOrientation::Sagittal), slice + 1);
    const double scale = sagittal->renderer()->GetActiveCamera()->GetParallelScale();
    wheel(Qt::ControlModifier);
    QVERIFY(sagittal->renderer()->GetActiveCamera()->GetParallelScale() < scale);
    QCOMPARE(state->sliceIndex(SliceOrientation::Sagittal), slice + 1);
    sagittal->resetCamera();
    QCOMPARE(sagittal->renderer()->GetActiveCamera()->GetParallelScale(), scale);
  }

  void windowPresetComboSetsWindowLevel() {
    requirePatient();
    auto* combo = window_->findChild<QComboBox*>("windowPresetCombo");
    QVERIFY(combo);
    combo->setCurrentIndex(1);
    emit combo->activated(1);  // as a user choice does
    QCOMPARE(window_->viewState()->windowLevel().window, 1500.0);
    QCOMPARE(window_->viewState()->windowLevel().level, -600.0);
    window_->viewState()->setWindowLevel({123, 45});
    QCOMPARE(combo->currentText(), QString("Custom"));
    emit combo->activated(0);
    QCOMPARE(window_->viewState()->windowLevel().window, 400.0);
  }

  void nonDicomFolderShowsErrorAndKeepsPatient() {
    requirePatient();
    const std::string nameBefore = window_->patient()->name;
    const Patient* before = window_->patient();
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QFile text(dir.filePath("notes.txt"));
    QVERIFY(text.open(QIODevice::WriteOnly));
    text.write("this is not DICOM\n");
    text.close();

    QSignalSpy failed(window_.get(), &MainWindow::importFailed);
    QVERIFY(window_->openFolder(dir.path()));
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 1, kImportTimeoutMs);
    QVERIFY(!failed.first().first().toString().isEmpty());
    auto* box = window_->findChild<QMessageBox*>("errorMessageBox");
    QVERIFY(box && box->isVisible());
    box->close();
    QCOMPARE(window_->patient(), before);
    QCOMPARE(window_->patient()->name, nameBefore);
    QVERIFY(!window_->isBusy());
  }

  void cancelledOpenKeepsPatient() {
    requirePatient();
    const Patient* before = window_->patient();
    QSignalSpy cancelled(window_.get(), &MainWindow::importCancelled);
    QSignalSpy jobCancelled(window_->importJob(), &ImportJob::cancelled);
    QVERIFY(window_->openFolder(QString::fromStdString(test::dataPath("phantoms/BOXPHANTOM"))));
    // Cancel as the progress dialog's button does, while the scan is on the worker (the
    // scan checks the token before every file, so it cannot finish first).
    QVERIFY(window_->importJob()->isBusy());
    window_->importJob()->cancel();
    QCOMPARE(window_->importJob()->state(), ImportJob::State::Cancelling);
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, kImportTimeoutMs);
    QCOMPARE(jobCancelled.count(), 1);
    QCOMPARE(window_->importJob()->state(), ImportJob::State::Cancelled);
    QVERIFY(window_->importDialog() == nullptr);
    QCOMPARE(window_->patient(), before);
  }

  void cleanupTestCase() { window_.reset(); }

private:
  void requirePatient() {
    if (!window_ || !window_->patient()) QFAIL("no patient loaded (the open test failed)");
  }

  std::unique_ptr<MainWindow> window_;
};

int main(int argc, char** argv) {
  VtkView::setDefaultSurfaceFormat();  // before QApplication (PLATFORM.md)
  QApplication app(argc, argv);
  QApplication::setOrganizationName("PenumbraTest");
  QApplication::setApplicationName("penumbra-gui-test");
  MainWindowTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_main_window.moc"
