// The Optimise panel's objectives and the prescription, in the real main window on BOXPHANTOM:
// while the table shows the defaults, a prescription change (typed into the Dose panel's
// prescription box) recomputes them, every level in proportion; once the user has edited a
// weight, a prescription change leaves every row as it was and the panel's status label says so;
// "Defaults" (resetObjectivesButton) then gives the new prescription's defaults, which follow the
// next change again; a new patient resets edited rows. Waits on signals, never on fixed sleeps.
#include <cmath>
#include <memory>

#include <QDoubleSpinBox>
#include <QLabel>
#include <QPushButton>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTest>

#include "gui/model/plan_model.hpp"
#include "gui/optimise/optimise_controller.hpp"
#include "gui/optimise/optimise_panel.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui_test_support.hpp"
#include "objectives_test_support.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::column;
using penumbra::test::describe;
using penumbra::test::find;
using penumbra::test::rowOf;

namespace {

constexpr int kImportTimeoutMs = 120000;

/// `rows` are `defaults` as the table shows them: levels to its 3 decimals, weights to 2
/// (0.8 x 12 Gy is 9.6000000000000014, the spin box 9.6).
bool shownAs(const std::vector<ObjectiveRow>& rows, const std::vector<ObjectiveRow>& defaults) {
  if (rows.size() != defaults.size()) return false;
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].structure != defaults[i].structure || rows[i].role != defaults[i].role ||
        rows[i].kind != defaults[i].kind || std::abs(rows[i].levelGy - defaults[i].levelGy) > 0.0005 ||
        std::abs(rows[i].weight - defaults[i].weight) > 0.005)
      return false;
  return true;
}

}  // namespace

class ObjectivesPrescriptionTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    PENUMBRA_SKIP_WITHOUT_BOXPHANTOM();
    window_ = test::openQuietWindow();
    QVERIFY(window_);
    QVERIFY(test::openBoxPhantom(*window_, kImportTimeoutMs));
    panel_ = window_->planning()->optimisePanel();
    table_ = find<QTableWidget>(window_.get(), "objectivesTable");
    rx_ = find<QDoubleSpinBox>(window_.get(), "prescriptionSpin");
    status_ = find<QLabel>(window_.get(), "optimiseStatusLabel");
    reset_ = find<QPushButton>(window_.get(), "resetObjectivesButton");
    QVERIFY(panel_ && table_ && rx_ && status_ && reset_);
  }

  void untouchedDefaultsFollowThePrescription() {
    const double start = window_->planning()->plan()->prescriptionGy();
    const std::vector<ObjectiveRow> first = panel_->rows();
    QVERIFY(rowOf(first, "OuterTarget", optimise::TermType::MinDose) >= 0);
    QVERIFY2(shownAs(first, window_->planning()->optimiser()->defaultObjectives()), qPrintable(describe(first)));

    // An RT Plan's dose, as an import sets it: 0.97 x 30.826 Gy = 29.90122 Gy shows as 29.901,
    // so the table must be compared with the defaults as shown, not as computed.
    window_->planning()->plan()->setPrescription(30.826, "RP test plan");
    QVERIFY(followed(first, 30.826 / start));
    const std::vector<ObjectiveRow> rtPlan = panel_->rows();
    QCOMPARE(rtPlan[std::size_t(rowOf(rtPlan, "OuterTarget", optimise::TermType::MinDose))].levelGy, 29.901);

    setPrescription(60.0);  // typed by the user
    QVERIFY(followed(rtPlan, 60.0 / 30.826));
    const std::vector<ObjectiveRow> now = panel_->rows();
    QCOMPARE(now[std::size_t(rowOf(now, "OuterTarget", optimise::TermType::MinDose))].levelGy, 58.2);  // 0.97 x 60
    QVERIFY2(shownAs(now, window_->planning()->optimiser()->defaultObjectives()), qPrintable(describe(now)));
    QVERIFY2(!status_->text().contains("kept"), qPrintable(status_->text()));
  }

  void editedObjectivesSurviveAPrescriptionChange() {
    const int max = rowOf(panel_->rows(), "OuterTarget", optimise::TermType::MaxDose);
    QVERIFY(max >= 0);
    auto* weight = qobject_cast<QDoubleSpinBox*>(table_->cellWidget(max, column(table_, "Weight")));
    QVERIFY(weight);
    weight->setValue(7.5);
    const std::vector<ObjectiveRow> edited = panel_->rows();
    QVERIFY(!shownAs(edited, window_->planning()->optimiser()->defaultObjectives()));

    setPrescription(45.0);
    QVERIFY2(panel_->rows() == edited, qPrintable(describe(panel_->rows())));
    QVERIFY2(status_->text().contains("Prescription now 45 Gy") && status_->text().contains("kept"),
             qPrintable(status_->text()));
    // A second change keeps them too, and the label names the newest dose.
    setPrescription(50.0);
    QVERIFY2(panel_->rows() == edited, qPrintable(describe(panel_->rows())));
    QVERIFY2(status_->text().contains("Prescription now 50 Gy"), qPrintable(status_->text()));
  }

  void defaultsButtonGivesTheNewPrescriptionsDefaults() {
    QTest::mouseClick(reset_, Qt::LeftButton);
    const std::vector<ObjectiveRow> rows = panel_->rows();
    QVERIFY2(shownAs(rows, window_->planning()->optimiser()->defaultObjectives()), qPrintable(describe(rows)));
    const int uniform = rowOf(rows, "OuterTarget", optimise::TermType::Uniform);
    const int max = rowOf(rows, "OuterTarget", optimise::TermType::MaxDose);
    QVERIFY(uniform >= 0 && max >= 0);
    QCOMPARE(rows[std::size_t(uniform)].levelGy, 50.0);
    QCOMPARE(rows[std::size_t(max)].weight, 20.0);  // the edit is gone
    QVERIFY2(!status_->text().contains("kept"), qPrintable(status_->text()));

    // Defaults again: they follow the next change.
    setPrescription(30.0);
    QCOMPARE(panel_->rows()[std::size_t(uniform)].levelGy, 30.0);
  }

  void aNewPatientResetsEditedObjectives() {
    const int min = rowOf(panel_->rows(), "OuterTarget", optimise::TermType::MinDose);
    QVERIFY(min >= 0);
    auto* level = qobject_cast<QDoubleSpinBox*>(table_->cellWidget(min, column(table_, "Dose [Gy]")));
    QVERIFY(level);
    level->setValue(12.5);
    setPrescription(20.0);
    QCOMPARE(panel_->rows()[std::size_t(min)].levelGy, 12.5);

    QVERIFY(test::openBoxPhantom(*window_, kImportTimeoutMs));
    QVERIFY2(shownAs(panel_->rows(), window_->planning()->optimiser()->defaultObjectives()),
             qPrintable(describe(panel_->rows())));
    QCOMPARE(panel_->rows()[std::size_t(min)].levelGy, 19.4);  // 0.97 x 20 Gy, the kept prescription
    QVERIFY2(!status_->text().contains("kept"), qPrintable(status_->text()));
  }

  void cleanupTestCase() { window_.reset(); }

private:
  /// True when the table holds the rows of `before` with every level times `scale` (both
  /// rounded to the table's 3 decimals) and the same weights; says which row differs otherwise.
  bool followed(const std::vector<ObjectiveRow>& before, double scale) {
    const std::vector<ObjectiveRow> now = panel_->rows();
    bool same = now.size() == before.size();
    for (std::size_t i = 0; same && i < now.size(); ++i)
      same = now[i].structure == before[i].structure && now[i].kind == before[i].kind &&
             now[i].weight == before[i].weight &&
             std::abs(now[i].levelGy - scale * before[i].levelGy) <= 0.0005 * (1 + scale);
    if (!same) qWarning("not scaled by %g: %s", scale, qPrintable(describe(now)));
    return same;
  }

  /// Types `gy` into the Dose panel's prescription box, as the user does.
  void setPrescription(double gy) {
    rx_->setValue(gy);
    QCOMPARE(window_->planning()->plan()->prescriptionGy(), gy);
  }

  std::unique_ptr<MainWindow> window_;
  OptimisePanel* panel_ = nullptr;
  QTableWidget* table_ = nullptr;
  QDoubleSpinBox* rx_ = nullptr;
  QLabel* status_ = nullptr;
  QPushButton* reset_ = nullptr;
};

QTEST_MAIN(ObjectivesPrescriptionTest)
#include "test_objectives_prescription.moc"
