// Photon beams in the real main window (issue 7, item 5), driven by objectName on the demo case
// (BOXPHANTOM: a 243 mm water cube in air with a 63 mm cubic target at its centre):
//  - "Add photon beam" places a 10 x 10 cm^2 open field on the target (isocentre at the target
//    centroid, SAD 1000 mm, 100 MU); the BEV shows the jaws and the target projection;
//  - a second beam at gantry 90 gets a conformal aperture around the target with a 5 mm margin:
//    the aperture is drawn in the BEV (segments and cyan pixels) and its box is the target's
//    projection grown by about the margin; new gantry or collimator angles regrow it, and the
//    displays' BEV axes match the engine's (IEC 61217 collimator rotation);
//  - a beam model that cannot be loaded (the photon data folder missing) fails the job with a
//    dialog that says where the data are looked for, and the application goes on;
//  - the CPU collapsed-cone dose on a 5 mm grid with 4 x 6 cones: the dose set appears, its
//    maximum lies inside both fields, the target's DVH is computed and its D95 exceeds the
//    BODY's median (most of the BODY lies outside both fields) several times; a point outside
//    both fields gets < 5 % of the maximum; the profiling panel lists the engine's records;
//    normalising to the prescription scales the dose and the plan's MU by the same factor;
//  - RT Dose export writes a file that reads back with the same maximum (within
//    DoseGridScaling);
//  - the patient tree lists a photon beam as "G0 C0 Col0, 100 x 100 mm, 100 MU" (or "aperture
//    OuterTarget"), and Plan > Add photon beam adds one as the editor's button does;
//  - RT Plan export (File > Export RT Plan (photons), through the action's code path) writes both
//    photon beams with their MU, jaws and aperture block; without photon beams it is disabled
//    and refuses with a message; RT Ion Plan export refuses a plan without proton spots;
//  - a second run cancelled while the engine computes adds nothing and keeps the first result;
//  - the session's case (caseFromSession -> JSON -> applyCaseToSession) restores both photon
//    beams, their jaws, MU, aperture and the photon engine settings;
//  - with a proton beam added, Compute dose runs both engines into one dose set each, and the
//    mixed plan exports its proton beam as RT Ion Plan and its photon beams as RT Plan.
// Waits on signals and conditions, never on fixed sleeps. Skips without BOXPHANTOM or the
// photon beam data (../shared/data/photon-beam).
#include <cmath>
#include <memory>

#include <dcmtk/dcmrt/drtplan.h>

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QGroupBox>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include "case/case_file.hpp"
#include "dicom/rt_dose_reader.hpp"
#include "dicom/rt_ion_plan_writer.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/dose/profiling_panel.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/overlays/dose_surface_display.hpp"
#include "gui/plan/beam_editor_panel.hpp"
#include "gui/plan/bev_panel.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/case_session.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui/views/patient_tree.hpp"
#include "gui/views/vtk_view.hpp"
#include "gui_test_support.hpp"
#include "photon/photon_backend.hpp"
#include "proton/spot_generation.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::find;

