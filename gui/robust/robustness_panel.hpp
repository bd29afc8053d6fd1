#pragma once
/// The Robustness panel (dock "robustnessDock", widget "robustnessPanel"; issue 16, item 4):
///  - the scenario editor, with the defaults of the scenario model: range error [%], setup
///    error [mm], shift directions (along the axes +-L, +-P, +-S, or N directions on a sphere),
///    range and setup errors combined or separate, the evaluation's dose grid, and the list of
///    the scenarios that will run;
///  - Run / Cancel with a progress bar (RobustnessController: one job), the run's summary or
///    why there is none, and the live refresh's state ("robustnessLiveLabel");
///  - the robustness table (robustness_table.hpp) and its time and scenario count, on a second
///    tab (shown after each run) so that its rows fit the right column's height;
///  - "Add worst-case dose" and "Add spread" (dose sets the views, the DVH and the Compare
///    workspace can show) and the DVH bands' toggle (drawn by the DVH panel).
/// The settings go to the RobustnessModel, where the Optimise panel's robust option reads them.
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QTableWidget;

namespace penumbra::gui {

class Job;
class RobustnessController;
struct RobustnessSettings;

class RobustnessPanel : public QWidget {
  Q_OBJECT
 public:
  explicit RobustnessPanel(RobustnessController* controller, QWidget* parent = nullptr);

  RobustnessController* controller() const { return controller_; }
  QTableWidget* table() const { return table_; }
  QListWidget* scenarioList() const { return scenarios_; }
  QLabel* statusLabel() const { return status_; }
  /// The settings the editor describes now.
  RobustnessSettings settings() const;
  /// Shows `settings` in the editor (and hands them to the model).
  void setSettings(const RobustnessSettings& settings);

 public slots:
  /// "Run": starts the evaluation with the editor's settings.
  void run();

 private:
  QWidget* buildEditor();
  void onEdited();
  void refreshScenarioList();
  void onStarted(Job* job);
  void onFinished(bool ok, const QString& message);
  void showEvaluation();
  void updateButtons();
  void setStatus(const QString& text, bool error);

  RobustnessController* controller_;
  QDoubleSpinBox* range_ = nullptr;
  QDoubleSpinBox* setup_ = nullptr;
  QComboBox* directions_ = nullptr;
  QSpinBox* sphere_ = nullptr;
  QCheckBox* combine_ = nullptr;
  QDoubleSpinBox* grid_ = nullptr;
  QLabel* count_ = nullptr;
  QListWidget* scenarios_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QLabel* live_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QLabel* summary_ = nullptr;
  QTableWidget* table_ = nullptr;
  QPushButton* worst_ = nullptr;
  QPushButton* spread_ = nullptr;
  QCheckBox* bands_ = nullptr;
  bool updating_ = false;
};

}  // namespace penumbra::gui
