#include "gui/dose/dose_panel.hpp"

#include <QCheckBox>
#include <QColorDialog>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>
#include <QTableWidget>
#include <QVBoxLayout>

#include "gui/model/dose_display_settings.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/overlays/dose_clip.hpp"
#include "gui/plan/plan_controller.hpp"

namespace penumbra::gui {

namespace {

/// The wash's colour scale from the threshold to the maximum, labelled in Gy.
class ColorBar : public QWidget {
public:
  ColorBar(const DoseSetStore* store, const DoseDisplaySettings* settings, const PlanModel* plan)
      : store_(store), settings_(settings), plan_(plan) {
    setObjectName("doseColorBar");
    setMinimumHeight(34);
  }

protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    const QRect bar(4, 2, width() - 8, 14);
    QLinearGradient g(bar.topLeft(), bar.topRight());
    for (int n = 0; n <= 16; ++n) {
      const auto c = colorMapAt(settings_->colorMap(), n / 16.0);
      g.setColorAt(n / 16.0, QColor::fromRgbF(c[0], c[1], c[2]));
    }
    p.fillRect(bar, g);
    p.setPen(palette().color(QPalette::WindowText));
    const auto set = store_->current();
    const double lo = settings_->washThresholdPercent() / 100.0 * plan_->prescriptionGy();
    const QString left = QString("%1 Gy").arg(lo, 0, 'f', 2);
    const QString right = set ? QString("%1 Gy").arg(set->maxGy, 0, 'f', 2) : QString("-");
    p.drawText(QRect(4, 18, width() - 8, 16), Qt::AlignLeft, left);
    p.drawText(QRect(4, 18, width() - 8, 16), Qt::AlignRight, right);
  }

private:
  const DoseSetStore* store_;
  const DoseDisplaySettings* settings_;
  const PlanModel* plan_;
};

enum Column { kPercent, kGy, kColour, kSurface, kColumns };

}  // namespace

DosePanel::DosePanel(DoseSetStore* store, DoseDisplaySettings* settings, PlanController* controller,
                     QWidget* parent)
    : QWidget(parent),
      store_(store),
      settings_(settings),
      controller_(controller),
      plan_(controller->plan()),
      state_(controller->viewState()) {
  setObjectName("dosePanel");
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->addWidget(buildSetBox());
  layout->addWidget(buildWashBox());
  layout->addWidget(buildIsodoseBox());
  layout->addStretch(1);
  connect(store, &DoseSetStore::doseSetAdded, this, &DosePanel::refreshSets);
  connect(store, &DoseSetStore::doseSetRemoved, this, &DosePanel::refreshSets);
  connect(store, &DoseSetStore::doseSetChanged, this, &DosePanel::refreshSets);
  connect(store, &DoseSetStore::currentDoseSetChanged, this, &DosePanel::refreshSets);
  connect(plan_, &PlanModel::prescriptionChanged, this, [this] {
    refreshIsodoseTable();
    colorBar_->update();
  });
  connect(settings, &DoseDisplaySettings::isodosesChanged, this, &DosePanel::refreshIsodoseTable);
  connect(settings, &DoseDisplaySettings::washChanged, colorBar_, qOverload<>(&QWidget::update));
  connect(settings, &DoseDisplaySettings::clipChanged, this, &DosePanel::refreshClip);
  if (state_) connect(state_, &ViewState::sceneChanged, this, &DosePanel::refreshClip);
  refreshSets();
  refreshIsodoseTable();
  refreshClip();
}

