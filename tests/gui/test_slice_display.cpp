// What a physicist sees first in the slice views (issue 12, items 1-3), on BOXPHANTOM with a
// synthetic dose set:
//  1. the dose colour wash shows in every slice view, not only the axial one (its pixels differ
//     from the CT's where the dose is, in all three views);
//  2. no 2D annotation overlaps another at 1280 x 800 and 1600 x 1000 (title, position, dose
//     set name, orientation letters with their boxes, W/L, isodose legend, colour bar and its
//     labels, scale bar); the scale bar's length in pixels is its length in mm on screen; the
//     colour bar runs from the wash's threshold to the set's maximum; the 3D view has an
//     orientation marker that turns with its camera;
//  3. isodose lines are dashed (structure contours stay solid), under a legend headed
//     "Isodose (dashed)"; dashSegments keeps its pattern across segment joins.
// Waits on renders and conditions, never on fixed sleeps.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include <QApplication>
#include <QStandardPaths>
#include <QTest>
#include <vtkActor2D.h>
#include <vtkActor2DCollection.h>
#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkCoordinate.h>
#include <vtkMapper2D.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper2D.h>
#include <vtkPoints.h>
#include <vtkRenderer.h>
#include <vtkRendererCollection.h>
#include <vtkTextActor.h>
#include <vtkTextProperty.h>
#include <vtkGenericOpenGLRenderWindow.h>

#include "gui/model/dose_display_settings.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/overlays/dashed_lines.hpp"
#include "gui/overlays/dose_wash_display.hpp"
#include "gui/overlays/isodose_display.hpp"
#include "gui/overlays/slice_decorations.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui/views/slice_view.hpp"
#include "gui/views/view3d.hpp"
#include "gui_test_support.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::colourDistance;
using penumbra::test::pixelAt;

namespace {

constexpr int kImportTimeoutMs = 120000;
constexpr SliceOrientation kOrientations[3] = {SliceOrientation::Axial, SliceOrientation::Sagittal,
                                               SliceOrientation::Coronal};

/// 2.2 Gy in a 120 mm cube around the isocentre of BOXPHANTOM, 0 outside: every slice view
/// through the centre shows wash and lines.
DoseSet cubeDoseSet() {
  Grid g;
  g.dims = {61, 61, 61};
  g.spacing = {4, 4, 4};
  g.origin = {-120, -120, -120};
  DoseSet set;
  set.name = "cube 2.2 Gy";
  set.dose.dose = Volume<float>(g, 0.0f);
  set.dose.engine = "test";
  set.dose.backend = "cpu";
  for (int k = 15; k <= 45; ++k)
    for (int j = 15; j <= 45; ++j)
      for (int i = 15; i <= 45; ++i) set.dose.dose.at(i, j, k) = 2.2f;
  set.maxGy = 2.2;
  return set;
}

struct Box {
  std::string what;
  double x0, x1, y0, y1;
};

/// Display-pixel boxes of the visible 2D props of `r`: text by its rendered bounding box
/// (background box included), lines and bars by their points.
std::vector<Box> annotationBoxes(vtkRenderer* r) {
  std::vector<Box> boxes;
  vtkActor2DCollection* actors = r->GetActors2D();
  actors->InitTraversal();
  while (vtkActor2D* a = actors->GetNextActor2D()) {
    if (!a->GetVisibility()) continue;
    if (auto* t = vtkTextActor::SafeDownCast(a)) {
      if (!t->GetInput() || !*t->GetInput()) continue;
      // VTK 9.1 gives the box relative to the text's anchor point: add the position.
      double b[4];
      t->GetBoundingBox(r, b);
      const int* at = t->GetPositionCoordinate()->GetComputedDisplayValue(r);
      b[0] += at[0], b[1] += at[0], b[2] += at[1], b[3] += at[1];
      boxes.push_back({std::string("text '") + t->GetInput() + "'", b[0], b[1], b[2], b[3]});
    } else if (auto* m = vtkPolyDataMapper2D::SafeDownCast(a->GetMapper())) {
      vtkPolyData* pd = m->GetInput();
      if (!pd || pd->GetNumberOfPoints() == 0) continue;
      double b[6];
      pd->GetBounds(b);
      boxes.push_back({"marks", b[0], b[1], b[2], b[3]});
    }
  }
  return boxes;
}

bool overlap(const Box& a, const Box& b) {
  // One pixel of slack: boxes that only touch do not collide.
  return a.x0 < b.x1 - 1 && b.x0 < a.x1 - 1 && a.y0 < b.y1 - 1 && b.y0 < a.y1 - 1;
}

double segmentLength(vtkPolyData* lines) {
  double total = 0;
  vtkPoints* pts = lines->GetPoints();
  vtkCellArray* cells = lines->GetLines();
  if (!pts || !cells) return 0;
  cells->InitTraversal();
  vtkIdType n = 0;
  const vtkIdType* ids = nullptr;
  while (cells->GetNextCell(n, ids)) {
    for (vtkIdType k = 0; k + 1 < n; ++k) {
      double a[3], b[3];
      pts->GetPoint(ids[k], a);
      pts->GetPoint(ids[k + 1], b);
      total += std::sqrt(vtkMath::Distance2BetweenPoints(a, b));
    }
  }
  return total;
}

}  // namespace

