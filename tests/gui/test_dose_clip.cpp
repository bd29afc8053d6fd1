// Dose display clipped to the patient outline: in the real main window on the demo case
// (BOXPHANTOM, whose BODY is an 81^3-voxel box with RT ROI Interpreted Type EXTERNAL inside a
// 160^3 CT of air), a dose set that covers air as well as BODY (a synthetic 4 mm grid of
// 1.5 Gy, 0 on its outer shell like an engine's grid edge, added to the dose-set store) is
// drawn only inside BODY while "Clip dose to BODY" is checked: the wash's samples, its pixels
// in the framebuffer, the isodose lines and the 3D isodose surface stop at BODY, and unchecking
// the box shows the dose in air again. The dose set and the DVH of BODY are unchanged by the
// toggle; the flag goes through the case's display object; a patient without an external
// structure gets a disabled box. Waits on signals and conditions, never on fixed sleeps.
#include <algorithm>
#include <cmath>
#include <memory>

#include <QApplication>
#include <QCheckBox>
#include <QDockWidget>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkRenderer.h>

#include "gui/dose/dvh_store.hpp"
#include "gui/model/dose_display_settings.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/overlays/dose_clip.hpp"
#include "gui/overlays/dose_surface_display.hpp"
#include "gui/overlays/dose_wash_display.hpp"
#include "gui/overlays/isodose_display.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/case_session.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui/views/slice_view.hpp"
#include "gui_test_support.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::colourDistance;
using penumbra::test::pixelAt;
using penumbra::test::find;

namespace {

constexpr int kImportTimeoutMs = 120000;
constexpr int kJobTimeoutMs = 300000;
constexpr float kDoseGy = 1.5f;  // 75 % of the default 2 Gy prescription: the 50 % and 30 % lines
constexpr double kDoseSpacingMm = 4;

/// 1.5 Gy on a 4 mm grid from -200 to 200 mm on each axis (BOXPHANTOM's CT spans -240..237 mm,
/// its BODY -123..117 mm), 0 on the grid's outer shell.
DoseSet syntheticDoseSet() {
  Grid g;
  g.dims = {101, 101, 101};
  g.spacing = {kDoseSpacingMm, kDoseSpacingMm, kDoseSpacingMm};
  g.origin = {-200, -200, -200};
  DoseSet set;
  set.name = "synthetic 1.5 Gy";
  set.dose.dose = Volume<float>(g, kDoseGy);
  set.dose.engine = "test";
  set.dose.backend = "cpu";
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = 0; i < g.dims[0]; ++i)
        if (i == 0 || j == 0 || k == 0 || i == g.dims[0] - 1 || j == g.dims[1] - 1 ||
            k == g.dims[2] - 1)
          set.dose.dose.at(i, j, k) = 0;
  return set;
}

Structure structureNamed(const std::string& name, const std::string& interpretedType,
                         bool withMask) {
  Structure s;
  s.name = name;
  s.interpretedType = interpretedType;
  s.kind = structureKindFromInterpretedType(interpretedType);
  if (withMask) {
    Grid g;
    g.dims = {2, 2, 2};
    s.mask = Mask(g, 1);
  }
  return s;
}

/// Isodose-line end points with no BODY voxel among the 4 display voxels around them (in the
/// slice plane): farther than one voxel from BODY.
int pointsAwayFromBody(vtkPolyData* lines, const PatientScene& scene, const Mask& body, int slice) {
  int away = 0;
  vtkPoints* pts = lines->GetPoints();
  if (!pts) return 0;
  for (vtkIdType n = 0; n < pts->GetNumberOfPoints(); ++n) {
    double p[3];
    pts->GetPoint(n, p);
    const Vec3 ijk = scene.indexOfDisplayPoint(p);
    bool near = false;
    for (int di = 0; di < 2; ++di)
      for (int dj = 0; dj < 2; ++dj) {
        const int i = int(std::floor(ijk.x)) + di, j = int(std::floor(ijk.y)) + dj;
        near = near || (body.grid.containsIndex(i, j, slice) && body.at(i, j, slice));
      }
    if (!near) ++away;
  }
  return away;
}

}  // namespace

