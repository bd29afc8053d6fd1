// Drives the real Penumbra main window: opens BOXPHANTOM through the same path as
// File > Open DICOM folder, checks the structure list, the contours drawn in the axial view,
// crosshair and window/level interaction, the error path for a non-DICOM folder, and that
// feet-first and prone series are displayed in patient LPS like head-first supine ones.
// Waits on signals and conditions (QSignalSpy / QTRY_*), never on fixed sleeps.
#include <cmath>
#include <memory>
#include <optional>

#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QMouseEvent>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>
#include <vtkCamera.h>
#include <vtkPolyData.h>
#include <vtkRenderer.h>

#include "dicom/synthetic_phantom.hpp"
#include "gui/jobs/import_dialog.hpp"
#include "gui/overlays/marching_squares.hpp"
#include "gui/overlays/structure_surface_builder.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/views/patient_tree.hpp"
#include "gui/views/slice_view.hpp"
#include "gui/views/vtk_view.hpp"
#include "gui_test_support.hpp"
#include "test_data.hpp"

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

/// Pixels of colour `rgb` in the left, right, upper and lower halves of `image`.
struct HalfCounts {
  int left = 0, right = 0, upper = 0, lower = 0;
};

HalfCounts countColourByHalf(const QImage& image, const std::array<std::uint8_t, 3>& rgb) {
  const int w = image.width(), h = image.height();
  return {countColour(image.copy(0, 0, w / 2, h), rgb), countColour(image.copy(w / 2, 0, w - w / 2, h), rgb),
          countColour(image.copy(0, 0, w, h / 2), rgb), countColour(image.copy(0, h / 2, w, h - h / 2), rgb)};
}

QString describe(const HalfCounts& c) {
  return QString("left %1, right %2, upper %3, lower %4").arg(c.left).arg(c.right).arg(c.upper).arg(c.lower);
}

/// Mean position of the pixels of colour `rgb` (tolerance 3), or nothing when there are none.
std::optional<QPointF> colourCentroid(const QImage& image, const std::array<std::uint8_t, 3>& rgb) {
  const QImage img = image.convertToFormat(QImage::Format_RGB32);
  double sx = 0, sy = 0;
  int n = 0;
  for (int y = 0; y < img.height(); ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
    for (int x = 0; x < img.width(); ++x)
      if (std::abs(qRed(line[x]) - rgb[0]) <= 3 && std::abs(qGreen(line[x]) - rgb[1]) <= 3 &&
          std::abs(qBlue(line[x]) - rgb[2]) <= 3)
        sx += x, sy += y, ++n;
  }
  if (n == 0) return std::nullopt;
  return QPointF(sx / n, sy / n);
}

