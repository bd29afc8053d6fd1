// The Compare workspace (issue 13, item 3) in the real main window, driven by objectName:
//  (a) RayStation's brain SRS case opened without CT (both RT Doses and the structure set, as
//      File > Open RT Dose and structures without CT): gamma 3 %/3 mm global of the IMRT dose
//      (A) against the VMAT dose (B) on the CPU; the pass-rate headline holds a number in
//      (0, 100), the histogram and per-structure table are filled, the DVH table gives PTV_ALL's
//      Dmean of both plans (dicompyler: 48.39 and 40.47 Gy), and the axial view in gamma mode
//      shows the failing colour where gamma > 1 and the passing colour where it is <= 1 (pixels
//      read from the view's framebuffer); engine errors (NaN voxels, doses that do not overlap)
//      appear in the panel and the next comparison still works (side by side, profiles and the
//      report: test_compare_views.cpp);
//  (b) BOXPHANTOM: the same proton plan computed twice on the CPU gives 100.0 % pass and
//      A - B = 0 everywhere; against a copy scaled by 1.05 the plateau fails; "Compare backends"
//      recomputes the plan on the other backend (here: the other DDA variant) and passes.
// Waits on signals and conditions, never on fixed sleeps.
#include <cmath>
#include <memory>

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QLabel>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTest>
#include <vtkRenderer.h>

#include "compare_test_support.hpp"
#include "gui/compare/compare_controller.hpp"
#include "gui/compare/compare_panel.hpp"
#include "gui/compare/compare_tables.hpp"
#include "gui/compare/gamma_histogram.hpp"
#include "gui/compare/profile_panel.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/profile_model.hpp"
#include "gui/overlays/comparison_wash_display.hpp"
#include "gui/overlays/dose_wash_display.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui/views/slice_view.hpp"
#include "proton/spot_generation.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::find;

namespace {
constexpr int kTimeoutMs = test::kCompareTimeoutMs;
using test::cool;
using test::interiorVoxels;
using test::kBrain;
using test::warm;
}  // namespace

class CompareTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    window_ = std::make_unique<MainWindow>();
    window_->resize(1600, 1000);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    ws_ = window_->planning();
    ws_->fileActions()->setShowDialogs(false);
    ws_->controller()->setShowErrorDialogs(false);
    panel_ = find<ComparePanel>(window_.get(), "comparePanel");
    QVERIFY(panel_);
    // The dock is a tab of the right column: show it, as Plan > Compare doses does.
    window_->findChild<QAction*>("actionCompareDoses")->trigger();
  }

  void brainSrsImrtAgainstVmat() {
    if (!test::haveData(std::string(kBrain) + "/imrt") || !test::haveData(std::string(kBrain) + "/vmat"))
      QSKIP("brain-srs-raystation not in the test data (set PENUMBRA_TEST_DATA)");
    DoseSetStore* store = ws_->doseSets();
    QSignalSpy opened(ws_->fileActions(), &PlanFileActions::doseOnlyOpened);
    QVERIFY(ws_->fileActions()->openDoseWithoutCt(QString::fromStdString(test::dataPath(kBrain))));
    QTRY_COMPARE_WITH_TIMEOUT(opened.count(), 1, kTimeoutMs);
    QCOMPARE(store->count(), 2);
    // IMRT peaks at 61.97 Gy, VMAT at 52.50 Gy (the folder's README).
    const bool firstIsImrt = store->at(0)->maxGy > store->at(1)->maxGy;
    const auto imrt = store->at(firstIsImrt ? 0 : 1), vmat = store->at(firstIsImrt ? 1 : 0);
    QVERIFY2(std::abs(imrt->maxGy - 61.97) < 0.05 && std::abs(vmat->maxGy - 52.50) < 0.05,
             qPrintable(QString("%1 %2").arg(imrt->maxGy).arg(vmat->maxGy)));

    QVERIFY(panel_->setDoseSets(imrt->id, vmat->id));
    auto* backend = find<QComboBox>(panel_, "compareBackendCombo");
    backend->setCurrentIndex(backend->findData(int(Backend::Cpu)));
    QCOMPARE(find<QComboBox>(panel_, "compareGlobalLocalCombo")->currentText(), QString("global"));
    QSignalSpy finished(ws_->compareController(), &CompareController::finished);
    QTest::mouseClick(find<QPushButton>(panel_, "compareComputeButton"), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeoutMs);
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));

    // The headline: "Gamma 3 %/3 mm global: 61.2 % pass (12 345 points)".
    const QString headline = find<QLabel>(panel_, "comparePassRateLabel")->text();
    qInfo("%s", qPrintable(headline));
    const QRegularExpression re("^Gamma 3 %/3 mm global: (\\d+\\.\\d) % pass \\(([\\d ]+) points\\)$");
    const auto m = re.match(headline);
    QVERIFY2(m.hasMatch(), qPrintable(headline));
    const double pass = m.captured(1).toDouble();
    QVERIFY2(pass > 0 && pass < 100, qPrintable(headline));
    const auto c = ws_->comparison()->current();
    QVERIFY(c && c->result);
    const compare::CompareResult& r = *c->result;
    QCOMPARE(r.backend, Backend::Cpu);
    QCOMPARE(m.captured(2).remove(' ').toLongLong(), (long long)r.gammaStats.evaluatedPoints);
    QVERIFY(std::abs(pass - r.gammaStats.passRatePercent) < 0.051);
    qInfo("%s", qPrintable(find<QLabel>(panel_, "compareStatsLabel")->text()));

    // Histogram: both classes present, their sum every evaluated point, the pass part the
    // engine's passing points.
    GammaHistogram* h = panel_->histogram();
    double passed = 0, failed = 0;
    for (double v : h->passCounts()) passed += v;
    for (double v : h->failCounts()) failed += v;
    QVERIFY(passed > 0 && failed > 0);
    QCOMPARE((long long)(passed + failed), (long long)r.gammaStats.evaluatedPoints);
    QCOMPARE((long long)passed, (long long)r.gammaStats.passedPoints);  // the engine's gamma <= 1
    // Per-structure pass rates: PTV_ALL is there, with points.
    QTableWidget* st = panel_->structureTable();
    QVERIFY(st->rowCount() >= 10);
    const auto ptv = st->findItems("PTV_ALL", Qt::MatchExactly);
    QCOMPARE(ptv.size(), 1);
    QVERIFY(st->item(ptv.first()->row(), kStructPoints)->data(Qt::UserRole).toDouble() > 100);

    // DVH table: PTV_ALL's Dmean of both plans (contour DVH; dicompyler 48.39 / 40.47 Gy).
    QTRY_VERIFY_WITH_TIMEOUT(ws_->dvhs()->forDoseSet(imrt->id) && ws_->dvhs()->forDoseSet(vmat->id), kTimeoutMs);
    QTableWidget* dt = panel_->dvhTable();
    QTRY_VERIFY(dt->rowCount() > 0);
    int row = -1;
    for (int i = 0; i < dt->rowCount(); ++i)
      if (dt->item(i, kDvhStructure)->data(Qt::UserRole).toString() == "PTV_ALL" &&
          dt->item(i, kDvhQuantity)->text().startsWith("Dmean"))
        row = i;
    QVERIFY(row >= 0);
    const double da = dt->item(row, kDvhA)->data(Qt::UserRole).toDouble();
    const double db = dt->item(row, kDvhB)->data(Qt::UserRole).toDouble();
    qInfo("PTV_ALL Dmean A %.2f Gy, B %.2f Gy", da, db);
    QVERIFY2(std::abs(da - 48.39) < 1.0 && std::abs(db - 40.47) < 1.0, qPrintable(QString("%1 %2").arg(da).arg(db)));
    QVERIFY(std::abs(dt->item(row, kDvhDiff)->data(Qt::UserRole).toDouble() - (da - db)) < 1e-9);

    checkGammaPixels(r);
    checkDifferenceView();
    checkEngineErrors(vmat);
  }

  void boxPhantomSamePlanTwiceOnTheCpu() {
    if (!test::haveData("phantoms/BOXPHANTOM")) QSKIP("BOXPHANTOM not in the test data");
    QVERIFY(test::openBoxPhantom(*window_, kTimeoutMs));
    QVERIFY(!ws_->comparison()->current());  // a new patient drops the comparison
    PlanController* pc = ws_->controller();
    const int beam = pc->addBeamOnTarget("OuterTarget", 90);
    QVERIFY(beam >= 0);
    Job* spots = pc->generateSpots(beam, "OuterTarget", proton::SpotGenerationOptions{});
    QVERIFY(spots);
    QTRY_VERIFY_WITH_TIMEOUT(spots->isFinished(), kTimeoutMs);
    QCOMPARE(spots->state(), Job::State::Done);
    DoseRunOptions cpu;
    cpu.backend = Backend::Cpu;
    for (int run = 0; run < 2; ++run) {
      Job* dose = pc->computeDose(cpu);
      QVERIFY(dose);
      QTRY_VERIFY_WITH_TIMEOUT(dose->isFinished(), kTimeoutMs);
      QVERIFY2(dose->state() == Job::State::Done, qPrintable(dose->errorMessage()));
    }
    DoseSetStore* store = ws_->doseSets();
    QCOMPARE(store->count(), 2);
    const auto a = store->at(0), b = store->at(1);

    auto run = [&](int refId, int evalId) -> std::shared_ptr<const Comparison> {
      if (!panel_->setDoseSets(refId, evalId)) return nullptr;
      QSignalSpy finished(ws_->compareController(), &CompareController::finished);
      panel_->compute();
      if (!finished.wait(kTimeoutMs) && finished.isEmpty()) return nullptr;
      if (!finished.first().at(0).toBool()) qWarning("%s", qPrintable(finished.first().at(1).toString()));
      return finished.first().at(0).toBool() ? ws_->comparison()->current() : nullptr;
    };
    const auto same = run(a->id, b->id);
    QVERIFY(same && same->result);
    const QString headline = find<QLabel>(panel_, "comparePassRateLabel")->text();
    qInfo("%s", qPrintable(headline));
    QVERIFY2(headline.contains(": 100.0 % pass ("), qPrintable(headline));
    QCOMPARE(same->result->gammaStats.passedPoints, same->result->gammaStats.evaluatedPoints);
    QVERIFY(same->result->gammaStats.evaluatedPoints > 1000);
    QCOMPARE(same->result->differenceStats.maxGy, 0.0);
    QCOMPARE(same->result->differenceStats.minGy, 0.0);

    // Against the same dose scaled by 1.05: the plateau is 5 % off with no gradient to hide in.
    DoseSet scaled = *a;
    for (float& v : scaled.dose.dose.data) v *= 1.05f;
    scaled.maxGy *= 1.05;
    scaled.name = "Scaled 105 %";
    const int si = store->add(std::move(scaled));
    const auto off = run(a->id, store->at(si)->id);
    QVERIFY(off && off->result);
    qInfo("%s", qPrintable(find<QLabel>(panel_, "comparePassRateLabel")->text()));
    QVERIFY2(off->result->gammaStats.passRatePercent < 90, qPrintable(QString::number(off->result->gammaStats.passRatePercent)));
    QVERIFY(off->result->differenceStats.minGy < 0);

    // The profile works in the planning views with no comparison: the current dose alone.
    ws_->comparison()->clear();
    const auto& scene = window_->viewState()->scene();
    const Vec3 iso = scene->grid().worldToIndex(ws_->plan()->beam(0).beam.isocenter);
    ws_->profile()->setLine(SliceOrientation::Axial, iso - Vec3{20, 0, 0}, iso + Vec3{20, 0, 0});
    auto* profilePanel = find<ProfilePanel>(window_.get(), "profilePanel");
    const ProfileSamples& ps = profilePanel->samples();
    QCOMPARE(int(ps.a.size()), ProfilePanel::kSamples);
    int finiteA = 0, finiteOther = 0;
    for (std::size_t i = 0; i < ps.a.size(); ++i)
      finiteA += std::isfinite(ps.a[i]), finiteOther += std::isfinite(ps.b[i]) + std::isfinite(ps.gamma[i]);
    QCOMPARE(finiteA, ProfilePanel::kSamples);
    QCOMPARE(finiteOther, 0);
    double gy = 0;
    QVERIFY(sampleDose(store->current()->dose.dose, scene->worldOf(iso), gy));
    QVERIFY2(std::abs(ps.a[std::size_t(ProfilePanel::kSamples / 2)] - gy) < 1e-6 * std::max(1.0, gy),
             qPrintable(QString("%1 vs %2").arg(ps.a[std::size_t(ProfilePanel::kSamples / 2)]).arg(gy)));

    // Compare backends: no GPU here, so the same plan on the CPU with the other ray-tracing
    // variant, which promises the same voxel sequence and path lengths: 100 % pass.
    store->setCurrentIndex(store->indexOfId(b->id));
    QSignalSpy done(ws_->compareController(), &CompareController::finished);
    QTest::mouseClick(find<QPushButton>(panel_, "compareBackendsButton"), Qt::LeftButton);
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, kTimeoutMs);
    QVERIFY2(done.first().at(0).toBool(), qPrintable(done.first().at(1).toString()));
    const auto both = ws_->comparison()->current();
    QCOMPARE(both->reference->id, b->id);
    QCOMPARE(store->count(), 4);
    QCOMPARE(both->evaluated->id, store->at(3)->id);
    qInfo("%s vs %s: %s", both->reference->dose.parameters.c_str(), both->evaluated->dose.parameters.c_str(),
          qPrintable(done.first().at(1).toString()));
    if (queryCudaDevices().empty()) {
      QVERIFY(both->evaluated->dose.parameters.find("variant=classic") != std::string::npos);
      QVERIFY(both->reference->dose.parameters.find("variant=dda-nc") != std::string::npos);
    }
    QVERIFY2(both->result->gammaStats.passRatePercent > 99.9, qPrintable(done.first().at(1).toString()));
  }

  void cleanupTestCase() {
    if (ws_) ws_->jobs()->cancelAll();
    window_.reset();
  }

