// A and B on one view (issue 13: swipe and checkerboard), on RayStation's brain SRS doses opened
// without CT and compared once (gamma 3 %/3 mm global, IMRT as A, VMAT as B, CPU), through A's
// maximum, the layout chosen in the Compare panel's "compareLayoutCombo":
//  - Swipe: the samples left of the divider are A's and those right of it B's (against the
//    split view's own A-only and B-only washes, and those against the pinned A and B washes of
//    the side-by-side views), and so are the pixels: left of the divider the framebuffer equals
//    the A-only render, right of it the B-only render, where A and B differ by hundreds of pixels;
//  - Checkerboard (12 mm from "compareCheckerSizeSpin"): squares alternate A, B, A along both
//    axes, at the sample level and in the pixels at the squares' centres;
//  - a left drag on the divider moves it (not the crosshair nor the window/level), the split
//    view zooms with the map, and A | B | map comes back;
//  - a long dose-set name is elided in the middle in the Compare dock, with the whole name in
//    its tooltip, and the dock needs no horizontal scrolling at 1600 x 1000 and 1280 x 800.
// Waits on signals and conditions, never on fixed sleeps.
#include <cmath>
#include <memory>

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QMouseEvent>
#include <QScrollArea>
#include <QScrollBar>
#include <QStackedWidget>
#include <QStandardPaths>
#include <QTest>
#include <QWheelEvent>
#include <vtkCamera.h>
#include <vtkRenderer.h>

#include "compare_test_support.hpp"
#include "gui/compare/compare_views.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/overlays/dose_wash_display.hpp"
#include "gui/overlays/split_dose_wash_display.hpp"
#include "gui/widgets/elided_label.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::find;

namespace {
constexpr int kSame = 2;      ///< largest channel difference of two renders of the same thing
constexpr int kDiffers = 20;  ///< A and B differ visibly
}  // namespace

