// Drives proton planning in the real main window by objectName (issue 4, item 7): opens the
// demo case (BOXPHANTOM), adds a beam on the target, generates spots, computes the dose on the
// CPU backend, waits on the job's finished signal, and checks the dose maximum, the wash, the
// isodose lines (polydata and the 100 % colour in the axial framebuffer), the cursor read-out,
// the isodose surfaces and normalisation; then starts a dose job and cancels it (cancelled
// within 1 s, no dose set added). Waits on signals and conditions, never on fixed sleeps.
#include <cmath>
#include <memory>

#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QListWidget>
#include <QMouseEvent>
#include <QPushButton>
#include <QSignalSpy>
#include <QSlider>
#include <QStandardPaths>
#include <QTest>
#include <vtkPolyData.h>
#include <vtkRenderer.h>

#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_display_settings.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/overlays/dose_surface_display.hpp"
#include "gui/overlays/dose_wash_display.hpp"
#include "gui/overlays/isodose_display.hpp"
#include "gui/plan/bev_panel.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui/views/slice_view.hpp"
#include "gui_test_support.hpp"
#include "proton/spot_generation.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::find;

namespace {

constexpr int kImportTimeoutMs = 120000;
constexpr int kDoseTimeoutMs = 300000;

int countColour(const QImage& image, QColor c, int tol = 3) {
  const QImage img = image.convertToFormat(QImage::Format_RGB32);
  int n = 0;
  for (int y = 0; y < img.height(); ++y) {
    const auto* line = reinterpret_cast<const QRgb*>(img.constScanLine(y));
    for (int x = 0; x < img.width(); ++x)
      if (std::abs(qRed(line[x]) - c.red()) <= tol && std::abs(qGreen(line[x]) - c.green()) <= tol &&
          std::abs(qBlue(line[x]) - c.blue()) <= tol)
        ++n;
  }
  return n;
}

}  // namespace

class PlanningTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    if (!test::haveData("phantoms/BOXPHANTOM"))
      QSKIP(qPrintable("test data not found: " + QString::fromStdString(test::dataPath("phantoms/BOXPHANTOM")) +
                       " (set PENUMBRA_TEST_DATA)"));
    window_ = std::make_unique<MainWindow>();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QVERIFY(test::openBoxPhantom(*window_, kImportTimeoutMs));
    ws_ = window_->planning();
    QVERIFY(ws_);
    ws_->controller()->setShowErrorDialogs(false);
  }

  void addBeamOnTargetAndGenerateSpots() {
    auto* target = find<QComboBox>(window_.get(), "targetCombo");
    auto* gantry = find<QDoubleSpinBox>(window_.get(), "gantrySpin");
    auto* add = find<QPushButton>(window_.get(), "addBeamButton");
    QVERIFY(target && gantry && add);
    target->setCurrentText("OuterTarget");
    QCOMPARE(target->currentText(), QString("OuterTarget"));
    gantry->setValue(90);
    QTest::mouseClick(add, Qt::LeftButton);
    PlanModel* plan = ws_->plan();
    QCOMPARE(plan->beamCount(), 1);
    QCOMPARE(plan->beam(0).beam.gantryDeg, 90.0);
    const Vec3 centroid = proton::targetCentroid(window_->patient()->structures.find("OuterTarget")->mask);
    QVERIFY(norm(plan->beam(0).beam.isocenter - centroid) < 1e-6);

    const auto& scene = window_->viewState()->scene();
    window_->viewState()->setCrosshair(scene->grid().worldToIndex(centroid));

    auto* generate = find<QPushButton>(window_.get(), "generateSpotsButton");
    QVERIFY(generate && generate->isEnabled());
    QSignalSpy submitted(ws_->jobs(), &JobRunner::jobSubmitted);
    QTest::mouseClick(generate, Qt::LeftButton);
    QCOMPARE(submitted.count(), 1);
    auto* job = submitted.first().first().value<Job*>();
    QVERIFY(job);
    QSignalSpy finished(job, &Job::finished);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kDoseTimeoutMs);
    QCOMPARE(job->state(), Job::State::Done);
    const auto& beam = plan->beam(0);
    QVERIFY(beam.beam.layers.size() >= 3);
    QVERIFY(beam.beam.spotCount() > 50);
    QVERIFY(beam.projection.has_value());

    // The BEV panel shows the target outline and one layer at a time.
    auto* bev = find<BevPanel>(window_.get(), "bevPanel");
    auto* slider = find<QSlider>(window_.get(), "bevLayerSlider");
    QVERIFY(bev && slider);
    QVERIFY(bev->outlineSegments() > 8);
    QCOMPARE(slider->maximum(), int(beam.beam.layers.size()) - 1);
    slider->setValue(1);
    QVERIFY(find<QLabel>(window_.get(), "bevLayerLabel")->text().contains("Layer 2/"));

    // Deleting a layer from the editor removes it from the plan.
    auto* layers = find<QListWidget>(window_.get(), "layerList");
    const std::size_t before = beam.beam.layers.size();
    layers->setCurrentRow(int(before) - 1);
    QTest::mouseClick(find<QPushButton>(window_.get(), "removeLayerButton"), Qt::LeftButton);
    QCOMPARE(plan->beam(0).beam.layers.size(), before - 1);
  }

  void computeDoseOnCpuShowsWashAndIsodoses() {
    requireSpots();
    auto* backend = find<QComboBox>(window_.get(), "backendCombo");
    QVERIFY(backend);
    backend->setCurrentIndex(backend->findData(int(Backend::Cpu)));
    DoseSetStore* store = ws_->doseSets();
    QCOMPARE(store->count(), 0);
    QSignalSpy submitted(ws_->jobs(), &JobRunner::jobSubmitted);
    QTest::mouseClick(find<QPushButton>(window_.get(), "computeDoseButton"), Qt::LeftButton);
    QCOMPARE(submitted.count(), 1);
    auto* job = submitted.first().first().value<Job*>();
    QSignalSpy finished(job, &Job::finished);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kDoseTimeoutMs);
    QVERIFY2(job->state() == Job::State::Done, qPrintable(job->errorMessage()));
    QCOMPARE(store->count(), 1);
    const auto set = store->current();
    QVERIFY(set);
    QCOMPARE(set->dose.backend, std::string("cpu"));
    QVERIFY(!set->profiles.empty());

    // Dose maximum: positive, finite, and at the target (a single field of uniform weights
    // peaks in its Bragg-peak region, inside the target plus the distal margin).
    QVERIFY2(set->maxGy > 0.01 && set->maxGy < 1e4, qPrintable(QString::number(set->maxGy)));
    const Volume<float>& d = set->dose.dose;
    const auto it = std::max_element(d.data.begin(), d.data.end());
    const std::size_t v = std::size_t(it - d.data.begin());
    const int i = int(v % std::size_t(d.grid.dims[0])), j = int(v / std::size_t(d.grid.dims[0]) % std::size_t(d.grid.dims[1]));
    const int k = int(v / (std::size_t(d.grid.dims[0]) * std::size_t(d.grid.dims[1])));
    const Vec3 at = d.grid.indexToWorld(Vec3{double(i), double(j), double(k)});
    const Vec3 centroid = ws_->plan()->beam(0).beam.isocenter;
    QVERIFY2(norm(at - centroid) < 60, qPrintable(QString("max at %1 mm from the target centroid").arg(norm(at - centroid))));

    // Normalise to the prescription: the target mean becomes 2 Gy.
    QCOMPARE(ws_->plan()->prescriptionGy(), 2.0);
    QTest::mouseClick(find<QPushButton>(window_.get(), "normaliseButton"), Qt::LeftButton);
    const auto norm = store->current();
    QVERIFY(norm->normalisation > 0 && norm->normalisation != 1);
    const Mask& mask = window_->patient()->structures.find("OuterTarget")->mask;
    double sum = 0;
    int n = 0;
    for (int kk = 0; kk < mask.grid.dims[2]; ++kk)
      for (int jj = 0; jj < mask.grid.dims[1]; ++jj)
        for (int ii = 0; ii < mask.grid.dims[0]; ++ii) {
          double gy = 0;
          if (mask.at(ii, jj, kk) && sampleDose(norm->dose.dose, mask.grid.indexToWorld(Vec3{double(ii), double(jj), double(kk)}), gy))
            sum += gy, ++n;
        }
    QVERIFY(n > 0);
    QVERIFY2(std::abs(sum / n - 2.0) < 1e-3, qPrintable(QString::number(sum / n)));

    // Wash and isodose lines on the axial slice through the target.
    const auto& scene = window_->viewState()->scene();
    window_->viewState()->setCrosshair(scene->grid().worldToIndex(centroid));
    SliceView* axial = window_->sliceView(SliceOrientation::Axial);
    QVERIFY(ws_->doseWashDisplay(SliceOrientation::Axial)->isShowing());
    IsodoseDisplay* iso = ws_->isodoseDisplay(SliceOrientation::Axial);
    QVERIFY(iso->lines()->GetNumberOfCells() > 0);
    const auto& levels = ws_->displaySettings()->isodoseLevels();
    int hundred = -1;
    for (std::size_t l = 0; l < levels.size(); ++l)
      if (levels[l].percent == 100) hundred = int(l);
    QVERIFY(hundred >= 0);
    QVERIFY(iso->segmentsPerLevel()[std::size_t(hundred)] > 10);
    for (SliceOrientation o : {SliceOrientation::Sagittal, SliceOrientation::Coronal})
      QVERIFY(ws_->isodoseDisplay(o)->lines()->GetNumberOfCells() > 0);
    QVERIFY(iso->legendVisible());
    const QColor red = levels[std::size_t(hundred)].color;
    const int withLines = countColour(axial->grabFramebuffer(), red);
    ws_->displaySettings()->setIsodosesVisible(false);
    const int withoutLines = countColour(axial->grabFramebuffer(), red);
    ws_->displaySettings()->setIsodosesVisible(true);
    QVERIFY2(withLines > withoutLines + 30, qPrintable(QString("%1 vs %2").arg(withLines).arg(withoutLines)));

    // Dose under the cursor at the isocentre: about the prescription after normalisation.
    const QPoint p = test::widgetPosOf(axial, scene->displayPoint(scene->grid().worldToIndex(centroid))).toPoint();
    QMouseEvent move(QEvent::MouseMove, QPointF(p), QPointF(axial->mapToGlobal(p)), Qt::NoButton, Qt::NoButton,
                     Qt::NoModifier);
    QApplication::sendEvent(axial, &move);
    const QString text = find<QLabel>(window_.get(), "doseInfoLabel")->text();
    QVERIFY2(text.contains("Gy") && text.contains("%"), qPrintable(text));

    // Isodose surfaces in the 3D view.
    DoseSurfaceDisplay* surfaces = ws_->doseSurfaces();
    QTRY_VERIFY_WITH_TIMEOUT(!surfaces->isBuilding() && surfaces->surfaceCount() >= 1, kDoseTimeoutMs);
    QVERIFY(surfaces->triangleCount() > 100);
  }

  void cancelledDoseJobAddsNoDoseSet() {
    requireSpots();
    DoseSetStore* store = ws_->doseSets();
    const int before = store->count();
    QSignalSpy submitted(ws_->jobs(), &JobRunner::jobSubmitted);
    QTest::mouseClick(find<QPushButton>(window_.get(), "computeDoseButton"), Qt::LeftButton);
    QCOMPARE(submitted.count(), 1);
    auto* job = submitted.first().first().value<Job*>();
    // Cancel while the engine computes (after its first progress report).
    QTRY_VERIFY_WITH_TIMEOUT(job->state() == Job::State::Running && job->fraction() > 0, kDoseTimeoutMs);
    QSignalSpy cancelled(job, &Job::cancelled);
    auto* cancel = find<QPushButton>(window_.get(), "cancelJobButton");
    QVERIFY(cancel && cancel->isEnabled());
    QTest::mouseClick(cancel, Qt::LeftButton);
    QCOMPARE(job->state(), Job::State::Cancelling);
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 1000);
    QCOMPARE(job->state(), Job::State::Cancelled);
    qInfo("cancel latency: %.1f ms", job->cancelLatencyMs());
    QVERIFY(job->cancelLatencyMs() < 1000);
    QCOMPARE(store->count(), before);
    QVERIFY(!ws_->jobs()->isBusy());
  }

  void cleanupTestCase() { window_.reset(); }

private:
  void requireSpots() {
    if (!ws_ || ws_->plan()->totalSpots() == 0) QFAIL("no spots (the spot generation test failed)");
  }

  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
};

int main(int argc, char** argv) {
  VtkView::setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("PenumbraTest");
  QApplication::setApplicationName("penumbra-gui-test");
  PlanningTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_planning.moc"
