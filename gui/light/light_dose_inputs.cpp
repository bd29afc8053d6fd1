// LightDosePanel, its input form: the layer table, ambient indices, packets, grid, tally and backend,
// and the run they describe.
#include "gui/light/light_dose_panel.hpp"

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "core/device.hpp"
#include "gui/light/light_dose_controller.hpp"
#include "gui/light/light_dose_panel_parts.hpp"
#include "gui/widgets/form_controls.hpp"

namespace penumbra::gui {

using namespace light_panel;

namespace {

QString tallyHelp(mcml::TallyMethod m) {
  switch (m) {
    case mcml::TallyMethod::FloatAtomic:
      return QObject::tr("float atomics (drift once bins are large)");
    case mcml::TallyMethod::DoubleAtomic:
      return QObject::tr("double atomics");
    case mcml::TallyMethod::WarpAggregatedDouble:
      return QObject::tr("warp-aggregated double atomics");
    case mcml::TallyMethod::KahanFloatPair:
      return QObject::tr("compensated float pairs");
    case mcml::TallyMethod::FixedPoint64:
      return QObject::tr("64-bit fixed point (deterministic)");
    case mcml::TallyMethod::SharedBuffer:
      return QObject::tr("fixed point, source region in shared memory");
    case mcml::TallyMethod::RegisterCache:
      return QObject::tr("fixed point, last bin in a register");
    case mcml::TallyMethod::SharedRegister:
      return QObject::tr("shared memory + register (Lo et al.)");
  }
  return {};
}

QDoubleSpinBox* doubleSpin(const char* name, double lo, double hi, int decimals, double step,
                           const QString& suffix = {}) {
  auto* s = new QDoubleSpinBox;
  s->setObjectName(name);
  s->setRange(lo, hi);
  s->setDecimals(decimals);
  s->setSingleStep(step);
  s->setSuffix(suffix);
  return s;
}

QSpinBox* intSpin(const char* name, int lo, int hi) {
  auto* s = new QSpinBox;
  s->setObjectName(name);
  s->setRange(lo, hi);
  return s;
}

}  // namespace

QWidget* LightDosePanel::buildInputs() {
  auto* w = new QWidget;
  auto* v = new QVBoxLayout(w);
  v->setContentsMargins(0, 0, 4, 0);

  auto* files = new QHBoxLayout;
  auto* open = makeButton(tr("Open .mci..."), "openMciButton");
  open->setToolTip(tr("Reads an MCML input file (several runs: choose one in the list)"));
  runCombo_ = new QComboBox;
  runCombo_->setObjectName("mciRunCombo");
  runCombo_->setEnabled(false);
  runCombo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  runCombo_->setMinimumContentsLength(12);
  saveButton_ = makeButton(tr("Save .mco..."), "saveMcoButton");
  saveButton_->setToolTip(tr("Writes the last result in MCML's output format"));
  files->addWidget(open);
  files->addWidget(runCombo_, 1);
  files->addWidget(saveButton_);
  v->addLayout(files);
  connect(open, &QPushButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open MCML input"), QFileInfo(mciPath_).path(),
                                     tr("MCML input (*.mci);;All files (*)"));
    if (!path.isEmpty()) openMci(path);
  });
  connect(runCombo_, &QComboBox::activated, this, &LightDosePanel::selectMciRun);
  connect(saveButton_, &QPushButton::clicked, this, [this] {
    const auto r = controller_->result();
    if (!r) return;
    const QString dir = mciPath_.isEmpty() ? QString() : QFileInfo(mciPath_).path() + "/";
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save MCML output"), dir + QString::fromStdString(r->run.outputFile),
        tr("MCML output (*.mco);;All files (*)"));
    if (!path.isEmpty()) saveMco(path);
  });

  v->addWidget(buildLayerBox());
  v->addWidget(buildSimulationBox());

  auto* runRow = new QHBoxLayout;
  runButton_ = makeButton(tr("Run"), "runLightButton");
  cancelButton_ = makeButton(tr("Cancel"), "cancelLightButton");
  cancelButton_->setToolTip(
      tr("Stops at the end of the current batch; the previous result is kept"));
  runRow->addWidget(runButton_);
  runRow->addWidget(cancelButton_);
  v->addLayout(runRow);
  connect(runButton_, &QPushButton::clicked, this, &LightDosePanel::run);
  connect(cancelButton_, &QPushButton::clicked, this, &LightDosePanel::cancel);
  progress_ = new QProgressBar;
  progress_->setObjectName("lightProgressBar");
  progress_->setRange(0, 1000);
  progress_->setValue(0);
  v->addWidget(progress_);
  status_ = new QLabel;
  status_->setObjectName("lightStatusLabel");
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  v->addWidget(status_);

  v->addStretch();
  return w;
}

