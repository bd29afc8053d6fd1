#pragma once
/// The beam editor's "Photon field" group, shown while the current beam is a photon beam:
/// collimator angle, SAD, the field shape and the MU.
///   Jaws:               X1/X2/Y1/Y2 at the isocentre plane [mm], with a symmetric square
///                       field-size shortcut;
///   Conformal aperture: a target structure and a margin; the controller projects the structure
///                       (photon::conformalAperture) and sets the jaws to the aperture's box,
///                       and does it again whenever the beam's angles or isocentre change.
/// Edits go straight into the PlanModel (through the PlanController for the aperture); the
/// widgets refresh from the model, so undoable states never live only in the widgets.
#include <array>

#include <QGroupBox>

class QComboBox;
class QDoubleSpinBox;

namespace penumbra::gui {

class PlanController;
class PlanModel;
class ViewState;

class PhotonFieldBox : public QGroupBox {
  Q_OBJECT
public:
  PhotonFieldBox(ViewState* state, PlanController* controller, QWidget* parent = nullptr);

  /// The field-size shortcut [mm] and collimator angle [deg]: what "Add photon beam" uses.
  double fieldSizeMm() const;
  double collimatorDeg() const;
  /// True when the field mode is "Conformal aperture".
  bool conformal() const;

private:
  void onSceneChanged();
  void refresh();
  /// Writes collimator, SAD, jaws and MU of the widgets into the current beam.
  void applySettings();
  void applyFieldSize();
  void applyShape();

  ViewState* state_;
  PlanController* controller_;
  PlanModel* plan_;
  QDoubleSpinBox* collimator_ = nullptr;
  QDoubleSpinBox* sad_ = nullptr;
  QComboBox* mode_ = nullptr;
  QDoubleSpinBox* fieldSize_ = nullptr;
  std::array<QDoubleSpinBox*, 4> jaws_{};
  QComboBox* apertureTarget_ = nullptr;
  QDoubleSpinBox* margin_ = nullptr;
  QDoubleSpinBox* mu_ = nullptr;
  bool updating_ = false;  // refreshing widgets from the model: do not write back
};

}  // namespace penumbra::gui
