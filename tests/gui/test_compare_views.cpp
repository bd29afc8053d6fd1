// The Compare workspace's views (issue 13, item 3), on RayStation's brain SRS doses opened
// without CT and compared once (gamma 3 %/3 mm global, IMRT as A, VMAT as B, CPU):
//  - side by side: the central area shows A | B | map, A and B wash their own dose sets, the
//    map carries both doses' isodose lines, and a zoom of one view is the zoom of all three;
//  - the Profile tool: a drag across A's maximum on the axial view draws the line and plots A,
//    B and gamma along it (PENUMBRA_COMPARE_PROFILE_SHOT=FILE saves the Profile dock);
//  - the PDF report: several pages, and refused in a folder that does not exist;
//  - Cancel right after Compute gamma keeps the last comparison.
// Waits on signals and conditions, never on fixed sleeps.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QMouseEvent>
#include <QPushButton>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>
#include <vtkCamera.h>
#include <vtkPolyData.h>
#include <vtkRenderer.h>

#include "compare_test_support.hpp"
#include "gui/compare/compare_views.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/compare/profile_panel.hpp"
#include "gui/model/profile_model.hpp"
#include "gui/overlays/comparison_wash_display.hpp"
#include "gui/overlays/dose_wash_display.hpp"
#include "gui/overlays/isodose_display.hpp"
#include "gui/overlays/profile_line_display.hpp"
#include "gui/views/slice_view.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::find;

class CompareViewsTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    if (!test::haveBrainCase()) QSKIP("brain-srs-raystation not in the test data (set PENUMBRA_TEST_DATA)");
    window_ = std::make_unique<MainWindow>();
    window_->resize(1600, 1000);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    ws_ = window_->planning();
    ws_->fileActions()->setShowDialogs(false);
    panel_ = ws_->comparePanel();
    window_->findChild<QAction*>("actionCompareDoses")->trigger();
    std::shared_ptr<const DoseSet> imrt, vmat;
    QVERIFY(test::openBrainDoses(ws_, imrt, vmat));
    QVERIFY(test::compareOnCpu(ws_, imrt->id, vmat->id));
    // The DVH table and the report need both dose sets' DVHs.
    QTRY_VERIFY_WITH_TIMEOUT(ws_->dvhs()->forDoseSet(imrt->id) && ws_->dvhs()->forDoseSet(vmat->id),
                             test::kCompareTimeoutMs);
  }

  /// A | B | map: the central area switches, A and B wash their own dose set on one scale, the
  /// map view shows the comparison, and a zoom of one view is the zoom of all three.
  void sideBySideViewsAreLinked() {
    ws_->comparison()->setViewMode(CompareViewMode::Difference);
    // Through A's maximum, where A and B differ by several Gy.
    const auto& scene = window_->viewState()->scene();
    window_->viewState()->setCrosshair(test::displayIndexOfMax(*scene, ws_->comparison()->current()->reference->dose.dose));
    auto* check = find<QCheckBox>(panel_, "compareSideBySideCheck");
    QVERIFY(check);
    check->setChecked(true);
    auto* stack = find<QStackedWidget>(window_.get(), "centralStack");
    auto* views = find<CompareViews>(window_.get(), "compareViews");
    QVERIFY(stack && views);
    QCOMPARE(stack->currentWidget(), static_cast<QWidget*>(views));
    QTRY_VERIFY(views->view(0)->isVisible() && views->view(2)->isVisible());
    QVERIFY(!window_->sliceView(SliceOrientation::Axial)->isVisible());
    const auto c = ws_->comparison()->current();
    QCOMPARE(views->wash(0)->shownSlice().empty(), false);
    QCOMPARE(views->wash(1)->shownSlice().empty(), false);
    // A and B differ on the slice (their own dose sets, not the store's current one).
    const DoseSlice& a = views->wash(0)->shownSlice();
    const DoseSlice& b = views->wash(1)->shownSlice();
    QCOMPARE(a.gy.size(), b.gy.size());
    double maxDiff = 0;
    for (std::size_t i = 0; i < a.gy.size(); ++i) maxDiff = std::max(maxDiff, double(std::abs(a.gy[i] - b.gy[i])));
    QVERIFY2(maxDiff > 1, qPrintable(QString::number(maxDiff)));
    QVERIFY(views->mapDisplay()->isShowing());
    QCOMPARE(views->mapDisplay()->shownMode(), CompareViewMode::Difference);  // follows the selector
    // Over the map, the isodose lines of A (dashed, with the legend) and B (dotted, none).
    const auto isos = views->view(2)->findChildren<IsodoseDisplay*>();
    QCOMPARE(isos.size(), 2);
    int withLegend = 0, withLines = 0;
    for (IsodoseDisplay* iso : isos) {
      const auto legend = iso->legendText();
      if (!legend.empty()) {
        ++withLegend;
        QCOMPARE(QString::fromStdString(legend.front()), QString("A dashed, B dotted"));
      }
      withLines += iso->lines()->GetNumberOfCells() > 0;
    }
    QCOMPARE(withLegend, 1);
    QCOMPARE(withLines, 2);
    ws_->comparison()->setViewMode(CompareViewMode::Dose);
    QCOMPARE(views->mapDisplay()->shownMode(), CompareViewMode::Gamma);  // the map never shows nothing
    QVERIFY(views->mapDisplay()->isShowing());
    // Linked zoom: ctrl + wheel on B zooms A and the map by the same factor.
    for (int i = 0; i < 3; ++i) views->view(i)->renderNow();
    auto scale = [&](int i) { return views->view(i)->renderer()->GetActiveCamera()->GetParallelScale(); };
    const double before = scale(0);
    SliceView* b1 = views->view(1);
    const QPointF at(b1->width() / 2.0, b1->height() / 2.0);
    QWheelEvent wheel(at, b1->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::ControlModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(b1, &wheel);
    QVERIFY2(scale(1) < 0.9 * before, qPrintable(QString("%1 -> %2").arg(before).arg(scale(1))));
    QCOMPARE(scale(0), scale(1));
    QCOMPARE(scale(2), scale(1));
    // The whole-window capture holds the side-by-side views, then back to the planning views.
    QVERIFY(!window_->grabWindowImage().isNull());
    check->setChecked(false);
    QCOMPARE(stack->currentIndex(), 0);
    QTRY_VERIFY(window_->sliceView(SliceOrientation::Axial)->isVisible());
    ws_->comparison()->setViewMode(CompareViewMode::Gamma);
  }

  /// The Profile tool: a drag across A's maximum on the axial view draws the line there and
  /// plots A, B and gamma along it.
  void profileAlongADraggedLine() {
    auto* action = window_->findChild<QAction*>("actionProfileTool");
    QVERIFY(action);
    action->trigger();
    ProfileModel* profile = ws_->profile();
    QVERIFY(profile->toolActive());
    QVERIFY(find<QPushButton>(window_.get(), "profileToolButton")->isChecked());
    const auto c = ws_->comparison()->current();
    const Volume<float>& a = c->reference->dose.dose;
    const std::size_t at = std::size_t(std::max_element(a.data.begin(), a.data.end()) - a.data.begin());
    const auto& g = a.grid;
    const Vec3 ijkA{double(at % std::size_t(g.dims[0])), double(at / std::size_t(g.dims[0]) % std::size_t(g.dims[1])),
                    double(at / (std::size_t(g.dims[0]) * std::size_t(g.dims[1])))};
    const auto& scene = window_->viewState()->scene();
    const Vec3 centre = scene->grid().worldToIndex(g.indexToWorld(ijkA));
    window_->viewState()->setCrosshair(centre);
    SliceView* axial = window_->sliceView(SliceOrientation::Axial);
    axial->renderNow();
    auto widgetPos = [&](Vec3 ijk) { return test::widgetPosOf(axial, scene->displayPoint(ijk)); };
    const double du = 30.0 / scene->grid().spacing.x;  // 30 mm either side along x
    const QPointF p0 = widgetPos(centre - Vec3{du, 0, 0}), p1 = widgetPos(centre + Vec3{du, 0, 0});
    auto send = [&](QEvent::Type type, QPointF pos, Qt::MouseButton button, Qt::MouseButtons buttons) {
      QMouseEvent e(type, pos, axial->mapToGlobal(pos), button, buttons, Qt::NoModifier);
      QApplication::sendEvent(axial, &e);
    };
    const WindowLevel wl = window_->viewState()->windowLevel();
    send(QEvent::MouseButtonPress, p0, Qt::LeftButton, Qt::LeftButton);
    send(QEvent::MouseMove, (p0 + p1) / 2, Qt::NoButton, Qt::LeftButton);
    send(QEvent::MouseMove, p1, Qt::NoButton, Qt::LeftButton);
    send(QEvent::MouseButtonRelease, p1, Qt::LeftButton, Qt::NoButton);
    QVERIFY(window_->viewState()->windowLevel() == wl);  // the drag drew, it did not change W/L
    QVERIFY(profile->hasLine());
    QCOMPARE(profile->orientation(), SliceOrientation::Axial);
    auto* line = axial->findChild<ProfileLineDisplay*>();
    QVERIFY(line && line->isShowing());
    auto* panel = find<ProfilePanel>(window_.get(), "profilePanel");
    QVERIFY(panel);
    const ProfileSamples& s = panel->samples();
    QCOMPARE(int(s.mm.size()), ProfilePanel::kSamples);
    qInfo("profile %.1f mm, %s", s.mm.back(), qPrintable(panel->statusLabel()->text()));
    QVERIFY2(std::abs(s.mm.back() - 60) < 4, qPrintable(QString::number(s.mm.back())));
    double maxA = 0, maxB = 0;
    int gammas = 0;
    for (std::size_t i = 0; i < s.mm.size(); ++i) {
      if (std::isfinite(s.a[i])) maxA = std::max(maxA, s.a[i]);
      if (std::isfinite(s.b[i])) maxB = std::max(maxB, s.b[i]);
      gammas += std::isfinite(s.gamma[i]);
    }
    // Through A's maximum (within the pixel rounding of the drag): about 62 Gy; B lower there.
    QVERIFY2(maxA > 0.9 * c->reference->maxGy, qPrintable(QString("%1 of %2").arg(maxA).arg(c->reference->maxGy)));
    QVERIFY(maxB > 0 && maxB < maxA);
    QVERIFY(gammas > ProfilePanel::kSamples / 4);
    QVERIFY(panel->statusLabel()->text().contains("Gamma 3 %/3 mm global"));
    // PENUMBRA_COMPARE_PROFILE_SHOT=FILE: the Profile dock, floated and enlarged (for a look).
    if (const char* shot = std::getenv("PENUMBRA_COMPARE_PROFILE_SHOT")) {
      auto* dock = find<QDockWidget>(window_.get(), "profileDock");
      dock->setFloating(true);
      dock->resize(900, 420);
      dock->show();
      QTRY_VERIFY(dock->isVisible());
      dock->grab().save(shot);
    }
    action->trigger();
    QVERIFY(!profile->toolActive());
  }

  /// The PDF report: written, several pages (the DVH table of 24 structures), and refused in a
  /// folder that does not exist.
  void reportIsWritten() {
    QTemporaryDir dir;
    const QString path = dir.filePath("comparison.pdf");
    QString error;
    QVERIFY2(panel_->writeReport(path, &error), qPrintable(error));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray pdf = f.readAll();
    const qsizetype pages = pdf.count("/Type /Page") - pdf.count("/Type /Pages");
    qInfo("report: %lld bytes, %lld pages", (long long)pdf.size(), (long long)pages);
    QVERIFY(pdf.startsWith("%PDF"));
    QVERIFY(pdf.size() > 20000);
    QVERIFY(pages >= 2);
    if (const char* keep = std::getenv("PENUMBRA_COMPARE_REPORT")) QFile::copy(path, keep);
    QVERIFY(!panel_->writeReport(dir.filePath("missing/folder/comparison.pdf"), &error));
    QVERIFY(!error.isEmpty());
  }

  /// Cancel (the panel's button, right after Compute gamma): the job ends cancelled, the panel
  /// says so, the comparison shown stays the last one computed, and Compute is enabled again.
  void cancelKeepsTheLastComparison() {
    const auto before = ws_->comparison()->current();
    QVERIFY(before);
    auto* local = find<QComboBox>(panel_, "compareGlobalLocalCombo");
    local->setCurrentIndex(local->findData(true));  // local gamma: a longer search than global
    QSignalSpy finished(ws_->compareController(), &CompareController::finished);
    QTest::mouseClick(find<QPushButton>(panel_, "compareComputeButton"), Qt::LeftButton);
    auto* cancel = find<QPushButton>(panel_, "compareCancelButton");
    QVERIFY(cancel->isEnabled());
    QTest::mouseClick(cancel, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, test::kCompareTimeoutMs);
    qInfo("%s", qPrintable(finished.first().at(1).toString()));
    QCOMPARE(finished.first().at(0).toBool(), false);
    QVERIFY(finished.first().at(1).toString().contains("cancelled"));
    QCOMPARE(ws_->comparison()->current(), before);
    QVERIFY(find<QLabel>(panel_, "compareMessageLabel")->text().contains("cancelled"));
    QVERIFY(find<QPushButton>(panel_, "compareComputeButton")->isEnabled());
    QVERIFY(!cancel->isEnabled());
    local->setCurrentIndex(local->findData(false));
  }

  void cleanupTestCase() {
    if (ws_) ws_->jobs()->cancelAll();
    window_.reset();
  }

private:
  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
  ComparePanel* panel_ = nullptr;
};

int main(int argc, char** argv) {
  VtkView::setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("PenumbraTest");
  QApplication::setApplicationName("penumbra-gui-test");
  CompareViewsTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_compare_views.moc"