QWidget* LightDosePanel::buildLayerBox() {
  auto* layerBox = new QGroupBox(tr("Tissue layers (surface first)"));
  auto* lv = new QVBoxLayout(layerBox);
  layers_ = new QTableWidget(0, ColCount);
  layers_->setObjectName("layerTable");
  layers_->setHorizontalHeaderLabels({tr("n"), tr("\u03bca [cm\u207b\u00b9]"),
                                      tr("\u03bcs [cm\u207b\u00b9]"), tr("g"), tr("d [cm]")});
  layers_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  layers_->setToolTip(
      tr("Refractive index, absorption and scattering coefficients, Henyey-Greenstein "
         "anisotropy and thickness of each layer. \u03bca = \u03bcs = 0: a glass layer."));
  layers_->setMinimumHeight(170);
  lv->addWidget(layers_);
  auto* rowButtons = new QHBoxLayout;
  auto* add = makeButton(tr("Add layer"), "addLayerButton");
  auto* remove = makeButton(tr("Remove layer"), "removeLayerButton");
  auto* skin = makeButton(tr("Skin 633 nm"), "skinModelButton");
  skin->setToolTip(
      tr("Five-layer skin at 633 nm: Tuchin, Physics-Uspekhi 40 (1997) 495, Table 1; "
         "grid of Lo et al. (2009)"));
  rowButtons->addWidget(add);
  rowButtons->addWidget(remove);
  rowButtons->addStretch();
  rowButtons->addWidget(skin);
  lv->addLayout(rowButtons);
  auto* indices = new QFormLayout;
  nAbove_ = doubleSpin("nAboveSpin", 1.0, 4.0, 4, 0.01);
  nBelow_ = doubleSpin("nBelowSpin", 1.0, 4.0, 4, 0.01);
  indices->addRow(tr("n above (ambient)"), nAbove_);
  indices->addRow(tr("n below"), nBelow_);
  lv->addLayout(indices);
  connect(add, &QPushButton::clicked, this, [this] {
    if (layers_->rowCount() >= mcml::kMaxLayers)
      return setStatus(tr("At most %1 layers.").arg(mcml::kMaxLayers), true);
    // A copy of the selected (else last) layer: the usual start for a new one.
    mcml::Layer l{1.4, 1.0, 100, 0.9, 0.1};
    const int from = layers_->currentRow() >= 0 ? layers_->currentRow() : layers_->rowCount() - 1;
    if (from >= 0)
      for (int c = 0; c < ColCount; ++c) {
        bool ok = false;
        const double x = layers_->item(from, c)->text().toDouble(&ok);
        if (!ok) continue;
        double* field[] = {&l.n, &l.mua, &l.mus, &l.g, &l.d};
        *field[c] = x;
      }
    addLayerRow(l);
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    if (layers_->rowCount() <= 1)
      return setStatus(tr("The medium needs at least one layer."), true);
    layers_->removeRow(layers_->currentRow() >= 0 ? layers_->currentRow()
                                                  : layers_->rowCount() - 1);
  });
  connect(skin, &QPushButton::clicked, this, &LightDosePanel::resetToSkinModel);
  connect(layers_, &QTableWidget::itemChanged, this, [this](QTableWidgetItem* item) {
    bool ok = false;
    item->text().toDouble(&ok);
    item->setBackground(ok ? QBrush() : QBrush(QColor(255, 200, 200)));
    updateGridInfo();
  });
  return layerBox;
}

