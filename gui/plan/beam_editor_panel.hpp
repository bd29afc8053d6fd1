#pragma once
/// The beam and spot editor (dock "Plan"): the beam list (add a proton or a photon beam,
/// remove), the current beam's gantry/couch angles and isocentre (default: centroid of the
/// chosen target); for a proton beam the spot generation options and the Generate button (a
/// job) and the energy layers with delete; for a photon beam the field (PhotonFieldBox:
/// collimator, SAD, jaws or conformal aperture, MU); and the dose calculation launcher
/// (backend, dose grid, DDA variant, the photon engine's cones and deposit strategy, Compute
/// button: one job per modality, and the live-dose toggle).
#include <QWidget>

#include "gui/plan/plan_controller.hpp"

class QAction;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QListWidget;
class QPushButton;
class QSpinBox;
class QToolButton;

namespace penumbra::gui {

class PhotonFieldBox;
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
  /// Shows the live-dose toggle (LiveDoseController::action()) next to Compute dose, checked
  /// while live dose is on.
  void setLiveDoseAction(QAction* action);

public slots:
  /// As the buttons do; return the beam index or the job started (-1 / null on failure).
  int addBeam();
  int addPhotonBeam();
  penumbra::gui::Job* generateSpots();
  penumbra::gui::Job* computeDose();

private:
  QWidget* buildBeamBox();
  QWidget* buildSpotBox();
  QWidget* buildDoseBox();
  QWidget* buildPhotonEngineRows();
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
  QComboBox* photonPolar_ = nullptr;
  QSpinBox* photonAzimuth_ = nullptr;
  QComboBox* photonDeposit_ = nullptr;
  QWidget* spotBox_ = nullptr;
  PhotonFieldBox* photonBox_ = nullptr;
  QPushButton* addBeam_ = nullptr;
  QPushButton* addPhotonBeam_ = nullptr;
  QPushButton* removeBeam_ = nullptr;
  QPushButton* generate_ = nullptr;
  QPushButton* removeLayer_ = nullptr;
  QPushButton* compute_ = nullptr;
  QToolButton* liveButton_ = nullptr;
  bool updating_ = false;  // refreshing widgets from the model: do not write back
};

}  // namespace penumbra::gui