class SliceDisplayTest : public QObject {
  Q_OBJECT

private slots:
  void dashesRunOnAcrossSegmentJoins() {
    // A 10 mm straight line in ten 1 mm segments, shuffled and some reversed, on a grid of
    // 0.5 mm per u: dashes of 2 mm and gaps of 1 mm give on-pieces 0-2, 3-5, 6-8, 9-10.
    std::vector<Segment2> segs;
    for (int i = 0; i < 10; ++i) {
      const float a = float(2 * i), b = float(2 * i + 2);  // u index, 0.5 mm each
      segs.push_back(i % 3 == 0 ? Segment2{b, 0, a, 0} : Segment2{a, 0, b, 0});
    }
    std::swap(segs[2], segs[7]);
    std::swap(segs[0], segs[5]);
    const auto dashes = dashSegments(segs, 0.5, 0.5, 2.0, 1.0);
    double on = 0;
    for (const auto& d : dashes) on += std::abs(d.u1 - d.u0) * 0.5;
    QVERIFY2(std::abs(on - 7.0) < 1e-4, qPrintable(QString("dashed length %1 mm").arg(on)));
    // No dash piece inside a gap: (2, 3), (5, 6), (8, 9) mm are empty.
    for (const auto& d : dashes) {
      const double lo = std::min(d.u0, d.u1) * 0.5, hi = std::max(d.u0, d.u1) * 0.5;
      for (double gapStart : {2.0, 5.0, 8.0})
        QVERIFY2(hi <= gapStart + 1e-4 || lo >= gapStart + 1.0 - 1e-4,
                 qPrintable(QString("piece %1-%2 mm in the gap at %3").arg(lo).arg(hi).arg(gapStart)));
    }
    // Without a pattern the segments come back as they were.
    QCOMPARE(int(dashSegments(segs, 0.5, 0.5, 0, 1).size()), 10);
  }

  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    if (!test::haveData("phantoms/BOXPHANTOM"))
      QSKIP(qPrintable("test data not found: " +
                       QString::fromStdString(test::dataPath("phantoms/BOXPHANTOM")) +
                       " (set PENUMBRA_TEST_DATA)"));
    window_ = std::make_unique<MainWindow>();
    window_->resize(1600, 1000);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QVERIFY(test::openBoxPhantom(*window_, kImportTimeoutMs));
    ws_ = window_->planning();
    QVERIFY(ws_);
    ws_->controller()->setShowErrorDialogs(false);
    ws_->doseSets()->add(cubeDoseSet());
    QVERIFY(ws_->doseSets()->current());
    // The crosshair through the middle of the cube (display-grid indices of its centre).
    const auto& scene = window_->viewState()->scene();
    window_->viewState()->setCrosshair(scene->grid().worldToIndex(Vec3{0, 0, 0}));
  }

  void washShowsInEverySliceView() {
    const auto& scene = window_->viewState()->scene();
    const auto centre = scene->displayPoint(scene->grid().worldToIndex(Vec3{0, 0, 0}));
    for (SliceOrientation o : kOrientations) {
      SliceView* view = window_->sliceView(o);
      DoseWashDisplay* wash = ws_->doseWashDisplay(o);
      QVERIFY(wash->isShowing());
      QVERIFY(!wash->shownSlice().empty());
      QVERIFY(view->renderNow());
      const QColor withWash = pixelAt(view, centre);
      ws_->displaySettings()->setWashVisible(false);
      QVERIFY(view->renderNow());
      const QColor withoutWash = pixelAt(view, centre);
      ws_->displaySettings()->setWashVisible(true);
      QVERIFY(view->renderNow());
      QVERIFY2(colourDistance(withWash, withoutWash) > 30,
               qPrintable(QString("%1 view: %2 with the wash, %3 without")
                              .arg(displayName(o), withWash.name(), withoutWash.name())));
    }
  }

  void annotationsDoNotCollide_data() {
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("height");
    QTest::newRow("1280x800") << 1280 << 800;
    QTest::newRow("1600x1000") << 1600 << 1000;
  }

  void annotationsDoNotCollide() {
    QFETCH(int, width);
    QFETCH(int, height);
    window_->resize(width, height);
    for (SliceOrientation o : kOrientations) {
      SliceView* view = window_->sliceView(o);
      QTRY_VERIFY(view->width() > 100);
      QVERIFY(view->renderNow());
      QVERIFY(view->renderNow());  // the first render after a resize lays out, the second shows
      vtkRenderer* r = view->renderer();
      const int* size = r->GetSize();
      const auto boxes = annotationBoxes(r);
      const QString where = QString("%1 view %2x%3 px, window %4x%5")
                                .arg(displayName(o)).arg(size[0]).arg(size[1]).arg(width).arg(height);
      // Title, position, dose set, 4 letters, W/L, scale bar + label, legend header + 7
      // levels, colour bar + 2 labels.
      QVERIFY2(boxes.size() >= 20, qPrintable(where + QString(": %1 annotations").arg(boxes.size())));
      for (std::size_t a = 0; a < boxes.size(); ++a) {
        const Box& A = boxes[a];
        QVERIFY2(A.x0 >= -1 && A.x1 <= size[0] + 1 && A.y0 >= -1 && A.y1 <= size[1] + 1,
                 qPrintable(where + ": " + QString::fromStdString(A.what) +
                            QString(" leaves the view (%1..%2, %3..%4)").arg(A.x0).arg(A.x1).arg(A.y0).arg(A.y1)));
        for (std::size_t b = a + 1; b < boxes.size(); ++b)
          QVERIFY2(!overlap(A, boxes[b]),
                   qPrintable(where + ": " + QString::fromStdString(A.what) + " overlaps " +
                              QString::fromStdString(boxes[b].what)));
      }
      // The dose set's name is on the view.
      bool named = false;
      for (const Box& b : boxes) named = named || b.what.find("cube 2.2 Gy") != std::string::npos;
      QVERIFY2(named, qPrintable(where + ": the dose set's name is not shown"));
      QVERIFY(ws_->doseWashDisplay(o)->colourBarShowing());
    }
  }

  void scaleBarMeasuresTheScreen() {
    window_->resize(1600, 1000);
    for (SliceOrientation o : kOrientations) {
      SliceView* view = window_->sliceView(o);
      QVERIFY(view->renderNow());
      QVERIFY(view->renderNow());
      vtkRenderer* r = view->renderer();
      SliceAnnotationDisplay* annotation = nullptr;
      for (auto* child : view->findChildren<SliceAnnotationDisplay*>()) annotation = child;
      QVERIFY(annotation);
      const double mm = annotation->scaleBarMm();
      QVERIFY(mm > 0);
      // Two points `mm` apart along the screen's horizontal, through the world.
      double a[4], b[4];
      r->SetDisplayPoint(100, 100, 0);
      r->DisplayToWorld();
      r->GetWorldPoint(a);
      r->SetDisplayPoint(200, 100, 0);
      r->DisplayToWorld();
      r->GetWorldPoint(b);
      const double pxPerMm = 100.0 / std::sqrt(vtkMath::Distance2BetweenPoints(a, b));
      // The bar's own horizontal extent in pixels.
      double barPx = 0;
      for (const Box& box : annotationBoxes(r))
        if (box.what == "marks" && box.y1 - box.y0 < 8) barPx = std::max(barPx, box.x1 - box.x0);
      QVERIFY2(std::abs(barPx - mm * pxPerMm) <= 1.0,
               qPrintable(QString("%1: bar %2 px for %3 mm at %4 px/mm")
                              .arg(displayName(o)).arg(barPx).arg(mm).arg(pxPerMm)));
    }
  }

  void isodoseLinesAreDashedWithALegend() {
    for (SliceOrientation o : kOrientations) {
      IsodoseDisplay* iso = ws_->isodoseDisplay(o);
      QVERIFY(window_->sliceView(o)->renderNow());
      const auto legend = iso->legendText();
      QVERIFY(!legend.empty());
      QCOMPARE(QString::fromStdString(legend.front()), QString("Isodose (dashed)"));
      // The cube's edge carries the lines of every level below 2.2 Gy; dashed, they cover
      // 6 of every 10 px of it.
      int segments = 0;
      for (int n : iso->segmentsPerLevel()) segments += n;
      QVERIFY(segments > 0);
      const double drawn = segmentLength(iso->lines());
      QVERIFY(drawn > 0);
      const auto& scene = window_->viewState()->scene();
      // Undashed length: the 120 mm square's outline, once per level crossing it.
      int levelsCrossed = 0;
      for (const auto& l : ws_->displaySettings()->isodoseLevels())
        if (l.percent / 100.0 * ws_->controller()->plan()->prescriptionGy() < 2.2) ++levelsCrossed;
      QVERIFY(levelsCrossed > 0);
      const double outline = 4 * 124.0 * levelsCrossed;  // about: the lines sit half a voxel out
      const double ratio = drawn / outline;
      QVERIFY2(ratio > 0.45 && ratio < 0.75,
               qPrintable(QString("%1: %2 mm drawn of about %3 mm of lines (ratio %4)")
                              .arg(displayName(o)).arg(drawn).arg(outline).arg(ratio)));
      Q_UNUSED(scene);
    }
  }

  void orientationMarkerTurnsWithThe3DView() {
    View3D* view = window_->view3D();
    QVERIFY(view);
    vtkRenderer* marker = view->orientationMarkerRenderer();
    QVERIFY(marker);
    QCOMPARE(marker->GetLayer(), 1);
    QVERIFY(view->renderWindow()->GetRenderers()->IsItemPresent(marker));
    QVERIFY(marker->VisibleActorCount() >= 1);
    view->renderer()->GetActiveCamera()->Azimuth(70);
    view->renderer()->GetActiveCamera()->Elevation(20);
    QVERIFY(view->renderNow());
    double a[3], b[3];
    view->renderer()->GetActiveCamera()->GetDirectionOfProjection(a);
    marker->GetActiveCamera()->GetDirectionOfProjection(b);
    for (int i = 0; i < 3; ++i) QVERIFY(std::abs(a[i] - b[i]) < 1e-6);
  }

  void cleanupTestCase() { window_.reset(); }

private:
  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
};

QTEST_MAIN(SliceDisplayTest)
#include "test_slice_display.moc"
