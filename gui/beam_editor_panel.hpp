#pragma once
/// The beam and spot editor (dock "Plan"): the beam list (add, remove), the current beam's
/// gantry/couch angles and isocentre (default: centroid of the chosen target), spot generation
/// options and the Generate button (a job), the energy layers with delete, and the dose
/// calculation launcher (backend, dose grid, DDA variant, Compute button: a job).
#include <QWidget>

#include "plan_controller.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QPushButton;

namespace penumbra::gui {

class PlanModel;
class ViewState;

class BeamEditorPanel : public QWidget {
  Q_OBJECT
public:
  BeamEditorPanel(ViewState* state, PlanController* controller, QWidget* parent = nullptr);

  /// The target chosen in the panel ("" when none).
  QString targetName() const;
  proton::SpotGenerationOptions spotOptions() const;
  DoseRunOptions doseOptions() const;
  /// Shows options in the panel (a restored case); depth exponent and ray spacing are not
  /// edited here and keep their defaults.
  void setSpotOptions(const proton::SpotGenerationOptions& o);
  void setDoseOptions(const DoseRunOptions& o);

public slots:
  /// As the buttons do; return the job started (null when it could not start).
  int addBeam();
  penumbra::gui::Job* generateSpots();
  penumbra::gui::Job* computeDose();

private:
  QWidget* buildBeamBox();
  QWidget* buildSpotBox();
  QWidget* buildDoseBox();
  void onSceneChanged();
  void refreshBeamList();
  void refreshCurrentBeam();
  void refreshLayers();
  void applyGeometry();
  void setIsocentreToTarget();
  void refreshButtons();

  ViewState* state_;
  PlanController* controller_;
  PlanModel* plan_;
  QListWidget* beamList_ = nullptr;
  QComboBox* targetCombo_ = nullptr;
  QDoubleSpinBox* gantry_ = nullptr;
  QDoubleSpinBox* couch_ = nullptr;
  QDoubleSpinBox* iso_[3] = {nullptr, nullptr, nullptr};
  QDoubleSpinBox* spotSpacing_ = nullptr;
  QDoubleSpinBox* lateralMargin_ = nullptr;
  QDoubleSpinBox* layerSpacing_ = nullptr;
  QDoubleSpinBox* proximalMargin_ = nullptr;
  QDoubleSpinBox* distalMargin_ = nullptr;
  QComboBox* pattern_ = nullptr;
  QComboBox* weighting_ = nullptr;
  QListWidget* layerList_ = nullptr;
  QLabel* summary_ = nullptr;
  QComboBox* backend_ = nullptr;
  QDoubleSpinBox* doseGrid_ = nullptr;
  QComboBox* variant_ = nullptr;
  QPushButton* addBeam_ = nullptr;
  QPushButton* removeBeam_ = nullptr;
  QPushButton* generate_ = nullptr;
  QPushButton* removeLayer_ = nullptr;
  QPushButton* compute_ = nullptr;
  bool updating_ = false;  // refreshing widgets from the model: do not write back
};

}  // namespace penumbra::gui
