// Live dose in the real main window (issue 15, items 3 and 4), on the CPU and a coarse grid:
//  - the toggle is a checkable action with a shortcut of its own (Ctrl+L) in the Plan menu and
//    a button in the Plan dock; turning it on shows a live dose set and the status bar says
//    what the live dose does;
//  - 20 quick gantry edits of a photon beam (one every 20 ms, as a held arrow key would make):
//    the dose set shown afterwards is the live one, computed on the full grid for the last
//    gantry angle (it equals the engine's dose for that angle computed here independently),
//    the results shown came in edit order (no older result replaced a newer one), at most one
//    live job ran at a time and fewer jobs ran than edits were made (coalesced), and the event
//    loop never waited more than 100 ms (the --bench-latency probe; on a machine too loaded for
//    the same edits without live dose to stay under 100 ms, no more than twice what they took);
//  - faults: a GPU out-of-memory error and a driver error (injected before the engine call)
//    leave the last good dose on screen with a message and fall back to the CPU preview, then
//    the full grid; a live job cancelled from the Plan menu keeps the last good dose and
//    starts nothing else.
// The slice-view handles and proton beams: test_live_dose_edits.cpp.
// Waits on signals and conditions, never on fixed sleeps. Skips without BOXPHANTOM or the
// photon beam data (../shared/data/photon-beam).
#include <algorithm>
#include <atomic>
#include <future>
#include <memory>

#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>
#include <QTimer>
#include <QToolButton>

#include "gui/dose/dvh_store.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/overlays/dose_surface_display.hpp"
#include "gui/plan/live_dose_controller.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/batch_runner.hpp"  // EventLoopProbe, as penumbra --bench-latency
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "live_dose_test_support.hpp"
#include "photon/photon_dose.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using namespace penumbra::test;

namespace {
constexpr int kEdits = 20;
}  // namespace

class LiveDoseTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    if (const QString why = test::missingLiveDoseData(); !why.isEmpty()) QSKIP(qPrintable(why));
    window_ = std::make_unique<MainWindow>();
    QVERIFY(test::setUpLiveDoseCase(*window_));
    ws_ = window_->planning();
    live_ = ws_->liveDose();
  }

  void toggleWithItsShortcut() {
    auto* action = find<QAction>(window_.get(), "actionLiveDose");
    auto* button = find<QToolButton>(window_.get(), "liveDoseButton");
    auto* label = find<QLabel>(window_.get(), "liveDoseLabel");
    QVERIFY(action && button && label);
    QVERIFY(action->isCheckable() && !action->isChecked());
    QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_L));
    for (QAction* a : window_->findChildren<QAction*>())  // the shortcut is Live dose's alone
      QVERIFY2(a == action || a->shortcut() != action->shortcut(), qPrintable(a->objectName()));
    QCOMPARE(button->defaultAction(), action);
    QVERIFY(button->isVisibleTo(window_.get()));
    QVERIFY(label->isHidden());

    // A window shortcut reaches the action once the window is the active one and the key goes
    // to its focus widget (under Xvfb without a window manager activation may come late).
    window_->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(window_.get()));
    QTRY_VERIFY(QApplication::activeWindow() == window_.get() &&
                QGuiApplication::focusWindow() == window_->windowHandle());
    // The import's progress dialog used to stay up, window-modal, after some imports.
    const QWidget* modal = QApplication::activeModalWidget();
    QVERIFY2(!modal, modal ? modal->metaObject()->className() : "");
    QWidget* focus = QApplication::focusWidget() ? QApplication::focusWidget() : window_.get();
    QTest::keyClick(focus, Qt::Key_L, Qt::ControlModifier);
    QVERIFY2(action->isChecked() && live_->isOn() && button->isChecked(),
             qPrintable(QString("focus: %1").arg(focus->objectName())));
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
    const auto set = ws_->doseSets()->current();
    QVERIFY(set && set->live && set->name.startsWith("Live: photons"));
    QVERIFY(set->maxGy > 0);
    QVERIFY(!label->isHidden());
    QVERIFY2(QRegularExpression("^live: \\d+ ms \\(CPU\\)$").match(label->text()).hasMatch(),
             qPrintable(label->text()));
  }

  void quickGantryEditsShowTheLastAngle() {
    QVERIFY(fullShown(live_));
    DoseSetStore* store = ws_->doseSets();
    auto* gantry = find<QDoubleSpinBox>(window_.get(), "gantrySpin");
    // Baseline: the same edits with live dose off cost what redrawing the beam in four views
    // costs (software GL under Xvfb), which the live dose adds its work to.
    live_->setOn(false);
    const EditRun baseline = editGantry(gantry, -9);
    gantry->setValue(0);
    live_->setOn(true);
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
    const auto before = store->current();
    QVERIFY(before && before->live);

    // What happens while the edits come in and the jobs run.
    std::vector<std::pair<int, int>> publishedSeq;  // (generation, grid) in publication order
    std::vector<int> shownGenerations;              // of the dose set on screen, as it changes
    int liveJobs = 0, active = 0, maxActive = 0;
    QObject scope;
    connect(live_, &LiveDoseController::resultShown, &scope, [&](int g) {
      publishedSeq.emplace_back(g, int(live_->published().grid));
    });
    connect(store, &DoseSetStore::currentDoseSetChanged, &scope, [&] {
      if (const auto s = store->current(); s && s->live) shownGenerations.push_back(generationOf(*s));
    });
    connect(ws_->jobs(), &JobRunner::jobStarted, &scope, [&](Job* j) {
      if (!j->title().startsWith("Live dose")) return;
      ++liveJobs;
      maxActive = std::max(maxActive, ++active);
    });
    connect(ws_->jobs(), &JobRunner::jobFinished, &scope, [&](Job* j) {
      if (j->title().startsWith("Live dose")) --active;
    });

    const EditRun run = editGantry(gantry, +9);
    const double lastAngle = 9.0 * kEdits;
    QCOMPARE(ws_->plan()->beam(0).beam.gantryDeg, lastAngle);

    // The dose on screen: the live set, full grid, computed for the last angle.
    const auto shown = store->current();
    QVERIFY(shown && shown->live);
    QCOMPARE(generationOf(*shown), live_->generation());
    const LivePublication& p = live_->published();
    QCOMPARE(p.doseSetId, shown->id);
    QCOMPARE(p.grid, LiveGrid::Full);
    QCOMPARE(int(p.photonBeams.size()), 1);
    QCOMPARE(p.photonBeams[0].gantryDeg, lastAngle);
    QVERIFY2(shown->dose.parameters.find("gantry=180") != std::string::npos, shown->dose.parameters.c_str());
    QCOMPARE(shown->dose.dose.grid.spacing[0], kGridMm);
    // ... and it is that angle's dose: the engine run here for gantry 180 on the same grid.
    photon::PhotonDoseRequest r;
    const auto patient = window_->viewState()->scene()->sharedPatient();
    r.ct = std::shared_ptr<const CtVolume>(patient, &patient->ct);
    r.beams = {photonEngineBeam(ws_->plan()->beam(0))};
    r.doseGrid = coveringGrid(patient->ct.grid, kGridMm);
    r.backend = Backend::Cpu;
    r.params.polarCones = 4;
    r.params.azimuthalCones = 6;
    r.model = photon::defaultPhotonModel();
    const Volume<float> ref = photon::computePhotonDose(r).dose;
    QCOMPARE(ref.data.size(), shown->dose.dose.data.size());
    const auto [maxDiff, maxRef] = test::maxDifference(ref, shown->dose.dose);
    const double maxFromFirst = test::maxDifference(before->dose.dose, shown->dose.dose).first;
    QVERIFY(maxRef > 0);
    QVERIFY2(maxDiff <= 1e-4 * maxRef, qPrintable(QString("%1 of %2 Gy").arg(maxDiff).arg(maxRef)));
    QVERIFY2(maxFromFirst > 0.3 * maxRef, "gantry 0 and 180 doses should differ");

    // Never an older result after a newer one, on screen or published.
    QVERIFY(!publishedSeq.empty());
    QString seq;
    for (const auto& [g, grid] : publishedSeq) seq += QString(" %1%2").arg(g).arg(grid ? "F" : "P");
    qInfo("published:%s (edits ended at generation %d)", qPrintable(seq), live_->generation());
    for (std::size_t i = 1; i < publishedSeq.size(); ++i)
      QVERIFY2(publishedSeq[i] > publishedSeq[i - 1], qPrintable(QString("publication %1").arg(i)));
    for (std::size_t i = 1; i < shownGenerations.size(); ++i)
      QVERIFY2(shownGenerations[i] >= shownGenerations[i - 1], qPrintable(QString("shown %1").arg(i)));
    // Coalesced: one job at a time, fewer jobs than edits.
    QCOMPARE(maxActive, 1);
    QVERIFY2(liveJobs < kEdits, qPrintable(QString("%1 live jobs for %2 edits").arg(liveJobs).arg(kEdits)));
    qInfo("%d edits: %d live jobs, %zu results shown; event-loop latency: median %.1f ms, max %.1f ms "
          "(live dose off: median %.1f ms, max %.1f ms)",
          kEdits, liveJobs, publishedSeq.size(), run.medianMs, run.maxMs, baseline.medianMs, baseline.maxMs);
    // The bound is 100 ms. Under Xvfb every edit repaints four software-GL views (50-70 ms a
    // frame); when the same edits without live dose already held the loop longer than that, the
    // bound cannot be measured on this machine now (its load: 87-283 ms on the shared two-core
    // CI machine, where both maxima varied by 1.5x between runs), and the live dose may at most
    // double what the edits cost alone (a synchronous engine run would add seconds).
    const double bound = baseline.maxMs < 100 ? 100 : 2 * baseline.maxMs;
    if (bound > 100) qWarning("the edits alone held the event loop %.1f ms: bound %.1f ms", baseline.maxMs, bound);
    QVERIFY2(run.maxMs < bound, qPrintable(QString("event loop waited %1 ms").arg(run.maxMs)));

    if (const QByteArray dir = qgetenv("PENUMBRA_SCREENSHOT_DIR"); !dir.isEmpty()) {
      QTRY_VERIFY_WITH_TIMEOUT(!ws_->doseSurfaces()->isBuilding() && !ws_->dvhs()->isBusy(), kLiveTimeoutMs);
      window_->viewState()->setCrosshair(
          window_->viewState()->scene()->grid().worldToIndex(ws_->plan()->beam(0).beam.isocenter));
      QTest::qWait(200);  // the views draw the crosshair's slices (a screenshot, not an assertion)
      const QString file = QDir(QString::fromLocal8Bit(dir)).filePath("live-dose.png");
      QVERIFY(window_->grabWindowImage().save(file));
      qInfo("screenshot: %s", qPrintable(file));
    }
  }

  void gpuFaultsFallBackToTheCpuPreview() {
    QVERIFY(fullShown(live_));
    auto* backend = find<QComboBox>(window_.get(), "backendCombo");
    auto* gantry = find<QDoubleSpinBox>(window_.get(), "gantrySpin");
    DoseSetStore* store = ws_->doseSets();
    for (const ErrorCode code : {ErrorCode::OutOfMemory, ErrorCode::Cuda}) {
      // The injected fault: any run that asks for the GPU fails before the engine starts.
      live_->setEngineProbe([code](Backend requested, LiveModality) {
        if (requested == Backend::Cpu) return;
        if (code == ErrorCode::OutOfMemory)
          throw Error(code, "injected: CUDA out of memory (tried to allocate 2.0 GiB)");
        throw Error(code, "injected: cudaErrorIllegalAddress: an illegal memory access was encountered");
      });
      backend->setCurrentIndex(backend->findData(int(Backend::Cuda)));
      const int goodGeneration = live_->published().generation;
      int shownAtFault = -1;
      QObject scope;
      connect(live_, &LiveDoseController::statusChanged, &scope, [&](const QString& text) {
        if (text.contains("GPU failed") && store->current()) shownAtFault = generationOf(*store->current());
      });
      QSignalSpy messages(live_, &LiveDoseController::message);
      if (code == ErrorCode::OutOfMemory) {
        gantry->setValue(gantry->value() + 10);
      } else {
        live_->setOn(false);  // off and on: try the GPU again
        QVERIFY(find<QLabel>(window_.get(), "liveDoseLabel")->isHidden());
        live_->setOn(true);
      }
      QTRY_VERIFY_WITH_TIMEOUT(shownAtFault >= 0, kLiveTimeoutMs);
      QCOMPARE(shownAtFault, goodGeneration);  // the last good dose stayed on screen
      QVERIFY(live_->cpuFallback());
      bool said = false;
      for (const auto& m : messages) said = said || m.first().toString().contains("Live dose failed: injected");
      QVERIFY(said);
      QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
      QVERIFY(live_->published().generation > goodGeneration);
      QCOMPARE(live_->published().backend, Backend::Cpu);
      QCOMPARE(store->current()->id, live_->published().doseSetId);
    }
    live_->setEngineProbe({});
    backend->setCurrentIndex(backend->findData(int(Backend::Cpu)));
  }

  void cancelledEditKeepsTheLastDose() {
    QVERIFY(fullShown(live_));
    DoseSetStore* store = ws_->doseSets();
    const int good = live_->published().generation;
    const auto goodSet = store->current();
    // The engine waits in the probe until the test has cancelled, so the cancel lands in a
    // running job whatever the machine's speed.
    auto entered = std::make_shared<std::atomic<bool>>(false);
    auto release = std::make_shared<std::promise<void>>();
    std::shared_future<void> released = release->get_future().share();
    live_->setEngineProbe([entered, released](Backend, LiveModality) {
      entered->store(true);
      released.wait();
    });
    auto* gantry = find<QDoubleSpinBox>(window_.get(), "gantrySpin");
    gantry->setValue(gantry->value() + 10);
    QTRY_VERIFY_WITH_TIMEOUT(entered->load(), kLiveTimeoutMs);
    find<QAction>(window_.get(), "actionCancelJobs")->trigger();
    release->set_value();
    QTRY_VERIFY_WITH_TIMEOUT(!live_->isBusy(), kLiveTimeoutMs);
    QCOMPARE(live_->statusText(), QString("live: cancelled, last dose kept"));
    QCOMPARE(live_->published().generation, good);
    QCOMPARE(store->current(), goodSet);
    live_->setEngineProbe({});
    // Nothing more starts for the cancelled edit (no full-grid run after the settle time) ...
    int liveJobs = 0;
    QObject scope;
    connect(ws_->jobs(), &JobRunner::jobStarted, &scope, [&](Job* j) { liveJobs += j->title().startsWith("Live dose"); });
    QTest::qWait(2 * live_->settleMs());  // a negative check: what must not happen within it
    QCOMPARE(liveJobs, 0);
    // ... and the next edit computes again.
    gantry->setValue(gantry->value() + 10);
    QTRY_VERIFY_WITH_TIMEOUT(fullShown(live_), kLiveTimeoutMs);
    QVERIFY(live_->published().generation > good);
  }

  void cleanupTestCase() {
    if (live_) live_->setOn(false);
    window_.reset();
  }

private:
  struct EditRun {
    double medianMs = 0, maxMs = 0;  ///< event-loop latency from the first edit until settled
  };
  /// kEdits gantry steps of `step` degrees, one every 20 ms (a held arrow key repeats at
  /// ~30 Hz), then waits until the live dose (when on) shows the last one on the full grid.
  EditRun editGantry(QDoubleSpinBox* gantry, double step) {
    EventLoopProbe probe(10);
    probe.start();
    int edits = 0;
    QTimer editor;
    editor.setInterval(20);
    connect(&editor, &QTimer::timeout, &editor, [&] {
      gantry->setValue(gantry->value() + step);
      if (++edits == kEdits) editor.stop();
    });
    editor.start();
    if (!QTest::qWaitFor([&] { return edits == kEdits && (!live_->isOn() || fullShown(live_)); }, kLiveTimeoutMs))
      qWarning("the edits did not settle");
    probe.stop();
    return {probe.medianMs(), probe.maxMs()};
  }

  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
  LiveDoseController* live_ = nullptr;
};

QTEST_MAIN(LiveDoseTest)
#include "test_live_dose.moc"
