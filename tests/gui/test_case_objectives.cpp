// Optimisation objectives saved with the case (issue 14, item 4), in the real main window on
// BOXPHANTOM: an objective edited in the Optimise panel (a level and a weight changed, a term
// added with another objective kind) and the optimiser options are written to the case file by
// structure name, and a fresh window that opens the case shows them in its panel, where a
// prescription change keeps them. A case that
// names a structure the patient lacks opens with a warning naming it and the other objectives;
// a case without objectives opens with the defaults; a negative weight is refused with a
// message naming the field and the structure. Waits on signals, never on fixed sleeps.
#include <memory>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
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

/// `rows` with each structure's rows together, structures in order of first appearance: the
/// case keeps one entry per structure, so a term added at the end of the table comes back
/// after its structure's other terms.
std::vector<ObjectiveRow> grouped(const std::vector<ObjectiveRow>& rows) {
  std::vector<ObjectiveRow> out;
  for (const auto& first : rows) {
    bool seen = false;
    for (const auto& o : out) seen |= o.structure == first.structure;
    if (seen) continue;
    for (const auto& r : rows)
      if (r.structure == first.structure) out.push_back(r);
  }
  return out;
}

QJsonObject readJson(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

/// The index of `structure`'s entry in a case's "optimisation.objectives", or -1.
int entryOf(const QJsonArray& objectives, const QString& structure) {
  for (int i = 0; i < objectives.size(); ++i)
    if (objectives[i]["structure"].toString() == structure) return i;
  return -1;
}

bool writeJson(const QString& path, const QJsonObject& o) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(QJsonDocument(o).toJson()) > 0;
}

}  // namespace