private:
  /// Gamma mode on the axial slice with the most failing points: the failing colour where
  /// gamma > 1, the passing colour where gamma <= 1, read from the framebuffer.
  void checkGammaPixels(const compare::CompareResult& r) {
    QCOMPARE(ws_->comparison()->viewMode(), CompareViewMode::Gamma);  // switched on by the result
    QCOMPARE(find<QComboBox>(panel_, "compareViewCombo")->currentText(), QString("Gamma"));
    const Volume<float>& g = r.gamma;
    int bestK = -1;
    std::size_t bestFails = 0;
    for (int k = 0; k < g.grid.dims[2]; ++k) {
      const std::size_t f = interiorVoxels(g, k, true, 1000).size();
      if (f > bestFails) bestFails = f, bestK = k;
    }
    QVERIFY2(bestK >= 0 && bestFails >= 5, "no slice with failing points");
    const auto fails = interiorVoxels(g, bestK, true, 40);
    const auto passes = interiorVoxels(g, bestK, false, 40);
    QVERIFY(passes.size() >= 5);
    const auto& scene = window_->viewState()->scene();
    // The crosshair on that slice but away from the sampled voxels (its lines would cover them).
    Vec3 cross = scene->grid().worldToIndex(g.grid.indexToWorld(Vec3{0, 0, double(bestK)}));
    window_->viewState()->setCrosshair(cross);
    SliceView* axial = window_->sliceView(SliceOrientation::Axial);
    ComparisonWashDisplay* display = ws_->comparisonDisplay(SliceOrientation::Axial);
    QVERIFY(display->isShowing());
    QVERIFY(!ws_->doseWashDisplay(SliceOrientation::Axial)->isShowing());
    const QImage img = axial->grabFramebuffer();
    const auto labels = display->colourBarLabels();
    QCOMPARE(labels.size(), std::size_t(3));
    QVERIFY2(QString::fromStdString(labels[0]).startsWith("gamma"), labels[0].c_str());
    auto pixel = [&](const std::array<int, 3>& v) {
      const Vec3 ijk = scene->grid().worldToIndex(g.grid.indexToWorld(Vec3{double(v[0]), double(v[1]), double(v[2])}));
      return test::pixelOf(img, axial, scene->displayPoint(ijk));
    };
    int warmAtFail = 0, coolAtPass = 0;
    for (const auto& v : fails) warmAtFail += warm(pixel(v));
    for (const auto& v : passes) coolAtPass += cool(pixel(v));
    qInfo("slice k=%d: %d of %zu failing voxels warm, %d of %zu passing voxels cool; e.g. fail %s pass %s", bestK,
          warmAtFail, fails.size(), coolAtPass, passes.size(), qPrintable(pixel(fails.front()).name()),
          qPrintable(pixel(passes.front()).name()));
    // Contour and isodose lines may cross a few of the sampled pixels.
    QVERIFY(warmAtFail >= int(0.7 * double(fails.size())));
    QVERIFY(coolAtPass >= int(0.7 * double(passes.size())));
    // Where gamma fails the two doses differ.
    const auto& f = fails.front();
    QVERIFY(std::abs(r.difference.at(f[0], f[1], f[2])) > 0.03 * r.normalisationGy * 0.5);
    // Back to the dose: the gamma map leaves, the wash returns.
    ws_->comparison()->setViewMode(CompareViewMode::Dose);
    QVERIFY(!display->isShowing());
    QVERIFY(ws_->doseWashDisplay(SliceOrientation::Axial)->isShowing());
  }

  void checkDifferenceView() {
    auto* combo = find<QComboBox>(panel_, "compareViewCombo");
    combo->setCurrentIndex(combo->findData(int(CompareViewMode::Difference)));
    emit combo->activated(combo->currentIndex());
    QCOMPARE(ws_->comparison()->viewMode(), CompareViewMode::Difference);
    ComparisonWashDisplay* display = ws_->comparisonDisplay(SliceOrientation::Axial);
    QVERIFY(display->isShowing());
    window_->sliceView(SliceOrientation::Axial)->renderNow();
    const auto labels = display->colourBarLabels();
    QCOMPARE(labels.size(), std::size_t(3));
    QVERIFY2(QString::fromStdString(labels[0]).contains("Gy") && QString::fromStdString(labels[0]).contains("%"),
             labels[0].c_str());
    QVERIFY2(QString::fromStdString(labels[1]).contains("A - B"), labels[1].c_str());
  }

  /// NaN voxels and doses that do not overlap: the engine's words in the panel, no crash, and
  /// the next comparison works.
  void checkEngineErrors(std::shared_ptr<const DoseSet> vmat) {
    DoseSetStore* store = ws_->doseSets();
    DoseSet nan = *vmat;
    nan.dose.dose.data[nan.dose.dose.data.size() / 2] = std::nanf("");
    nan.name = "VMAT with a NaN";
    const int ni = store->add(std::move(nan));
    DoseSet far = *vmat;
    far.dose.dose.grid.origin.x += 5000;
    far.name = "VMAT 5 m away";
    const int fi = store->add(std::move(far));
    auto expectError = [&](int evalIndex, const QString& words) {
      QVERIFY(panel_->setDoseSets(vmat->id, store->at(evalIndex)->id));
      QSignalSpy finished(ws_->compareController(), &CompareController::finished);
      auto* button = find<QPushButton>(panel_, "compareComputeButton");
      QTest::mouseClick(button, Qt::LeftButton);
      QTRY_VERIFY_WITH_TIMEOUT(finished.count() >= 1, kTimeoutMs);
      for (const auto& f : finished) qInfo("finished %d %s", f.at(0).toBool(), qPrintable(f.at(1).toString()));
      QCOMPARE(finished.count(), 1);
      QVERIFY(!finished.first().at(0).toBool());
      QLabel* msg = find<QLabel>(panel_, "compareMessageLabel");
      qInfo("%s", qPrintable(msg->text()));
      QVERIFY(msg->isVisibleTo(panel_));
      QVERIFY2(msg->text().contains(words, Qt::CaseInsensitive), qPrintable(msg->text()));
      QVERIFY(find<QPushButton>(panel_, "compareComputeButton")->isEnabled());
    };
    expectError(ni, "NaN");
    expectError(fi, "do not overlap");
    // The last good comparison is still shown, and a new one runs.
    QVERIFY(ws_->comparison()->current());
    QVERIFY(panel_->setDoseSets(vmat->id, vmat->id));
    QSignalSpy finished(ws_->compareController(), &CompareController::finished);
    panel_->compute();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kTimeoutMs);
    QVERIFY(finished.first().at(0).toBool());
    QVERIFY(!find<QLabel>(panel_, "compareMessageLabel")->isVisibleTo(panel_));
    QVERIFY2(find<QLabel>(panel_, "comparePassRateLabel")->text().contains("100.0 % pass"),
             qPrintable(find<QLabel>(panel_, "comparePassRateLabel")->text()));
  }

  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
  ComparePanel* panel_ = nullptr;
};

int main(int argc, char** argv) {
  VtkView::setDefaultSurfaceFormat();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("PenumbraTest");
  QApplication::setApplicationName("penumbra-gui-test");
  CompareTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_compare.moc"