class CompareSplitTest : public QObject {
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
    model_ = ws_->comparison();
    window_->findChild<QAction*>("actionCompareDoses")->trigger();
    QVERIFY(test::openBrainDoses(ws_, imrt_, vmat_));
    QVERIFY(test::compareOnCpu(ws_, imrt_->id, vmat_->id));
    const auto& scene = window_->viewState()->scene();
    window_->viewState()->setCrosshair(test::displayIndexOfMax(*scene, imrt_->dose.dose));
    views_ = find<CompareViews>(window_.get(), "compareViews");
    QVERIFY(views_);
  }

  /// Swipe: A's samples and pixels left of the divider, B's right of it.
  void swipeShowsALeftAndBRight() {
    chooseLayout(CompareLayout::Swipe);
    QCOMPARE(find<QStackedWidget>(window_.get(), "centralStack")->currentWidget(), static_cast<QWidget*>(views_));
    SliceView* split = views_->view(CompareViews::kViewSplit);
    QTRY_VERIFY(split->isVisible() && views_->view(CompareViews::kViewMap)->isVisible());
    QVERIFY(!views_->view(CompareViews::kViewA)->isVisible() && !views_->view(CompareViews::kViewB)->isVisible());
    SplitDoseWashDisplay* d = views_->splitDisplay();
    const QImage imgA = renderSwipe(1.0);
    const DoseSlice aOnly = d->shownSlice();
    const QImage imgB = renderSwipe(0.0);
    const DoseSlice bOnly = d->shownSlice();
    // The A-only and B-only samples are A's and B's own washes (the side-by-side views').
    QCOMPARE(samplesDiffering(aOnly, views_->wash(CompareViews::kViewA)->shownSlice()), 0);
    QCOMPARE(samplesDiffering(bOnly, views_->wash(CompareViews::kViewB)->shownSlice()), 0);
    const QImage img = renderSwipe(0.5);
    const DoseSlice& both = d->shownSlice();
    QCOMPARE(both.u0, aOnly.u0);
    QCOMPARE(both.nu, aOnly.nu);
    QCOMPARE(both.nv, aOnly.nv);
    const double div = d->dividerIndex();
    QVERIFY(div > both.u0 && div < both.u0 + both.nu - 1);
    int wrong = 0, differLeft = 0, differRight = 0;
    for (int iv = 0; iv < both.nv; ++iv)
      for (int iu = 0; iu < both.nu; ++iu) {
        const bool left = both.u0 + iu < div;
        wrong += both.at(iu, iv) != (left ? aOnly : bOnly).at(iu, iv);
        (left ? differLeft : differRight) += std::abs(aOnly.at(iu, iv) - bOnly.at(iu, iv)) > 0.5f;
      }
    qInfo("swipe samples: divider at u = %.1f, %d wrong, A and B differ at %d left and %d right", div, wrong,
          differLeft, differRight);
    QCOMPARE(wrong, 0);
    QVERIFY(differLeft > 50 && differRight > 50);
    // Pixels: the divider is drawn where the samples change sides, A's render left of it, B's right.
    const double x = d->dividerDisplayX();
    QVERIFY2(std::isfinite(x) && x > 0.25 * img.width() && x < 0.75 * img.width(), qPrintable(QString::number(x)));
    const QPointF edge = test::displayPixelOf(split, split->viewState()->scene()->displayPoint(
                                                        Vec3{div, 0, double(window_->viewState()->sliceIndex(
                                                                         SliceOrientation::Axial))}));
    QVERIFY(std::abs(edge.x() - x) < 1.0);
    // Below the title block (the side labels sit under it), clear of the divider line.
    const int top = 80, xi = int(std::lround(x));
    const QRect left(0, top, xi - 6, img.height() - top), right(xi + 7, top, img.width() - xi - 7, img.height() - top);
    const int leftWrong = test::countDifferentPixels(img, imgA, left, kSame);
    const int rightWrong = test::countDifferentPixels(img, imgB, right, kSame);
    const int leftAB = test::countDifferentPixels(imgA, imgB, left, kDiffers);
    const int rightAB = test::countDifferentPixels(imgA, imgB, right, kDiffers);
    qInfo("swipe pixels: divider at x = %.1f of %d; A and B differ at %d px left and %d px right; the swipe "
          "differs from A at %d px left, from B at %d px right", x, img.width(), leftAB, rightAB, leftWrong, rightWrong);
    QVERIFY(leftAB > 300 && rightAB > 300);
    QCOMPARE(leftWrong, 0);
    QCOMPARE(rightWrong, 0);
    if (const char* shot = std::getenv("PENUMBRA_COMPARE_SWIPE_SHOT")) img.save(shot);
  }

  /// Checkerboard of 12 mm squares: A, B, A ... along both axes, in samples and pixels.
  void checkerboardSquaresAlternate() {
    const QImage imgA = renderSwipe(1.0);
    const DoseSlice aOnly = views_->splitDisplay()->shownSlice();
    const QImage imgB = renderSwipe(0.0);
    const DoseSlice bOnly = views_->splitDisplay()->shownSlice();
    chooseLayout(CompareLayout::Checkerboard);
    auto* spin = find<QDoubleSpinBox>(ws_->comparePanel(), "compareCheckerSizeSpin");
    QTRY_VERIFY(spin && spin->isVisible());
    spin->setValue(12);
    QCOMPARE(model_->checkerSizeMm(), 12.0);
    SliceView* split = views_->view(CompareViews::kViewSplit);
    SplitDoseWashDisplay* d = views_->splitDisplay();
    split->renderNow();
    QVERIFY(!std::isfinite(d->dividerDisplayX()));  // no divider here
    const QImage img = split->grabFramebuffer();
    const DoseSlice& both = d->shownSlice();
    int wrong = 0;
    for (int iv = 0; iv < both.nv; ++iv)
      for (int iu = 0; iu < both.nu; ++iu)
        wrong += both.at(iu, iv) != (d->showsA(both.u0 + iu, both.v0 + iv) ? aOnly : bOnly).at(iu, iv);
    QCOMPARE(wrong, 0);
    // Square (k, l) holds the samples whose centres lie in [k, k + 1) x 12 mm from the grid's
    // corner along u and [l, l + 1) x 12 mm along v; A when k + l is even.
    const auto& scene = split->viewState()->scene();
    const Vec3 s = scene->grid().spacing;
    const double slice = window_->viewState()->sliceIndex(SliceOrientation::Axial);
    int squares = 0, notAlternating = 0, pixelsA = 0, pixelsB = 0, pixelsWrong = 0;
    for (int l = 0; (l + 0.5) * 12 / s.y - 0.5 < both.v0 + both.nv - 1; ++l)
      for (int k = 0; (k + 0.5) * 12 / s.x - 0.5 < both.u0 + both.nu - 1; ++k) {
        const Vec3 centre{(k + 0.5) * 12 / s.x - 0.5, (l + 0.5) * 12 / s.y - 0.5, slice};
        if (centre.x < both.u0 || centre.y < both.v0) continue;
        ++squares;
        const bool a = (k + l) % 2 == 0;
        notAlternating += d->showsA(int(std::lround(centre.x)), int(std::lround(centre.y))) != a;
        const auto p = scene->displayPoint(centre);
        // Below the title block: the swipe renders have their side labels there.
        if (img.height() - 1 - test::displayPixelOf(split, p).y() < 80) continue;
        const QColor pa = test::pixelOf(imgA, split, p), pb = test::pixelOf(imgB, split, p);
        if (test::colourDistance(pa, pb) <= kDiffers) continue;  // A and B look alike there
        (a ? pixelsA : pixelsB) += 1;
        pixelsWrong += test::colourDistance(test::pixelOf(img, split, p), a ? pa : pb) > kSame;
      }
    qInfo("checkerboard: %d squares, %d not alternating; at %d A and %d B square centres A and B differ, %d "
          "pixels from the wrong dose", squares, notAlternating, pixelsA, pixelsB, pixelsWrong);
    QVERIFY(squares >= 16);
    QCOMPARE(notAlternating, 0);
    QVERIFY(pixelsA >= 4 && pixelsB >= 4);
    QCOMPARE(pixelsWrong, 0);
    if (const char* shot = std::getenv("PENUMBRA_COMPARE_CHECKER_SHOT")) img.save(shot);
  }

  /// A left drag on the divider moves it, not the crosshair nor the window/level; the split
  /// view's zoom is the map's; A | B | map comes back.
  void dividerDragsAndViewsStayLinked() {
    SliceView* split = views_->view(CompareViews::kViewSplit);
    SplitDoseWashDisplay* d = views_->splitDisplay();
    renderSwipe(0.5);
    const double x0 = d->dividerDisplayX(), dpr = split->devicePixelRatioF();
    const QPointF at(x0 / dpr, split->height() / 2.0), to = at + QPointF(60, 0);
    auto send = [&](QEvent::Type type, QPointF pos, Qt::MouseButton button, Qt::MouseButtons buttons) {
      QMouseEvent e(type, pos, split->mapToGlobal(pos), button, buttons, Qt::NoModifier);
      QApplication::sendEvent(split, &e);
    };
    send(QEvent::MouseMove, at, Qt::NoButton, Qt::NoButton);
    QCOMPARE(split->cursor().shape(), Qt::SplitHCursor);  // the divider says it can be dragged
    const Vec3 crosshair = window_->viewState()->crosshair();
    const WindowLevel wl = window_->viewState()->windowLevel();
    send(QEvent::MouseButtonPress, at, Qt::LeftButton, Qt::LeftButton);
    send(QEvent::MouseMove, (at + to) / 2, Qt::NoButton, Qt::LeftButton);
    send(QEvent::MouseMove, to, Qt::NoButton, Qt::LeftButton);
    send(QEvent::MouseButtonRelease, to, Qt::LeftButton, Qt::NoButton);
    QCOMPARE(norm(window_->viewState()->crosshair() - crosshair), 0.0);
    QVERIFY(window_->viewState()->windowLevel() == wl);
    split->renderNow();
    // The divider snaps to a sample edge: within one sample of where the mouse let go.
    const auto& scene = split->viewState()->scene();
    const double samplePx = test::displayPixelOf(split, scene->displayPoint(Vec3{1, 0, 0})).x() -
                            test::displayPixelOf(split, scene->displayPoint(Vec3{0, 0, 0})).x();
    const double x1 = d->dividerDisplayX();
    qInfo("divider dragged from x = %.1f to %.1f (mouse %.1f, one sample %.1f px), fraction %.3f", x0, x1,
          x0 + 60 * dpr, samplePx, model_->swipeFraction());
    QVERIFY(model_->swipeFraction() > 0.5);
    QVERIFY(std::abs(x1 - (x0 + 60 * dpr)) <= samplePx / 2 + 1);
    // Linked zoom: ctrl + wheel on the split view zooms the map by the same factor.
    SliceView* map = views_->view(CompareViews::kViewMap);
    auto scale = [](SliceView* v) { return v->renderer()->GetActiveCamera()->GetParallelScale(); };
    const double before = scale(map);
    QWheelEvent wheel(at, split->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::ControlModifier,
                      Qt::NoScrollPhase, false);
    QApplication::sendEvent(split, &wheel);
    QVERIFY(scale(split) < 0.9 * before);
    QCOMPARE(scale(map), scale(split));
    chooseLayout(CompareLayout::SideBySide);
    QTRY_VERIFY(views_->view(CompareViews::kViewA)->isVisible() && views_->view(CompareViews::kViewB)->isVisible());
    QVERIFY(!split->isVisible());
  }

  /// A long name: elided in the middle in the dock, whole in the tooltip, and the dock fits.
  void longNamesAreElidedInTheDock() {
    DoseSet renamed = *vmat_;
    renamed.name = "Imported RD1.2.752.243.1.1.20180405114728128.4000.85245.dcm (VMAT, second export)";
    const int i = ws_->doseSets()->add(std::move(renamed));
    const auto set = ws_->doseSets()->at(i);
    QVERIFY(test::compareOnCpu(ws_, imrt_->id, set->id));
    auto* name = find<ElidedLabel>(ws_->comparePanel(), "compareNameBLabel");
    auto* area = find<QDockWidget>(window_.get(), "compareDock")->findChild<QScrollArea*>();
    QVERIFY(name && area);
    for (const QSize size : {QSize(1600, 1000), QSize(1280, 800)}) {
      window_->resize(size);
      QTRY_COMPARE(window_->size(), size);
      QTRY_VERIFY(name->isElided());
      const QString shown = name->text();
      qInfo("%dx%d: '%s' in %d px", size.width(), size.height(), qPrintable(shown), name->width());
      QCOMPARE(name->toolTip(), "B: " + set->name);
      QVERIFY2(shown.startsWith("B: Imported RD1.2") && shown.endsWith("second export)") &&
                   shown.contains(QChar(0x2026)),
               qPrintable(shown));
      QVERIFY(name->fontMetrics().horizontalAdvance(shown) <= name->contentsRect().width());
      QCOMPARE(area->horizontalScrollBar()->maximum(), 0);  // nothing cut off at the right
      QCOMPARE(find<ElidedLabel>(ws_->comparePanel(), "compareNameALabel")->text(), "A: " + imrt_->name);
    }
    window_->resize(1600, 1000);
  }

  void cleanupTestCase() {
    if (ws_) ws_->jobs()->cancelAll();
    window_.reset();
  }