class CaseObjectivesTest : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    PENUMBRA_SKIP_WITHOUT_BOXPHANTOM();
    window_ = openWindow();
    QVERIFY(window_);
    QVERIFY(test::openBoxPhantom(*window_, kImportTimeoutMs));
    QVERIFY(dir_.isValid());
  }

  void objectiveSetInThePanelComesBackInAFreshWindow() {
    PlanningWorkspace* ws = window_->planning();
    auto* table = find<QTableWidget>(window_.get(), "objectivesTable");
    auto* add = find<QPushButton>(window_.get(), "addObjectiveButton");
    auto* iterations = find<QSpinBox>(window_.get(), "maxIterationsSpin");
    auto* cutoff = find<QDoubleSpinBox>(window_.get(), "cutoffSpin");
    QVERIFY(table && add && iterations && cutoff);
    const int levelCol = column(table, "Dose [Gy]"), weightCol = column(table, "Weight");
    const int kindCol = column(table, "Objective");
    QVERIFY(levelCol >= 0 && weightCol >= 0 && kindCol >= 0);

    // The target's max-dose term: another level and weight, typed into its spin boxes.
    const int max = rowOf(ws->optimisePanel()->rows(), "OuterTarget", optimise::TermType::MaxDose);
    QVERIFY(max >= 0);
    auto* level = qobject_cast<QDoubleSpinBox*>(table->cellWidget(max, levelCol));
    auto* weight = qobject_cast<QDoubleSpinBox*>(table->cellWidget(max, weightCol));
    QVERIFY(level && weight);
    level->setValue(2.345);
    weight->setValue(7.5);
    // A mean-dose term for BODY: Add term on its row, then the new row's kind and weight.
    const int body = rowOf(ws->optimisePanel()->rows(), "BODY", optimise::TermType::MaxDose);
    QVERIFY(body >= 0);
    table->setCurrentCell(body, 0);
    QTest::mouseClick(add, Qt::LeftButton);
    const int added = table->rowCount() - 1;
    QCOMPARE(table->item(added, 0)->text(), QString("BODY"));
    auto* kind = qobject_cast<QComboBox*>(table->cellWidget(added, kindCol));
    QVERIFY(kind);
    kind->setCurrentIndex(kind->findText("mean"));
    qobject_cast<QDoubleSpinBox*>(table->cellWidget(added, weightCol))->setValue(0.75);
    iterations->setValue(42);
    cutoff->setValue(0.0025);
    const std::vector<ObjectiveRow> set = ws->optimisePanel()->rows();
    QVERIFY(set != ws->optimiser()->defaultObjectives());

    path_ = dir_.filePath("box-objectives.json");
    ws->fileActions()->setShowDialogs(false);
    QVERIFY(ws->fileActions()->saveCase(path_));

    // In the file by structure name, with role, type, level and weight; no voxels.
    const QJsonObject doc = readJson(path_);
    const QJsonArray objectives = doc["optimisation"]["objectives"].toArray();
    QCOMPARE(objectives.size(), 2);
    const int target = entryOf(objectives, "OuterTarget"), bodyEntry = entryOf(objectives, "BODY");
    QVERIFY(target >= 0 && bodyEntry >= 0);
    QCOMPARE(objectives[target]["role"].toString(), QString("target"));
    const QJsonArray targetTerms = objectives[target]["terms"].toArray();
    QVERIFY(targetTerms.contains(QJsonObject{{"type", "max"}, {"level", 2.345}, {"weight", 7.5}}));
    QCOMPARE(objectives[bodyEntry]["role"].toString(), QString("organ-at-risk"));
    QCOMPARE(objectives[bodyEntry]["terms"].toArray().last()["type"].toString(), QString("mean"));
    QCOMPARE(doc["optimisation"]["options"]["maxIterations"].toInt(), 42);
    QCOMPARE(doc["optimisation"]["options"]["matrixCutoff"].toDouble(), 0.0025);
    QVERIFY(!readJsonText(path_).contains("voxel"));

    fresh_ = openWindow();
    QVERIFY(fresh_);
    QVERIFY(openCase(path_));
    const std::vector<ObjectiveRow> back = fresh_->planning()->optimisePanel()->rows();
    QVERIFY2(back == grouped(set), qPrintable(describe(back)));
    auto* freshTable = find<QTableWidget>(fresh_.get(), "objectivesTable");
    QVERIFY(freshTable);
    const int freshMax = rowOf(back, "OuterTarget", optimise::TermType::MaxDose);
    QCOMPARE(qobject_cast<QDoubleSpinBox*>(freshTable->cellWidget(freshMax, levelCol))->value(), 2.345);
    QCOMPARE(qobject_cast<QDoubleSpinBox*>(freshTable->cellWidget(freshMax, weightCol))->value(), 7.5);
    QVERIFY(rowOf(back, "BODY", optimise::TermType::MeanDose) >= 0);
    QCOMPARE(find<QSpinBox>(fresh_.get(), "maxIterationsSpin")->value(), 42);
    QCOMPARE(find<QDoubleSpinBox>(fresh_.get(), "cutoffSpin")->value(), 0.0025);
  }

  void caseObjectivesSurviveAPrescriptionChange() {
    QVERIFY(fresh_);
    const std::vector<ObjectiveRow> loaded = fresh_->planning()->optimisePanel()->rows();
    auto* rx = find<QDoubleSpinBox>(fresh_.get(), "prescriptionSpin");
    auto* status = find<QLabel>(fresh_.get(), "optimiseStatusLabel");
    QVERIFY(rx && status);
    const double before = fresh_->planning()->plan()->prescriptionGy();
    rx->setValue(before + 10);
    QVERIFY2(fresh_->planning()->optimisePanel()->rows() == loaded,
             qPrintable(describe(fresh_->planning()->optimisePanel()->rows())));
    QVERIFY2(status->text().contains("kept"), qPrintable(status->text()));
    rx->setValue(before);  // the next cases carry no prescription: they keep the window's
    QCOMPARE(fresh_->planning()->plan()->prescriptionGy(), before);
  }

  void unknownStructureIsAWarningAndTheRestLoads() {
    QVERIFY(fresh_);
    QJsonObject doc = readJson(path_);
    QJsonObject optimisation = doc["optimisation"].toObject();
    QJsonArray objectives = optimisation["objectives"].toArray();
    const int entry = entryOf(objectives, "BODY");
    QVERIFY(entry >= 0);
    QJsonObject body = objectives[entry].toObject();
    body["structure"] = "NoSuchOrgan";
    objectives[entry] = body;
    optimisation["objectives"] = objectives;
    doc["optimisation"] = optimisation;
    const QString path = dir_.filePath("unknown-structure.json");
    QVERIFY(writeJson(path, doc));
    QSignalSpy messages(fresh_->planning()->fileActions(), &PlanFileActions::message);
    QVERIFY(openCase(path));
    bool warned = false;
    for (const auto& m : messages)
      warned |= m.first().toString().contains(
          "warning: objective of structure 'NoSuchOrgan' skipped: the structure set has no such structure");
    QVERIFY(warned);
    const std::vector<ObjectiveRow> rows = fresh_->planning()->optimisePanel()->rows();
    QCOMPARE(int(rows.size()), 3);  // OuterTarget's uniform, min and (edited) max terms
    for (const auto& r : rows) QCOMPARE(r.structure, QString("OuterTarget"));
    QCOMPARE(rows[std::size_t(rowOf(rows, "OuterTarget", optimise::TermType::MaxDose))].weight, 7.5);
  }

  void caseWithoutObjectivesOpensWithTheDefaults() {
    QVERIFY(fresh_);
    QJsonObject doc = readJson(path_);
    doc.remove("optimisation");
    const QString path = dir_.filePath("old.json");
    QVERIFY(writeJson(path, doc));
    QVERIFY(openCase(path));
    PlanningWorkspace* ws = fresh_->planning();
    QVERIFY(ws->optimisePanel()->rows() == ws->optimiser()->defaultObjectives());
    QVERIFY(rowOf(ws->optimisePanel()->rows(), "OuterTarget", optimise::TermType::Uniform) >= 0);
  }

  void negativeWeightIsRefusedNamingFieldAndStructure() {
    QVERIFY(fresh_);
    QJsonObject doc = readJson(path_);
    QJsonObject optimisation = doc["optimisation"].toObject();
    QJsonArray objectives = optimisation["objectives"].toArray();
    const int entry = entryOf(objectives, "BODY");
    QVERIFY(entry >= 0);
    QJsonObject body = objectives[entry].toObject();
    QJsonArray terms = body["terms"].toArray();
    QJsonObject term = terms[0].toObject();
    term["weight"] = -1;
    terms[0] = term;
    body["terms"] = terms;
    objectives[entry] = body;
    optimisation["objectives"] = objectives;
    doc["optimisation"] = optimisation;
    const QString path = dir_.filePath("negative-weight.json");
    QVERIFY(writeJson(path, doc));
    QSignalSpy failed(fresh_->planning()->fileActions(), &PlanFileActions::failed);
    QVERIFY(!fresh_->planning()->fileActions()->openCase(path));
    QCOMPARE(failed.count(), 1);
    const QString text = failed.first().first().toString();
    const QString field = QString("optimisation.objectives[%1].terms[0].weight: -1 is negative").arg(entry);
    QVERIFY2(text.contains(field) &&
                 text.contains("(structure 'BODY')"),
             qPrintable(text));
  }

  void cleanupTestCase() {
    fresh_.reset();
    window_.reset();
  }

private:
  std::unique_ptr<MainWindow> openWindow() { return test::openQuietWindow(); }

  /// Opens `path` in the fresh window and waits until the case is applied.
  bool openCase(const QString& path) { return test::openCaseAndWait(*fresh_, path, kImportTimeoutMs); }

  static QString readJsonText(const QString& path) {
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
  }

  std::unique_ptr<MainWindow> window_, fresh_;
  QTemporaryDir dir_;
  QString path_;
};

QTEST_MAIN(CaseObjectivesTest)
#include "test_case_objectives.moc"