QWidget* DosePanel::buildSetBox() {
  auto* box = new QGroupBox(tr("Dose set"));
  auto* form = new QFormLayout(box);
  sets_ = new QComboBox;
  sets_->setObjectName("doseSetCombo");
  form->addRow(tr("Shown"), sets_);
  info_ = new QLabel;
  info_->setObjectName("doseSetInfoLabel");
  info_->setWordWrap(true);
  form->addRow(info_);
  prescription_ = new QDoubleSpinBox;
  prescription_->setObjectName("prescriptionSpin");
  prescription_->setRange(0.01, 1000);  // totals of imported plans too (e.g. 62 Gy in 5 fractions)
  prescription_->setDecimals(2);
  prescription_->setSuffix(tr(" Gy"));
  prescription_->setValue(plan_->prescriptionGy());
  prescription_->setKeyboardTracking(false);
  form->addRow(tr("Prescription"), prescription_);
  auto* row = new QHBoxLayout;
  normaliseMode_ = new QComboBox;
  normaliseMode_->setObjectName("normaliseModeCombo");
  normaliseMode_->addItem(tr("target mean"), int(NormalisationMode::TargetMean));
  normaliseMode_->addItem(tr("target D50"), int(NormalisationMode::TargetD50));
  auto* normalise = new QPushButton(tr("Normalise"));
  normalise->setObjectName("normaliseButton");
  normalise->setToolTip(tr("Scale the spot weights and this dose so that the target's mean (or "
                           "median) dose equals the prescription"));
  row->addWidget(normaliseMode_);
  row->addWidget(normalise);
  form->addRow(tr("Normalise to"), row);
  clip_ = new QCheckBox;
  clip_->setObjectName("clipDoseCheck");
  form->addRow(clip_);
  connect(clip_, &QCheckBox::toggled, settings_, &DoseDisplaySettings::setClipToExternal);
  connect(sets_, &QComboBox::activated, store_, &DoseSetStore::setCurrentIndex);
  connect(prescription_, &QDoubleSpinBox::valueChanged, plan_, &PlanModel::setPrescriptionGy);
  connect(plan_, &PlanModel::prescriptionChanged, prescription_, [this](double gy) {
    // Blocked: the spin box shows 2 decimals, and its rounded value must not replace the
    // plan's (30.826 Gy from an RT Plan) nor clear where it came from.
    const QSignalBlocker block(prescription_);
    prescription_->setValue(gy);
    prescription_->setToolTip(plan_->prescriptionSource().isEmpty()
                                  ? tr("Doses are shown in % of this dose")
                                  : tr("%1 Gy from %2").arg(gy, 0, 'g', 6).arg(plan_->prescriptionSource()));
  });
  connect(normalise, &QPushButton::clicked, this, &DosePanel::normalise);
  return box;
}

QWidget* DosePanel::buildWashBox() {
  auto* box = new QGroupBox(tr("Colour wash"));
  auto* form = new QFormLayout(box);
  showWash_ = new QCheckBox(tr("Show wash"));
  showWash_->setObjectName("showWashCheck");
  showWash_->setChecked(settings_->washVisible());
  colorMap_ = new QComboBox;
  colorMap_->setObjectName("colorMapCombo");
  for (auto m : {DoseColorMap::Rainbow, DoseColorMap::Dose, DoseColorMap::Grayscale})
    colorMap_->addItem(tr(toString(m)), int(m));
  opacity_ = new QSlider(Qt::Horizontal);
  opacity_->setObjectName("opacitySlider");
  opacity_->setRange(0, 100);
  opacity_->setValue(int(settings_->washOpacity() * 100));
  threshold_ = new QDoubleSpinBox;
  threshold_->setObjectName("thresholdSpin");
  threshold_->setRange(0, 200);
  threshold_->setSuffix(tr(" % of Rx"));
  threshold_->setValue(settings_->washThresholdPercent());
  colorBar_ = new ColorBar(store_, settings_, plan_);
  form->addRow(showWash_);
  form->addRow(tr("Colour map"), colorMap_);
  form->addRow(tr("Opacity"), opacity_);
  form->addRow(tr("Lower threshold"), threshold_);
  form->addRow(colorBar_);
  connect(showWash_, &QCheckBox::toggled, settings_, &DoseDisplaySettings::setWashVisible);
  connect(colorMap_, &QComboBox::currentIndexChanged, this,
          [this] { settings_->setColorMap(DoseColorMap(colorMap_->currentData().toInt())); });
  connect(opacity_, &QSlider::valueChanged, this, [this](int v) { settings_->setWashOpacity(v / 100.0); });
  connect(threshold_, &QDoubleSpinBox::valueChanged, settings_, &DoseDisplaySettings::setWashThresholdPercent);
  return box;
}

