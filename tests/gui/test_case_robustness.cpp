// Robustness settings saved with the case, in the real main window on BOXPHANTOM: the scenario
// editor of the Robustness dock (range and setup errors, sphere of N directions, combine, dose
// grid) and the Optimise panel's robust mode are set through their widgets, written to the case
// file ("robustness" and optimisation.options.robustMode), and shown again by the widgets of a
// fresh window that opens the case. A case without them opens with the defaults, values the
// dock cannot show open with a warning naming both, and a bad value is refused with a message
// naming the field and the value while the window keeps the case it had. Waits on signals,
// never on fixed sleeps.
#include <memory>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "gui/model/robustness_model.hpp"
#include "gui/optimise/optimise_controller.hpp"
#include "gui/optimise/optimise_panel.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/shell/main_window.hpp"
#include "gui/shell/plan_file_actions.hpp"
#include "gui/shell/planning_workspace.hpp"
#include "gui_test_support.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::gui;
using penumbra::test::find;

namespace {

constexpr int kImportTimeoutMs = 120000;

QJsonObject readJson(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return QJsonDocument::fromJson(f.readAll()).object();
}

bool writeJson(const QString& path, const QJsonObject& o) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(QJsonDocument(o).toJson()) > 0;
}

/// The Robustness dock's and the Optimise panel's widgets of one window.
struct Widgets {
  QDoubleSpinBox* range = nullptr;
  QDoubleSpinBox* setup = nullptr;
  QComboBox* directions = nullptr;
  QSpinBox* sphere = nullptr;
  QCheckBox* combine = nullptr;
  QDoubleSpinBox* grid = nullptr;
  QComboBox* robustMode = nullptr;
  QCheckBox* bands = nullptr;

  explicit Widgets(QObject* window)
      : range(find<QDoubleSpinBox>(window, "robustnessRangeSpin")),
        setup(find<QDoubleSpinBox>(window, "robustnessSetupSpin")),
        directions(find<QComboBox>(window, "robustnessDirectionsCombo")),
        sphere(find<QSpinBox>(window, "robustnessSphereSpin")),
        combine(find<QCheckBox>(window, "robustnessCombineCheck")),
        grid(find<QDoubleSpinBox>(window, "robustnessGridSpin")),
        robustMode(find<QComboBox>(window, "robustModeCombo")),
        bands(find<QCheckBox>(window, "robustnessBandsCheck")) {}
  bool ok() const { return range && setup && directions && sphere && combine && grid && robustMode && bands; }
  /// The robust combo's mode: -1 for none, else int(optimise::RobustMode).
  int mode() const { return robustMode->currentData().toInt(); }
};

/// The values the test sets: every one away from its default.
constexpr double kRange = 2.5, kSetup = 4.5, kGrid = 3.0;
constexpr int kSphere = 12;
constexpr int kMode = int(optimise::RobustMode::ExpectedValue);

}  // namespace

class CaseRobustnessTest : public QObject {
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

  void settingsSetInTheDocksComeBackInAFreshWindow() {
    Widgets w(window_.get());
    QVERIFY(w.ok());
    // The defaults first, so that every value below is a change the case must carry.
    const robust::ScenarioOptions defaults;
    QCOMPARE(w.range->value(), defaults.rangePercent);
    QCOMPARE(w.setup->value(), defaults.setupMm);
    QCOMPARE(w.combine->isChecked(), defaults.combine);
    QCOMPARE(w.mode(), -1);
    QVERIFY(w.robustMode->isEnabled());

    w.range->setValue(kRange);
    w.setup->setValue(kSetup);
    w.directions->setCurrentIndex(w.directions->findText("sphere"));
    w.sphere->setValue(kSphere);
    w.combine->setChecked(false);
    w.grid->setValue(kGrid);
    w.robustMode->setCurrentIndex(w.robustMode->findData(kMode));
    QVERIFY(w.bands->isChecked());  // DVH bands on by default; off is the change to carry
    w.bands->setChecked(false);
    QVERIFY(!window_->planning()->robustness()->bandsVisible());
    // The widgets fed the model and the Optimise panel's settings.
    const RobustnessSettings& model = window_->planning()->robustness()->settings();
    QCOMPARE(model.scenarios.rangePercent, kRange);
    QCOMPARE(model.scenarios.sphereDirections, kSphere);
    QCOMPARE(model.scenarios.combine, false);
    QVERIFY(window_->planning()->optimisePanel()->settings().robust);

    path_ = dir_.filePath("box-robust.json");
    QVERIFY(window_->planning()->fileActions()->saveCase(path_));
    const QJsonObject doc = readJson(path_);
    const QJsonObject r = doc["robustness"].toObject();
    QCOMPARE(r["rangeError"].toDouble(), kRange);
    QCOMPARE(r["setupError"].toDouble(), kSetup);
    QCOMPARE(r["shiftPattern"].toString(), QString("sphere"));
    QCOMPARE(r["sphereDirections"].toInt(), kSphere);
    QCOMPARE(r["combine"], QJsonValue(false));
    QCOMPARE(r["doseGridSpacing"].toDouble(), kGrid);
    QCOMPARE(doc["optimisation"]["options"]["robustMode"].toString(), QString("expected-value"));
    QCOMPARE(doc["display"]["robustnessBandsVisible"], QJsonValue(false));

    fresh_ = openWindow();
    QVERIFY(fresh_);
    Widgets f(fresh_.get());
    QVERIFY(f.ok());
    QCOMPARE(f.range->value(), defaults.rangePercent);  // a fresh window starts at the defaults
    QVERIFY(f.bands->isChecked());
    QVERIFY(openCase(path_));
    expectSavedValues(f);
    QVERIFY(!f.bands->isChecked());
    QVERIFY(!fresh_->planning()->robustness()->bandsVisible());
  }

