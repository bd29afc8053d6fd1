#pragma once
/// The Compare panel (dock "compareDock", widget "comparePanel"; issue 13, item 3): two dose
/// sets of the open patient, A (reference: the result lives on its grid) and B (evaluated),
/// among every dose set of the DoseSetStore (computed, imported RT Doses, optimisation
/// results); the gamma criteria (DD %, DTA mm, global or local, normalisation to A's maximum,
/// the prescription or a value, cut-off %, cap) and the backend; "Compute gamma" runs the
/// comparison as a job (CompareController) with progress and Cancel. The result: the pass rate
/// in large type ("Gamma 3 %/3 mm global: 97.8 % pass (123 456 points)"), gamma mean / p95 /
/// max and the difference statistics, the gamma histogram, the per-structure pass rates and
/// the DVH points of A and B (compare_tables.hpp). The view controls (compare_view_controls.hpp)
/// switch the slice views between the dose, the gamma map and A - B, and the central area to
/// the compare views (A | B | map, swipe or checkerboard). Engine errors (doses that do not
/// overlap, NaN voxels, bad criteria) appear in "compareMessageLabel".
#include <array>
#include <functional>
#include <utility>
#include <vector>

#include <QImage>
#include <QWidget>

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableWidget;

namespace penumbra::gui {

class CompareController;
struct CompareSettings;
class DvhStore;
class ElidedLabel;
class GammaHistogram;
class Job;
class PlanController;
class PlanModel;

class ComparePanel : public QWidget {
  Q_OBJECT
public:
  ComparePanel(CompareController* controller, DvhStore* dvhs, PlanModel* plan, PlanController* planner,
               QWidget* parent = nullptr);

  /// The settings the form describes now.
  CompareSettings settings() const;
  /// Chooses A and B by dose-set id (false when one is not in the store).
  bool setDoseSets(int referenceId, int evaluatedId);

  QLabel* passRateLabel() const { return passRate_; }
  QLabel* messageLabel() const { return message_; }
  GammaHistogram* histogram() const { return histogram_; }
  QTableWidget* structureTable() const { return structures_; }
  QTableWidget* dvhTable() const { return dvhTable_; }

  /// Pictures of the slice views for the report (caption, image); set by the window that owns
  /// the views (PlanningWorkspace).
  using ViewGrabber = std::function<std::vector<std::pair<QString, QImage>>()>;
  void setViewGrabber(ViewGrabber grabber) { grabViews_ = std::move(grabber); }
  /// Writes the PDF report of the current comparison (compare_report.hpp); false with
  /// `error` set when there is none or the file cannot be written.
  bool writeReport(const QString& path, QString* error = nullptr);

public slots:
  /// "Compute gamma": starts the job with settings().
  void compute();
  /// "Compare backends": the current dose set's plan on the other backend (or DDA variant),
  /// then its comparison with the current set (CompareController::compareOtherBackend).
  void compareBackends();
  /// "Export report (PDF)...": asks for a file name, writes, says where (or why not).
  void chooseAndWriteReport();

signals:
  /// The result on screen changed (new comparison, DVHs arrived, or cleared).
  void refreshed();

private:
  QWidget* buildForm();
  void rebuildDoseSetLists();
  void updateNormalisationControls();
  void onStarted(Job* job);
  void onFinished(bool ok, const QString& message);
  void showResult();
  void showDvhTable();
  void setMessage(const QString& text, bool error);

  CompareController* controller_;
  DvhStore* dvhs_;
  PlanModel* plan_;
  PlanController* planner_;
  QComboBox* reference_ = nullptr;
  QComboBox* evaluated_ = nullptr;
  QDoubleSpinBox* dosePercent_ = nullptr;
  QDoubleSpinBox* distance_ = nullptr;
  QComboBox* globalLocal_ = nullptr;
  QComboBox* normalisation_ = nullptr;
  QDoubleSpinBox* normalisationGy_ = nullptr;
  QDoubleSpinBox* cutoff_ = nullptr;
  QDoubleSpinBox* cap_ = nullptr;
  QComboBox* backend_ = nullptr;
  QPushButton* compute_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QPushButton* backends_ = nullptr;
  QPushButton* report_ = nullptr;
  ViewGrabber grabViews_;
  QProgressBar* progress_ = nullptr;
  QLabel* message_ = nullptr;
  QLabel* passRate_ = nullptr;
  std::array<ElidedLabel*, 2> names_{};  ///< "A: name", "B: name"
  QLabel* stats_ = nullptr;
  GammaHistogram* histogram_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QTableWidget* structures_ = nullptr;
  QTableWidget* dvhTable_ = nullptr;
};

}  // namespace penumbra::gui
