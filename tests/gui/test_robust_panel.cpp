// The Robustness panel (issue 16, item 4) in the real main window, driven by objectName, on the
// CPU backend (GPUs, where present, are used by the panel as it would for the user):
//  - the scenario editor lists what will run: 21 by default, 9 uncombined, 1 + 2 + N on a sphere
//    of N, 3 with range errors only, and the model (where the Optimise panel reads them) follows;
//  - Run evaluates a BOXPHANTOM beam (gantry 90 on OuterTarget, spots as generated) on a 6 mm
//    grid over 9 scenarios as a job: one table row per target metric (D98, D95, Dmean) and
//    per other structure's metric (D2, Dmax, Dmean), worst <= nominal <= best for target
//    doses, the limits from the Optimise panel's objectives (a target floor set out of reach is
//    flagged, and only those rows are tinted), the numbers as the engine gave them;
//  - the DVH panel draws a band per structure in its colour (upper >= lower everywhere), the
//    toggle hides and shows them, and a plan edit removes them while the table stays (stale);
//  - "Add worst-case dose" and "Add spread" put the engine's volumes into the dose-set store on
//    the evaluation's grid, named with the scenario count; the DVH store and the Compare panel
//    see them;
//  - Cancel during a run, and a run that cannot start, keep the previous table;
//  - live dose on: without a GPU the panel says to press Run and starts nothing by itself; with
//    the live refresh forced on the CPU, edits in quick succession end with the newest plan's
//    evaluation on screen.
// Waits on signals and conditions, never on fixed sleeps.
#include <QAction>
#include <QAreaSeries>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineSeries>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "gui/dose/dvh_panel.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/robustness_model.hpp"
#include "gui/optimise/optimise_panel.hpp"
#include "gui/overlays/dose_clip.hpp"
#include "gui/plan/live_dose_controller.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/robust/robustness_controller.hpp"
#include "gui/robust/robustness_inputs.hpp"
#include "gui/robust/robustness_panel.hpp"
#include "gui/robust/robustness_table.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui_test_support.hpp"
#include "optimise/optimise.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::find;

namespace {

constexpr int kImportTimeoutMs = 120000;
constexpr int kJobTimeoutMs = 600000;
constexpr double kGridMm = 6;
const char* const kTarget = "OuterTarget";

/// The table's rows as (structure, metric, nominal, worst, best, scenario, limit) texts.
QStringList tableTexts(const QTableWidget* t) {
  QStringList out;
  for (int r = 0; r < t->rowCount(); ++r)
    for (int c = 0; c < t->columnCount(); ++c) out << t->item(r, c)->text();
  return out;
}

}  // namespace

class RobustPanelTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    if (!test::haveData("phantoms/BOXPHANTOM"))
      QSKIP(qPrintable(
          "test data not found: " + QString::fromStdString(test::dataPath("phantoms/BOXPHANTOM")) +
          " (set PENUMBRA_TEST_DATA)"));
    window_ = std::make_unique<MainWindow>();
    window_->resize(1600, 1000);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QVERIFY(test::openBoxPhantom(*window_, kImportTimeoutMs));
    ws_ = window_->planning();
    ws_->controller()->setShowErrorDialogs(false);
    panel_ = find<RobustnessPanel>(window_.get(), "robustnessPanel");
    QVERIFY(panel_);
    // Plan > Robustness... shows the dock (a tab of the right column).
    auto* action = find<QAction>(window_.get(), "actionRobustness");
    QVERIFY(action);
    action->trigger();
    QTRY_VERIFY(panel_->isVisible());

    // The plan: one beam on the target, its spots, the CPU backend on a 6 mm grid, and its
    // nominal dose (the DVH panel's curves the bands are drawn around).
    auto* backend = find<QComboBox>(window_.get(), "backendCombo");
    if (backend) backend->setCurrentIndex(std::max(0, backend->findData(int(Backend::Cpu))));
    find<QDoubleSpinBox>(window_.get(), "doseGridSpin")->setValue(kGridMm);
    PlanController* pc = ws_->controller();
    const int beam = pc->addBeamOnTarget(kTarget, 90);
    QVERIFY(beam >= 0);
    Job* spots = pc->generateSpots(beam, kTarget, proton::SpotGenerationOptions{});
    QVERIFY(spots);
    QTRY_VERIFY_WITH_TIMEOUT(spots->isFinished(), kJobTimeoutMs);
    QCOMPARE(spots->state(), Job::State::Done);
    DoseRunOptions o;
    o.backend = Backend::Cpu;
    o.doseGridMm = kGridMm;
    Job* dose = pc->computeDose(o);
    QVERIFY(dose);
    QTRY_VERIFY_WITH_TIMEOUT(dose->isFinished(), kJobTimeoutMs);
    QVERIFY2(dose->state() == Job::State::Done, qPrintable(dose->errorMessage()));
    QTRY_VERIFY_WITH_TIMEOUT(!ws_->dvhs()->isBusy(), kJobTimeoutMs);
  }

  void scenarioEditor() {
    auto* list = find<QListWidget>(panel_, "robustnessScenarioList");
    auto* combine = find<QCheckBox>(panel_, "robustnessCombineCheck");
    auto* directions = find<QComboBox>(panel_, "robustnessDirectionsCombo");
    auto* sphere = find<QSpinBox>(panel_, "robustnessSphereSpin");
    auto* range = find<QDoubleSpinBox>(panel_, "robustnessRangeSpin");
    auto* setup = find<QDoubleSpinBox>(panel_, "robustnessSetupSpin");
    QVERIFY(list && combine && directions && sphere && range && setup);
    // The scenario model's defaults: +-3.5 %, +-3 mm along the axes, combined: 3 x 7.
    QCOMPARE(range->value(), 3.5);
    QCOMPARE(setup->value(), 3.0);
    QVERIFY(combine->isChecked());
    QCOMPARE(list->count(), 21);
    QCOMPARE(list->item(0)->text(), QString::fromStdString(robust::makeScenarios().front().name));
    QVERIFY(!sphere->isEnabled());
    combine->setChecked(false);
    QCOMPARE(list->count(), 9);
    directions->setCurrentIndex(directions->findData(1));  // sphere
    QVERIFY(sphere->isEnabled());
    sphere->setValue(10);
    QCOMPARE(list->count(), 1 + 2 + 10);
    QCOMPARE(ws_->robustness()->settings().scenarios.sphereDirections, 10);
    setup->setValue(0);
    QCOMPARE(list->count(), 3);  // range errors only
    QVERIFY(find<QLabel>(panel_, "robustnessScenarioCountLabel")->text().startsWith("3 scenarios"));
    // What the runs below use: 9 scenarios (range and axis shifts, each alone) on a 6 mm grid.
    setup->setValue(3);
    directions->setCurrentIndex(directions->findData(0));
    find<QDoubleSpinBox>(panel_, "robustnessGridSpin")->setValue(kGridMm);
    QCOMPARE(list->count(), 9);
    QCOMPARE(ws_->robustness()->settings().doseGridMm, kGridMm);
    QCOMPARE(ws_->robustness()->settings().scenarios.sphereDirections, 0);
  }

  void compactScenarioNames() {
    // The table's short names keep every number of the engine's names.
    robust::RobustnessResult r;
    r.scenarios = robust::makeScenarios();
    QStringList shortNames;
    for (int i = 0; i < int(r.scenarios.size()); ++i) shortNames << compactScenarioLabel(r, i);
    QCOMPARE(shortNames.first(), QString("nominal"));
    for (const char* expected : {"L+3mm", "S-3mm", "-3.5%", "+3.5% P+3mm", "-3.5% L-3mm"})
      QVERIFY2(shortNames.contains(expected), qPrintable(shortNames.join(" | ")));
    robust::ScenarioOptions sphere;
    sphere.sphereDirections = 26;
    sphere.combine = false;
    r.scenarios = robust::makeScenarios(sphere);
    QCOMPARE(compactScenarioLabel(r, int(r.scenarios.size()) - 1), QString("3mm dir 26/26"));
    QCOMPARE(compactScenarioLabel(r, 99), QString("#99"));
  }

  void runFromThePanel() {
    // A target floor out of reach: the target's D98 / D95 rows must be flagged.
    std::vector<ObjectiveRow> rows = ws_->optimisePanel()->rows();
    bool haveMin = false;
    for (auto& r : rows)
      if (r.structure == kTarget && r.kind == optimise::TermType::MinDose)
        r.levelGy = 1000, haveMin = true;
    QVERIFY(haveMin);
    ws_->optimisePanel()->setRows(rows);

    QSignalSpy finished(ws_->robustnessController(), &RobustnessController::finished);
    QSignalSpy bands(ws_->robustness(), &RobustnessModel::bandsChanged);
    QTest::mouseClick(find<QPushButton>(panel_, "robustnessRunButton"), Qt::LeftButton);
    Job* job = ws_->robustnessController()->activeJob();
    QVERIFY(job);
    QVERIFY(find<QPushButton>(panel_, "robustnessCancelButton")->isEnabled());
    QVERIFY(!find<QPushButton>(panel_, "robustnessRunButton")->isEnabled());
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kJobTimeoutMs);
    QVERIFY2(finished.first().at(0).toBool(), qPrintable(finished.first().at(1).toString()));
    qInfo("%s", qPrintable(finished.first().at(1).toString()));
    QCOMPARE(job->state(), Job::State::Done);
    QVERIFY(bands.count() > 0);

    const auto e = ws_->robustness()->current();
    QVERIFY(e && e->result);
    const robust::RobustnessResult& r = *e->result;
    QCOMPARE(int(r.scenarios.size()), 9);
    QVERIFY(r.scenarios.front().isNominal());
    QCOMPARE(r.nominal.dose.grid.dims, coveringGrid(window_->patient()->ct.grid, kGridMm).dims);

    // A row per metric: D98 / D95 / Dmean of each target, D2 / Dmax / Dmean of the others.
    QTableWidget* t = find<QTableWidget>(panel_, "robustnessTable");
    QCOMPARE(t->rowCount(), int(r.table.size()));
    QStringList expected, shown;
    for (const auto& s : r.structures) {
      const QString n = QString::fromStdString(s.name);
      const QStringList metrics = s.kind == StructureKind::Target
                                      ? QStringList{"D98", "D95", "Dmean"}
                                      : QStringList{"D2", "Dmax", "Dmean"};
      for (const QString& m : metrics) expected << n + " " + m;
    }
    for (int i = 0; i < t->rowCount(); ++i)
      shown << t->item(i, kRobStructure)->text() + " " + t->item(i, kRobMetric)->text();
    expected.sort();
    shown.sort();
    QCOMPARE(shown, expected);
    QVERIFY(expected.contains(QString(kTarget) + " D95"));

    int flagged = 0;
    for (int i = 0; i < t->rowCount(); ++i) {
      const robust::RobustnessRow& row = r.table[std::size_t(i)];
      // The table shows the engine's numbers (exact in UserRole).
      QCOMPARE(t->item(i, kRobNominal)->data(Qt::UserRole).toDouble(), row.nominalGy);
      QCOMPARE(t->item(i, kRobWorst)->data(Qt::UserRole).toDouble(), row.worstGy);
      QCOMPARE(t->item(i, kRobBest)->data(Qt::UserRole).toDouble(), row.bestGy);
      QCOMPARE(t->item(i, kRobScenario)->data(Qt::UserRole).toInt(), row.worstScenario);
      QVERIFY(t->item(i, kRobScenario)
                  ->toolTip()
                  .contains(
                      QString::fromStdString(r.scenarios.at(std::size_t(row.worstScenario)).name)));
      const bool target = t->item(i, kRobStructure)->text() == kTarget;
      if (target) {
        // The worst of a target's dose is its lowest over the scenarios, the nominal among them.
        QVERIFY2(row.worstGy <= row.nominalGy && row.nominalGy <= row.bestGy,
                 qPrintable(QString("%1 %2 %3 %4")
                                .arg(QString::fromStdString(row.metric))
                                .arg(row.worstGy)
                                .arg(row.nominalGy)
                                .arg(row.bestGy)));
        QVERIFY(row.nominalGy > 0);
      } else {
        QVERIFY(row.worstGy >= row.nominalGy && row.nominalGy >= row.bestGy);
      }
      const bool floorRow = target && (row.metric == "D98" || row.metric == "D95");
      if (floorRow)
        QCOMPARE(t->item(i, kRobLimit)->data(Qt::UserRole).toDouble(), 1000.0);
      else
        QVERIFY(
            std::isnan(t->item(i, kRobLimit)->data(Qt::UserRole).toDouble()));  // BODY: no limit
      QCOMPARE(row.violated, floorRow);
      // Flagged rows, and only they, are tinted.
      const bool tinted = t->item(i, kRobStructure)->background().style() != Qt::NoBrush;
      QCOMPARE(tinted, row.violated);
      flagged += tinted;
    }
    QCOMPARE(flagged, 2);
    const QString summary = find<QLabel>(panel_, "robustnessSummaryLabel")->text();
    QVERIFY2(summary.contains("9 scenarios") && summary.contains("2 of 6 rows flagged"),
             qPrintable(summary));
    for (const char* name : {"robustnessWorstDoseButton", "robustnessSpreadDoseButton"})
      QVERIFY(find<QPushButton>(panel_, name)->isEnabled());
  }

  void dvhBands() {
    DvhPanel* dvh = ws_->dvhPanel();
    const auto r = ws_->robustness()->bands();
    QVERIFY(r);
    const auto& scene = window_->viewState()->scene();
    for (const auto& s : r->structures) {
      const QString name = QString::fromStdString(s.name);
      QAreaSeries* band = dvh->band(name);
      QVERIFY2(band, qPrintable(name));
      QVERIFY(band->isVisible());
      const Structure* st = scene->patient().structures.find(s.name);
      QVERIFY(st);
      QCOMPARE(band->brush().color().rgb(), QColor(st->color[0], st->color[1], st->color[2]).rgb());
      QVERIFY(band->brush().color().alpha() < 255);  // translucent: the curve shows through
      const QList<QPointF> hi = band->upperSeries()->points(), lo = band->lowerSeries()->points();
      QCOMPARE(hi.size(), lo.size());
      QVERIFY(hi.size() > 10);
      double widest = 0;
      for (qsizetype k = 0; k < hi.size(); ++k) {
        QCOMPARE(hi[k].x(), lo[k].x());
        QVERIFY(hi[k].y() >= lo[k].y());
        widest = std::max(widest, hi[k].y() - lo[k].y());
      }
      // Range errors move the target's distal edge: its band is percents wide somewhere. The
      // body (14 litres around a 250 cc target) changes by much less, but it changes.
      qInfo("%s: band up to %.3g %% wide", qPrintable(name), widest);
      QVERIFY2(widest > (s.kind == StructureKind::Target ? 1.0 : 0.0), qPrintable(name));
      // The nominal curve of the plan's dose set is still drawn over the band.
      QVERIFY(!dvh->series(name).isEmpty());
    }
    QCOMPARE(dvh->visibleBandCount(), int(r->structures.size()));

    // The toggle (DVH panel and Robustness panel share it).
    auto* check = find<QCheckBox>(dvh, "dvhBandsCheck");
    QVERIFY(check && check->isEnabled() && check->isChecked());
    check->setChecked(false);
    QCOMPARE(dvh->visibleBandCount(), 0);
    QVERIFY(!find<QCheckBox>(panel_, "robustnessBandsCheck")->isChecked());
    find<QCheckBox>(panel_, "robustnessBandsCheck")->setChecked(true);
    QCOMPARE(dvh->visibleBandCount(), int(r->structures.size()));
    // A structure unchecked in the DVH panel hides its band with its curves.
    dvh->setStructureChecked(kTarget, false);
    QVERIFY(!dvh->band(kTarget)->isVisible());
    dvh->setStructureChecked(kTarget, true);
    QVERIFY(dvh->band(kTarget)->isVisible());

    // A plan edit: the bands go, the table stays but says it is an earlier plan's.
    const QStringList before = tableTexts(panel_->table());
    ws_->plan()->scaleWeights(1.0);
    QVERIFY(ws_->robustness()->isStale());
    QVERIFY(!ws_->robustness()->bands());
    QCOMPARE(dvh->visibleBandCount(), 0);
    QVERIFY(!dvh->band(kTarget));
    QCOMPARE(tableTexts(panel_->table()), before);
    QVERIFY(find<QLabel>(panel_, "robustnessSummaryLabel")->text().contains("earlier plan"));
  }

  void worstCaseAndSpreadDoseSets() {
    const auto e = ws_->robustness()->current();
    QVERIFY(e && e->result);
    const robust::RobustnessResult& r = *e->result;
    DoseSetStore* store = ws_->doseSets();
    const int before = store->count();
    QTest::mouseClick(find<QPushButton>(panel_, "robustnessWorstDoseButton"), Qt::LeftButton);
    QCOMPARE(store->count(), before + 1);
    const auto worst = store->current();
    QVERIFY(worst);
    qInfo("%s", qPrintable(worst->name));
    QVERIFY2(worst->name.startsWith("Worst case ") && worst->name.contains(": 9 scenarios"),
             qPrintable(worst->name));
    // The evaluation's grid and the engine's voxels.
    const Grid grid = coveringGrid(window_->patient()->ct.grid, kGridMm);
    QCOMPARE(worst->dose.dose.grid.dims, grid.dims);
    QVERIFY(worst->dose.dose.grid.sameGeometry(grid));
    QVERIFY(worst->dose.dose.data == r.worstCase.dose.data);
    QVERIFY(worst->maxGy > 0);
    // Inside the target the worst case is the coldest scenario: never above the nominal.
    const Mask target = maskOnGrid(window_->patient()->structures.find(kTarget)->mask, grid);
    std::size_t inside = 0;
    for (std::size_t v = 0; v < target.data.size(); ++v)
      if (target.data[v]) {
        ++inside;
        QVERIFY(worst->dose.dose.data[v] <= r.nominal.dose.data[v]);
      }
    QVERIFY(inside > 100);

    QTest::mouseClick(find<QPushButton>(panel_, "robustnessSpreadDoseButton"), Qt::LeftButton);
    QCOMPARE(store->count(), before + 2);
    const auto spread = store->current();
    QVERIFY(spread->name.startsWith("Spread "));
    QVERIFY(spread->dose.dose.data == r.spread.dose.data);
    QVERIFY(*std::min_element(spread->dose.dose.data.begin(), spread->dose.dose.data.end()) >= 0);
    QVERIFY(spread->maxGy > 0);

    // The views' store feeds the DVH store and the Compare panel.
    QTRY_VERIFY_WITH_TIMEOUT(
        ws_->dvhs()->forDoseSet(worst->id) && ws_->dvhs()->forDoseSet(spread->id), kJobTimeoutMs);
    auto* a = find<QComboBox>(window_.get(), "compareReferenceCombo");
    QVERIFY(a);
    QVERIFY(a->findData(worst->id) >= 0 && a->findData(spread->id) >= 0);
  }

  void cancelKeepsTheTable() {
    const auto previous = ws_->robustness()->current();
    const QStringList before = tableTexts(panel_->table());
    QVERIFY(!before.isEmpty());
    QSignalSpy finished(ws_->robustnessController(), &RobustnessController::finished);
    panel_->run();
    Job* job = ws_->robustnessController()->activeJob();
    QVERIFY(job);
    // Cancel once the scenarios run (the engine's own cancel check, not the queue's).
    connect(job, &Job::progressChanged, this, [job](double f) {
      if (f > 0 && job->state() == Job::State::Running) job->cancel();
    });
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kJobTimeoutMs);
    QCOMPARE(job->state(), Job::State::Cancelled);
    QVERIFY(!finished.first().at(0).toBool());
    QVERIFY(find<QLabel>(panel_, "robustnessStatusLabel")->text().contains("cancelled"));
    QCOMPARE(ws_->robustness()->current(), previous);
    QCOMPARE(tableTexts(panel_->table()), before);
    QVERIFY(find<QPushButton>(panel_, "robustnessRunButton")->isEnabled());
  }

  void liveDoseWithoutGpuAsksForRun() {
    if (RobustnessController::gpuUsable())
      QSKIP("a GPU is present: the live refresh runs (see the next test)");
    LiveDoseController* live = ws_->liveDose();
    auto* label = find<QLabel>(panel_, "robustnessLiveLabel");
    QVERIFY(label->text().isEmpty());
    QSignalSpy shown(live, &LiveDoseController::resultShown);
    QSignalSpy started(ws_->robustnessController(), &RobustnessController::started);
    live->setOn(true);
    QCOMPARE(label->text(), QString("robustness: press Run (no GPU for live refresh)"));
    QVERIFY(label->isVisible());
    // The live dose reaches the full grid; no evaluation starts by itself.
    QTRY_VERIFY_WITH_TIMEOUT(live->published().grid == LiveGrid::Full && !live->isBusy(),
                             kJobTimeoutMs);
    QVERIFY(shown.count() > 0);
    QCOMPARE(started.count(), 0);
    live->setOn(false);
    QVERIFY(label->text().isEmpty());
  }

  void liveRefreshKeepsTheNewest() {
    // Range errors only (3 scenarios) so that an edit can come while an evaluation runs.
    find<QDoubleSpinBox>(panel_, "robustnessSetupSpin")->setValue(0);
    QCOMPARE(panel_->scenarioList()->count(), 3);
    RobustnessController* rc = ws_->robustnessController();
    RobustnessModel* model = ws_->robustness();
    rc->setLiveRefreshWithoutGpu(true);
    LiveDoseController* live = ws_->liveDose();
    QSignalSpy started(rc, &RobustnessController::started);
    // Every evaluation put on screen is of the newest plan when it arrives, and never of an
    // older plan than the one before it.
    std::vector<int> shownRevisions;
    bool staleShown = false;
    const auto watch = connect(model, &RobustnessModel::evaluationChanged, this, [&] {
      if (!model->current()) return;
      shownRevisions.push_back(model->current()->planRevision);
      staleShown = staleShown || model->isStale();
    });
    ws_->plan()->scaleWeights(1.0);  // an edit since the last evaluation: the table is stale
    QVERIFY(model->isStale());
    live->setOn(true);
    QCOMPARE(find<QLabel>(panel_, "robustnessLiveLabel")->text(),
             QString("robustness: refreshed after each edit"));
    // The first evaluation follows the live dose without a click; an edit while it runs, and
    // another while the next one runs.
    QTRY_VERIFY_WITH_TIMEOUT(started.count() >= 1, kJobTimeoutMs);
    ws_->plan()->scaleWeights(1.1);
    QTRY_VERIFY_WITH_TIMEOUT(started.count() >= 2, kJobTimeoutMs);
    ws_->plan()->scaleWeights(1.2);
    const int revision = model->planRevision();
    QTRY_VERIFY_WITH_TIMEOUT(model->current() && model->current()->planRevision == revision &&
                                 !rc->isRunning() && !live->isBusy(),
                             kJobTimeoutMs);
    QVERIFY(!model->isStale());
    QVERIFY(model->bands());
    QCOMPARE(int(model->current()->result->scenarios.size()), 3);
    QVERIFY(!staleShown);
    QVERIFY(!shownRevisions.empty());
    QVERIFY(std::is_sorted(shownRevisions.begin(), shownRevisions.end()));
    int cancelled = 0;
    for (Job* j : ws_->jobs()->jobs())
      cancelled += j->title().startsWith("Robustness") && j->state() == Job::State::Cancelled;
    qInfo("%d live evaluations started, %zu shown, %d robustness jobs cancelled in all",
          int(started.count()), shownRevisions.size(), cancelled);
    live->setOn(false);
    rc->setLiveRefreshWithoutGpu(false);
    disconnect(watch);
  }

  void failedRunKeepsTheTable() {
    // A negative spot weight: the engine refuses the plan (InvalidArgument) on the worker.
    const auto previous = ws_->robustness()->current();
    QVERIFY(previous);
    const QStringList before = tableTexts(panel_->table());
    std::vector<double> w = optimise::planWeights(ws_->plan()->engineBeams());
    const std::vector<double> good = w;
    w.front() = -1;
    QVERIFY(ws_->plan()->setEngineWeights(w));
    QSignalSpy finished(ws_->robustnessController(), &RobustnessController::finished);
    QSignalSpy messages(ws_->robustnessController(), &RobustnessController::message);
    panel_->run();
    Job* job = ws_->robustnessController()->activeJob();
    QVERIFY(job);
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kJobTimeoutMs);
    QCOMPARE(job->state(), Job::State::Failed);
    QVERIFY(!finished.first().at(0).toBool());
    const QString status = find<QLabel>(panel_, "robustnessStatusLabel")->text();
    qInfo("%s", qPrintable(status));
    QVERIFY2(status.startsWith("Robustness failed: ") && status.contains("last table is kept"),
             qPrintable(status));
    QVERIFY(messages.count() >= 1);  // and in the Messages dock
    QCOMPARE(ws_->robustness()->current(), previous);
    QCOMPARE(tableTexts(panel_->table()), before);
    QVERIFY(ws_->plan()->setEngineWeights(good));
  }

  void runThatCannotStartKeepsTheTable() {
    QVERIFY(ws_->robustness()->current());
    const QStringList before = tableTexts(panel_->table());
    ws_->plan()->removeBeam(0);
    QSignalSpy finished(ws_->robustnessController(), &RobustnessController::finished);
    QVERIFY(!ws_->robustnessController()->run());
    QCOMPARE(finished.count(), 1);
    QVERIFY(!finished.first().at(0).toBool());
    const QString status = find<QLabel>(panel_, "robustnessStatusLabel")->text();
    QVERIFY2(status.contains("no proton beam has spots"), qPrintable(status));
    QCOMPARE(tableTexts(panel_->table()), before);
  }

  void cleanupTestCase() { window_.reset(); }

 private:
  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
  RobustnessPanel* panel_ = nullptr;
};

QTEST_MAIN(RobustPanelTest)
#include "test_robust_panel.moc"