private:
  /// Chooses `layout` in the panel's combo, as a click does.
  void chooseLayout(CompareLayout layout) {
    auto* combo = find<QComboBox>(ws_->comparePanel(), "compareLayoutCombo");
    QVERIFY(combo);
    combo->setCurrentIndex(combo->findData(int(layout)));
    emit combo->activated(combo->currentIndex());
    QCOMPARE(model_->compareLayout(), layout);
    QVERIFY(model_->sideBySide());
  }

  /// The split view in the Swipe layout with the divider at `fraction`, rendered and grabbed.
  QImage renderSwipe(double fraction) {
    model_->setCompareLayout(CompareLayout::Swipe);
    model_->setSwipeFraction(fraction);
    SliceView* split = views_->view(CompareViews::kViewSplit);
    split->renderNow();
    return split->grabFramebuffer();
  }

  /// Samples of `b` (its own box) whose value in `a` differs (or is outside `a`).
  static int samplesDiffering(const DoseSlice& a, const DoseSlice& b) {
    int n = 0;
    for (int iv = 0; iv < b.nv; ++iv)
      for (int iu = 0; iu < b.nu; ++iu) {
        const int u = b.u0 + iu - a.u0, v = b.v0 + iv - a.v0;
        n += u < 0 || v < 0 || u >= a.nu || v >= a.nv || a.at(u, v) != b.at(iu, iv);
      }
    return n;
  }

  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
  ComparisonModel* model_ = nullptr;
  CompareViews* views_ = nullptr;
  std::shared_ptr<const DoseSet> imrt_, vmat_;
};

int main(int argc, char** argv) {
  VtkView::setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("PenumbraTest");
  QApplication::setApplicationName("penumbra-gui-test");
  CompareSplitTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_compare_split.moc"