QWidget* LightDosePanel::buildSimulationBox() {
  auto* simBox = new QGroupBox(tr("Simulation"));
  auto* form = new QFormLayout(simBox);
  packets_ = new QLineEdit;
  packets_->setObjectName("packetsEdit");
  packets_->setToolTip(
      tr("Photon packets launched, e.g. 1e4 (seconds) to 1e9 (GPU). The standard "
         "errors fall as 1/sqrt(packets)."));
  seed_ = intSpin("seedSpin", 1, 2147483647);
  dr_ = doubleSpin("drSpin", 1e-4, 10, 4, 0.001, tr(" cm"));
  dz_ = doubleSpin("dzSpin", 1e-4, 10, 4, 0.001, tr(" cm"));
  nr_ = intSpin("nrSpin", 1, 4096);
  nz_ = intSpin("nzSpin", 1, 4096);
  na_ = intSpin("naSpin", 1, 1000);
  na_->setToolTip(tr("Exit-angle bins over 0..90 degrees (Rd(r, a) and Tt(r, a))"));
  gridInfo_ = new QLabel;
  gridInfo_->setObjectName("gridInfoLabel");
  gridInfo_->setWordWrap(true);
  tally_ = new QComboBox;
  tally_->setObjectName("tallyCombo");
  for (mcml::TallyMethod m : mcml::allTallyMethods())
    tally_->addItem(QString("%1 - %2").arg(mcml::toString(m), tallyHelp(m)), int(m));
  tally_->setCurrentIndex(tally_->findData(int(mcml::TallyMethod::FixedPoint64)));
  tally_->setToolTip(
      tr("How the CUDA engine accumulates A(r, z), Rd and Tt. The CPU always tallies "
         "in double."));
  backend_ = new QComboBox;
  backend_->setObjectName("lightBackendCombo");
  backend_->addItem(tr("Auto (GPU if present)"), int(Backend::Auto));
  backend_->addItem(tr("CPU"), int(Backend::Cpu));
  backend_->addItem(builtWithCuda() ? tr("CUDA GPU") : tr("CUDA GPU (not in this build)"),
                    int(Backend::Cuda));
  backendNote_ = new QLabel;
  backendNote_->setObjectName("backendNoteLabel");
  backendNote_->setWordWrap(true);
  form->addRow(tr("Packets"), packets_);
  form->addRow(tr("Seed"), seed_);
  form->addRow(tr("dr / dz"), [&] {
    auto* row = new QHBoxLayout;
    row->addWidget(dr_);
    row->addWidget(dz_);
    auto* holder = new QWidget;
    holder->setLayout(row);
    row->setContentsMargins(0, 0, 0, 0);
    return holder;
  }());
  form->addRow(tr("nr / nz / na"), [&] {
    auto* row = new QHBoxLayout;
    row->addWidget(nr_);
    row->addWidget(nz_);
    row->addWidget(na_);
    auto* holder = new QWidget;
    holder->setLayout(row);
    row->setContentsMargins(0, 0, 0, 0);
    return holder;
  }());
  form->addRow(gridInfo_);
  form->addRow(tr("Tally (CUDA)"), tally_);
  form->addRow(tr("Backend"), backend_);
  form->addRow(backendNote_);
  for (QDoubleSpinBox* s : {dr_, dz_})
    connect(s, &QDoubleSpinBox::valueChanged, this, &LightDosePanel::updateGridInfo);
  for (QSpinBox* s : {nr_, nz_})
    connect(s, &QSpinBox::valueChanged, this, &LightDosePanel::updateGridInfo);
  connect(backend_, &QComboBox::currentIndexChanged, this, &LightDosePanel::updateBackendNote);
  return simBox;
}

void LightDosePanel::addLayerRow(const mcml::Layer& l) {
  const int r = layers_->rowCount();
  layers_->insertRow(r);
  const double values[] = {l.n, l.mua, l.mus, l.g, l.d};
  for (int c = 0; c < ColCount; ++c) layers_->setItem(r, c, numberItem(values[c], 8));
}

void LightDosePanel::setRun(const io::MciRun& run) {
  layers_->setRowCount(0);
  for (const auto& l : run.medium.layers) addLayerRow(l);
  nAbove_->setValue(run.medium.nAbove);
  nBelow_->setValue(run.medium.nBelow);
  packets_->setText(QString::number(double(run.config.packets), 'g', 12));
  dr_->setValue(run.config.dr);
  dz_->setValue(run.config.dz);
  nr_->setValue(run.config.nr);
  nz_->setValue(run.config.nz);
  na_->setValue(run.config.na);
  updateGridInfo();
}