namespace {

constexpr int kImportTimeoutMs = 120000;
// The first photon job also calibrates the beam model (a 10 x 10 field in water, once).
constexpr int kDoseTimeoutMs = 500000;

bool waitJob(Job* job, int timeoutMs = kDoseTimeoutMs) {
  if (!job) return false;
  QSignalSpy finished(job, &Job::finished);
  if (!job->isFinished() && !finished.wait(timeoutMs)) return false;
  return job->state() == Job::State::Done;
}

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

/// Bounding box (u0, u1, v0, v1) of BEV polygons.
std::array<double, 4> box(const BevPolygons& polygons) {
  std::array<double, 4> b{1e300, -1e300, 1e300, -1e300};
  for (const auto& poly : polygons)
    for (const auto& q : poly) {
      b[0] = std::min(b[0], q[0]), b[1] = std::max(b[1], q[0]);
      b[2] = std::min(b[2], q[1]), b[3] = std::max(b[3], q[1]);
    }
  return b;
}

/// What an exported RT Plan says (read with DCMTK's typed classes).
struct RtPlanSummary {
  std::string sopClass, frameOfReference;
  std::vector<std::string> beamNames, radiation;
  std::vector<double> mu;        ///< BeamMeterset per referenced beam
  std::vector<double> gantry;    ///< first control point
  std::vector<int> blocks;       ///< NumberOfBlocks per beam
  std::vector<std::vector<double>> jawsX;
};

bool readRtPlanSummary(const QString& path, RtPlanSummary& out) {
  DcmFileFormat file;
  DRTPlanIOD rt;
  if (file.loadFile(path.toStdString().c_str()).bad() || rt.read(*file.getDataset()).bad()) return false;
  OFString s;
  rt.getSOPClassUID(s);
  out.sopClass = s.c_str();
  rt.getFrameOfReferenceUID(s);
  out.frameOfReference = s.c_str();
  if (rt.getFractionGroupSequence().getNumberOfItems() != 1) return false;
  auto& refs = rt.getFractionGroupSequence().getItem(0).getReferencedBeamSequence();
  for (std::size_t i = 0; i < refs.getNumberOfItems(); ++i) {
    Float64 mu = -1;
    refs.getItem(i).getBeamMeterset(mu);
    out.mu.push_back(mu);
  }
  for (std::size_t i = 0; i < rt.getBeamSequence().getNumberOfItems(); ++i) {
    auto& beam = rt.getBeamSequence().getItem(i);
    beam.getBeamName(s);
    out.beamNames.push_back(s.c_str());
    beam.getRadiationType(s);
    out.radiation.push_back(s.c_str());
    Sint32 n = -1;
    beam.getNumberOfBlocks(n);
    out.blocks.push_back(int(n));
    if (beam.getControlPointSequence().getNumberOfItems() != 2) return false;
    auto& cp = beam.getControlPointSequence().getItem(0);
    Float64 g = -1;
    cp.getGantryAngle(g);
    out.gantry.push_back(g);
    OFVector<Float64> x;
    auto& jaws = cp.getBeamLimitingDevicePositionSequence();
    if (jaws.getNumberOfItems() > 0) jaws.getItem(0).getLeafJawPositions(x);
    out.jawsX.push_back({x.begin(), x.end()});
  }
  return true;
}

/// The voxel centre of the dose maximum (LPS mm).
Vec3 maxDosePoint(const Volume<float>& d) {
  const auto it = std::max_element(d.data.begin(), d.data.end());
  const std::size_t v = std::size_t(it - d.data.begin());
  const std::size_t nx = std::size_t(d.grid.dims[0]), ny = std::size_t(d.grid.dims[1]);
  return d.grid.indexToWorld(Vec3{double(v % nx), double(v / nx % ny), double(v / (nx * ny))});
}

}  // namespace

class PhotonPlanningTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    for (const char* rel : {"phantoms/BOXPHANTOM", "photon-beam"})
      if (!test::haveData(rel))
        QSKIP(qPrintable("test data not found: " + QString::fromStdString(test::dataPath(rel)) +
                         " (set PENUMBRA_TEST_DATA)"));
    window_ = std::make_unique<MainWindow>();
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QVERIFY(test::openBoxPhantom(*window_, kImportTimeoutMs));
    ws_ = window_->planning();
    QVERIFY(ws_ && ws_->fileActions());
    ws_->fileActions()->setShowDialogs(false);
    // Coarse and quick on two cores: 5 mm dose grid, 4 x 6 cones, CPU.
    auto* backend = find<QComboBox>(window_.get(), "backendCombo");
    auto* grid = find<QDoubleSpinBox>(window_.get(), "doseGridSpin");
    auto* polar = find<QComboBox>(window_.get(), "photonPolarConesCombo");
    auto* azimuth = find<QSpinBox>(window_.get(), "photonAzimuthSpin");
    QVERIFY(backend && grid && polar && azimuth);
    backend->setCurrentIndex(backend->findData(int(Backend::Cpu)));
    grid->setValue(5);
    polar->setCurrentIndex(polar->findData(4));
    azimuth->setValue(6);
    const DoseRunOptions o = ws_->beamEditor()->doseOptions();
    QCOMPARE(o.photon.polarCones, 4);
    QCOMPARE(o.photon.azimuthalCones, 6);
    QCOMPARE(o.doseGridMm, 5.0);
  }

  void rtPlanExportNeedsPhotonBeams() {
    PlanFileActions* files = ws_->fileActions();
    auto* action = find<QAction>(window_.get(), "actionExportRtPlan");
    QVERIFY(action);
    QCOMPARE(ws_->plan()->photonBeamCount(), 0);
    QVERIFY(!action->isEnabled());
    QTemporaryDir dir;
    const QString path = dir.filePath(files->suggestedRtPlanName());
    QSignalSpy failed(files, &PlanFileActions::failed);
    QVERIFY(files->exportRtPlan(path) == nullptr);
    QCOMPARE(failed.count(), 1);
    const QString why = failed.first().first().toString();
    QVERIFY2(why.contains("no photon beams") && why.contains("Add photon beam"), qPrintable(why));
    QVERIFY(!QFileInfo::exists(path));
  }

  void addOpenPhotonBeam() {
    auto* target = find<QComboBox>(window_.get(), "targetCombo");
    auto* gantry = find<QDoubleSpinBox>(window_.get(), "gantrySpin");
    auto* add = find<QPushButton>(window_.get(), "addPhotonBeamButton");
    QVERIFY(target && gantry && add && add->isEnabled());
    target->setCurrentText("OuterTarget");
    gantry->setValue(0);
    find<QDoubleSpinBox>(window_.get(), "photonFieldSizeSpin")->setValue(100);
    QTest::mouseClick(add, Qt::LeftButton);
    PlanModel* plan = ws_->plan();
    QCOMPARE(plan->beamCount(), 1);
    const PlannedBeam& p = plan->beam(0);
    QVERIFY(p.isPhoton());
    QCOMPARE(p.beam.gantryDeg, 0.0);
    const Vec3 centroid = proton::targetCentroid(window_->patient()->structures.find("OuterTarget")->mask);
    QVERIFY(norm(p.beam.isocenter - centroid) < 1e-6);
    const photon::PhotonBeam b = photonEngineBeam(p);
    QCOMPARE(b.sadMm, 1000.0);
    QCOMPARE(b.x1Mm, -50.0);
    QCOMPARE(b.x2Mm, 50.0);
    QCOMPARE(b.y1Mm, -50.0);
    QCOMPARE(b.y2Mm, 50.0);
    QCOMPARE(b.monitorUnits, 100.0);
    QVERIFY(b.aperture.empty());
    QVERIFY(plan->engineBeams().empty());  // not a proton beam

    // The editor shows the photon field instead of the spot options.
    QVERIFY(find<QGroupBox>(window_.get(), "photonFieldBox")->isVisibleTo(ws_->beamEditor()));
    QVERIFY(!find<QPushButton>(window_.get(), "generateSpotsButton")->isEnabled());
    QVERIFY(find<QPushButton>(window_.get(), "computeDoseButton")->isEnabled());

    // The BEV: the jaws and the target projection (a 63 mm square seen from the source; the
    // target is centred on the axis, so its outline lies inside the 10 x 10 field).
    auto* bev = find<BevPanel>(window_.get(), "bevPanel");
    QVERIFY(bev);
    QVERIFY2(bev->outlineSegments() >= 4, qPrintable(QString::number(bev->outlineSegments())));
    QCOMPARE(bev->apertureSegments(), 0);
    const auto outline = box(p.photon.targetOutline);
    qInfo("target projection at gantry 0: u %.1f..%.1f, v %.1f..%.1f mm", outline[0], outline[1], outline[2], outline[3]);
    QVERIFY(outline[0] > -50 && outline[1] < 50 && outline[2] > -50 && outline[3] < 50);
    QVERIFY(outline[1] - outline[0] > 55 && outline[3] - outline[2] > 55);
  }

  void missingBeamDataShowsWhereItIsLookedFor() {
    PlanController* controller = ws_->controller();
    controller->setPhotonModelProvider([]() -> std::shared_ptr<const photon::PhotonBeamModel> {
      PENUMBRA_THROW(Io, "6 MV photon beam model: '/nowhere/photon-beam/spectra' not found");
    });
    const int before = ws_->doseSets()->count();
    QSignalSpy submitted(ws_->jobs(), &JobRunner::jobSubmitted);
    QTest::mouseClick(find<QPushButton>(window_.get(), "computeDoseButton"), Qt::LeftButton);
    QCOMPARE(submitted.count(), 1);
    auto* job = submitted.first().first().value<Job*>();
    QVERIFY(!waitJob(job, 60000));
    QCOMPARE(job->state(), Job::State::Failed);
    QVERIFY2(job->errorMessage().startsWith(kPhotonModelFailure), qPrintable(job->errorMessage()));
    QVERIFY(job->errorMessage().contains("/nowhere/photon-beam"));
    auto* box = qobject_cast<QMessageBox*>(controller->errorDialog());
    QVERIFY(box);
    QVERIFY(box->isVisible());
    QVERIFY2(box->informativeText().contains("photon-beam"), qPrintable(box->informativeText()));
    box->close();
    QCOMPARE(ws_->doseSets()->count(), before);
    QVERIFY(window_->isVisible());
    controller->setPhotonModelProvider(defaultPhotonModelProvider());
    controller->setShowErrorDialogs(false);
  }

  void conformalApertureIsDrawnInTheBev() {
    // The angle spins edit the current beam: add the beam, then turn it.
    QTest::mouseClick(find<QPushButton>(window_.get(), "addPhotonBeamButton"), Qt::LeftButton);
    PlanModel* plan = ws_->plan();
    QCOMPARE(plan->beamCount(), 2);
    QCOMPARE(plan->currentBeam(), 1);
    find<QDoubleSpinBox>(window_.get(), "gantrySpin")->setValue(90);
    QCOMPARE(plan->beam(1).beam.gantryDeg, 90.0);
    QCOMPARE(plan->beam(0).beam.gantryDeg, 0.0);
    auto* mode = find<QComboBox>(window_.get(), "photonFieldModeCombo");
    auto* apertureTarget = find<QComboBox>(window_.get(), "apertureTargetCombo");
    auto* margin = find<QDoubleSpinBox>(window_.get(), "apertureMarginSpin");
    QVERIFY(mode && apertureTarget && margin);
    apertureTarget->setCurrentText("OuterTarget");
    margin->setValue(5);
    mode->setCurrentIndex(1);  // Conformal aperture
    const PlannedBeam& p = plan->beam(1);
    QCOMPARE(p.photon.apertureTarget, QString("OuterTarget"));
    QCOMPARE(p.photon.apertureMarginMm, 5.0);
    QVERIFY(!p.photon.beam.aperture.empty());
    QVERIFY(!p.photon.shapesStale);

    // The aperture is the target's projection grown by the margin (within the projection's
    // sampling, 1.5 mm), and the jaws are its box rounded outwards to 1 mm.
    const auto a = box(p.photon.beam.aperture), t = box(p.photon.targetOutline);
    qInfo("aperture u %.2f..%.2f v %.2f..%.2f; target u %.2f..%.2f v %.2f..%.2f mm", a[0], a[1], a[2], a[3], t[0],
          t[1], t[2], t[3]);
    for (int s = 0; s < 4; ++s) {
      const double grown = (s % 2 == 0) ? t[s] - a[s] : a[s] - t[s];
      QVERIFY2(std::abs(grown - 5) < 1.5, qPrintable(QString("side %1 grown by %2 mm").arg(s).arg(grown)));
    }
    const photon::PhotonBeam& b = p.photon.beam;
    QCOMPARE(b.x1Mm, std::floor(a[0]));
    QCOMPARE(b.x2Mm, std::ceil(a[1]));
    QCOMPARE(b.y1Mm, std::floor(a[2]));
    QCOMPARE(b.y2Mm, std::ceil(a[3]));

    // Drawn in the BEV: aperture segments and its cyan outline in the canvas.
    auto* bev = find<BevPanel>(window_.get(), "bevPanel");
    QVERIFY2(bev->apertureSegments() >= 4, qPrintable(QString::number(bev->apertureSegments())));
    QWidget* canvas = find<QWidget>(window_.get(), "bevCanvas");
    const int cyan = countColour(canvas->grab().toImage(), QColor(60, 220, 255), 40);
    QVERIFY2(cyan > 50, qPrintable(QString::number(cyan)));

    // A new gantry angle regrows the aperture for the new view at once.
    const auto before = p.photon.beam.aperture;
    find<QDoubleSpinBox>(window_.get(), "gantrySpin")->setValue(45);
    QVERIFY(!plan->beam(1).photon.shapesStale);
    const auto rotated = box(plan->beam(1).photon.beam.aperture);
    QVERIFY2(rotated[1] - rotated[0] > a[1] - a[0] + 10, "the cube seen at 45 degrees is wider");
    find<QDoubleSpinBox>(window_.get(), "gantrySpin")->setValue(90);
    QVERIFY(plan->beam(1).photon.beam.aperture == before);

    // A collimator angle turns the BEV axes the displays draw with exactly as the engine turns
    // its jaws (IEC 61217), and the aperture follows.
    find<QDoubleSpinBox>(window_.get(), "collimatorSpin")->setValue(30);
    QCOMPARE(plan->beam(1).photon.beam.collimatorDeg, 30.0);
    QVERIFY(!plan->beam(1).photon.shapesStale);
    Vec3 source, u, v, w;
    photon::detail::beamAxes(photonEngineBeam(plan->beam(1)), source, u, v, w);
    const proton::BeamFrame frame = beamFrame(plan->beam(1));
    QVERIFY(norm(frame.u - u) < 1e-12 && norm(frame.v - v) < 1e-12 && norm(frame.source - source) < 1e-9);
    QVERIFY(!(plan->beam(1).photon.beam.aperture == before));
    find<QDoubleSpinBox>(window_.get(), "collimatorSpin")->setValue(0);
    QVERIFY(plan->beam(1).photon.beam.aperture == before);
  }

  void patientTreeAndPlanMenuShowPhotonBeams() {
    requireBeams();
    auto* tree = find<PatientTree>(window_.get(), "patientTree");
    QVERIFY(tree && tree->planBranch());
    QTreeWidgetItem* branch = tree->planBranch();
    PlanModel* plan = ws_->plan();
    QCOMPARE(branch->childCount(), plan->beamCount() + ws_->doseSets()->count());
    QCOMPARE(branch->child(0)->text(1), QString("G0 C0 Col0, 100 x 100 mm, 100 MU"));
    QCOMPARE(branch->child(1)->text(1), QString("G90 C0 Col0, aperture OuterTarget, 100 MU"));
    // An edit of the field shows at once.
    const photon::PhotonBeam b0 = plan->beam(0).photon.beam;
    plan->setPhotonSettings(0, 15, b0.sadMm, {-40, 60, -50, 30}, 80);
    QCOMPARE(tree->planBranch()->child(0)->text(1), QString("G0 C0 Col15, 100 x 80 mm, 80 MU"));
    plan->setPhotonSettings(0, b0.collimatorDeg, b0.sadMm, {b0.x1Mm, b0.x2Mm, b0.y1Mm, b0.y2Mm}, b0.monitorUnits);
    QCOMPARE(tree->planBranch()->child(0)->text(1), QString("G0 C0 Col0, 100 x 100 mm, 100 MU"));

    // Plan > Add photon beam does what the editor's button does.
    auto* action = find<QAction>(window_.get(), "actionAddPhotonBeam");
    auto* menu = find<QMenu>(window_.get(), "menuPlan");
    QVERIFY(action && menu && menu->actions().contains(action));
    const int before = plan->beamCount();
    const double gantry = find<QDoubleSpinBox>(window_.get(), "gantrySpin")->value();
    const double size = find<QDoubleSpinBox>(window_.get(), "photonFieldSizeSpin")->value();
    action->trigger();
    QCOMPARE(plan->beamCount(), before + 1);
    // Copied, then removed at once, so that a failure below leaves the plan to the next tests.
    const PlannedBeam added = plan->beam(before);
    const QString text = tree->planBranch()->child(before)->text(1);
    plan->removeBeam(before);
    QCOMPARE(plan->beamCount(), before);
    QCOMPARE(tree->planBranch()->childCount(), before + ws_->doseSets()->count());
    QVERIFY(added.isPhoton());
    QCOMPARE(added.targetName, QString("OuterTarget"));
    QCOMPARE(added.beam.gantryDeg, gantry);
    QCOMPARE(added.photon.beam.x2Mm - added.photon.beam.x1Mm, size);
    QCOMPARE(added.photon.beam.y2Mm - added.photon.beam.y1Mm, size);
    QCOMPARE(text, QString("G%1 C0 Col0, %2 x %2 mm, 100 MU").arg(gantry).arg(size));
  }

  void computePhotonDoseOnCpu() {
    requireBeams();
    DoseSetStore* store = ws_->doseSets();
    const int before = store->count();
    QSignalSpy submitted(ws_->jobs(), &JobRunner::jobSubmitted);
    QTest::mouseClick(find<QPushButton>(window_.get(), "computeDoseButton"), Qt::LeftButton);
    QCOMPARE(submitted.count(), 1);  // photons only: one job
    auto* job = submitted.first().first().value<Job*>();
    QVERIFY2(waitJob(job), qPrintable(job->errorMessage()));
    qInfo("photon dose job: %.1f s (model calibration included)", job->elapsedSeconds());
    QCOMPARE(store->count(), before + 1);
    const auto set = store->current();
    QVERIFY(set);
    firstSetId_ = set->id;
    QCOMPARE(set->dose.backend, std::string("cpu"));
    QVERIFY(set->name.contains("photons"));
    QCOMPARE(set->dose.grid().spacing[0], 5.0);
    QVERIFY2(set->maxGy > 0 && std::isfinite(set->maxGy), qPrintable(QString::number(set->maxGy)));
    qInfo("max %.4f Gy for 2 x 100 MU", set->maxGy);

    // The maximum lies inside both fields (where they cross): inside beam 0's jaws and inside
    // beam 1's aperture box, each widened by one dose voxel.
    const Vec3 at = maxDosePoint(set->dose.dose);
    for (int b = 0; b < 2; ++b) {
      const PlannedBeam& p = ws_->plan()->beam(b);
      double u = 0, v = 0, d = 0;
      beamFrame(p).patientToBev(at, u, v, d);
      const FieldExtentBox e = extent(p);
      QVERIFY2(u > e[0] - 5 && u < e[1] + 5 && v > e[2] - 5 && v < e[3] + 5,
               qPrintable(QString("max at BEV (%1, %2) mm of beam %3").arg(u).arg(v).arg(b)));
    }
    // Far from both fields (a corner of the BODY cube): < 5 % of the maximum.
    double corner = -1;
    QVERIFY(sampleDose(set->dose.dose, Vec3{-100, 100, 100}, corner));
    qInfo("dose at (-100, 100, 100) mm: %.4f Gy (%.2f %% of max)", corner, 100 * corner / set->maxGy);
    QVERIFY(corner >= 0 && corner < 0.05 * set->maxGy);

    // DVHs: the target's is non-empty and its D95 is well above the BODY's median (most of the
    // BODY is outside both fields).
    DvhStore* dvhs = ws_->dvhs();
    QTRY_VERIFY_WITH_TIMEOUT(dvhs->forDoseSet(set->id) && !dvhs->isBusy(), kDoseTimeoutMs);
    const DoseSetDvhs* d = dvhs->forDoseSet(set->id);
    const dvh::DvhResult* target = d->find("OuterTarget");
    const dvh::DvhResult* body = d->find("BODY");
    QVERIFY(target && body);
    QVERIFY(!target->curve.doseGy.empty());
    qInfo("OuterTarget D95 %.4f Gy, mean %.4f; BODY D50 %.4f Gy", target->stats.d95Gy, target->stats.meanGy,
          body->stats.d50Gy);
    QVERIFY(target->stats.d95Gy > 0);
    QVERIFY(target->stats.d95Gy > 3 * body->stats.d50Gy);
    QVERIFY(target->stats.maxGy <= set->maxGy * (1 + 1e-6));

    // The profiling panel lists the engine's records.
    QVERIFY(!set->profiles.empty());
    auto* profiling = find<ProfilingPanel>(window_.get(), "profilingPanel");
    QVERIFY(profiling && profiling->table()->rowCount() >= int(set->profiles.size()));

    // Normalising the photon dose to the prescription (target mean = 2 Gy) scales the dose and
    // the plan's MU by the same factor.
    const double mu0 = ws_->plan()->beam(0).photon.beam.monitorUnits;
    const double max0 = set->maxGy;
    QTest::mouseClick(find<QPushButton>(window_.get(), "normaliseButton"), Qt::LeftButton);
    const auto normalised = store->current();
    QCOMPARE(normalised->id, set->id);
    const double f = normalised->normalisation;
    qInfo("normalised x %.5g: %s", f, qPrintable(normalised->normalisationNote));
    QVERIFY(f > 0 && std::abs(f - 1) > 1e-3);
    QVERIFY(std::abs(f - 2.0 / target->stats.meanGy) < 0.05 * f);  // DVH mean vs voxel mean
    QVERIFY(std::abs(normalised->maxGy - f * max0) < 1e-5 * f * max0);
    for (int b = 0; b < 2; ++b)
      QVERIFY(std::abs(ws_->plan()->beam(b).photon.beam.monitorUnits - f * mu0) < 1e-9 * f * mu0);

    // The crosshair through the isocentre, for the optional screenshot.
    const auto& scene = window_->viewState()->scene();
    window_->viewState()->setCrosshair(scene->grid().worldToIndex(ws_->plan()->beam(0).beam.isocenter));
    if (const QByteArray dir = qgetenv("PENUMBRA_SCREENSHOT_DIR"); !dir.isEmpty()) {
      window_->resize(1280, 960);
      QTRY_VERIFY_WITH_TIMEOUT(!ws_->doseSurfaces()->isBuilding() && !dvhs->isBusy() && !ws_->jobs()->isBusy(),
                               kDoseTimeoutMs);
      const QString file = QDir(QString::fromLocal8Bit(dir)).filePath("photon-plan.png");
      QVERIFY(window_->grabWindowImage().save(file));
      qInfo("screenshot: %s", qPrintable(file));
    }
  }

  void exportRtDose() {
    DoseSetStore* store = ws_->doseSets();
    const int index = store->indexOfId(firstSetId_);
    QVERIFY(index >= 0);
    PlanFileActions* files = ws_->fileActions();
    QTemporaryDir dir;
    const QString path = dir.filePath(files->suggestedRtDoseName(index));
    QVERIFY(waitJob(files->exportRtDose(index, path), 120000));
    const io::RtDoseImport back = io::readRtDose(path.toStdString());
    QVERIFY(back.ok());
    QCOMPARE(back.info.frameOfReferenceUid, window_->patient()->frameOfReferenceUid);
    const double original = store->at(index)->maxGy;
    const double reread = maxDose(back.dose.dose);
    qInfo("RT Dose max %.6g Gy, written %.6g Gy, DoseGridScaling %.3g", reread, original, back.info.doseGridScaling);
    QVERIFY(std::abs(reread - original) <= back.info.doseGridScaling + 1e-6 * original);
  }

  void exportRtPlanWithPhotonBeams() {
    requireBeams();
    PlanFileActions* files = ws_->fileActions();
    auto* action = find<QAction>(window_.get(), "actionExportRtPlan");
    QVERIFY(action && action->isEnabled());
    QVERIFY(!find<QAction>(window_.get(), "actionExportRtIonPlan")->isEnabled());  // no spots
    QTemporaryDir dir;
    const QString path = dir.filePath(files->suggestedRtPlanName());
    QVERIFY2(path.endsWith("_photons.dcm"), qPrintable(path));
    QSignalSpy exported(files, &PlanFileActions::exported);
    QVERIFY(waitJob(files->exportRtPlan(path), 120000));
    QCOMPARE(exported.count(), 1);
    RtPlanSummary rp;
    QVERIFY(readRtPlanSummary(path, rp));
    QCOMPARE(rp.sopClass, std::string(UID_RTPlanStorage));
    QCOMPARE(rp.frameOfReference, window_->patient()->frameOfReferenceUid);
    const std::vector<photon::PhotonBeam> beams = ws_->plan()->photonEngineBeams();
    QCOMPARE(rp.beamNames.size(), std::size_t(2));
    QCOMPARE(rp.mu.size(), std::size_t(2));
    for (std::size_t b = 0; b < 2; ++b) {
      QCOMPARE(rp.beamNames[b], beams[b].name);
      QCOMPARE(rp.radiation[b], std::string("PHOTON"));
      // The normalised MU (not 100 any more), to the 10 digits written.
      qInfo("beam %zu: %.6g MU written, %.6g MU planned", b, rp.mu[b], beams[b].monitorUnits);
      QVERIFY(std::abs(beams[b].monitorUnits - 100) > 1e-3);
      QVERIFY(std::abs(rp.mu[b] - beams[b].monitorUnits) < 1e-8 * beams[b].monitorUnits);
      QCOMPARE(rp.gantry[b], beams[b].gantryDeg);
      QCOMPARE(rp.jawsX[b], (std::vector<double>{beams[b].x1Mm, beams[b].x2Mm}));
    }
    QCOMPARE(rp.blocks[0], 0);                         // open field
    QCOMPARE(rp.blocks[1], int(beams[1].aperture.size()));  // the conformal aperture
    QVERIFY(rp.blocks[1] >= 1);

    // The RT Ion Plan export leaves photon beams out: with no proton spots it refuses, and
    // says where photon beams go.
    QSignalSpy failed(files, &PlanFileActions::failed);
    QVERIFY(files->exportRtIonPlan(dir.filePath("ion.dcm")) == nullptr);
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed.first().first().toString().contains("Export RT Plan (photons)"),
             qPrintable(failed.first().first().toString()));
    QVERIFY(!QFileInfo::exists(dir.filePath("ion.dcm")));
  }

  void cancelledSecondRunKeepsTheFirst() {
    requireBeams();
    DoseSetStore* store = ws_->doseSets();
    const int before = store->count();
    const auto first = store->current();
    QSignalSpy submitted(ws_->jobs(), &JobRunner::jobSubmitted);
    QTest::mouseClick(find<QPushButton>(window_.get(), "computeDoseButton"), Qt::LeftButton);
    QCOMPARE(submitted.count(), 1);
    auto* job = submitted.first().first().value<Job*>();
    // Cancel while the engine computes (after its first progress report; the model is cached).
    QTRY_VERIFY_WITH_TIMEOUT(job->isFinished() || (job->state() == Job::State::Running && job->fraction() > 0),
                             kDoseTimeoutMs);
    QVERIFY2(job->state() == Job::State::Running, "the job ended before it could be cancelled");
    QSignalSpy cancelled(job, &Job::cancelled);
    auto* cancel = find<QPushButton>(window_.get(), "cancelJobButton");
    QVERIFY(cancel && cancel->isEnabled());
    QTest::mouseClick(cancel, Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(cancelled.count(), 1, 30000);
    QCOMPARE(job->state(), Job::State::Cancelled);
    qInfo("cancel latency: %.1f ms", job->cancelLatencyMs());
    QCOMPARE(store->count(), before);
    QCOMPARE(store->current(), first);
    QVERIFY(!ws_->jobs()->isBusy());
  }

  void caseRoundTripRestoresPhotonBeams() {
    requireBeams();
    const PlanModel& plan = *ws_->plan();
    const std::vector<photon::PhotonBeam> beams = plan.photonEngineBeams();
    const QString target1 = plan.beam(1).photon.apertureTarget;
    QTemporaryDir dir;
    const io::CaseFile saved = caseFromSession(*ws_, *window_->viewState(), dir.filePath("case.json"),
                                               window_->patientFolder(), window_->patientSeriesKey(), 1);
    QCOMPARE(saved.photonBeams.size(), std::size_t(2));
    QCOMPARE(saved.engine.photon.polarCones, 4);
    const io::CaseFile back = io::parseCaseFile(io::formatCaseFile(saved));
    // The editor's engine settings change, then the case brings them back with the beams.
    find<QSpinBox>(window_.get(), "photonAzimuthSpin")->setValue(12);
    ws_->plan()->clear();
    QCOMPARE(applyCaseToSession(back, *ws_, *window_->viewState()), 2);
    QCOMPARE(ws_->beamEditor()->doseOptions().photon.azimuthalCones, 6);
    const std::vector<photon::PhotonBeam> restored = ws_->plan()->photonEngineBeams();
    QCOMPARE(restored.size(), beams.size());
    for (std::size_t i = 0; i < beams.size(); ++i) {
      QCOMPARE(restored[i].name, beams[i].name);
      QCOMPARE(restored[i].gantryDeg, beams[i].gantryDeg);
      QCOMPARE(restored[i].monitorUnits, beams[i].monitorUnits);
      QCOMPARE(restored[i].x1Mm, beams[i].x1Mm);
      QCOMPARE(restored[i].y2Mm, beams[i].y2Mm);
      QVERIFY(restored[i].aperture == beams[i].aperture);
    }
    QCOMPARE(ws_->plan()->beam(1).photon.apertureTarget, target1);
    QCOMPARE(ws_->plan()->beam(0).targetName, QString("OuterTarget"));
    QVERIFY(!ws_->plan()->beam(0).photon.targetOutline.empty());
  }

  void mixedPlanGivesOneDoseSetPerModality() {
    requireBeams();
    // A proton beam with spots beside the two photon beams: Compute dose runs both engines.
    find<QComboBox>(window_.get(), "targetCombo")->setCurrentText("OuterTarget");
    QTest::mouseClick(find<QPushButton>(window_.get(), "addBeamButton"), Qt::LeftButton);
    PlanModel* plan = ws_->plan();
    QCOMPARE(plan->beamCount(), 3);
    QVERIFY(!plan->beam(2).isPhoton());
    QVERIFY(!find<QGroupBox>(window_.get(), "photonFieldBox")->isVisibleTo(ws_->beamEditor()));
    auto* generate = find<QPushButton>(window_.get(), "generateSpotsButton");
    QVERIFY(generate->isEnabled());
    QSignalSpy spotJobs(ws_->jobs(), &JobRunner::jobSubmitted);
    QTest::mouseClick(generate, Qt::LeftButton);
    QCOMPARE(spotJobs.count(), 1);
    QVERIFY(waitJob(spotJobs.first().first().value<Job*>()));
    QVERIFY(plan->totalSpots() > 0);
    QCOMPARE(plan->engineBeams().size(), std::size_t(1));
    QCOMPARE(plan->photonEngineBeams().size(), std::size_t(2));

    DoseSetStore* store = ws_->doseSets();
    const int before = store->count();
    QSignalSpy submitted(ws_->jobs(), &JobRunner::jobSubmitted);
    QTest::mouseClick(find<QPushButton>(window_.get(), "computeDoseButton"), Qt::LeftButton);
    QCOMPARE(submitted.count(), 2);
    // (Copied first: the spy grows while we wait, as DVH jobs are submitted.)
    Job* jobs[2] = {submitted.at(0).first().value<Job*>(), submitted.at(1).first().value<Job*>()};
    for (Job* job : jobs) QVERIFY2(waitJob(job), qPrintable(job->errorMessage()));
    QCOMPARE(store->count(), before + 2);
    const auto protons = store->at(before), photons = store->at(before + 1);
    QCOMPARE(protons->dose.engine, std::string("proton pencil beam"));
    QCOMPARE(protons->beams.size(), std::size_t(1));
    QVERIFY(photons->name.contains("photons"));
    QVERIFY(photons->beams.empty());
    QVERIFY(protons->maxGy > 0 && photons->maxGy > 0);

    // Export: the proton beam goes to the RT Ion Plan, the photon beams to the RT Plan.
    PlanFileActions* files = ws_->fileActions();
    QVERIFY(find<QAction>(window_.get(), "actionExportRtIonPlan")->isEnabled());
    QVERIFY(find<QAction>(window_.get(), "actionExportRtPlan")->isEnabled());
    QTemporaryDir dir;
    const QString ion = dir.filePath(files->suggestedRtIonPlanName());
    const QString rp = dir.filePath(files->suggestedRtPlanName());
    QVERIFY(ion != rp);
    QVERIFY(waitJob(files->exportRtIonPlan(ion), 120000));
    QVERIFY(waitJob(files->exportRtPlan(rp), 120000));
    const std::vector<proton::ProtonBeam> ionBeams = io::readRtIonPlan(ion.toStdString());
    QCOMPARE(ionBeams.size(), std::size_t(1));
    QCOMPARE(ionBeams[0].name, plan->beam(2).beam.name);
    RtPlanSummary summary;
    QVERIFY(readRtPlanSummary(rp, summary));
    QCOMPARE(summary.beamNames.size(), std::size_t(2));
    QCOMPARE(summary.beamNames[0], plan->beam(0).beam.name);
    QCOMPARE(summary.beamNames[1], plan->beam(1).beam.name);
    for (std::size_t b = 0; b < 2; ++b)
      QVERIFY(std::abs(summary.mu[b] - plan->beam(int(b)).photon.beam.monitorUnits) < 1e-8 * summary.mu[b]);
  }

  void cleanupTestCase() { window_.reset(); }

private:
  using FieldExtentBox = std::array<double, 4>;
  /// A photon beam's open field at the isocentre plane (u0, u1, v0, v1): the jaws, narrowed to
  /// the aperture's box.
  static FieldExtentBox extent(const PlannedBeam& p) {
    const photon::PhotonBeam& b = p.photon.beam;
    FieldExtentBox e{b.x1Mm, b.x2Mm, b.y1Mm, b.y2Mm};
    if (b.aperture.empty()) return e;
    const auto a = box(b.aperture);
    return {std::max(e[0], a[0]), std::min(e[1], a[1]), std::max(e[2], a[2]), std::min(e[3], a[3])};
  }

  void requireBeams() {
    if (!ws_ || ws_->plan()->photonBeamCount() < 2) QFAIL("no photon beams (the beam tests failed)");
  }

  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
  int firstSetId_ = -1;
};

int main(int argc, char** argv) {
  VtkView::setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("PenumbraTest");
  QApplication::setApplicationName("penumbra-gui-test");
  PhotonPlanningTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_photon_planning.moc"
