#include "gui/plan/beam_editor_panel.hpp"

#include <algorithm>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include "gui/jobs/job_runner.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/view_state.hpp"
#include "gui/overlays/beam_display.hpp"
#include "gui/plan/photon_field_box.hpp"
#include "gui/views/patient_tree.hpp"  // colorSwatch
#include "gui/widgets/form_controls.hpp"

namespace penumbra::gui {

BeamEditorPanel::BeamEditorPanel(ViewState* state, PlanController* controller, QWidget* parent)
    : QWidget(parent), state_(state), controller_(controller), plan_(controller->plan()) {
  setObjectName("beamEditorPanel");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(buildBeamBox());
  spotBox_ = buildSpotBox();
  layout->addWidget(spotBox_);
  photonBox_ = new PhotonFieldBox(state, controller);
  layout->addWidget(photonBox_);
  layout->addWidget(buildDoseBox());
  layout->addStretch(1);

  connect(state, &ViewState::sceneChanged, this, &BeamEditorPanel::onSceneChanged);
  connect(plan_, &PlanModel::planChanged, this, [this] {
    refreshBeamList();
    refreshCurrentBeam();
  });
  connect(plan_, &PlanModel::currentBeamChanged, this, [this] {
    refreshBeamList();
    refreshCurrentBeam();
  });
  connect(controller->jobs(), &JobRunner::jobSubmitted, this, &BeamEditorPanel::refreshButtons);
  connect(controller->jobs(), &JobRunner::jobFinished, this, &BeamEditorPanel::refreshButtons);
  onSceneChanged();
}

QWidget* BeamEditorPanel::buildBeamBox() {
  auto* box = new QGroupBox(tr("Beams"));
  auto* v = new QVBoxLayout(box);
  beamList_ = new QListWidget;
  beamList_->setObjectName("beamList");
  beamList_->setMaximumHeight(90);
  v->addWidget(beamList_);
  auto* row = new QHBoxLayout;
  addBeam_ = makeButton(tr("Add beam"), "addBeamButton");
  addBeam_->setToolTip(tr("Add a proton beam (pencil-beam scanning) on the target"));
  addPhotonBeam_ = makeButton(tr("Add photon beam"), "addPhotonBeamButton");
  addPhotonBeam_->setToolTip(tr("Add a 6 MV photon beam on the target (jaws or conformal aperture)"));
  removeBeam_ = makeButton(tr("Remove"), "removeBeamButton");
  auto* toTarget = makeButton(tr("Iso to target"), "isoToTargetButton");
  toTarget->setToolTip(tr("Isocentre at the centroid of the target"));
  row->addWidget(addBeam_);
  row->addWidget(addPhotonBeam_);
  v->addLayout(row);
  auto* row2 = new QHBoxLayout;
  row2->addWidget(removeBeam_);
  row2->addWidget(toTarget);
  v->addLayout(row2);
  auto* form = new QFormLayout;
  targetCombo_ = new QComboBox;
  targetCombo_->setObjectName("targetCombo");
  form->addRow(tr("Target"), targetCombo_);
  gantry_ = makeDoubleSpinBox("gantrySpin", -360, 360, 90, 5, 1, tr(" deg"));
  couch_ = makeDoubleSpinBox("couchSpin", -90, 90, 0, 5, 1, tr(" deg"));
  form->addRow(tr("Gantry"), gantry_);
  form->addRow(tr("Couch"), couch_);
  auto* isoRow = new QHBoxLayout;
  const char* isoNames[3] = {"isoXSpin", "isoYSpin", "isoZSpin"};
  for (int a = 0; a < 3; ++a) {
    iso_[a] = makeDoubleSpinBox(isoNames[a], -5000, 5000, 0, 1, 1, {});
    isoRow->addWidget(iso_[a]);
  }
  form->addRow(tr("Isocentre"), isoRow);
  form->addRow(new QLabel(tr("(x, y, z in patient LPS mm)")));
  v->addLayout(form);

  connect(addBeam_, &QPushButton::clicked, this, &BeamEditorPanel::addBeam);
  connect(addPhotonBeam_, &QPushButton::clicked, this, &BeamEditorPanel::addPhotonBeam);
  connect(removeBeam_, &QPushButton::clicked, this, [this] { plan_->removeBeam(plan_->currentBeam()); });
  connect(beamList_, &QListWidget::currentRowChanged, this, [this](int row) {
    if (!updating_) plan_->setCurrentBeam(row);
  });
  for (QDoubleSpinBox* s : {gantry_, couch_, iso_[0], iso_[1], iso_[2]})
    connect(s, &QDoubleSpinBox::valueChanged, this, &BeamEditorPanel::applyGeometry);
  connect(toTarget, &QPushButton::clicked, this, &BeamEditorPanel::setIsocentreToTarget);
  return box;
}

QWidget* BeamEditorPanel::buildSpotBox() {
  auto* box = new QGroupBox(tr("Spots"));
  auto* v = new QVBoxLayout(box);
  auto* form = new QFormLayout;
  const proton::SpotGenerationOptions d;
  spotSpacing_ = makeDoubleSpinBox("spotSpacingSpin", 1, 30, d.spotSpacingMm, 0.5, 1, tr(" mm"));
  lateralMargin_ = makeDoubleSpinBox("lateralMarginSpin", 0, 30, d.lateralMarginMm, 0.5, 1, tr(" mm"));
  layerSpacing_ = makeDoubleSpinBox("layerSpacingSpin", 0, 20, d.layerSpacingMm, 0.5, 1, tr(" mm"));
  layerSpacing_->setSpecialValueText(tr("auto"));
  proximalMargin_ = makeDoubleSpinBox("proximalMarginSpin", 0, 30, d.proximalMarginMm, 0.5, 1, tr(" mm"));
  distalMargin_ = makeDoubleSpinBox("distalMarginSpin", 0, 30, d.distalMarginMm, 0.5, 1, tr(" mm"));
  pattern_ = new QComboBox;
  pattern_->setObjectName("spotPatternCombo");
  pattern_->addItem(tr("Hexagonal"), int(proton::SpotGridPattern::Hexagonal));
  pattern_->addItem(tr("Square"), int(proton::SpotGridPattern::Square));
  weighting_ = new QComboBox;
  weighting_->setObjectName("spotWeightingCombo");
  weighting_->addItem(tr("Uniform"), int(proton::SpotWeighting::Uniform));
  weighting_->addItem(tr("Depth-weighted"), int(proton::SpotWeighting::DepthWeighted));
  form->addRow(tr("Lateral spacing"), spotSpacing_);
  form->addRow(tr("Lateral margin"), lateralMargin_);
  form->addRow(tr("Layer spacing (WE)"), layerSpacing_);
  form->addRow(tr("Proximal / distal"), [&] {
    auto* w = new QWidget;
    auto* h = new QHBoxLayout(w);
    h->setContentsMargins(0, 0, 0, 0);
    h->addWidget(proximalMargin_);
    h->addWidget(distalMargin_);
    return w;
  }());
  form->addRow(tr("Grid"), pattern_);
  form->addRow(tr("Weights"), weighting_);
  v->addLayout(form);
  generate_ = makeButton(tr("Generate spots"), "generateSpotsButton");
  v->addWidget(generate_);
  layerList_ = new QListWidget;
  layerList_->setObjectName("layerList");
  layerList_->setMaximumHeight(110);
  v->addWidget(layerList_);
  removeLayer_ = makeButton(tr("Delete layer"), "removeLayerButton");
  v->addWidget(removeLayer_);
  summary_ = new QLabel;
  summary_->setObjectName("beamSummaryLabel");
  summary_->setWordWrap(true);
  v->addWidget(summary_);
  connect(generate_, &QPushButton::clicked, this, &BeamEditorPanel::generateSpots);
  connect(removeLayer_, &QPushButton::clicked, this, [this] {
    plan_->removeLayer(plan_->currentBeam(), layerList_->currentRow());
  });
  return box;
}

QWidget* BeamEditorPanel::buildDoseBox() {
  auto* box = new QGroupBox(tr("Dose calculation"));
  auto* form = new QFormLayout(box);
  backend_ = new QComboBox;
  backend_->setObjectName("backendCombo");
  backend_->addItem(tr("Auto (GPU if present)"), int(Backend::Auto));
  backend_->addItem(tr("CPU"), int(Backend::Cpu));
  backend_->addItem(tr("CUDA GPU"), int(Backend::Cuda));
  doseGrid_ = makeDoubleSpinBox("doseGridSpin", 0, 10, 0, 0.5, 1, tr(" mm"));
  doseGrid_->setSpecialValueText(tr("CT grid"));
  variant_ = new QComboBox;
  variant_->setObjectName("ddaVariantCombo");
  variant_->addItem(tr("DDA-nc (branch-free)"), int(DdaVariant::BranchFree));
  variant_->addItem(tr("Classic DDA"), int(DdaVariant::Classic));
  compute_ = makeButton(tr("Compute dose"), "computeDoseButton");
  form->addRow(tr("Backend"), backend_);
  form->addRow(tr("Dose grid"), doseGrid_);
  form->addRow(tr("Ray tracing"), variant_);
  form->addRow(tr("Photon cones"), buildPhotonEngineRows());
  photonDeposit_ = new QComboBox;
  photonDeposit_->setObjectName("photonDepositCombo");
  photonDeposit_->addItem(tr("Atomic-free (reproducible)"), int(photon::DepositStrategy::AtomicFree));
  photonDeposit_->addItem(tr("Atomic adds"), int(photon::DepositStrategy::Atomic));
  form->addRow(tr("Photon deposit"), photonDeposit_);
  // The live-dose toggle (setLiveDoseAction) sits next to Compute: the same dose, at every edit.
  liveButton_ = new QToolButton;
  liveButton_->setObjectName("liveDoseButton");
  liveButton_->setToolButtonStyle(Qt::ToolButtonTextOnly);
  liveButton_->hide();
  auto* row = new QHBoxLayout;
  row->addWidget(compute_, 1);
  row->addWidget(liveButton_);
  form->addRow(row);
  connect(compute_, &QPushButton::clicked, this, &BeamEditorPanel::computeDose);
  return box;
}

QWidget* BeamEditorPanel::buildPhotonEngineRows() {
  // Polar x azimuthal collapsed cones; the polar count must divide the kernel's 48 polar bins.
  auto* w = new QWidget;
  auto* h = new QHBoxLayout(w);
  h->setContentsMargins(0, 0, 0, 0);
  photonPolar_ = new QComboBox;
  photonPolar_->setObjectName("photonPolarConesCombo");
  for (int n : {2, 3, 4, 6, 8, 12, 16, 24, 48}) photonPolar_->addItem(QString::number(n), n);
  const PhotonRunOptions d;
  photonPolar_->setCurrentIndex(photonPolar_->findData(d.polarCones));
  photonAzimuth_ = new QSpinBox;
  photonAzimuth_->setObjectName("photonAzimuthSpin");
  photonAzimuth_->setRange(1, 72);
  photonAzimuth_->setValue(d.azimuthalCones);
  photonPolar_->setToolTip(tr("Polar cone bands (divisors of the kernel's 48 polar bins)"));
  photonAzimuth_->setToolTip(tr("Azimuthal cones per polar band"));
  h->addWidget(photonPolar_);
  h->addWidget(new QLabel(tr("x")));
  h->addWidget(photonAzimuth_);
  return w;
}

void BeamEditorPanel::setLiveDoseAction(QAction* action) {
  liveButton_->setDefaultAction(action);
  liveButton_->setVisible(action != nullptr);
}

QString BeamEditorPanel::targetName() const { return targetCombo_->currentText(); }

proton::SpotGenerationOptions BeamEditorPanel::spotOptions() const {
  proton::SpotGenerationOptions o;
  o.spotSpacingMm = spotSpacing_->value();
  o.lateralMarginMm = lateralMargin_->value();
  o.layerSpacingMm = layerSpacing_->value();
  o.proximalMarginMm = proximalMargin_->value();
  o.distalMarginMm = distalMargin_->value();
  o.pattern = proton::SpotGridPattern(pattern_->currentData().toInt());
  o.weighting = proton::SpotWeighting(weighting_->currentData().toInt());
  return o;
}

DoseRunOptions BeamEditorPanel::doseOptions() const {
  DoseRunOptions o;
  o.backend = Backend(backend_->currentData().toInt());
  o.doseGridMm = doseGrid_->value();
  o.variant = DdaVariant(variant_->currentData().toInt());
  o.photon.polarCones = photonPolar_->currentData().toInt();
  o.photon.azimuthalCones = photonAzimuth_->value();
  o.photon.deposit = photon::DepositStrategy(photonDeposit_->currentData().toInt());
  return o;
}

void BeamEditorPanel::setSpotOptions(const proton::SpotGenerationOptions& o) {
  spotSpacing_->setValue(o.spotSpacingMm);
  lateralMargin_->setValue(o.lateralMarginMm);
  layerSpacing_->setValue(o.layerSpacingMm);
  proximalMargin_->setValue(o.proximalMarginMm);
  distalMargin_->setValue(o.distalMarginMm);
  pattern_->setCurrentIndex(std::max(0, pattern_->findData(int(o.pattern))));
  weighting_->setCurrentIndex(std::max(0, weighting_->findData(int(o.weighting))));
}

void BeamEditorPanel::setDoseOptions(const DoseRunOptions& o) {
  backend_->setCurrentIndex(std::max(0, backend_->findData(int(o.backend))));
  doseGrid_->setValue(o.doseGridMm);
  variant_->setCurrentIndex(std::max(0, variant_->findData(int(o.variant))));
  const int polar = photonPolar_->findData(o.photon.polarCones);
  if (polar >= 0) photonPolar_->setCurrentIndex(polar);
  photonAzimuth_->setValue(o.photon.azimuthalCones);
  photonDeposit_->setCurrentIndex(std::max(0, photonDeposit_->findData(int(o.photon.deposit))));
}

int BeamEditorPanel::addBeam() {
  return controller_->addBeamOnTarget(targetName(), gantry_->value(), couch_->value());
}

int BeamEditorPanel::addPhotonBeam() {
  return controller_->addPhotonBeamOnTarget(targetName(), gantry_->value(), couch_->value(),
                                            photonBox_->collimatorDeg(), photonBox_->fieldSizeMm());
}

Job* BeamEditorPanel::generateSpots() {
  return controller_->generateSpots(plan_->currentBeam(), targetName(), spotOptions());
}

Job* BeamEditorPanel::computeDose() { return controller_->computeDose(doseOptions()); }

void BeamEditorPanel::onSceneChanged() {
  targetCombo_->clear();
  const auto& scene = state_->scene();
  if (scene) {
    int preferred = -1;
    for (const auto& s : scene->patient().structures.structures) {
      targetCombo_->addItem(QString::fromStdString(s.name));
      if (preferred < 0 && s.kind == StructureKind::Target) preferred = targetCombo_->count() - 1;
    }
    if (preferred >= 0) targetCombo_->setCurrentIndex(preferred);
  }
  refreshBeamList();
  refreshCurrentBeam();
}

void BeamEditorPanel::refreshBeamList() {
  updating_ = true;
  beamList_->clear();
  for (int b = 0; b < plan_->beamCount(); ++b) {
    const auto& p = plan_->beam(b);
    const auto c = beamColor(b);
    QString text;
    if (p.isPhoton()) {
      const photon::PhotonBeam& f = p.photon.beam;
      const QString shape = p.photon.apertureTarget.isEmpty()
                                ? tr("%1 x %2 mm").arg(f.x2Mm - f.x1Mm).arg(f.y2Mm - f.y1Mm)
                                : tr("aperture %1").arg(p.photon.apertureTarget);
      text = tr("%1  G%2 C%3  photons, %4, %5 MU").arg(QString::fromStdString(p.beam.name)).arg(p.beam.gantryDeg)
                 .arg(p.beam.couchDeg).arg(shape).arg(f.monitorUnits);
    } else {
      text = tr("%1  G%2 C%3  %4").arg(QString::fromStdString(p.beam.name)).arg(p.beam.gantryDeg)
                 .arg(p.beam.couchDeg).arg(countOf(qsizetype(p.beam.spotCount()), "spot"));
    }
    auto* item = new QListWidgetItem(colorSwatch(QColor::fromRgbF(c[0], c[1], c[2])), text);
    beamList_->addItem(item);
  }
  beamList_->setCurrentRow(plan_->currentBeam());
  updating_ = false;
  refreshButtons();
}

void BeamEditorPanel::refreshCurrentBeam() {
  updating_ = true;
  const int b = plan_->currentBeam();
  if (b >= 0) {
    const auto& p = plan_->beam(b);
    gantry_->setValue(p.beam.gantryDeg);
    couch_->setValue(p.beam.couchDeg);
    for (int a = 0; a < 3; ++a) iso_[a]->setValue(p.beam.isocenter[a]);
  }
  updating_ = false;
  refreshLayers();
  refreshButtons();
}

void BeamEditorPanel::refreshLayers() {
  layerList_->clear();
  const int b = plan_->currentBeam();
  if (b < 0) {
    summary_->setText(tr("No beam: choose a target and press Add beam."));
    return;
  }
  const auto& p = plan_->beam(b);
  if (p.isPhoton()) {
    summary_->setText(tr("Photon beam: set the field below."));
    return;
  }
  for (const auto& l : p.beam.layers)
    layerList_->addItem(tr("%1 MeV  %2").arg(l.energyMeV, 0, 'f', 1).arg(countOf(qsizetype(l.spots.size()), "spot")));
  summary_->setText(p.beam.layers.empty()
                        ? tr("No spots yet: press Generate spots.")
                        : tr("%1, %2 on %3").arg(countOf(qsizetype(p.beam.layers.size()), "layer"),
                                                 countOf(qsizetype(p.beam.spotCount()), "spot"), p.targetName));
}

void BeamEditorPanel::applyGeometry() {
  if (updating_ || plan_->currentBeam() < 0) return;
  plan_->setGeometry(plan_->currentBeam(), gantry_->value(), couch_->value(),
                     Vec3{iso_[0]->value(), iso_[1]->value(), iso_[2]->value()});
}

void BeamEditorPanel::setIsocentreToTarget() {
  Vec3 c;
  if (!controller_->targetCentroid(targetName(), c)) return;
  updating_ = true;
  for (int a = 0; a < 3; ++a) iso_[a]->setValue(c[a]);
  updating_ = false;
  applyGeometry();
}

void BeamEditorPanel::refreshButtons() {
  const bool patient = state_->scene() != nullptr;
  const bool beam = plan_->currentBeam() >= 0;
  const bool photon = beam && plan_->beam(plan_->currentBeam()).isPhoton();
  addBeam_->setEnabled(patient);
  addPhotonBeam_->setEnabled(patient);
  removeBeam_->setEnabled(beam);
  spotBox_->setVisible(!photon);
  generate_->setEnabled(patient && beam && !photon && targetCombo_->count() > 0);
  removeLayer_->setEnabled(beam && layerList_->count() > 0);
  compute_->setEnabled(patient && (plan_->totalSpots() > 0 || plan_->photonBeamCount() > 0));
  for (QWidget* w : std::initializer_list<QWidget*>{gantry_, couch_, iso_[0], iso_[1], iso_[2]})
    w->setEnabled(beam);
}

}  // namespace penumbra::gui