void LightDosePanel::resetToSkinModel() {
  setRun(LightDoseController::skinModel633nm());
  setStatus(tr(
      "Five-layer skin model at 633 nm (Tuchin 1997, Table 1) on the grid of Lo et al. (2009)."));
}

io::MciRun LightDosePanel::currentRun(QString* error) const {
  io::MciRun run;
  QString why;
  const char* names[] = {"n", "mua", "mus", "g", "d"};
  for (int r = 0; r < layers_->rowCount() && why.isEmpty(); ++r) {
    mcml::Layer l;
    double* field[] = {&l.n, &l.mua, &l.mus, &l.g, &l.d};
    for (int c = 0; c < ColCount; ++c) {
      const QTableWidgetItem* item = layers_->item(r, c);
      bool ok = false;
      const double x = item ? item->text().trimmed().toDouble(&ok) : 0;
      if (!ok || !std::isfinite(x)) {
        why = tr("Layer %1: %2 '%3' is not a number.")
                  .arg(r + 1)
                  .arg(names[c])
                  .arg(item ? item->text() : QString());
        break;
      }
      *field[c] = x;
    }
    run.medium.layers.push_back(l);
  }
  run.medium.nAbove = nAbove_->value();
  run.medium.nBelow = nBelow_->value();
  bool ok = false;
  const double packets = packets_->text().trimmed().toDouble(&ok);
  if (why.isEmpty() &&
      (!ok || packets != std::floor(packets) || packets < kBatches || packets > 1e13))
    why = tr("Packets: '%1' must be a whole number from %2 to 1e13 (the run is split into %2 "
             "batches for the standard errors).")
              .arg(packets_->text())
              .arg(kBatches);
  run.config.packets = ok && packets >= 1 && packets <= 1e13 ? std::uint64_t(packets) : 1;
  run.config.dr = dr_->value();
  run.config.dz = dz_->value();
  run.config.nr = nr_->value();
  run.config.nz = nz_->value();
  run.config.na = na_->value();
  run.config.seed = std::uint64_t(seed_->value());
  run.config.batches = kBatches;
  run.config.tally = mcml::TallyMethod(tally_->currentData().toInt());
  run.config.backend = Backend(backend_->currentData().toInt());
  run.outputFile = mciRuns_.empty() || runCombo_->currentIndex() < 0
                       ? "light_dose.mco"
                       : mciRuns_[std::size_t(runCombo_->currentIndex())].outputFile;
  if (why.isEmpty()) why = LightDoseController::check(run);  // the engine's own rules
  if (error) *error = why;
  return run;
}

void LightDosePanel::updateGridInfo() {
  if (!gridInfo_) return;
  double stack = 0;
  bool ok = true;
  for (int r = 0; r < layers_->rowCount(); ++r) {
    const QTableWidgetItem* item = layers_->item(r, ColD);
    bool cellOk = false;
    stack += item ? item->text().toDouble(&cellOk) : 0;
    ok = ok && cellOk;
  }
  const double rMax = dr_->value() * nr_->value(), zMax = dz_->value() * nz_->value();
  QString text = tr("Grid: r up to %1 cm, z up to %2 cm").arg(rMax, 0, 'g', 4).arg(zMax, 0, 'g', 4);
  if (ok) text += tr("; tissue %1 cm thick").arg(stack, 0, 'g', 4);
  if (ok && zMax < stack - 1e-12)
    text += tr(" (absorption below %1 cm lands in the last z bin)").arg(zMax, 0, 'g', 4);
  gridInfo_->setText(text + ".");
}

void LightDosePanel::updateBackendNote() {
  const Backend b = Backend(backend_->currentData().toInt());
  tally_->setEnabled(b != Backend::Cpu);
  QString note;
  if (b != Backend::Cpu && !builtWithCuda())
    note = b == Backend::Cuda ? tr("This build has no CUDA: the run will use the CPU.")
                              : tr("No CUDA in this build: Auto runs on the CPU.");
  else if (b == Backend::Cuda) {
    std::string why;
    if (queryCudaDevices(&why).empty())
      note = tr("No usable GPU (%1): the run will use the CPU.").arg(QString::fromStdString(why));
  }
  backendNote_->setText(note);
  backendNote_->setVisible(!note.isEmpty());
}

}  // namespace penumbra::gui