class DoseClipTest : public QObject {
  Q_OBJECT

private slots:
  void externalStructureByTypeThenName() {
    StructureSet set;
    set.structures = {structureNamed("PTV", "PTV", true), structureNamed("Skin", "", true),
                      structureNamed("Patient", "EXTERNAL", false),
                      structureNamed("body", "ORGAN", true)};
    // EXTERNAL without a mask does not count; BODY is preferred over Skin, case-insensitively.
    QCOMPARE(externalStructureIndex(set), 3);
    set.structures[2].mask = set.structures[0].mask;
    QCOMPARE(externalStructureIndex(set), 2);
    set.structures.erase(set.structures.begin() + 2, set.structures.end());
    QCOMPARE(externalStructureIndex(set), 1);
    set.structures.pop_back();
    QCOMPARE(externalStructureIndex(set), -1);
  }

  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    if (!test::haveData("phantoms/BOXPHANTOM"))
      QSKIP(qPrintable(
          "test data not found: " + QString::fromStdString(test::dataPath("phantoms/BOXPHANTOM")) +
          " (set PENUMBRA_TEST_DATA)"));
    window_ = std::make_unique<MainWindow>();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QVERIFY(test::openBoxPhantom(*window_, kImportTimeoutMs));
    ws_ = window_->planning();
    QVERIFY(ws_);
    ws_->controller()->setShowErrorDialogs(false);
    const auto& scene = window_->viewState()->scene();
    const int body = externalStructureIndex(scene->displayPatient().structures);
    QVERIFY(body >= 0);
    // Found by its Interpreted Type, which the importer keeps.
    QCOMPARE(scene->displayPatient().structures.structures[std::size_t(body)].name,
             std::string("BODY"));
    QCOMPARE(scene->displayPatient().structures.structures[std::size_t(body)].kind,
             StructureKind::External);
    body_ = &scene->displayPatient().structures.structures[std::size_t(body)].mask;
    QCOMPARE(body_->grid.dims, scene->grid().dims);
  }

  void washAndLinesStopAtBody() {
    // The Dose dock shares a tab with the Plan dock: bring it up to click its box.
    auto* dock = find<QDockWidget>(window_.get(), "doseDock");
    QVERIFY(dock);
    dock->raise();
    auto* clip = find<QCheckBox>(window_.get(), "clipDoseCheck");
    QVERIFY(clip);
    QTRY_VERIFY(clip->isVisible());
    QCOMPARE(clip->text(), QString("Clip dose to BODY"));
    QVERIFY(clip->isEnabled());
    QVERIFY(clip->isChecked());
    QVERIFY(ws_->displaySettings()->clipToExternal());

    ws_->doseSets()->add(syntheticDoseSet());
    const auto set = ws_->doseSets()->current();
    QVERIFY(set);
    const auto& scene = window_->viewState()->scene();
    // Axial slice 80 (z = 0) through BODY; crosshair lines at i = j = 80.
    window_->viewState()->setCrosshair(Vec3{80, 80, 80});
    const int k = 80;
    // (20, 60): x = -180 mm, y = -60 mm: in air beside BODY (i < 39), inside the dose grid.
    const Vec3 air{20, 60, double(k)}, inBody{60, 60, double(k)};
    QVERIFY(!body_->at(20, 60, k) && body_->at(60, 60, k));
    double gy = 0;
    QVERIFY(sampleDose(set->dose.dose, scene->worldOf(air), gy));
    QCOMPARE(gy, double(kDoseGy));

    DoseWashDisplay* wash = ws_->doseWashDisplay(SliceOrientation::Axial);
    IsodoseDisplay* iso = ws_->isodoseDisplay(SliceOrientation::Axial);
    auto washAt = [wash](const Vec3& ijk) {
      const DoseSlice& s = wash->shownSlice();
      return s.at(int(ijk.x) - s.u0, int(ijk.y) - s.v0);
    };
    QVERIFY(wash->isShowing());
    const DoseSlice& s = wash->shownSlice();
    QVERIFY(!s.empty());
    // Every sample outside BODY is clipped, every one inside shows the dose.
    int clipped = 0, shown = 0;
    for (int v = 0; v < s.nv; ++v)
      for (int u = 0; u < s.nu; ++u) {
        const bool inside = body_->at(s.u0 + u, s.v0 + v, k);
        if (inside) {
          QCOMPARE(s.at(u, v), kDoseGy);
          ++shown;
        } else {
          QCOMPARE(s.at(u, v), kClippedGy);
          ++clipped;
        }
      }
    QCOMPARE(shown, 81 * 81);
    QVERIFY(clipped > 1000);
    QCOMPARE(washAt(air), kClippedGy);
    QVERIFY(iso->lines()->GetNumberOfCells() > 0);
    QCOMPARE(pointsAwayFromBody(iso->lines(), *scene, *body_, k), 0);

    // The framebuffer: over the air voxel the clipped wash leaves the CT as without a wash.
    SliceView* axial = window_->sliceView(SliceOrientation::Axial);
    const auto airPoint = scene->displayPoint(air);
    const QColor clippedPixel = pixelAt(axial, airPoint);
    ws_->displaySettings()->setWashVisible(false);
    const QColor noWashPixel = pixelAt(axial, airPoint);
    ws_->displaySettings()->setWashVisible(true);

    // Unchecking shows the dose in air: wash samples, pixels and the lines at the grid's edge.
    QSignalSpy dvhStarted(ws_->dvhs(), &DvhStore::computeStarted);
    // On the indicator: a click past the label (the row is wider) does not toggle a QCheckBox.
    const QPoint indicator(6, clip->height() / 2);
    QTest::mouseClick(clip, Qt::LeftButton, Qt::NoModifier, indicator);
    QVERIFY(!clip->isChecked());
    QVERIFY(!ws_->displaySettings()->clipToExternal());
    QCOMPARE(washAt(air), kDoseGy);
    QCOMPARE(washAt(inBody), kDoseGy);
    const QColor unclippedPixel = pixelAt(axial, airPoint);
    QVERIFY2(colourDistance(clippedPixel, noWashPixel) <= 2,
             qPrintable(QString("%1 vs %2").arg(clippedPixel.name(), noWashPixel.name())));
    QVERIFY2(colourDistance(unclippedPixel, noWashPixel) > 20,
             qPrintable(QString("%1 vs %2").arg(unclippedPixel.name(), noWashPixel.name())));
    QVERIFY(pointsAwayFromBody(iso->lines(), *scene, *body_, k) > 100);

    QTest::mouseClick(clip, Qt::LeftButton, Qt::NoModifier, indicator);
    QVERIFY(ws_->displaySettings()->clipToExternal());
    QCOMPARE(washAt(air), kClippedGy);
    QCOMPARE(pointsAwayFromBody(iso->lines(), *scene, *body_, k), 0);
    // Display only: the toggles started no DVH job and left the dose set as it was.
    QCOMPARE(dvhStarted.count(), 0);
    QCOMPARE(ws_->doseSets()->current(), set);
    QVERIFY(sampleDose(ws_->doseSets()->current()->dose.dose, scene->worldOf(air), gy));
    QCOMPARE(gy, double(kDoseGy));
  }

  void dvhOfBodyUnchangedByClip() {
    const auto set = ws_->doseSets()->current();
    QVERIFY(set);
    DvhStore* dvhs = ws_->dvhs();
    QTRY_VERIFY_WITH_TIMEOUT(dvhs->forDoseSet(set->id) && !dvhs->isBusy(), kJobTimeoutMs);
    const auto* before = dvhs->forDoseSet(set->id)->find("BODY");
    QVERIFY(before);
    const dvh::DvhStatistics stats = before->stats;
    const std::vector<double> curve = before->curve.volumeCc;
    // BODY lies inside the 1.5 Gy region of the grid: its whole volume gets 1.5 Gy.
    QVERIFY2(std::abs(stats.meanGy - kDoseGy) < 1e-3, qPrintable(QString::number(stats.meanGy)));
    QVERIFY(stats.volumeCc > 14000);  // 81^3 voxels of 27 mm^3 = 14349 cm^3

    QSignalSpy dvhStarted(dvhs, &DvhStore::computeStarted);
    ws_->displaySettings()->setClipToExternal(false);
    QVERIFY(!find<QCheckBox>(window_.get(), "clipDoseCheck")->isChecked());
    ws_->displaySettings()->setClipToExternal(true);
    QVERIFY(find<QCheckBox>(window_.get(), "clipDoseCheck")->isChecked());
    QCOMPARE(dvhStarted.count(), 0);
    const auto* after = dvhs->forDoseSet(set->id)->find("BODY");
    QVERIFY(after);
    QCOMPARE(after->stats.meanGy, stats.meanGy);
    QCOMPARE(after->stats.d95Gy, stats.d95Gy);
    QCOMPARE(after->stats.volumeCc, stats.volumeCc);
    QCOMPARE(after->curve.volumeCc, curve);
  }

  void surfacesStopAtBody() {
    DoseSurfaceDisplay* surfaces = ws_->doseSurfaces();
    DoseDisplaySettings* settings = ws_->displaySettings();
    auto surfacesDone = [surfaces] {
      return !surfaces->isBuilding() && surfaces->surfaceCount() == 1;
    };
    // 1.5 Gy reaches the 50 % level (1 Gy) with a surface, not the 100 % one.
    QTRY_VERIFY_WITH_TIMEOUT(surfacesDone(), kJobTimeoutMs);
    double b[6];
    QVERIFY(surfaces->surfaceBounds(b));
    // BODY's voxels span -124.5..118.5 mm; the surface closes within one dose voxel outside.
    const double lo = -124.5 - kDoseSpacingMm - 0.5, hi = 118.5 + kDoseSpacingMm + 0.5;
    for (int a = 0; a < 3; ++a)
      QVERIFY2(b[2 * a] > lo && b[2 * a + 1] < hi && b[2 * a] < -110 && b[2 * a + 1] > 105,
               qPrintable(QString("axis %1: %2..%3 mm").arg(a).arg(b[2 * a]).arg(b[2 * a + 1])));

    QSignalSpy updated(surfaces, &DoseSurfaceDisplay::surfacesUpdated);
    settings->setClipToExternal(false);
    QTRY_VERIFY_WITH_TIMEOUT(updated.count() >= 1 && surfacesDone(), kJobTimeoutMs);
    QVERIFY(surfaces->surfaceBounds(b));
    // Now at the grid's edge: between the 1.5 Gy voxels and the 0 Gy shell (-196..-200 mm).
    for (int a = 0; a < 3; ++a)
      QVERIFY2(b[2 * a] < -190 && b[2 * a + 1] > 190,
               qPrintable(QString("axis %1: %2..%3 mm").arg(a).arg(b[2 * a]).arg(b[2 * a + 1])));
    updated.clear();
    settings->setClipToExternal(true);
    QTRY_VERIFY_WITH_TIMEOUT(updated.count() >= 1 && surfacesDone(), kJobTimeoutMs);
    QVERIFY(surfaces->surfaceBounds(b));
    QVERIFY2(b[0] > lo && b[1] < hi, qPrintable(QString("%1..%2 mm").arg(b[0]).arg(b[1])));
  }

  void caseDisplayObjectKeepsTheFlag() {
    DoseDisplaySettings* settings = ws_->displaySettings();
    ViewState* state = window_->viewState();
    QJsonObject o = displayStateToJson(*ws_, *state);
    QCOMPARE(o["clipDoseToExternal"].toBool(false), true);
    settings->setClipToExternal(false);
    o = displayStateToJson(*ws_, *state);
    QCOMPARE(o["clipDoseToExternal"].toBool(true), false);
    // A case saved before the flag existed leaves the setting as it is.
    o.remove("clipDoseToExternal");
    applyDisplayState(o, *ws_, *state);
    QVERIFY(!settings->clipToExternal());
    o["clipDoseToExternal"] = true;
    applyDisplayState(o, *ws_, *state);
    QVERIFY(settings->clipToExternal());
    QVERIFY(find<QCheckBox>(window_.get(), "clipDoseCheck")->isChecked());
  }

  void patientWithoutExternalDisablesTheBox() {
    ViewState* state = window_->viewState();
    auto patient = std::make_shared<Patient>(state->scene()->patient());
    for (Structure& s : patient->structures.structures)
      if (s.name == "BODY") {
        s.name = "Phantom";
        s.interpretedType = "ORGAN";
        s.kind = StructureKind::OrganAtRisk;
      }
    body_ = nullptr;  // the old scene goes
    state->setScene(std::make_shared<const PatientScene>(patient));
    auto* clip = find<QCheckBox>(window_.get(), "clipDoseCheck");
    QVERIFY(!clip->isEnabled());
    QVERIFY(!clip->isChecked());
    QVERIFY2(clip->toolTip().contains("no external structure"), qPrintable(clip->toolTip()));
    // The user's choice stays for the next patient that has one.
    QVERIFY(ws_->displaySettings()->clipToExternal());
    QVERIFY(!doseClipMask(*state->scene(), true));

    // Named "body" without the EXTERNAL type: found by its name.
    auto named = std::make_shared<Patient>(*patient);
    for (Structure& s : named->structures.structures)
      if (s.name == "Phantom") s.name = "body";
    state->setScene(std::make_shared<const PatientScene>(named));
    QVERIFY(clip->isEnabled());
    QVERIFY(clip->isChecked());
    QCOMPARE(clip->text(), QString("Clip dose to body"));
  }

  void cleanupTestCase() { window_.reset(); }

private:
  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
  const Mask* body_ = nullptr;  // BODY on the display grid
};

int main(int argc, char** argv) {
  VtkView::setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("PenumbraTest");
  QApplication::setApplicationName("penumbra-gui-test");
  DoseClipTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_dose_clip.moc"