QWidget* DosePanel::buildIsodoseBox() {
  auto* box = new QGroupBox(tr("Isodose lines (% of prescription)"));
  auto* v = new QVBoxLayout(box);
  auto* checks = new QHBoxLayout;
  showIsodoses_ = new QCheckBox(tr("Lines"));
  showIsodoses_->setObjectName("showIsodoseCheck");
  showIsodoses_->setChecked(settings_->isodosesVisible());
  showSurfaces_ = new QCheckBox(tr("3D surfaces"));
  showSurfaces_->setObjectName("showSurfacesCheck");
  showSurfaces_->setChecked(settings_->surfacesVisible());
  checks->addWidget(showIsodoses_);
  checks->addWidget(showSurfaces_);
  v->addLayout(checks);
  isodoseTable_ = new QTableWidget(0, kColumns);
  isodoseTable_->setObjectName("isodoseTable");
  isodoseTable_->setHorizontalHeaderLabels({tr("%"), tr("Gy"), tr("Colour"), tr("3D")});
  isodoseTable_->verticalHeader()->hide();
  isodoseTable_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  isodoseTable_->setMinimumHeight(170);
  v->addWidget(isodoseTable_);
  auto* row = new QHBoxLayout;
  auto* add = new QPushButton(tr("Add"));
  add->setObjectName("addIsodoseButton");
  auto* remove = new QPushButton(tr("Remove"));
  remove->setObjectName("removeIsodoseButton");
  auto* reset = new QPushButton(tr("Defaults"));
  reset->setObjectName("resetIsodoseButton");
  row->addWidget(add);
  row->addWidget(remove);
  row->addWidget(reset);
  v->addLayout(row);
  connect(showIsodoses_, &QCheckBox::toggled, settings_, &DoseDisplaySettings::setIsodosesVisible);
  connect(showSurfaces_, &QCheckBox::toggled, settings_, &DoseDisplaySettings::setSurfacesVisible);
  connect(isodoseTable_, &QTableWidget::itemChanged, this, [this] {
    // Deferred: applying rebuilds the table, which must not happen inside its own signal.
    if (!updating_) QMetaObject::invokeMethod(this, [this] { applyIsodoseTable(); }, Qt::QueuedConnection);
  });
  connect(isodoseTable_, &QTableWidget::cellDoubleClicked, this, [this](int r, int c) {
    if (c != kColour) return;
    auto levels = settings_->isodoseLevels();
    const QColor chosen = QColorDialog::getColor(levels[std::size_t(r)].color, this, tr("Isodose colour"));
    if (!chosen.isValid()) return;
    levels[std::size_t(r)].color = chosen;
    settings_->setIsodoseLevels(levels);
  });
  connect(add, &QPushButton::clicked, this, [this] {
    auto levels = settings_->isodoseLevels();
    const double lowest = levels.empty() ? 110 : levels.back().percent;
    levels.push_back({std::max(1.0, lowest / 2), QColor(200, 200, 200), false});
    settings_->setIsodoseLevels(levels);
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    auto levels = settings_->isodoseLevels();
    const int r = isodoseTable_->currentRow();
    if (r < 0 || r >= int(levels.size())) return;
    levels.erase(levels.begin() + r);
    settings_->setIsodoseLevels(levels);
  });
  connect(reset, &QPushButton::clicked, this, [this] { settings_->setIsodoseLevels(defaultIsodoseLevels()); });
  return box;
}

void DosePanel::refreshSets() {
  updating_ = true;
  sets_->clear();
  for (int i = 0; i < store_->count(); ++i) sets_->addItem(store_->at(i)->name);
  sets_->setCurrentIndex(store_->currentIndex());
  updating_ = false;
  refreshInfo();
  colorBar_->update();
}

void DosePanel::refreshInfo() {
  const auto set = store_->current();
  if (!set) {
    info_->setText(tr("No dose: generate spots and press Compute dose."));
    return;
  }
  const Grid& g = set->dose.grid();
  QString text = tr("max %1 Gy (%2 % of Rx); grid %3x%4x%5, %6 mm; %7 s on %8")
                     .arg(set->maxGy, 0, 'f', 3)
                     .arg(100 * set->maxGy / plan_->prescriptionGy(), 0, 'f', 1)
                     .arg(g.dims[0]).arg(g.dims[1]).arg(g.dims[2])
                     .arg(g.spacing.x, 0, 'g', 3)
                     .arg(set->dose.computeSeconds, 0, 'f', 2)
                     .arg(QString::fromStdString(set->dose.backend));
  if (!set->normalisationNote.isEmpty())
    text += tr("; normalised: %1 (x %2)").arg(set->normalisationNote).arg(set->normalisation, 0, 'g', 4);
  info_->setText(text);
}

