#include "gui/robust/robustness_panel.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "gui/model/dose_set_store.hpp"
#include "gui/model/plural.hpp"
#include "gui/robust/robustness_controller.hpp"
#include "gui/robust/robustness_table.hpp"
#include "gui/widgets/form_controls.hpp"

namespace penumbra::gui {

namespace {
/// Directions combo: the six axis directions, or N on a sphere.
enum DirectionChoice { kAxes = 0, kSphere = 1 };
/// The sphere's default when the user switches to it (26: the axes, face and corner diagonals'
/// count of a 3 x 3 x 3 cube, a common choice).
constexpr int kDefaultSphere = 26;
constexpr int kTableTab = 1;
}  // namespace

RobustnessPanel::RobustnessPanel(RobustnessController* controller, QWidget* parent)
    : QWidget(parent), controller_(controller) {
  setObjectName("robustnessPanel");
  // Run and its state on top, always in sight; under them the scenario editor and the table as
  // two tabs, so that the table keeps its rows in the right column's height at 1280 x 800.
  auto* layout = new QVBoxLayout(this);
  run_ = makeButton(tr("Run"), "robustnessRunButton");
  run_->setToolTip(tr("Evaluate the plan under every scenario (GPU when present)"));
  cancel_ = makeButton(tr("Cancel"), "robustnessCancelButton");
  cancel_->setEnabled(false);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(run_, 1);
  buttons->addWidget(cancel_);
  layout->addLayout(buttons);
  progress_ = new QProgressBar;
  progress_->setObjectName("robustnessProgressBar");
  progress_->setRange(0, 1000);
  progress_->setTextVisible(false);
  progress_->setMaximumHeight(12);
  layout->addWidget(progress_);
  status_ = new QLabel;
  status_->setObjectName("robustnessStatusLabel");
  status_->setWordWrap(true);
  status_->setVisible(false);
  layout->addWidget(status_);
  live_ = new QLabel;
  live_->setObjectName("robustnessLiveLabel");
  live_->setWordWrap(true);
  live_->setVisible(false);
  layout->addWidget(live_);

  tabs_ = new QTabWidget;
  tabs_->setObjectName("robustnessTabs");
  tabs_->addTab(buildEditor(), tr("Scenarios"));
  auto* results = new QWidget;
  auto* resultsLayout = new QVBoxLayout(results);
  resultsLayout->setContentsMargins(4, 4, 4, 4);
  summary_ = new QLabel(tr("No evaluation yet: press Run."));
  summary_->setObjectName("robustnessSummaryLabel");
  summary_->setWordWrap(true);
  resultsLayout->addWidget(summary_);
  table_ = makeRobustnessTable();
  resultsLayout->addWidget(table_, 1);
  worst_ = makeButton(tr("Add worst case"), "robustnessWorstDoseButton");
  worst_->setToolTip(
      tr("A dose set of the voxel-wise worst case: the minimum over the scenarios inside the "
         "targets, the maximum elsewhere"));
  spread_ = makeButton(tr("Add spread"), "robustnessSpreadDoseButton");
  spread_->setToolTip(
      tr("A dose set of the voxel-wise spread: maximum - minimum over the scenarios"));
  bands_ = new QCheckBox(tr("DVH bands"));
  bands_->setObjectName("robustnessBandsCheck");
  bands_->setToolTip(tr("Each structure's DVH range over the scenarios, drawn in the DVH panel"));
  bands_->setChecked(controller_->model()->bandsVisible());
  auto* doses = new QHBoxLayout;
  doses->addWidget(worst_, 1);
  doses->addWidget(spread_, 1);
  doses->addWidget(bands_);
  resultsLayout->addLayout(doses);
  tabs_->addTab(results, tr("Table"));
  layout->addWidget(tabs_, 1);

  connect(run_, &QPushButton::clicked, this, &RobustnessPanel::run);
  connect(cancel_, &QPushButton::clicked, controller_, &RobustnessController::cancel);
  connect(worst_, &QPushButton::clicked, controller_, &RobustnessController::addWorstCaseDoseSet);
  connect(spread_, &QPushButton::clicked, controller_, &RobustnessController::addSpreadDoseSet);
  RobustnessModel* model = controller_->model();
  connect(bands_, &QCheckBox::toggled, model, &RobustnessModel::setBandsVisible);
  connect(model, &RobustnessModel::bandsChanged, this, [this] {
    const QSignalBlocker block(bands_);
    bands_->setChecked(controller_->model()->bandsVisible());
  });
  connect(model, &RobustnessModel::settingsChanged, this,
          [this] { setSettings(controller_->model()->settings()); });
  connect(model, &RobustnessModel::evaluationChanged, this, &RobustnessPanel::showEvaluation);
  connect(model, &RobustnessModel::staleChanged, this, &RobustnessPanel::showEvaluation);
  connect(controller_, &RobustnessController::started, this, &RobustnessPanel::onStarted);
  connect(controller_, &RobustnessController::finished, this, &RobustnessPanel::onFinished);
  connect(controller_, &RobustnessController::liveStatusChanged, this, [this](const QString& text) {
    live_->setText(text);
    live_->setVisible(!text.isEmpty());
  });
  live_->setText(controller_->liveStatus());
  live_->setVisible(!live_->text().isEmpty());
  setSettings(model->settings());
  showEvaluation();
}

QWidget* RobustnessPanel::buildEditor() {
  // Two controls a row: the dock shares the right column with the other panels.
  auto* box = new QWidget;
  auto* grid = new QGridLayout(box);
  grid->setContentsMargins(4, 4, 4, 4);
  grid->setHorizontalSpacing(6);
  grid->setVerticalSpacing(4);
  const robust::ScenarioOptions defaults;
  range_ = makeDoubleSpinBox("robustnessRangeSpin", 0, 20, defaults.rangePercent, 0.5, 1, " %");
  range_->setToolTip(
      tr("Range error: every stopping-power ratio scaled by 1 +- this (0: no range scenarios)"));
  setup_ = makeDoubleSpinBox("robustnessSetupSpin", 0, 20, defaults.setupMm, 0.5, 1, " mm");
  setup_->setToolTip(
      tr("Setup error: every isocentre shifted by this distance (0: no shift scenarios)"));
  grid->addWidget(new QLabel(tr("Range ±")), 0, 0);
  grid->addWidget(range_, 0, 1);
  grid->addWidget(new QLabel(tr("Setup ±")), 0, 2);
  grid->addWidget(setup_, 0, 3);
  directions_ = new QComboBox;
  directions_->setObjectName("robustnessDirectionsCombo");
  directions_->addItem(tr("±L, ±P, ±S"), kAxes);
  directions_->addItem(tr("sphere"), kSphere);
  directions_->setToolTip(
      tr("Setup shifts along the patient axes (6), or N directions spread evenly on a sphere"));
  sphere_ = new QSpinBox;
  sphere_->setObjectName("robustnessSphereSpin");
  sphere_->setRange(1, 1000);
  sphere_->setValue(kDefaultSphere);
  sphere_->setSuffix(tr(" dir."));
  sphere_->setKeyboardTracking(false);
  sphere_->setToolTip(tr("Shift directions spread evenly on the sphere"));
  grid->addWidget(new QLabel(tr("Shifts")), 1, 0);
  grid->addWidget(directions_, 1, 1);
  grid->addWidget(sphere_, 1, 2, 1, 2);
  combine_ = new QCheckBox(tr("Combine"));
  combine_->setObjectName("robustnessCombineCheck");
  combine_->setToolTip(
      tr("On: every range error with every shift (3 x 7 = 21 by default); off: each alone "
         "(1 + 2 + 6 = 9)"));
  grid_ = makeDoubleSpinBox("robustnessGridSpin", 0, 20, 0, 1, 1, " mm");
  grid_->setSpecialValueText(tr("as plan"));
  grid_->setToolTip(
      tr("Dose grid of the evaluation; a coarser grid is faster (\"as plan\": the Plan dock's)"));
  grid->addWidget(combine_, 2, 0, 1, 2);
  grid->addWidget(new QLabel(tr("Grid")), 2, 2);
  grid->addWidget(grid_, 2, 3);
  count_ = new QLabel;
  count_->setObjectName("robustnessScenarioCountLabel");
  grid->addWidget(count_, 3, 0, 1, 4);
  scenarios_ = new QListWidget;
  scenarios_->setObjectName("robustnessScenarioList");
  scenarios_->setToolTip(tr("The scenarios that will run, the nominal first"));
  scenarios_->setMinimumHeight(60);
  grid->addWidget(scenarios_, 4, 0, 1, 4);
  grid->setRowStretch(4, 1);
  grid->setColumnStretch(1, 1);
  grid->setColumnStretch(3, 1);

  for (QDoubleSpinBox* sb : {range_, setup_, grid_})
    connect(sb, &QDoubleSpinBox::valueChanged, this, &RobustnessPanel::onEdited);
  connect(sphere_, &QSpinBox::valueChanged, this, &RobustnessPanel::onEdited);
  connect(directions_, &QComboBox::currentIndexChanged, this, &RobustnessPanel::onEdited);
  connect(combine_, &QCheckBox::toggled, this, &RobustnessPanel::onEdited);
  return box;
}

RobustnessSettings RobustnessPanel::settings() const {
  RobustnessSettings s;
  s.scenarios.rangePercent = range_->value();
  s.scenarios.setupMm = setup_->value();
  s.scenarios.sphereDirections =
      directions_->currentData().toInt() == kSphere ? sphere_->value() : 0;
  s.scenarios.combine = combine_->isChecked();
  s.doseGridMm = grid_->value();
  return s;
}

void RobustnessPanel::setSettings(const RobustnessSettings& s) {
  updating_ = true;
  range_->setValue(s.scenarios.rangePercent);
  setup_->setValue(s.scenarios.setupMm);
  directions_->setCurrentIndex(s.scenarios.sphereDirections > 0 ? kSphere : kAxes);
  if (s.scenarios.sphereDirections > 0) sphere_->setValue(s.scenarios.sphereDirections);
  combine_->setChecked(s.scenarios.combine);
  grid_->setValue(s.doseGridMm);
  updating_ = false;
  onEdited();
}

void RobustnessPanel::onEdited() {
  if (updating_) return;
  sphere_->setEnabled(directions_->currentData().toInt() == kSphere);
  controller_->model()->setSettings(settings());
  refreshScenarioList();
}

void RobustnessPanel::refreshScenarioList() {
  QString error;
  const auto list = controller_->scenarios(&error);
  scenarios_->clear();
  for (const auto& s : list) scenarios_->addItem(QString::fromStdString(s.name));
  count_->setText(list.empty()
                      ? tr("No scenario: %1").arg(error)
                      : tr("%1 will run").arg(countOf(qsizetype(list.size()), "scenario")));
  count_->setStyleSheet(list.empty() ? QStringLiteral("color: #b00020;") : QString());
  updateButtons();
}

void RobustnessPanel::run() {
  controller_->model()->setSettings(settings());
  controller_->run();
}

void RobustnessPanel::setStatus(const QString& text, bool error) {
  status_->setText(text);
  status_->setStyleSheet(error ? QStringLiteral("color: #b00020;") : QString());
  status_->setVisible(!text.isEmpty());
}

void RobustnessPanel::onStarted(Job* job) {
  setStatus(tr("Evaluating..."), false);
  progress_->setValue(0);
  connect(job, &Job::progressChanged, this, [this](double f, const QString& stage) {
    progress_->setValue(int(f * 1000));
    setStatus(stage, false);
  });
  updateButtons();
}

void RobustnessPanel::onFinished(bool ok, const QString& message) {
  progress_->setValue(ok ? 1000 : 0);
  if (ok) tabs_->setCurrentIndex(kTableTab);
  setStatus(ok ? QString() : message, !ok);
  updateButtons();
}

void RobustnessPanel::showEvaluation() {
  RobustnessModel* model = controller_->model();
  const auto e = model->current();
  const bool stale = model->isStale();
  if (!e || !e->result) {
    summary_->setText(tr("No evaluation yet: press Run."));
    fillRobustnessTable(table_, nullptr, false);
  } else {
    const robust::RobustnessResult& r = *e->result;
    QString text =
        tr("Robustness %1 at %2: %3").arg(e->runNumber).arg(e->when, robustnessSummary(r));
    if (stale) text += tr(" - for an earlier plan (press Run)");
    summary_->setText(text);
    summary_->setToolTip(QString::fromStdString(r.device));
    fillRobustnessTable(table_, &r, stale);
  }
  updateButtons();
}

void RobustnessPanel::updateButtons() {
  const bool running = controller_->isRunning();
  const auto e = controller_->model()->current();
  run_->setEnabled(!running && scenarios_->count() > 0);
  cancel_->setEnabled(running);
  worst_->setEnabled(e != nullptr);
  spread_->setEnabled(e != nullptr);
  bands_->setEnabled(e != nullptr);
}

}  // namespace penumbra::gui
