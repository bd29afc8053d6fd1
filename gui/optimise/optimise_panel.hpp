#pragma once
/// The "Optimise" dock (issue 5, item 5): the objectives table (one or more rows per structure:
/// type target / organ at risk, objective kind, dose level [Gy], weight; defaults from the
/// structure kinds and the prescription), the optimiser settings (matrix cut-off, iterations),
/// Optimise / Stop, and a live plot of the objective value per iteration. The work is done by
/// OptimiseController (a JobRunner job). "Robust" (issue 16, item 3): none, expected value or
/// composite worst case over the Robustness panel's scenarios (RobustnessModel's settings).
/// A prescription change recomputes the defaults only while the table still shows them; rows the
/// user edited (or a case loaded) stay, and the status label says so. A new patient resets.
#include <functional>
#include <vector>

#include <QWidget>

#include "gui/optimise/optimise_controller.hpp"

class QChartView;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineSeries;
class QLogValueAxis;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QValueAxis;

namespace penumbra::gui {

class PlanModel;
class RobustnessModel;
class ViewState;

class OptimisePanel : public QWidget {
  Q_OBJECT
public:
  OptimisePanel(OptimiseController* controller, PlanModel* plan, ViewState* state,
                std::function<DoseRunOptions()> doseOptions, QWidget* parent = nullptr);

  /// The table's rows as the optimiser gets them.
  std::vector<ObjectiveRow> rows() const;
  void setRows(const std::vector<ObjectiveRow>& rows);
  OptimiseSettings settings() const;
  /// Shows the settings the panel has controls for (matrix cut-off, iterations, the robust mode
  /// or none; a case's). The scenarios stay the RobustnessModel's.
  void setSettings(const OptimiseSettings& settings);
  QLineSeries* objectiveSeries() const { return series_; }
  /// The scenario settings of the robust option (null: robust optimisation is not offered).
  void setRobustnessModel(RobustnessModel* model);
  OptimiseController* controller() const { return controller_; }

public slots:
  /// Starts the optimisation job with the table and settings (null when it cannot start).
  void optimise();
  void stop();
  /// Replaces the table with the defaults for the current structures and prescription.
  void resetDefaults();

private:
  void onPrescriptionChanged(double gy);
  void addRow(const ObjectiveRow& row);
  void onIteration(int iteration, double objective);
  void updateButtons();
  void updateRobustHint();

  OptimiseController* controller_;
  PlanModel* plan_;
  std::function<DoseRunOptions()> doseOptions_;
  QTableWidget* table_;
  QDoubleSpinBox* cutoff_;
  QSpinBox* iterations_;
  QComboBox* robust_;
  QLabel* robustHint_;
  RobustnessModel* robustness_ = nullptr;
  QPushButton* optimiseButton_;
  QPushButton* stopButton_;
  QLabel* status_;
  QChartView* chartView_;
  QLineSeries* series_;
  QValueAxis* xAxis_;
  QLogValueAxis* yAxis_;
  double yMin_ = 0, yMax_ = 0;
  /// The rows resetDefaults() last put in the table, read back from its widgets (the spin
  /// boxes round), and the prescription [Gy] they were made for: a table equal to them holds
  /// nothing of the user's, so a prescription change may replace it.
  std::vector<ObjectiveRow> shownDefaults_;
  double defaultsRxGy_ = 0;
  bool keptNoteShown_ = false;  ///< the status label says the objectives were kept
};

}  // namespace penumbra::gui
