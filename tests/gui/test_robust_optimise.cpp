// The Optimise panel's robust option (issue 16, items 3 and 4) in the real main window, on the
// CPU: a BOXPHANTOM beam (gantry 90 on OuterTarget) on a 6 mm grid, the Robustness panel's
// scenarios set to the range errors alone (3 scenarios):
//  - the option lists the scenario count it will use, taken from the Robustness panel;
//  - a nominal optimisation, then its robustness (Robustness panel: worst-case target D95);
//  - a composite-worst-case optimisation from the same start: the job builds one matrix per
//    scenario, reports the worst scenario, the plan gets its weights, and the robustness of
//    the robust plan has a better worst-case target D95 than the nominal plan's;
//  - a scenario set whose matrices cannot fit (1000 sphere directions combined with the range
//    errors: 3003 matrices) is refused before anything is built, with the engine's words.
// Waits on signals and conditions, never on fixed sleeps.
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTest>
#include <memory>

#include "gui/jobs/job_runner.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/robustness_model.hpp"
#include "gui/optimise/optimise_controller.hpp"
#include "gui/optimise/optimise_panel.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/robust/robustness_controller.hpp"
#include "gui/robust/robustness_panel.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui_test_support.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::find;

namespace {
constexpr int kImportTimeoutMs = 120000;
constexpr int kJobTimeoutMs = 600000;
constexpr double kGridMm = 6;
const char* const kTarget = "OuterTarget";
}  // namespace

class RobustOptimiseTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    if (!test::haveData("phantoms/BOXPHANTOM"))
      QSKIP("BOXPHANTOM not in the test data (set PENUMBRA_TEST_DATA)");
    window_ = std::make_unique<MainWindow>();
    window_->resize(1600, 1000);
    window_->show();
    QVERIFY(QTest::qWaitForWindowExposed(window_.get()));
    QVERIFY(test::openBoxPhantom(*window_, kImportTimeoutMs));
    ws_ = window_->planning();
    ws_->controller()->setShowErrorDialogs(false);
    auto* backend = find<QComboBox>(window_.get(), "backendCombo");
    backend->setCurrentIndex(backend->findData(int(Backend::Cpu)));
    find<QDoubleSpinBox>(window_.get(), "doseGridSpin")->setValue(kGridMm);
    const int beam = ws_->controller()->addBeamOnTarget(kTarget, 90);
    QVERIFY(beam >= 0);
    Job* spots = ws_->controller()->generateSpots(beam, kTarget, proton::SpotGenerationOptions{});
    QVERIFY(spots);
    QTRY_VERIFY_WITH_TIMEOUT(spots->isFinished(), kJobTimeoutMs);
    QCOMPARE(spots->state(), Job::State::Done);
    start_ = optimise::planWeights(ws_->plan()->engineBeams());
    // The Robustness panel's scenarios: range errors only.
    find<QDoubleSpinBox>(ws_->robustnessPanel(), "robustnessSetupSpin")->setValue(0);
    QCOMPARE(ws_->robustnessController()->scenarios().size(), std::size_t(3));
    find<QSpinBox>(ws_->optimisePanel(), "maxIterationsSpin")->setValue(40);
  }

  void optionShowsTheScenarios() {
    auto* mode = find<QComboBox>(ws_->optimisePanel(), "robustModeCombo");
    auto* hint = find<QLabel>(ws_->optimisePanel(), "robustScenariosLabel");
    QVERIFY(mode && hint && mode->isEnabled());
    QCOMPARE(mode->currentData().toInt(), -1);  // none: the nominal plan
    QVERIFY(!ws_->optimisePanel()->settings().robust);
    mode->setCurrentIndex(mode->findData(int(optimise::RobustMode::CompositeWorstCase)));
    QVERIFY(hint->isVisibleTo(ws_->optimisePanel()));
    QVERIFY2(hint->text().startsWith("3 scenarios"), qPrintable(hint->text()));
    const OptimiseSettings s = ws_->optimisePanel()->settings();
    QVERIFY(s.robust);
    QCOMPARE(s.robustMode, optimise::RobustMode::CompositeWorstCase);
    QCOMPARE(s.scenarios.setupMm, 0.0);
    // The hint follows the Robustness panel.
    find<QDoubleSpinBox>(ws_->robustnessPanel(), "robustnessRangeSpin")->setValue(0);
    QVERIFY2(hint->text().startsWith("1 scenario "), qPrintable(hint->text()));
    find<QDoubleSpinBox>(ws_->robustnessPanel(), "robustnessRangeSpin")->setValue(3.5);
    mode->setCurrentIndex(mode->findData(-1));
  }

  void robustPlanHasTheBetterWorstCase() {
    const double nominalWorst = optimiseThenWorstD95(-1);
    QVERIFY(!ws_->optimiser()->outcome().scenarios);
    ws_->plan()->setEngineWeights(start_);  // the same start
    const double robustWorst = optimiseThenWorstD95(int(optimise::RobustMode::CompositeWorstCase));
    const OptimiseOutcome& o = ws_->optimiser()->outcome();
    QCOMPARE(o.scenarios, 3);
    QVERIFY(!o.worstScenario.isEmpty());
    QVERIFY(o.nnz > 0);
    const QString status = find<QLabel>(ws_->optimisePanel(), "optimiseStatusLabel")->text();
    QVERIFY2(status.contains("robust over 3 scenarios, worst: " + o.worstScenario),
             qPrintable(status));
    qInfo(
        "worst-case target D95 under 3 range scenarios: nominal plan %.3f Gy, robust plan %.3f Gy",
        nominalWorst, robustWorst);
    QVERIFY(robustWorst > nominalWorst);
  }

  void scenarioMatricesThatCannotFitAreRefused() {
    // 1000 directions on the sphere with the range errors: 3 x 1001 matrices.
    RobustnessSettings s = ws_->robustness()->settings();
    s.scenarios.setupMm = 3;
    s.scenarios.sphereDirections = 1000;
    s.scenarios.combine = true;
    ws_->robustnessPanel()->setSettings(s);
    QCOMPARE(ws_->robustnessController()->scenarios().size(), std::size_t(3003));
    auto* mode = find<QComboBox>(ws_->optimisePanel(), "robustModeCombo");
    mode->setCurrentIndex(mode->findData(int(optimise::RobustMode::ExpectedValue)));
    QSignalSpy finished(ws_->optimiser(), &OptimiseController::finished);
    const std::vector<double> before = optimise::planWeights(ws_->plan()->engineBeams());
    ws_->optimisePanel()->optimise();
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, kJobTimeoutMs);
    Job* job = ws_->optimiser()->job();
    QCOMPARE(job->state(), Job::State::Failed);
    QCOMPARE(job->errorCode(), ErrorCode::OutOfMemory);
    qInfo("%s", qPrintable(job->errorMessage()));
    QVERIFY(job->errorMessage().contains("3003"));
    QVERIFY(
        find<QLabel>(ws_->optimisePanel(), "optimiseStatusLabel")->text().startsWith("Failed: "));
    QVERIFY(optimise::planWeights(ws_->plan()->engineBeams()) == before);  // the plan is untouched
  }

  void cleanupTestCase() { window_.reset(); }

 private:
  /// Optimises with robust mode `mode` (-1: none), then evaluates the result's robustness in the
  /// Robustness panel; returns the target D95's worst value over the scenarios [Gy].
  double optimiseThenWorstD95(int mode) {
    auto* combo = find<QComboBox>(ws_->optimisePanel(), "robustModeCombo");
    combo->setCurrentIndex(combo->findData(mode));
    QSignalSpy optimised(ws_->optimiser(), &OptimiseController::finished);
    QTest::mouseClick(find<QPushButton>(ws_->optimisePanel(), "optimiseButton"), Qt::LeftButton);
    if (!optimised.wait(kJobTimeoutMs) && optimised.isEmpty()) return -1;
    Job* job = ws_->optimiser()->job();
    if (job->state() != Job::State::Done) {
      qWarning("optimisation %s: %s", qPrintable(Job::stateName(job->state())),
               qPrintable(job->errorMessage()));
      return -1;
    }
    QSignalSpy evaluated(ws_->robustnessController(), &RobustnessController::finished);
    ws_->robustnessPanel()->run();
    if (!evaluated.wait(kJobTimeoutMs) && evaluated.isEmpty()) return -1;
    if (!evaluated.first().at(0).toBool()) {
      qWarning("%s", qPrintable(evaluated.first().at(1).toString()));
      return -1;
    }
    for (const auto& row : ws_->robustness()->current()->result->table)
      if (row.structure == kTarget && row.metric == "D95") return row.worstGy;
    return -1;
  }

  std::unique_ptr<MainWindow> window_;
  PlanningWorkspace* ws_ = nullptr;
  std::vector<double> start_;
};

QTEST_MAIN(RobustOptimiseTest)
#include "test_robust_optimise.moc"