/// Parses "x X  y Y  z Z mm (LPS)" and "N HU" out of a cursor read-out.
bool parseReadout(const QString& text, Vec3& lps, int& hu) {
  static const QRegularExpression re(
      R"(x (-?\d+\.\d)  y (-?\d+\.\d)  z (-?\d+\.\d) mm \(LPS\).* (-?\d+) HU)");
  const auto m = re.match(text);
  if (!m.hasMatch()) return false;
  lps = {m.captured(1).toDouble(), m.captured(2).toDouble(), m.captured(3).toDouble()};
  hu = m.captured(4).toInt();
  return true;
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

  // The same patient-space phantom written as head-first supine (identity direction), feet-
  // first supine and head-first prone series: the views must show it identically, in patient
  // LPS with radiological conventions, whatever order the voxels are stored in.
  void seriesOrientationIsDisplayedInPatientLps_data() {
    QTest::addColumn<QList<double>>("orientation");  // ImageOrientationPatient
    QTest::addColumn<QList<double>>("firstVoxel");   // ImagePositionPatient of the first slice
    // 64 x 64 x 32 voxels of 2 mm cover x, y in [-63, 63] and z in [-31, 31] in all three.
    QTest::newRow("head-first supine") << QList<double>{1, 0, 0, 0, 1, 0} << QList<double>{-63, -63, -31};
    QTest::newRow("feet-first supine") << QList<double>{-1, 0, 0, 0, 1, 0} << QList<double>{63, -63, 31};
    QTest::newRow("head-first prone") << QList<double>{-1, 0, 0, 0, -1, 0} << QList<double>{63, 63, -31};
  }

  void seriesOrientationIsDisplayedInPatientLps() {
    QFETCH(QList<double>, orientation);
    QFETCH(QList<double>, firstVoxel);
    // Patient-space placement (LPS mm): the PTV is towards the patient's left (+x), anterior
    // (-y) and superior (+z); the BODY extends further to the left than to the right, so
    // x = -45 is air and x = +45 is water. Voxel centres are at odd mm and every box face at
    // even mm, half-way between two centres: no voxel lies on a face, so the rasterisation
    // cannot depend on the direction in which an index axis runs.
    const Vec3 ptvCentre{31, -21, 11}, bodyCentre{16, 0, 0}, airProbe{-45, -21, 11};
    const std::array<std::uint8_t, 3> ptvColour{255, 0, 255};

    io::SyntheticPhantomSpec spec;
    for (int n = 0; n < 6; ++n) spec.orientation[n] = orientation[n];
    spec.origin = {firstVoxel[0], firstVoxel[1], firstVoxel[2]};
    spec.patientName = "Penumbra^Orientation";
    // Shape centres are image-local: along the row, column and slice-normal directions from
    // the first voxel (synthetic_phantom.hpp). For [-1,0,0,...] a positive u is patient right.
    const Vec3 row{orientation[0], orientation[1], orientation[2]};
    const Vec3 col{orientation[3], orientation[4], orientation[5]};
    const Vec3 normal = cross(row, col);
    const auto local = [&](Vec3 p) {
      const Vec3 d = p - spec.origin;
      return Vec3{dot(d, row), dot(d, col), dot(d, normal)};
    };
    using Shape = io::SyntheticStructureSpec::Shape;
    spec.structures = {{"BODY", "EXTERNAL", {0, 255, 0}, Shape::Box, local(bodyCentre), {40, 50, 24}, 0, {}},
                       {"PTV", "PTV", ptvColour, Shape::Box, local(ptvCentre), {9, 9, 5}, 0, {}}};
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    io::writeSyntheticPhantom(dir.path().toStdString(), spec);

    openThroughImportDialog(dir.path());
    if (QTest::currentTestFailed()) return;
    const auto scene = window_->viewState()->scene();
    QVERIFY(scene);
    // The imported Patient keeps its orientation; the views get an identity-direction copy.
    const Grid& imported = window_->patient()->ct.grid;
    QCOMPARE(imported.direction.column(0).x, row.x);
    QCOMPARE(imported.direction.column(1).y, col.y);
    QCOMPARE(scene->isReoriented(), !imported.isAxisAligned());
    QVERIFY(scene->grid().isAxisAligned(0));
    QVERIFY(scene->displayIsLps());

    ViewState* state = window_->viewState();
    const Vec3 at = scene->grid().worldToIndex(ptvCentre);
    state->setCrosshair(at);
    const Vec3 shown = scene->worldOf(state->crosshair());
    for (int a = 0; a < 3; ++a) QVERIFY2(std::abs(shown[a] - ptvCentre[a]) < 1e-6, "crosshair not on the PTV centre");

    // Axial (from the feet, anterior up): patient left on screen right, anterior up.
    // Coronal (from the front, head up): patient left on screen right, superior up.
    // Sagittal (from the patient's left, head up): anterior on screen left, superior up.
    struct Expect {
      SliceOrientation o;
      bool right, upper;
    };
    for (const Expect e : {Expect{SliceOrientation::Axial, true, true}, Expect{SliceOrientation::Coronal, true, true},
                           Expect{SliceOrientation::Sagittal, false, true}}) {
      SliceView* view = window_->sliceView(e.o);
      const QImage image = view->grabFramebuffer();
      const HalfCounts c = countColourByHalf(image, ptvColour);
      const QString what = QString("%1 view: %2").arg(displayName(e.o), describe(c));
      QVERIFY2((e.right ? c.right : c.left) > 50 && (e.right ? c.left : c.right) == 0, qPrintable(what));
      QVERIFY2((e.upper ? c.upper : c.lower) > 50 && (e.upper ? c.lower : c.upper) == 0, qPrintable(what));
      // Every orientation shows the patient in the same place on screen.
      const auto centroid = colourCentroid(image, ptvColour);
      QVERIFY(centroid);
      auto& reference = ptvCentroidOnScreen_[int(e.o)];
      if (!reference) reference = centroid;
      QVERIFY2(std::abs(centroid->x() - reference->x()) < 2 && std::abs(centroid->y() - reference->y()) < 2,
               qPrintable(QString("%1: PTV at (%2, %3) px, head-first supine had it at (%4, %5)")
                              .arg(what)
                              .arg(centroid->x())
                              .arg(centroid->y())
                              .arg(reference->x())
                              .arg(reference->y())));
    }

    // The read-out under the PTV centre and under air on the patient's right, in the axial
    // view: LPS position and the HU of the voxel that is drawn there.
    SliceView* axial = window_->sliceView(SliceOrientation::Axial);
    Vec3 lps;
    int hu = 0;
    const QString onPtv = axial->describePosition(test::widgetPosOf(axial, {ptvCentre.x, ptvCentre.y, ptvCentre.z}).toPoint());
    QVERIFY2(parseReadout(onPtv, lps, hu), qPrintable(onPtv));
    QVERIFY2(std::abs(lps.x - ptvCentre.x) < 2 && std::abs(lps.y - ptvCentre.y) < 2 &&
                 std::abs(lps.z - ptvCentre.z) < 0.05 && hu == 0,
             qPrintable(onPtv));
    const QString onAir = axial->describePosition(test::widgetPosOf(axial, {airProbe.x, airProbe.y, airProbe.z}).toPoint());
    QVERIFY2(parseReadout(onAir, lps, hu), qPrintable(onAir));
    QVERIFY2(std::abs(lps.x - airProbe.x) < 2 && hu == -1000, qPrintable(onAir));

    // The 3D surface of the PTV (built from the display masks) is where the patient's PTV is.
    const Structure* ptv = scene->displayPatient().structures.find("PTV");
    QVERIFY(ptv);
    const auto surface = buildMaskSurface(ptv->mask);
    double b[6];
    surface->GetBounds(b);
    for (int a = 0; a < 3; ++a)
      QVERIFY2(std::abs((b[2 * a] + b[2 * a + 1]) / 2 - ptvCentre[a]) < 1.5,
               qPrintable(QString("PTV surface axis %1 spans %2 .. %3").arg(a).arg(b[2 * a]).arg(b[2 * a + 1])));
  }

  void cleanupTestCase() { window_.reset(); }

private:
  void requirePatient() {
    if (!window_ || !window_->patient()) QFAIL("no patient loaded (the open test failed)");
  }

  /// Opens `folder` as File > Open DICOM folder does (scan, import dialog, Import button)
  /// and waits until everything is on screen.
  void openThroughImportDialog(const QString& folder) {
    QSignalSpy loaded(window_.get(), &MainWindow::patientLoaded);
    QSignalSpy ready(window_.get(), &MainWindow::sceneReady);
    QVERIFY(window_->openFolder(folder));
    QTRY_VERIFY_WITH_TIMEOUT(window_->importDialog() != nullptr, kImportTimeoutMs);
    auto* importButton = window_->importDialog()->findChild<QPushButton*>("importButton");
    QVERIFY(importButton && importButton->isEnabled());
    QTest::mouseClick(importButton, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, kImportTimeoutMs);
    QTRY_COMPARE_WITH_TIMEOUT(ready.count(), 1, kImportTimeoutMs);
  }

  std::unique_ptr<MainWindow> window_;
  // Where the head-first supine phantom's PTV appeared, per slice orientation.
  std::array<std::optional<QPointF>, 3> ptvCentroidOnScreen_;
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