  void valuesTheDockCannotShowOpenWithAWarning() {
    QVERIFY(fresh_);
    // 30 % is a range error the scenario model takes but the dock's spin box (0-20 %) cannot
    // show: it opens clamped, and the user is told both numbers.
    QJsonObject doc = readJson(path_);
    QJsonObject r = doc["robustness"].toObject();
    r["rangeError"] = 30;
    doc["robustness"] = r;
    const QString path = dir_.filePath("wide-range.json");
    QVERIFY(writeJson(path, doc));
    QSignalSpy messages(fresh_->planning()->fileActions(), &PlanFileActions::message);
    QVERIFY(openCase(path));
    bool warned = false;
    for (const auto& m : messages) {
      const QString text = m.first().toString();
      warned |= text.contains("warning: robustness settings (range 30 %") && text.contains("shown as range 20 %");
    }
    QVERIFY(warned);
    QCOMPARE(Widgets(fresh_.get()).range->value(), 20.0);
    QCOMPARE(fresh_->planning()->robustness()->settings().scenarios.rangePercent, 20.0);
  }

  void caseWithoutTheSettingsOpensWithTheDefaults() {
    QVERIFY(fresh_);
    QVERIFY(openCase(path_));  // the saved, non-default values first
    Widgets f(fresh_.get());
    QCOMPARE(f.mode(), kMode);
    QJsonObject doc = readJson(path_);
    doc.remove("robustness");
    QJsonObject optimisation = doc["optimisation"].toObject();
    QJsonObject options = optimisation["options"].toObject();
    options.remove("robustMode");
    optimisation["options"] = options;
    doc["optimisation"] = optimisation;
    const QString path = dir_.filePath("old.json");
    QVERIFY(writeJson(path, doc));
    QVERIFY(openCase(path));
    const robust::ScenarioOptions defaults;
    QCOMPARE(f.range->value(), defaults.rangePercent);
    QCOMPARE(f.setup->value(), defaults.setupMm);
    QCOMPARE(f.directions->currentText(), f.directions->itemText(0));  // along the axes
    QCOMPARE(f.combine->isChecked(), defaults.combine);
    QCOMPARE(f.grid->value(), 0.0);
    QCOMPARE(f.mode(), -1);  // nominal optimisation
    const RobustnessSettings& model = fresh_->planning()->robustness()->settings();
    QCOMPARE(model.scenarios.sphereDirections, 0);
    QVERIFY(!fresh_->planning()->optimisePanel()->settings().robust);
  }

  void badValuesAreRefusedAndTheWindowKeepsItsCase() {
    QVERIFY(fresh_);
    QVERIFY(openCase(path_));
    struct Bad {
      const char* file;
      const char* section;
      const char* key;
      QJsonValue value;
      QString expected;
    };
    const Bad bad[] = {
        {"negative-range.json", "robustness", "rangeError", -1,
         "robustness.rangeError: -1 % is negative"},
        {"negative-setup.json", "robustness", "setupError", -3,
         "robustness.setupError: -3 mm is negative"},
        {"unknown-pattern.json", "robustness", "shiftPattern", "grid",
         "robustness.shiftPattern: \"grid\" is not one of \"axes\", \"sphere\""},
        {"combine-text.json", "robustness", "combine", "no",
         "robustness.combine: expected true or false, got \"no\""},
        {"unknown-mode.json", "options", "robustMode", "minimax",
         "optimisation.options.robustMode: \"minimax\" is not one of"},
    };
    for (const Bad& b : bad) {
      QJsonObject doc = readJson(path_);
      if (QString(b.section) == "robustness") {
        QJsonObject r = doc["robustness"].toObject();
        r[b.key] = b.value;
        doc["robustness"] = r;
      } else {
        QJsonObject optimisation = doc["optimisation"].toObject();
        QJsonObject options = optimisation["options"].toObject();
        options[b.key] = b.value;
        optimisation["options"] = options;
        doc["optimisation"] = optimisation;
      }
      const QString path = dir_.filePath(b.file);
      QVERIFY(writeJson(path, doc));
      QSignalSpy failed(fresh_->planning()->fileActions(), &PlanFileActions::failed);
      QVERIFY(!fresh_->planning()->fileActions()->openCase(path));
      QCOMPARE(failed.count(), 1);
      const QString text = failed.first().first().toString();
      QVERIFY2(text.contains(b.expected) && text.contains(b.file), qPrintable(text));
      Widgets f(fresh_.get());
      expectSavedValues(f);
      if (QTest::currentTestFailed()) return;
    }
  }

  void cleanupTestCase() {
    fresh_.reset();
    window_.reset();
  }

private:
  /// The values of settingsSetInTheDocksComeBackInAFreshWindow, in `w`'s widgets.
  static void expectSavedValues(const Widgets& w) {
    QCOMPARE(w.range->value(), kRange);
    QCOMPARE(w.setup->value(), kSetup);
    QCOMPARE(w.directions->currentText(), QString("sphere"));
    QCOMPARE(w.sphere->value(), kSphere);
    QVERIFY(w.sphere->isEnabled());
    QCOMPARE(w.combine->isChecked(), false);
    QCOMPARE(w.grid->value(), kGrid);
    QCOMPARE(w.mode(), kMode);
  }

  std::unique_ptr<MainWindow> openWindow() { return test::openQuietWindow(); }

  /// Opens `path` in the fresh window and waits until the case is applied.
  bool openCase(const QString& path) { return test::openCaseAndWait(*fresh_, path, kImportTimeoutMs); }

  std::unique_ptr<MainWindow> window_, fresh_;
  QTemporaryDir dir_;
  QString path_;
};

QTEST_MAIN(CaseRobustnessTest)
#include "test_case_robustness.moc"
