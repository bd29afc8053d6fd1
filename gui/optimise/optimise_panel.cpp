#include "gui/optimise/optimise_panel.hpp"

#include <algorithm>
#include <cmath>

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>

#include "gui/jobs/job_runner.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/robustness_model.hpp"
#include "gui/model/view_state.hpp"

namespace penumbra::gui {

namespace {
enum Column { ColStructure, ColType, ColKind, ColLevel, ColWeight, ColCount };
const optimise::TermType kKinds[] = {optimise::TermType::Uniform, optimise::TermType::MinDose,
                                     optimise::TermType::MaxDose, optimise::TermType::MeanDose};
}  // namespace

OptimisePanel::OptimisePanel(OptimiseController* controller, PlanModel* plan, ViewState* state,
                             std::function<DoseRunOptions()> doseOptions, QWidget* parent)
    : QWidget(parent), controller_(controller), plan_(plan), doseOptions_(std::move(doseOptions)) {
  setObjectName("optimisePanel");
  auto* layout = new QVBoxLayout(this);

  table_ = new QTableWidget(0, ColCount);
  table_->setObjectName("objectivesTable");
  table_->setHorizontalHeaderLabels({tr("Structure"), tr("Type"), tr("Objective"), tr("Dose [Gy]"), tr("Weight")});
  table_->horizontalHeader()->setSectionResizeMode(ColStructure, QHeaderView::Stretch);
  for (int c = ColType; c < ColCount; ++c) table_->horizontalHeader()->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  table_->verticalHeader()->setVisible(false);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setMinimumHeight(150);
  layout->addWidget(table_, 2);

  auto* rowButtons = new QHBoxLayout;
  auto* add = new QPushButton(tr("Add term"));
  add->setObjectName("addObjectiveButton");
  add->setToolTip(tr("Adds a term for the selected row's structure"));
  auto* remove = new QPushButton(tr("Remove"));
  remove->setObjectName("removeObjectiveButton");
  auto* reset = new QPushButton(tr("Defaults"));
  reset->setObjectName("resetObjectivesButton");
  reset->setToolTip(tr("Objectives from the structure types and the prescription"));
  rowButtons->addWidget(add);
  rowButtons->addWidget(remove);
  rowButtons->addStretch();
  rowButtons->addWidget(reset);
  layout->addLayout(rowButtons);
  connect(add, &QPushButton::clicked, this, [this] {
    const int r = std::max(0, table_->currentRow());
    auto current = rows();
    if (current.empty()) return;
    ObjectiveRow row = current[std::size_t(std::min<int>(r, int(current.size()) - 1))];
    row.kind = optimise::TermType::MaxDose;
    addRow(row);
  });
  connect(remove, &QPushButton::clicked, this, [this] {
    if (table_->currentRow() >= 0) table_->removeRow(table_->currentRow());
  });
  connect(reset, &QPushButton::clicked, this, &OptimisePanel::resetDefaults);

  auto* form = new QFormLayout;
  cutoff_ = new QDoubleSpinBox;
  cutoff_->setObjectName("cutoffSpin");
  cutoff_->setDecimals(6);
  cutoff_->setRange(1e-6, 0.1);
  cutoff_->setSingleStep(1e-4);
  cutoff_->setValue(OptimiseSettings{}.relativeCutoff);
  cutoff_->setToolTip(tr("Dose-matrix entries below this fraction of their spot's maximum are dropped"));
  iterations_ = new QSpinBox;
  iterations_->setObjectName("maxIterationsSpin");
  iterations_->setRange(1, 10000);
  iterations_->setValue(OptimiseSettings{}.maxIterations);
  form->addRow(tr("Matrix cut-off"), cutoff_);
  form->addRow(tr("Max iterations"), iterations_);
  robust_ = new QComboBox;
  robust_->setObjectName("robustModeCombo");
  robust_->addItem(tr("none (nominal plan)"), -1);
  robust_->addItem(tr("expected value"), int(optimise::RobustMode::ExpectedValue));
  robust_->addItem(tr("composite worst case"), int(optimise::RobustMode::CompositeWorstCase));
  robust_->setToolTip(tr("Robust optimisation over the Robustness panel's error scenarios: one dose matrix "
                         "per scenario; the mean objective (expected value) or the worst scenario's (minimax)"));
  robust_->setEnabled(false);  // until the scenario settings are known (setRobustnessModel)
  robustHint_ = new QLabel;
  robustHint_->setObjectName("robustScenariosLabel");
  robustHint_->setWordWrap(true);
  robustHint_->setVisible(false);
  form->addRow(tr("Robust"), robust_);
  form->addRow(robustHint_);
  connect(robust_, &QComboBox::currentIndexChanged, this, &OptimisePanel::updateRobustHint);
  layout->addLayout(form);

  auto* runButtons = new QHBoxLayout;
  optimiseButton_ = new QPushButton(tr("Optimise"));
  optimiseButton_->setObjectName("optimiseButton");
  stopButton_ = new QPushButton(tr("Stop"));
  stopButton_->setObjectName("stopOptimiseButton");
  stopButton_->setToolTip(tr("Stops at the next iteration and keeps the best weights"));
  runButtons->addWidget(optimiseButton_);
  runButtons->addWidget(stopButton_);
  layout->addLayout(runButtons);
  connect(optimiseButton_, &QPushButton::clicked, this, &OptimisePanel::optimise);
  connect(stopButton_, &QPushButton::clicked, this, &OptimisePanel::stop);

  status_ = new QLabel(tr("Generate spots, check the objectives, then Optimise."));
  status_->setObjectName("optimiseStatusLabel");
  status_->setWordWrap(true);
  layout->addWidget(status_);

  auto* chart = new QChart;
  chart->setTitle(tr("Objective per iteration"));
  chart->legend()->hide();
  chart->setMargins(QMargins(4, 4, 4, 4));
  series_ = new QLineSeries;
  series_->setObjectName("objectiveSeries");
  series_->setPointsVisible(true);
  chart->addSeries(series_);
  xAxis_ = new QValueAxis;
  xAxis_->setTitleText(tr("iteration"));
  xAxis_->setLabelFormat("%d");
  xAxis_->setRange(0, 10);
  yAxis_ = new QLogValueAxis;
  yAxis_->setTitleText(tr("objective [Gy²]"));
  yAxis_->setLabelFormat("%.3g");
  yAxis_->setRange(1e-3, 1);
  chart->addAxis(xAxis_, Qt::AlignBottom);
  chart->addAxis(yAxis_, Qt::AlignLeft);
  series_->attachAxis(xAxis_);
  series_->attachAxis(yAxis_);
  chartView_ = new QChartView(chart);
  chartView_->setObjectName("objectiveChart");
  chartView_->setRenderHint(QPainter::Antialiasing);
  chartView_->setMinimumHeight(200);
  layout->addWidget(chartView_, 3);

  connect(controller_, &OptimiseController::started, this, [this](Job* job) {
    series_->clear();
    yMin_ = yMax_ = 0;
    keptNoteShown_ = false;
    status_->setText(tr("Building the dose matrix ..."));
    connect(job, &Job::progressChanged, this, [this](double, const QString& stage) { status_->setText(stage); });
    updateButtons();
  });
  connect(controller_, &OptimiseController::iterationRecorded, this,
          [this](int it, double f, double) { onIteration(it, f); });
  connect(controller_, &OptimiseController::finished, this, [this](Job* job) {
    const auto& o = controller_->outcome();
    if (job->state() == Job::State::Failed)
      status_->setText(tr("Failed: %1").arg(job->errorMessage()));
    else if (o.iterations > 0 || job->state() == Job::State::Done)
      status_->setText(tr("%1: %2, %3 it/s (%4), f = %5; D %6 x %7, %8 non-zeros%9")
                           .arg(job->state() == Job::State::Cancelled ? tr("Stopped, best weights kept")
                                                                        : QString(optimise::toString(o.state)),
                                countOf(o.iterations, "iteration"))
                           .arg(o.iterationsPerSecond, 0, 'f', 1)
                           .arg(o.backend)
                           .arg(o.objective, 0, 'g', 4)
                           .arg(o.rows)
                           .arg(o.cols)
                           .arg(o.nnz)
                           .arg(o.scenarios > 0 ? tr("; robust over %1, worst: %2")
                                                      .arg(countOf(o.scenarios, "scenario"), o.worstScenario)
                                                : QString()));
    else
      status_->setText(tr("Cancelled."));
    updateButtons();
  });
  connect(state, &ViewState::sceneChanged, this, &OptimisePanel::resetDefaults);
  connect(plan_, &PlanModel::prescriptionChanged, this, &OptimisePanel::onPrescriptionChanged);
  connect(plan_, &PlanModel::planChanged, this, &OptimisePanel::updateButtons);
  resetDefaults();
  updateButtons();
}

void OptimisePanel::addRow(const ObjectiveRow& row) {
  const int r = table_->rowCount();
  table_->insertRow(r);
  auto* name = new QTableWidgetItem(row.structure);
  name->setFlags(name->flags() & ~Qt::ItemIsEditable);
  table_->setItem(r, ColStructure, name);
  auto* type = new QComboBox;
  type->addItem(tr("Target"), int(optimise::StructureRole::Target));
  type->addItem(tr("OAR"), int(optimise::StructureRole::OrganAtRisk));
  type->setCurrentIndex(row.role == optimise::StructureRole::Target ? 0 : 1);
  table_->setCellWidget(r, ColType, type);
  auto* kind = new QComboBox;
  for (auto k : kKinds) kind->addItem(optimise::toString(k), int(k));
  kind->setCurrentIndex(kind->findData(int(row.kind)));
  table_->setCellWidget(r, ColKind, kind);
  auto* level = new QDoubleSpinBox;
  level->setRange(0, 1000);
  level->setDecimals(3);
  level->setSingleStep(0.05);
  level->setValue(row.levelGy);
  table_->setCellWidget(r, ColLevel, level);
  auto* weight = new QDoubleSpinBox;
  weight->setRange(0, 1e6);
  weight->setDecimals(2);
  weight->setValue(row.weight);
  table_->setCellWidget(r, ColWeight, weight);
}

std::vector<ObjectiveRow> OptimisePanel::rows() const {
  std::vector<ObjectiveRow> out;
  for (int r = 0; r < table_->rowCount(); ++r) {
    ObjectiveRow row;
    row.structure = table_->item(r, ColStructure)->text();
    row.role = optimise::StructureRole(qobject_cast<QComboBox*>(table_->cellWidget(r, ColType))->currentData().toInt());
    row.kind = optimise::TermType(qobject_cast<QComboBox*>(table_->cellWidget(r, ColKind))->currentData().toInt());
    row.levelGy = qobject_cast<QDoubleSpinBox*>(table_->cellWidget(r, ColLevel))->value();
    row.weight = qobject_cast<QDoubleSpinBox*>(table_->cellWidget(r, ColWeight))->value();
    out.push_back(row);
  }
  return out;
}

void OptimisePanel::setRows(const std::vector<ObjectiveRow>& rows) {
  table_->setRowCount(0);
  for (const auto& r : rows) addRow(r);
}

void OptimisePanel::resetDefaults() {
  setRows(controller_->defaultObjectives());
  shownDefaults_ = rows();
  defaultsRxGy_ = plan_->prescriptionGy();
  if (keptNoteShown_) {
    keptNoteShown_ = false;
    status_->setText(tr("Default objectives for %1 Gy.").arg(defaultsRxGy_, 0, 'g', 6));
  }
}

void OptimisePanel::onPrescriptionChanged(double gy) {
  // Untouched defaults follow the prescription; anything else is the user's work (edited rows,
  // a case's objectives), which a prescription change must never replace silently.
  if (rows() == shownDefaults_) {
    resetDefaults();
    return;
  }
  if (gy == defaultsRxGy_) {  // back to the dose the table's defaults were made for
    if (keptNoteShown_) status_->setText(tr("Prescription back to %1 Gy.").arg(gy, 0, 'g', 6));
    keptNoteShown_ = false;
    return;
  }
  status_->setText(tr("Prescription now %1 Gy: your objectives are kept; Defaults recomputes them from it.")
                       .arg(gy, 0, 'g', 6));
  keptNoteShown_ = true;
}

OptimiseSettings OptimisePanel::settings() const {
  OptimiseSettings s;
  s.relativeCutoff = cutoff_->value();
  s.maxIterations = iterations_->value();
  const int mode = robust_->currentData().toInt();
  if (robustness_ && mode >= 0) {
    s.robust = true;
    s.robustMode = optimise::RobustMode(mode);
    s.scenarios = robustness_->settings().scenarios;
  }
  return s;
}

void OptimisePanel::setRobustnessModel(RobustnessModel* model) {
  if (robustness_) disconnect(robustness_, nullptr, this, nullptr);
  robustness_ = model;
  robust_->setEnabled(model != nullptr);
  if (!model) robust_->setCurrentIndex(0);
  else connect(model, &RobustnessModel::settingsChanged, this, &OptimisePanel::updateRobustHint);
  updateRobustHint();
}

void OptimisePanel::updateRobustHint() {
  const bool on = robustness_ && robust_->currentData().toInt() >= 0;
  robustHint_->setVisible(on);
  if (!on) return;
  const robust::ScenarioOptions& o = robustness_->settings().scenarios;
  QString count;
  try {
    count = countOf(qsizetype(robust::makeScenarios(o).size()), "scenario");
  } catch (const std::exception& e) {
    count = tr("no scenario (%1)").arg(QString::fromStdString(e.what()));
  }
  robustHint_->setText(tr("%1 (range %2 %, setup %3 mm; Robustness panel), one dose matrix each")
                           .arg(count)
                           .arg(o.rangePercent, 0, 'g', 3)
                           .arg(o.setupMm, 0, 'g', 3));
}

void OptimisePanel::setSettings(const OptimiseSettings& s) {
  cutoff_->setValue(s.relativeCutoff);
  iterations_->setValue(s.maxIterations);
  // The scenarios are not the panel's (the Robustness panel's model holds them): only the mode.
  const int mode = s.robust ? robust_->findData(int(s.robustMode)) : 0;
  robust_->setCurrentIndex(mode >= 0 ? mode : 0);
}

void OptimisePanel::optimise() {
  controller_->start(rows(), settings(), doseOptions_ ? doseOptions_() : DoseRunOptions{});
  updateButtons();
}

void OptimisePanel::stop() { controller_->stop(); }

void OptimisePanel::onIteration(int iteration, double objective) {
  const double f = std::max(objective, 1e-12);
  series_->append(iteration, f);
  yMin_ = series_->count() == 1 ? f : std::min(yMin_, f);
  yMax_ = series_->count() == 1 ? f : std::max(yMax_, f);
  xAxis_->setRange(0, std::max(10, iteration + 1));
  yAxis_->setRange(std::pow(10.0, std::floor(std::log10(yMin_))), std::pow(10.0, std::ceil(std::log10(yMax_ * 1.0001))));
}

void OptimisePanel::updateButtons() {
  const bool running = controller_->isRunning();
  optimiseButton_->setEnabled(!running && plan_->totalSpots() > 0);
  stopButton_->setEnabled(running);
}

}  // namespace penumbra::gui
