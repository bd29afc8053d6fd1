#include "gui/plan/photon_field_box.hpp"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>

#include "gui/model/plan_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/plan/plan_controller.hpp"
#include "gui/widgets/form_controls.hpp"

namespace penumbra::gui {

namespace {
enum FieldMode { kJaws = 0, kConformal = 1 };
}  // namespace

PhotonFieldBox::PhotonFieldBox(ViewState* state, PlanController* controller, QWidget* parent)
    : QGroupBox(tr("Photon field"), parent), state_(state), controller_(controller), plan_(controller->plan()) {
  setObjectName("photonFieldBox");
  auto* form = new QFormLayout(this);
  collimator_ = makeDoubleSpinBox("collimatorSpin", -360, 360, 0, 5, 1, tr(" deg"));
  sad_ = makeDoubleSpinBox("sadSpin", 500, 2000, 1000, 10, 0, tr(" mm"));
  mode_ = new QComboBox;
  mode_->setObjectName("photonFieldModeCombo");
  mode_->addItem(tr("Jaws"), kJaws);
  mode_->addItem(tr("Conformal aperture"), kConformal);
  fieldSize_ = makeDoubleSpinBox("photonFieldSizeSpin", 5, 400, 100, 10, 0, tr(" mm"));
  fieldSize_->setToolTip(tr("Symmetric square field at the isocentre: sets X1 = Y1 = -size/2, X2 = Y2 = size/2"));
  auto* jawGrid = new QGridLayout;
  const char* names[4] = {"jawX1Spin", "jawX2Spin", "jawY1Spin", "jawY2Spin"};
  const char* labels[4] = {"X1", "X2", "Y1", "Y2"};
  const double defaults[4] = {-50, 50, -50, 50};
  for (int j = 0; j < 4; ++j) {
    jaws_[std::size_t(j)] = makeDoubleSpinBox(names[j], -200, 200, defaults[j], 5, 1, tr(" mm"));
    jawGrid->addWidget(new QLabel(labels[j]), j / 2, 2 * (j % 2));
    jawGrid->addWidget(jaws_[std::size_t(j)], j / 2, 2 * (j % 2) + 1);
  }
  apertureTarget_ = new QComboBox;
  apertureTarget_->setObjectName("apertureTargetCombo");
  margin_ = makeDoubleSpinBox("apertureMarginSpin", 0, 50, 5, 1, 1, tr(" mm"));
  mu_ = makeDoubleSpinBox("monitorUnitsSpin", 0.1, 10000, 100, 10, 1, tr(" MU"));
  form->addRow(tr("Collimator"), collimator_);
  form->addRow(tr("SAD"), sad_);
  form->addRow(tr("Field"), mode_);
  form->addRow(tr("Field size"), fieldSize_);
  form->addRow(tr("Jaws"), jawGrid);
  form->addRow(tr("Aperture target"), apertureTarget_);
  form->addRow(tr("Aperture margin"), margin_);
  form->addRow(tr("Weight"), mu_);

  for (QDoubleSpinBox* s : {collimator_, sad_, mu_, jaws_[0], jaws_[1], jaws_[2], jaws_[3]})
    connect(s, &QDoubleSpinBox::valueChanged, this, &PhotonFieldBox::applySettings);
  connect(fieldSize_, &QDoubleSpinBox::valueChanged, this, &PhotonFieldBox::applyFieldSize);
  connect(mode_, &QComboBox::currentIndexChanged, this, &PhotonFieldBox::applyShape);
  connect(apertureTarget_, &QComboBox::currentIndexChanged, this, &PhotonFieldBox::applyShape);
  connect(margin_, &QDoubleSpinBox::valueChanged, this, &PhotonFieldBox::applyShape);
  connect(state, &ViewState::sceneChanged, this, &PhotonFieldBox::onSceneChanged);
  connect(plan_, &PlanModel::planChanged, this, &PhotonFieldBox::refresh);
  connect(plan_, &PlanModel::currentBeamChanged, this, &PhotonFieldBox::refresh);
  onSceneChanged();
}

double PhotonFieldBox::fieldSizeMm() const { return fieldSize_->value(); }
double PhotonFieldBox::collimatorDeg() const { return collimator_->value(); }
bool PhotonFieldBox::conformal() const { return mode_->currentData().toInt() == kConformal; }

void PhotonFieldBox::onSceneChanged() {
  updating_ = true;
  apertureTarget_->clear();
  if (const auto& scene = state_->scene()) {
    int preferred = -1;
    for (const auto& s : scene->patient().structures.structures) {
      apertureTarget_->addItem(QString::fromStdString(s.name));
      if (preferred < 0 && s.kind == StructureKind::Target) preferred = apertureTarget_->count() - 1;
    }
    if (preferred >= 0) apertureTarget_->setCurrentIndex(preferred);
  }
  updating_ = false;
  refresh();
}

void PhotonFieldBox::refresh() {
  const int b = plan_->currentBeam();
  const bool photon = b >= 0 && plan_->beam(b).isPhoton();
  setVisible(photon);
  if (!photon) return;
  updating_ = true;
  const PhotonField& f = plan_->beam(b).photon;
  collimator_->setValue(f.beam.collimatorDeg);
  sad_->setValue(f.beam.sadMm);
  const std::array<double, 4> jaws{f.beam.x1Mm, f.beam.x2Mm, f.beam.y1Mm, f.beam.y2Mm};
  for (std::size_t j = 0; j < 4; ++j) jaws_[j]->setValue(jaws[j]);
  if (std::abs(jaws[0] + jaws[1]) < 1e-9 && std::abs(jaws[2] + jaws[3]) < 1e-9 &&
      std::abs((jaws[1] - jaws[0]) - (jaws[3] - jaws[2])) < 1e-9)
    fieldSize_->setValue(jaws[1] - jaws[0]);
  const bool conformal = !f.apertureTarget.isEmpty();
  mode_->setCurrentIndex(conformal ? kConformal : kJaws);
  if (conformal) {
    const int t = apertureTarget_->findText(f.apertureTarget);
    if (t >= 0) apertureTarget_->setCurrentIndex(t);
    margin_->setValue(f.apertureMarginMm);
  }
  mu_->setValue(f.beam.monitorUnits);
  // A conformal field's jaws follow its aperture.
  for (QDoubleSpinBox* s : jaws_) s->setEnabled(!conformal);
  fieldSize_->setEnabled(!conformal);
  apertureTarget_->setEnabled(conformal);
  margin_->setEnabled(conformal);
  updating_ = false;
}

void PhotonFieldBox::applySettings() {
  const int b = plan_->currentBeam();
  if (updating_ || b < 0 || !plan_->beam(b).isPhoton()) return;
  const std::array<double, 4> jaws{jaws_[0]->value(), jaws_[1]->value(), jaws_[2]->value(), jaws_[3]->value()};
  if (!(jaws[0] < jaws[1]) || !(jaws[2] < jaws[3])) {
    // Crossed jaws close the field: refuse, and show the beam's jaws again.
    emit controller_->message(tr("Jaws must open: X1 < X2 and Y1 < Y2 (mm at the isocentre plane)."));
    refresh();
    return;
  }
  plan_->setPhotonSettings(b, collimator_->value(), sad_->value(), jaws, mu_->value());
}

void PhotonFieldBox::applyFieldSize() {
  const int b = plan_->currentBeam();
  if (updating_ || b < 0 || !plan_->beam(b).isPhoton() || conformal()) return;
  const double half = 0.5 * fieldSize_->value();
  updating_ = true;
  jaws_[0]->setValue(-half), jaws_[1]->setValue(half), jaws_[2]->setValue(-half), jaws_[3]->setValue(half);
  updating_ = false;
  applySettings();
}

void PhotonFieldBox::applyShape() {
  const int b = plan_->currentBeam();
  if (updating_ || b < 0 || !plan_->beam(b).isPhoton()) return;
  if (!conformal()) {
    controller_->setOpenField(b);
    return;
  }
  if (!controller_->setConformalAperture(b, apertureTarget_->currentText(), margin_->value())) refresh();
}

}  // namespace penumbra::gui
