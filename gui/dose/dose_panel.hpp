#pragma once
/// The dose display panel (dock "Dose"): which dose set is shown, the prescription (Gy; the
/// isodose levels are % of it), colour wash (colour map, opacity, lower threshold), isodose
/// levels (editable table: %, colour, 3D surface) with a colour legend, normalisation of a
/// computed plan to the prescription, and whether the dose display stops at the patient
/// outline ("Clip dose to BODY"; disabled, with the reason as tooltip, when the patient has no
/// external structure: dose_clip.hpp).
#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QSlider;
class QTableWidget;

namespace penumbra::gui {

class DoseDisplaySettings;
class DoseSetStore;
class PlanController;
class PlanModel;
class ViewState;

class DosePanel : public QWidget {
  Q_OBJECT
public:
  DosePanel(DoseSetStore* store, DoseDisplaySettings* settings, PlanController* controller,
            QWidget* parent = nullptr);

  /// The target used for normalisation (the plan's current beam's target, else the first
  /// target structure).
  QString normalisationTarget() const;

public slots:
  /// As the Normalise button: returns the factor applied (0: not normalised).
  double normalise();

private:
  QWidget* buildSetBox();
  QWidget* buildWashBox();
  QWidget* buildIsodoseBox();
  void refreshSets();
  void refreshIsodoseTable();
  void applyIsodoseTable();
  void refreshInfo();
  void refreshClip();

  DoseSetStore* store_;
  DoseDisplaySettings* settings_;
  PlanController* controller_;
  PlanModel* plan_;
  const ViewState* state_;
  QComboBox* sets_ = nullptr;
  QLabel* info_ = nullptr;
  QDoubleSpinBox* prescription_ = nullptr;
  QComboBox* normaliseMode_ = nullptr;
  QCheckBox* clip_ = nullptr;
  QComboBox* colorMap_ = nullptr;
  QSlider* opacity_ = nullptr;
  QDoubleSpinBox* threshold_ = nullptr;
  QCheckBox* showWash_ = nullptr;
  QCheckBox* showIsodoses_ = nullptr;
  QCheckBox* showSurfaces_ = nullptr;
  QTableWidget* isodoseTable_ = nullptr;
  QWidget* colorBar_ = nullptr;
  bool updating_ = false;
};

}  // namespace penumbra::gui
