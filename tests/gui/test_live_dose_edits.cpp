// Editing a plan with live dose on, beyond the spin boxes (issue 15, item 3), on the CPU and a
// coarse grid (live_dose_test_support.hpp):
//  - the beam handles: dragging the isocentre cross in the axial view moves the isocentre to
//    where the mouse lets go (in the slice plane); dragging the central axis a quarter turn turns
//    the gantry by 90 degrees with the source where the mouse let go (the axial view's gantry
//    formula agrees with makeBeamFrame at several couch angles); each time the live dose
//    refines at once and is computed for the new geometry;
//  - twice the MU gives twice the live dose; a new field size gives the new jaws' dose;
//  - a proton beam: a gantry edit drops its spots (they were placed for the old angle); the live
//    dose places them again with the beam's options, shows their dose (equal to the engine's
//    for the plan's new spots) and gives them to the plan.
// Waits on signals and conditions, never on fixed sleeps. Skips without BOXPHANTOM or the
// photon beam data (../shared/data/photon-beam).
#include <cmath>
#include <memory>

#include <QDoubleSpinBox>
#include <QTest>

#include "gui/jobs/job_runner.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/views/slice_view.hpp"
#include "live_dose_test_support.hpp"
#include "proton/proton_dose.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using namespace penumbra::test;

class LiveDoseEditsTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    if (const QString why = missingLiveDoseData(); !why.isEmpty()) QSKIP(qPrintable(why));
    window_ = std::make_unique<MainWindow>();
    QVERIFY(setUpLiveDoseCase(*window_));
    ws_ = window_->planning();
    live_ = ws_->liveDose();
    live_->setOn(true);
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
  }

  void beamHandlesInTheSliceViews() {
    // The axial view steers the gantry as makeBeamFrame places the source, at any couch angle
    // that keeps the axis near the axial plane.
    for (const double couch : {0.0, 30.0, -45.0})
      for (double g = 0; g < 360; g += 15) {
        const proton::BeamFrame f = makeBeamFrame(g, couch, Vec3{10, -20, 5}, 1000);
        double got = -1;
        QVERIFY(SliceView::gantryTowards(f.source - f.isocenter, couch, got));
        QVERIFY2(std::abs(std::remainder(got - g, 360.0)) < 1e-6, qPrintable(QString("%1 %2 %3").arg(couch).arg(g).arg(got)));
      }

    QVERIFY(fullShown(live_));
    PlanModel* plan = ws_->plan();
    plan->setCurrentBeam(0);
    auto* view = find<SliceView>(window_.get(), "axialView");
    QVERIFY(view);
    const Vec3 iso0 = plan->beam(0).beam.isocenter;
    window_->viewState()->setCrosshair(window_->viewState()->scene()->grid().worldToIndex(iso0));
    QPointF iso;
    QVERIFY(view->widgetPosOf(iso0, iso));
    // Drag the isocentre cross 25 px to the right and 15 px down.
    const QPoint from = iso.toPoint(), to = from + QPoint(25, 15);
    QTest::mousePress(view, Qt::LeftButton, {}, from);
    QTest::mouseMove(view, from + QPoint(10, 5));
    QTest::mouseMove(view, to);
    QTest::mouseRelease(view, Qt::LeftButton, {}, to);
    const Vec3 iso1 = plan->beam(0).beam.isocenter;
    QCOMPARE(iso1.z, iso0.z);  // the axial view moves it in its own plane only
    QPointF drawn;
    QVERIFY(view->widgetPosOf(iso1, drawn));
    QVERIFY2(std::hypot(drawn.x() - to.x(), drawn.y() - to.y()) < 2,
             qPrintable(QString("%1,%2").arg(drawn.x()).arg(drawn.y())));
    // Letting go refines at once; the live dose is for the new isocentre.
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
    QCOMPARE(live_->published().photonBeams[0].isocenter.x, iso1.x);
    QCOMPARE(live_->published().photonBeams[0].isocenter.y, iso1.y);

    // Turn the beam: grab its axis 60 px from the cross on the source's side and carry it a
    // quarter turn round the cross; the source then lies where the mouse let go.
    QVERIFY(view->widgetPosOf(iso1, iso));
    QPointF source;
    QVERIFY(view->widgetPosOf(beamFrame(plan->beam(0)).source, source));
    const QPointF axis = (source - iso) / std::hypot(source.x() - iso.x(), source.y() - iso.y());
    const QPointF grab = iso + 60 * axis, drop = iso + 60 * QPointF(-axis.y(), axis.x());
    const double gantry0 = plan->beam(0).beam.gantryDeg;
    QTest::mousePress(view, Qt::LeftButton, {}, grab.toPoint());
    QTest::mouseMove(view, (iso + 60 * (axis + QPointF(-axis.y(), axis.x())) / std::sqrt(2.0)).toPoint());
    QTest::mouseMove(view, drop.toPoint());
    QTest::mouseRelease(view, Qt::LeftButton, {}, drop.toPoint());
    const double gantry1 = plan->beam(0).beam.gantryDeg;
    QVERIFY2(std::abs(std::abs(std::remainder(gantry1 - gantry0, 360.0)) - 90) < 2,
             qPrintable(QString("%1 -> %2").arg(gantry0).arg(gantry1)));
    QVERIFY(view->widgetPosOf(beamFrame(plan->beam(0)).source, source));
    const QPointF towards = source - iso;
    const double angle = std::atan2(towards.y(), towards.x()) - std::atan2(drop.y() - iso.y(), drop.x() - iso.x());
    QVERIFY2(std::abs(std::remainder(angle, 2 * M_PI)) < 0.05, qPrintable(QString::number(angle)));
    QCOMPARE(find<QDoubleSpinBox>(window_.get(), "gantrySpin")->value(), gantry1);
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
    QCOMPARE(live_->published().photonBeams[0].gantryDeg, gantry1);
  }

  void monitorUnitsAndJawsFollow() {
    PlanModel* plan = ws_->plan();
    plan->setCurrentBeam(0);
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
    const auto before = ws_->doseSets()->current();
    QVERIFY(before && before->live);
    // Twice the MU: twice the dose (the engines are linear in the MU).
    auto* mu = find<QDoubleSpinBox>(window_.get(), "monitorUnitsSpin");
    mu->setValue(2 * mu->value());
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
    QCOMPARE(live_->published().photonBeams[0].monitorUnits, mu->value());
    Volume<float> twice = before->dose.dose;
    for (float& v : twice.data) v *= 2;
    const auto [diff, peak] = maxDifference(twice, ws_->doseSets()->current()->dose.dose);
    QVERIFY2(diff <= 1e-5 * peak, qPrintable(QString("%1 of %2 Gy").arg(diff).arg(peak)));
    // A 60 mm field instead of 100 mm: the live dose has the new jaws.
    find<QDoubleSpinBox>(window_.get(), "photonFieldSizeSpin")->setValue(60);
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
    QCOMPARE(live_->published().photonBeams[0].x1Mm, -30.0);
    QCOMPARE(live_->published().photonBeams[0].y2Mm, 30.0);
    const auto [changed, peak60] = maxDifference(twice, ws_->doseSets()->current()->dose.dose);
    QVERIFY2(changed > 0.2 * peak60, "a narrower field should change the dose");
  }

  void protonGantryEditPlacesSpotsAgain() {
    // A proton beam with coarse spots (few spots: the CPU engine's cost does not shrink with the
    // dose grid), placed with live dose off.
    live_->setOn(false);
    PlanController* pc = ws_->controller();
    const int b = pc->addBeamOnTarget("OuterTarget", 90);
    QCOMPARE(b, 1);
    proton::SpotGenerationOptions o;
    o.spotSpacingMm = 12;
    o.layerSpacingMm = 10;
    Job* spots = pc->generateSpots(b, "OuterTarget", o);
    QVERIFY(spots);
    QTRY_VERIFY_WITH_TIMEOUT(spots->isFinished(), kLiveTimeoutMs);
    QCOMPARE(spots->state(), Job::State::Done);
    const std::size_t placed = ws_->plan()->beam(b).beam.spotCount();
    QVERIFY(placed > 0);

    live_->setOn(true);  // the current beam is the proton beam: the live dose shows protons
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
    QCOMPARE(live_->published().modality, LiveModality::Proton);
    QVERIFY(ws_->doseSets()->current()->name.startsWith("Live: protons"));

    // New angle: the plan drops the beam's spots (placed for 90 deg); the live dose places them
    // again for 60 deg with the same options, shows their dose and gives them to the plan.
    find<QDoubleSpinBox>(window_.get(), "gantrySpin")->setValue(60);
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
    const PlannedBeam& p = ws_->plan()->beam(b);
    QCOMPARE(p.beam.gantryDeg, 60.0);
    QVERIFY(p.beam.spotCount() > 0);
    QCOMPARE(p.options.spotSpacingMm, 12.0);
    const LivePublication& pub = live_->published();
    QCOMPARE(int(pub.protonBeams.size()), 1);
    QCOMPARE(pub.protonBeams[0].gantryDeg, 60.0);
    const auto shown = ws_->doseSets()->current();
    QCOMPARE(shown->id, pub.doseSetId);
    QCOMPARE(shown->beams.size(), std::size_t(1));
    QCOMPARE(shown->beams[0].spotCount(), p.beam.spotCount());
    // The dose on screen is the engine's dose of the plan's new spots.
    proton::ProtonDoseRequest r;
    const auto patient = window_->viewState()->scene()->sharedPatient();
    r.ct = std::shared_ptr<const CtVolume>(patient, &patient->ct);
    r.beams = ws_->plan()->engineBeams();
    r.doseGrid = coveringGrid(patient->ct.grid, kGridMm);
    r.backend = Backend::Cpu;
    const Volume<float> ref = proton::computeProtonDose(r).dose;
    QCOMPARE(ref.data.size(), shown->dose.dose.data.size());
    const auto [maxDiff, maxRef] = maxDifference(ref, shown->dose.dose);
    QVERIFY(maxRef > 0);
    QVERIFY2(maxDiff <= 1e-4 * maxRef, qPrintable(QString("%1 of %2 Gy").arg(maxDiff).arg(maxRef)));
  }

  void cleanupTestCase() {
    if (live_) live_->setOn(false);
    window_.reset();
  }

private:
  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
  LiveDoseController* live_ = nullptr;
};

QTEST_MAIN(LiveDoseEditsTest)
#include "test_live_dose_edits.moc"