void DosePanel::refreshClip() {
  const auto scene = state_ ? state_->scene() : nullptr;
  const int index = scene ? externalStructureIndex(scene->displayPatient().structures) : -1;
  const QSignalBlocker block(clip_);  // the setting is the user's choice; this only shows it
  if (index < 0) {
    clip_->setText(tr("Clip dose to the patient outline"));
    clip_->setChecked(false);
    clip_->setEnabled(false);
    clip_->setToolTip(scene ? tr("This patient has no external structure (RT ROI Interpreted Type "
                                 "EXTERNAL, or named BODY, External, Skin or Outline): the dose is "
                                 "shown on its whole grid, air included.")
                            : tr("No patient is open."));
    return;
  }
  const auto& structures = scene->displayPatient().structures.structures;
  const QString name = QString::fromStdString(structures[std::size_t(index)].name);
  clip_->setText(tr("Clip dose to %1").arg(name));
  clip_->setEnabled(true);
  clip_->setChecked(settings_->clipToExternal());
  clip_->setToolTip(tr("Draw the colour wash, isodose lines and 3D isodose surfaces only inside "
                       "%1, as clinical planning systems do. Display only: dose values, DVHs and "
                       "exports keep the dose outside it.")
                        .arg(name));
}

void DosePanel::refreshIsodoseTable() {
  updating_ = true;
  const auto& levels = settings_->isodoseLevels();
  isodoseTable_->setRowCount(int(levels.size()));
  for (int r = 0; r < int(levels.size()); ++r) {
    const auto& l = levels[std::size_t(r)];
    auto* pct = new QTableWidgetItem(QString::number(l.percent));
    auto* gy = new QTableWidgetItem(QString::number(l.percent / 100.0 * plan_->prescriptionGy(), 'f', 2));
    gy->setFlags(gy->flags() & ~Qt::ItemIsEditable);
    auto* colour = new QTableWidgetItem;
    colour->setBackground(l.color);
    colour->setFlags(colour->flags() & ~Qt::ItemIsEditable);
    colour->setToolTip(tr("Double-click to change"));
    auto* surface = new QTableWidgetItem;
    surface->setFlags((surface->flags() | Qt::ItemIsUserCheckable) & ~Qt::ItemIsEditable);
    surface->setCheckState(l.surface ? Qt::Checked : Qt::Unchecked);
    isodoseTable_->setItem(r, kPercent, pct);
    isodoseTable_->setItem(r, kGy, gy);
    isodoseTable_->setItem(r, kColour, colour);
    isodoseTable_->setItem(r, kSurface, surface);
  }
  updating_ = false;
  refreshInfo();
}

void DosePanel::applyIsodoseTable() {
  auto levels = settings_->isodoseLevels();
  for (int r = 0; r < isodoseTable_->rowCount() && r < int(levels.size()); ++r) {
    bool ok = false;
    const double pct = isodoseTable_->item(r, kPercent)->text().toDouble(&ok);
    if (ok && pct > 0) levels[std::size_t(r)].percent = pct;
    levels[std::size_t(r)].surface = isodoseTable_->item(r, kSurface)->checkState() == Qt::Checked;
  }
  settings_->setIsodoseLevels(levels);  // re-sorts and refreshes the table
}

QString DosePanel::normalisationTarget() const {
  const int b = plan_->currentBeam();
  if (b >= 0 && !plan_->beam(b).targetName.isEmpty()) return plan_->beam(b).targetName;
  for (int i = 0; i < plan_->beamCount(); ++i)
    if (!plan_->beam(i).targetName.isEmpty()) return plan_->beam(i).targetName;
  return {};
}

double DosePanel::normalise() {
  return controller_->normaliseCurrentDose(normalisationTarget(),
                                           NormalisationMode(normaliseMode_->currentData().toInt()));
}

}  // namespace penumbra::gui
