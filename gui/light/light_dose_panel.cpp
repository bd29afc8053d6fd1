#include "gui/light/light_dose_panel.hpp"

#include <algorithm>
#include <cmath>

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMainWindow>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>

#include "core/device.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/light/fluence_map_view.hpp"
#include "gui/light/light_dose_controller.hpp"

namespace penumbra::gui {

namespace {

enum LayerColumn { ColN, ColMua, ColMus, ColG, ColD, ColCount };
/// Lo et al. (2009), Figure 6.
const char* kDefaultLevels = "1000, 100, 10, 1, 0.01, 1e-5";
/// Batches the engine splits a run into for its standard errors.
constexpr int kBatches = 10;

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

QPushButton* button(const QString& text, const char* name) {
  auto* b = new QPushButton(text);
  b->setObjectName(name);
  return b;
}

QTableWidgetItem* numberItem(double v, int precision = 6) {
  auto* item = new QTableWidgetItem(QString::number(v, 'g', precision));
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

/// Log axis range: whole decades around the positive values; a label every 10, 100 or 1000
/// so that at most about five labels share the height (Qt Charts elides crowded labels).
void fitLogAxis(QLogValueAxis* axis, double lo, double hi) {
  if (!(lo > 0) || !(hi >= lo)) return axis->setRange(1e-3, 1);
  int a = int(std::floor(std::log10(lo))), b = int(std::ceil(std::log10(hi * 1.0001)));
  const int step = std::max(1, (b - a + 4) / 5);
  a = int(std::floor(double(a) / step)) * step;
  b = int(std::ceil(double(b) / step)) * step;
  axis->setBase(std::pow(10.0, step));
  axis->setRange(std::pow(10.0, a), std::pow(10.0, b));
}

QChartView* logChart(const QString& title, const QString& xTitle, const QString& yTitle,
                     const char* name, QLineSeries*& series, QValueAxis*& x, QLogValueAxis*& y) {
  auto* chart = new QChart;
  chart->setTitle(title);
  chart->legend()->hide();
  chart->setMargins(QMargins(2, 2, 2, 2));
  series = new QLineSeries;
  chart->addSeries(series);
  x = new QValueAxis;
  x->setTitleText(xTitle);
  x->setLabelFormat("%.3g");
  y = new QLogValueAxis;
  y->setTitleText(yTitle);
  y->setLabelFormat("%.0e");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  auto* view = new QChartView(chart);
  view->setObjectName(name);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumSize(220, 200);
  return view;
}

}  // namespace

LightDosePanel::LightDosePanel(LightDoseController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  setObjectName("lightDosePanel");
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* split = new QSplitter(Qt::Horizontal);
  split->setObjectName("lightDoseSplitter");
  auto* scroll = new QScrollArea;
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidget(buildInputs());
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(scroll->widget()->sizeHint().width() + 16);
  split->addWidget(scroll);
  split->addWidget(buildResults());
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  layout->addWidget(split);

  connect(controller_, &LightDoseController::started, this, [this](Job* job) {
    progress_->setValue(0);
    setStatus(tr("Running %1 ...").arg(job->title()));
    connect(job, &Job::progressChanged, this, [this](double f, const QString& stage) {
      progress_->setValue(int(std::lround(f * 1000)));
      setStatus(tr("MCML: %1 (%2 %)").arg(stage).arg(100 * f, 0, 'f', 0));
    });
    updateButtons();
  });
  connect(controller_, &LightDoseController::finished, this, [this](Job* job) {
    switch (job->state()) {
      case Job::State::Done: {
        const auto r = controller_->result();
        progress_->setValue(1000);
        setStatus(
            tr("Done: %1 packets in %2 s on %3%4.")
                .arg(double(r->run.config.packets), 0, 'g', 3)
                .arg(r->seconds, 0, 'f', 2)
                .arg(r->result.backend == Backend::Cuda ? QString::fromStdString(r->result.device)
                                                        : tr("the CPU"))
                .arg(r->backendMessage.isEmpty() ? QString() : " (" + r->backendMessage + ")"));
        break;
      }
      case Job::State::Cancelled:
        progress_->setValue(0);
        setStatus(controller_->result() ? tr("Cancelled; the previous result is kept.")
                                        : tr("Cancelled."));
        break;
      default:
        progress_->setValue(0);
        setStatus(tr("MCML failed: %1").arg(job->errorMessage()), true);
        break;
    }
    updateButtons();
  });
  connect(controller_, &LightDoseController::resultChanged, this, &LightDosePanel::showResult);
  connect(controller_, &LightDoseController::message, this, [this](const QString& m) {
    if (!controller_->isRunning()) setStatus(m, m.startsWith(tr("Cannot")));
  });
  resetToSkinModel();
  setContourLevels(kDefaultLevels);
  updateBackendNote();
  updateButtons();
}

QWidget* LightDosePanel::buildInputs() {
  auto* w = new QWidget;
  auto* v = new QVBoxLayout(w);
  v->setContentsMargins(0, 0, 4, 0);

  auto* files = new QHBoxLayout;
  auto* open = button(tr("Open .mci..."), "openMciButton");
  open->setToolTip(tr("Reads an MCML input file (several runs: choose one in the list)"));
  runCombo_ = new QComboBox;
  runCombo_->setObjectName("mciRunCombo");
  runCombo_->setEnabled(false);
  runCombo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  runCombo_->setMinimumContentsLength(12);
  saveButton_ = button(tr("Save .mco..."), "saveMcoButton");
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
  runButton_ = button(tr("Run"), "runLightButton");
  cancelButton_ = button(tr("Cancel"), "cancelLightButton");
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
  auto* add = button(tr("Add layer"), "addLayerButton");
  auto* remove = button(tr("Remove layer"), "removeLayerButton");
  auto* skin = button(tr("Skin 633 nm"), "skinModelButton");
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

QWidget* LightDosePanel::buildResults() {
  auto* split = new QSplitter(Qt::Vertical);
  auto* top = new QWidget;
  auto* tv = new QVBoxLayout(top);
  tv->setContentsMargins(0, 0, 0, 0);
  map_ = new FluenceMapView;
  tv->addWidget(map_, 1);
  auto* levelRow = new QHBoxLayout;
  levelRow->addWidget(new QLabel(tr("Isofluence levels [cm\u207b\u00b2]")));
  levels_ = new QLineEdit(kDefaultLevels);
  levels_->setObjectName("contourLevelsEdit");
  levels_->setToolTip(
      tr("Comma-separated fluence levels per launched photon weight; Lo et al. "
         "(2009), Fig. 6 use 1000, 100, 10, 1, 0.01, 1e-5"));
  levelRow->addWidget(levels_, 1);
  tv->addLayout(levelRow);
  contourInfo_ = new QLabel;
  contourInfo_->setObjectName("contourInfoLabel");
  contourInfo_->setWordWrap(true);
  tv->addWidget(contourInfo_);
  readout_ = new QLabel(tr("Move the mouse over the map for values."));
  readout_->setObjectName("fluenceReadoutLabel");
  tv->addWidget(readout_);
  connect(levels_, &QLineEdit::editingFinished, this,
          [this] { setContourLevels(levels_->text()); });
  connect(map_, &FluenceMapView::hovered, this, [this](const QString& t) {
    readout_->setText(t.isEmpty() ? tr("Move the mouse over the map for values.") : t);
  });

  auto* plots = new QWidget;
  auto* ph = new QHBoxLayout(plots);
  ph->setContentsMargins(0, 0, 0, 0);
  ph->addWidget(logChart(tr("Diffuse reflectance Rd(r)"), tr("r [cm]"), tr("Rd [cm\u207b\u00b2]"),
                         "rdChart", rdSeries_, rdX_, rdY_));
  ph->addWidget(logChart(tr("Absorption A(z)"), tr("z [cm]"), tr("A [cm\u207b\u00b9]"), "azChart",
                         azSeries_, azX_, azY_));
  rdSeries_->setObjectName("rdSeries");
  azSeries_->setObjectName("azSeries");
  auto* numbers = new QVBoxLayout;
  summary_ = new QTableWidget(kLayerRows, 2);
  summary_->setObjectName("lightSummaryTable");
  summary_->setHorizontalHeaderLabels({tr("Value"), tr("Std. error")});
  summary_->setVerticalHeaderLabels({tr("Rsp (specular)"), tr("Rd (diffuse refl.)"),
                                     tr("A (absorbed)"), tr("Tt (transmitted)"),
                                     tr("Rsp + Rd + A + Tt"), tr("Roulette gain")});
  summary_->verticalHeaderItem(kRoulette)->setToolTip(
      tr("Net weight added by Russian roulette per packet (zero in expectation): the sum above "
         "equals 1 plus this gain"));
  summary_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  summary_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  summary_->verticalHeader()->setDefaultSectionSize(20);
  summary_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  summary_->setMinimumWidth(330);
  numbers->addWidget(summary_, 1);
  runInfo_ = new QLabel;
  runInfo_->setObjectName("lightRunInfoLabel");
  runInfo_->setWordWrap(true);
  runInfo_->setMaximumWidth(360);
  numbers->addWidget(runInfo_);
  ph->addLayout(numbers);
  split->addWidget(top);
  split->addWidget(plots);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  return split;
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

Job* LightDosePanel::run() {
  QString why;
  const io::MciRun r = currentRun(&why);
  if (!why.isEmpty()) {
    setStatus(tr("Cannot run: %1").arg(why), true);
    return nullptr;
  }
  Job* job = controller_->start(r);
  updateButtons();
  return job;
}

void LightDosePanel::cancel() { controller_->cancel(); }

bool LightDosePanel::openMci(const QString& path) {
  QString error;
  std::vector<io::MciRun> runs = LightDoseController::readMci(path, &error);
  if (runs.empty()) {
    showError(tr("Cannot open .mci"), error);
    return false;
  }
  mciRuns_ = std::move(runs);
  mciPath_ = path;
  runCombo_->clear();
  for (std::size_t i = 0; i < mciRuns_.size(); ++i)
    runCombo_->addItem(tr("Run %1: %2, %3 layers, %4 packets")
                           .arg(i + 1)
                           .arg(QString::fromStdString(mciRuns_[i].outputFile))
                           .arg(mciRuns_[i].medium.layers.size())
                           .arg(double(mciRuns_[i].config.packets), 0, 'g', 3));
  runCombo_->setEnabled(mciRuns_.size() > 1);
  runCombo_->setCurrentIndex(0);
  setRun(mciRuns_.front());
  setStatus(
      tr("%1: %2 run(s); run 1 loaded.").arg(QFileInfo(path).fileName()).arg(mciRuns_.size()));
  return true;
}

void LightDosePanel::selectMciRun(int index) {
  if (index < 0 || index >= int(mciRuns_.size())) return;
  if (runCombo_->currentIndex() != index) runCombo_->setCurrentIndex(index);
  setRun(mciRuns_[std::size_t(index)]);
  setStatus(tr("Run %1 of %2 loaded.").arg(index + 1).arg(QFileInfo(mciPath_).fileName()));
}

bool LightDosePanel::saveMco(const QString& path) {
  QString error;
  if (!controller_->saveMco(path, &error)) {
    showError(tr("Cannot save .mco"), tr("%1: %2").arg(path, error));
    return false;
  }
  setStatus(tr("Saved %1.").arg(path));
  return true;
}

bool LightDosePanel::setContourLevels(const QString& text) {
  std::vector<double> levels;
  for (const QString& t : text.split(QRegularExpression("[,;\\s]+"), Qt::SkipEmptyParts)) {
    bool ok = false;
    const double x = t.toDouble(&ok);
    if (!ok || !(x > 0) || !std::isfinite(x)) {
      setStatus(tr("Isofluence levels: '%1' is not a positive number; levels unchanged.").arg(t),
                true);
      return false;
    }
    levels.push_back(x);
  }
  if (levels_->text() != text) levels_->setText(text);
  map_->setLevels(levels);
  updateContourInfo();
  return true;
}

void LightDosePanel::showResult() {
  const auto res = controller_->result();
  if (!res) {
    map_->clear();
    contourInfo_->setText(tr("No result yet."));
    return updateButtons();
  }
  const mcml::McmlResult& r = res->result;
  const mcml::McmlConfig& c = res->run.config;
  std::vector<double> interfaces;
  double z = 0;
  for (const auto& l : res->run.medium.layers) interfaces.push_back(z += l.d);
  map_->setData(r.fluence, c.nr, c.nz, c.dr, c.dz, interfaces);
  updateContourInfo();

  // Rd(r) and A(z) without MCML's overflow bins; zeros cannot go on a log axis.
  auto fill = [](QLineSeries* s, QValueAxis* x, QLogValueAxis* y, const std::vector<double>& v,
                 double d) {
    QList<QPointF> pts;
    double lo = 0, hi = 0;
    const int n = int(v.size()) > 1 ? int(v.size()) - 1 : int(v.size());
    for (int i = 0; i < n; ++i)
      if (v[std::size_t(i)] > 0) {
        pts.append(QPointF((i + 0.5) * d, v[std::size_t(i)]));
        lo = lo == 0 ? v[std::size_t(i)] : std::min(lo, v[std::size_t(i)]);
        hi = std::max(hi, v[std::size_t(i)]);
      }
    s->replace(pts);
    x->setRange(0, n * d);
    x->applyNiceNumbers();
    fitLogAxis(y, lo, hi);
  };
  fill(rdSeries_, rdX_, rdY_, r.Rd_r, c.dr);
  // A(z) down to the bottom of the tissue: nothing is absorbed in the medium below.
  const std::size_t tissueBins = std::size_t(std::max(1.0, std::ceil(z / c.dz - 1e-9))) + 1;
  fill(azSeries_, azX_, azY_,
       std::vector<double>(r.A_z.begin(),
                           r.A_z.begin() + std::ptrdiff_t(std::min(tissueBins, r.A_z.size()))),
       c.dz);
  showSummary();
}

void LightDosePanel::updateContourInfo() {
  if (!map_->hasData()) return contourInfo_->setText(tr("No result yet."));
  // Which levels got a line, and why not the others.
  QStringList drawn, missing;
  for (std::size_t i = 0; i < map_->levels().size(); ++i) {
    const double l = map_->levels()[i];
    (map_->contourSegmentCount(int(i)) > 0 ? drawn : missing) << formatLevel(l);
  }
  double maxPhi = 0;
  for (int u = 0; u < map_->drawnRadialBins(); ++u)
    for (int v = 0; v < map_->drawnDepthBins(); ++v) maxPhi = std::max(maxPhi, map_->value(u, v));
  contourInfo_->setText(
      tr("Lines at %1 cm\u207b\u00b2%2. Maximum %3 cm\u207b\u00b2. Units: per launched photon "
         "weight "
         "(J cm\u207b\u00b2 per J). The last r and z bins (beyond the grid) are not drawn.")
          .arg(drawn.isEmpty() ? tr("no level") : drawn.join(", "))
          .arg(missing.isEmpty() ? QString()
                                 : tr("; none at %1 (outside the data)").arg(missing.join(", ")))
          .arg(maxPhi, 0, 'g', 4));
}

void LightDosePanel::showSummary() {
  const auto res = controller_->result();
  const mcml::McmlResult& r = res->result;
  const mcml::McmlConfig& c = res->run.config;
  // Value (exact in UserRole) and standard error.
  const double sum = r.Rsp + r.Rd + r.A + r.Tt;
  const double values[kLayerRows][2] = {{r.Rsp, 0},      {r.Rd, r.RdErr}, {r.A, r.AErr},
                                        {r.Tt, r.TtErr}, {sum, 0},        {r.rouletteGain, 0}};
  summary_->setRowCount(kLayerRows + int(r.A_l.size()));
  for (int row = 0; row < kLayerRows + int(r.A_l.size()); ++row) {
    const bool layer = row >= kLayerRows;
    const double value = layer ? r.A_l[std::size_t(row - kLayerRows)] : values[row][0];
    auto* item = numberItem(value, row == kSum ? 10 : 6);
    item->setData(Qt::UserRole, value);
    summary_->setItem(row, 0, item);
    const bool hasErr = !layer && (row == kRd || row == kA || row == kTt);
    auto* err = hasErr ? numberItem(values[row][1], 3) : new QTableWidgetItem;
    if (hasErr) err->setData(Qt::UserRole, values[row][1]);
    summary_->setItem(row, 1, err);
    if (layer)
      summary_->setVerticalHeaderItem(
          row, new QTableWidgetItem(tr("  A in layer %1").arg(row - kLayerRows + 1)));
  }
  const QString where = r.backend == Backend::Cuda ? tr("on %1 x %2 (%3 tally)")
                                                         .arg(r.devicesUsed)
                                                         .arg(QString::fromStdString(r.device),
                                                              QString(mcml::toString(r.tally)))
                                                   : tr("on the CPU (double tally)");
  runInfo_->setText(
      tr("%1 packets %2, %3 x %4 bins of %5 x %6 cm; standard errors from %7 batches. "
         "Energy: Rsp + Rd + A + Tt - 1 - roulette gain = %8.")
          .arg(double(c.packets), 0, 'g', 4)
          .arg(where)
          .arg(c.nr)
          .arg(c.nz)
          .arg(c.dr)
          .arg(c.dz)
          .arg(c.batches)
          .arg(r.energyBalance(), 0, 'g', 3));
  updateButtons();
}

void LightDosePanel::updateButtons() {
  const bool running = controller_->isRunning();
  runButton_->setEnabled(!running);
  cancelButton_->setEnabled(running);
  saveButton_->setEnabled(controller_->result() != nullptr);
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

void LightDosePanel::setStatus(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? "color: #c62828;" : QString());
}

void LightDosePanel::showError(const QString& title, const QString& text) {
  setStatus(title + ": " + text, true);
  // Non-modal, so the application (and a GUI test) keeps running while it is shown.
  auto* box = new QMessageBox(QMessageBox::Critical, title, text, QMessageBox::Ok, this);
  box->setObjectName("lightDoseErrorBox");
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->setModal(false);
  box->show();
}

QDockWidget* createLightDoseDock(QMainWindow* window, JobRunner* jobs) {
  auto* dock = new QDockWidget(QObject::tr("Light dose (MCML)"), window);
  dock->setObjectName("lightDoseDock");
  auto* controller = new LightDoseController(jobs, dock);
  dock->setWidget(new LightDosePanel(controller, dock));
  window->addDockWidget(Qt::BottomDockWidgetArea, dock);
  dock->setFloating(true);
  dock->hide();
  return dock;
}

void showLightDoseDock(QDockWidget* dock) {
  if (!dock) return;
  if (dock->isFloating() && !dock->property("placed").toBool()) {
    // First opening: a window of its own over the main window, large enough for the map.
    const QWidget* main = dock->parentWidget();
    const QSize size(1240, 800);
    dock->resize(size);
    if (main) dock->move(main->geometry().center() - QPoint(size.width() / 2, size.height() / 2));
    dock->setProperty("placed", true);
  }
  dock->show();
  dock->raise();
  dock->activateWindow();
}

}  // namespace penumbra::gui
