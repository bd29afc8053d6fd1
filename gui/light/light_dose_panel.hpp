#pragma once
/// The light-dose panel (issue 6, item 5; dock "lightDoseDock", widget "lightDosePanel"): MCML
/// light transport in layered tissue from the GUI. Inputs: the layer table (n, mua, mus, g,
/// thickness; add/remove; the five-layer skin model at 633 nm as default), the ambient
/// refractive indices, packets, the grid (dr, dz, nr, nz, na), the CUDA tally method and the
/// backend. Run / Cancel go through the JobRunner (progress here and in the Jobs dock). Results:
/// the fluence map over r and z in a log colour scale with isofluence lines at editable levels
/// (FluenceMapView), Rd(r) and A(z) on log axes, and Rsp, Rd, A (per layer too), Tt with the
/// engine's standard errors. Open .mci (choice of run) and Save .mco (the last result).
#include <vector>

#include <QWidget>

#include "mcml/mcml_files.hpp"

class QChartView;
class QComboBox;
class QDockWidget;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QLineSeries;
class QLogValueAxis;
class QMainWindow;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QTableWidget;
class QValueAxis;

namespace penumbra::gui {

class FluenceMapView;
class Job;
class JobRunner;
class LightDoseController;

class LightDosePanel : public QWidget {
  Q_OBJECT
 public:
  /// Rows of the summary table ("lightSummaryTable"); the value column holds the exact number
  /// in Qt::UserRole, the standard-error column likewise (where the engine gives one).
  enum SummaryRow { kRsp, kRd, kA, kTt, kSum, kRoulette, kLayerRows };

  LightDosePanel(LightDoseController* controller, QWidget* parent = nullptr);

  LightDoseController* controller() const { return controller_; }
  FluenceMapView* fluenceMap() const { return map_; }
  QLineSeries* rdSeries() const { return rdSeries_; }
  QLineSeries* azSeries() const { return azSeries_; }
  QTableWidget* summaryTable() const { return summary_; }

  /// The run described by the controls; empty `error` when it can start, else why not.
  io::MciRun currentRun(QString* error) const;
  /// Fills the controls from a run (layers, indices, packets, grid).
  void setRun(const io::MciRun& run);

 public slots:
  /// Reads a .mci file and shows its first run (the others in "mciRunCombo"). On a malformed
  /// file: an error message naming the line; the controls keep their values. False on error.
  bool openMci(const QString& path);
  /// Loads run `index` (0-based) of the opened .mci into the controls.
  void selectMciRun(int index);
  /// Saves the last result as .mco (atomically). False (message shown) on failure.
  bool saveMco(const QString& path);
  /// Starts the simulation with the controls' values; null (reason in the status) if refused.
  penumbra::gui::Job* run();
  void cancel();
  /// Parses "1000, 100, 10, 1, 0.01, 1e-5" [cm^-2]; false (levels kept) on a bad entry.
  bool setContourLevels(const QString& text);
  void resetToSkinModel();

 private:
  QWidget* buildInputs();
  QWidget* buildLayerBox();
  QWidget* buildSimulationBox();
  QWidget* buildResults();
  void addLayerRow(const mcml::Layer& layer);
  void showResult();
  void showSummary();
  void updateContourInfo();
  void updateButtons();
  void updateGridInfo();
  void updateBackendNote();
  void setStatus(const QString& text, bool error = false);
  void showError(const QString& title, const QString& text);

  LightDoseController* controller_;
  std::vector<io::MciRun> mciRuns_;
  QString mciPath_;
  // Inputs
  QComboBox* runCombo_ = nullptr;
  QTableWidget* layers_ = nullptr;
  QDoubleSpinBox* nAbove_ = nullptr;
  QDoubleSpinBox* nBelow_ = nullptr;
  QLineEdit* packets_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QDoubleSpinBox* dr_ = nullptr;
  QDoubleSpinBox* dz_ = nullptr;
  QSpinBox* nr_ = nullptr;
  QSpinBox* nz_ = nullptr;
  QSpinBox* na_ = nullptr;
  QLabel* gridInfo_ = nullptr;
  QComboBox* tally_ = nullptr;
  QComboBox* backend_ = nullptr;
  QLabel* backendNote_ = nullptr;
  QPushButton* runButton_ = nullptr;
  QPushButton* cancelButton_ = nullptr;
  QPushButton* saveButton_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  // Results
  QTableWidget* summary_ = nullptr;
  QLabel* runInfo_ = nullptr;
  FluenceMapView* map_ = nullptr;
  QLineEdit* levels_ = nullptr;
  QLabel* contourInfo_ = nullptr;
  QLabel* readout_ = nullptr;
  QLineSeries* rdSeries_ = nullptr;
  QLineSeries* azSeries_ = nullptr;
  QValueAxis* rdX_ = nullptr;
  QLogValueAxis* rdY_ = nullptr;
  QValueAxis* azX_ = nullptr;
  QLogValueAxis* azY_ = nullptr;
};

/// The "Light dose (MCML)" dock (hidden, floating) with its panel and controller, on `jobs`.
QDockWidget* createLightDoseDock(QMainWindow* window, JobRunner* jobs);
/// Shows and raises the dock; the first time as a floating window sized for map and plots.
void showLightDoseDock(QDockWidget* dock);

}  // namespace penumbra::gui
