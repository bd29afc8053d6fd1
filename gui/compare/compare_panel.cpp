#include "gui/compare/compare_panel.hpp"

#include <QAbstractItemView>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QTabWidget>
#include <QTableWidget>
#include <QVBoxLayout>

#include "gui/compare/compare_controller.hpp"
#include "gui/compare/compare_report.hpp"
#include "gui/compare/compare_tables.hpp"
#include "gui/compare/compare_view_controls.hpp"
#include "gui/compare/gamma_histogram.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/jobs/job_runner.hpp"
#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/widgets/elided_label.hpp"
#include "gui/widgets/form_controls.hpp"

namespace penumbra::gui {

ComparePanel::ComparePanel(CompareController* controller, DvhStore* dvhs, PlanModel* plan, PlanController* planner,
                           QWidget* parent)
    : QWidget(parent), controller_(controller), dvhs_(dvhs), plan_(plan), planner_(planner) {
  setObjectName("comparePanel");
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(buildForm());

  message_ = new QLabel;
  message_->setObjectName("compareMessageLabel");
  message_->setWordWrap(true);
  message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  message_->setVisible(false);
  layout->addWidget(message_);

  passRate_ = new QLabel(tr("No comparison yet: choose A and B and press Compute gamma."));
  passRate_->setObjectName("comparePassRateLabel");
  passRate_->setWordWrap(true);
  QFont big = passRate_->font();
  big.setPointSizeF(big.pointSizeF() * 1.35);
  big.setBold(true);
  passRate_->setFont(big);
  layout->addWidget(passRate_);
  // A and B by name, each on one line elided in the middle (the whole name in the tooltip),
  // over the statistics as one block of lines.
  auto* lines = new QVBoxLayout;
  lines->setSpacing(0);
  for (ElidedLabel*& name : names_) {
    name = new ElidedLabel(&name == &names_[0] ? "compareNameALabel" : "compareNameBLabel");
    name->setTextInteractionFlags(Qt::TextSelectableByMouse);
    lines->addWidget(name);
  }
  stats_ = new QLabel;
  stats_->setObjectName("compareStatsLabel");
  stats_->setWordWrap(true);
  stats_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  lines->addWidget(stats_);
  layout->addLayout(lines);

  layout->addWidget(new CompareViewControls(controller_->model()));

  histogram_ = new GammaHistogram;
  layout->addWidget(histogram_);
  tabs_ = new QTabWidget;
  tabs_->setObjectName("compareTablesTabs");
  structures_ = makeStructureTable();
  dvhTable_ = makeDvhTable();
  tabs_->addTab(structures_, tr("Gamma per structure"));
  tabs_->addTab(dvhTable_, tr("DVH A vs B"));
  tabs_->setMinimumHeight(220);
  layout->addWidget(tabs_, 1);
  report_ = makeButton(tr("Export report (PDF)..."), "compareReportButton");
  report_->setEnabled(false);
  layout->addWidget(report_);
  connect(report_, &QPushButton::clicked, this, &ComparePanel::chooseAndWriteReport);

  DoseSetStore* store = controller_->doseSets();
  connect(store, &DoseSetStore::doseSetAdded, this, &ComparePanel::rebuildDoseSetLists);
  connect(store, &DoseSetStore::doseSetChanged, this, &ComparePanel::rebuildDoseSetLists);
  connect(store, &DoseSetStore::doseSetRemoved, this, &ComparePanel::rebuildDoseSetLists);
  connect(plan_, &PlanModel::prescriptionChanged, this, &ComparePanel::updateNormalisationControls);
  connect(controller_, &CompareController::started, this, &ComparePanel::onStarted);
  connect(controller_, &CompareController::finished, this, &ComparePanel::onFinished);
  connect(controller_->model(), &ComparisonModel::comparisonChanged, this, &ComparePanel::showResult);
  connect(dvhs_, &DvhStore::dvhsChanged, this, &ComparePanel::showDvhTable);
  connect(dvhs_, &DvhStore::cleared, this, &ComparePanel::showDvhTable);
  rebuildDoseSetLists();
  updateNormalisationControls();
  showResult();
}

QWidget* ComparePanel::buildForm() {
  auto* box = new QWidget;
  auto* form = new QFormLayout(box);
  form->setContentsMargins(0, 0, 0, 0);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  reference_ = new QComboBox;
  reference_->setObjectName("compareReferenceCombo");
  reference_->setToolTip(tr("Reference dose: gamma is evaluated at its voxels, on its grid"));
  evaluated_ = new QComboBox;
  evaluated_->setObjectName("compareEvaluatedCombo");
  evaluated_->setToolTip(tr("Evaluated dose: searched around each reference point (trilinear)"));
  for (QComboBox* c : {reference_, evaluated_}) {
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(12);
    // Long names: both ends in the list, and the whole name of the choice in the tooltip.
    c->view()->setTextElideMode(Qt::ElideMiddle);
    const QString role = c->toolTip();
    connect(c, &QComboBox::currentIndexChanged, c, [c, role] {
      const QString name = c->currentData(Qt::ToolTipRole).toString();
      c->setToolTip(name.isEmpty() ? role : name + "\n" + role);
    });
  }
  form->addRow(tr("A (reference)"), reference_);
  form->addRow(tr("B (evaluated)"), evaluated_);

  dosePercent_ = makeDoubleSpinBox("compareDosePercentSpin", 0.1, 100, 3, 0.5, 1, " %");
  distance_ = makeDoubleSpinBox("compareDistanceSpin", 0.1, 50, 3, 0.5, 1, " mm");
  globalLocal_ = new QComboBox;
  globalLocal_->setObjectName("compareGlobalLocalCombo");
  globalLocal_->addItem(tr("global"), false);
  globalLocal_->addItem(tr("local"), true);
  auto* criteria = new QHBoxLayout;
  criteria->addWidget(dosePercent_);
  criteria->addWidget(distance_);
  form->addRow(tr("DD / DTA"), criteria);

  // Rows of one or two controls: the panel must fit the right column (340 px) at 1280 x 800.
  normalisation_ = new QComboBox;
  normalisation_->setObjectName("compareNormalisationCombo");
  normalisation_->addItem(tr("A's maximum"), int(compare::Normalisation::ReferenceMax));
  normalisation_->addItem(tr("prescription"), int(compare::Normalisation::Prescription));
  normalisation_->addItem(tr("value"), int(compare::Normalisation::Value));
  normalisation_->setToolTip(tr("The dose that DD % (global) and the cut-off % are percentages of"));
  // The widest row of the form: its longest item would make the panel wider than the dock at
  // 1280 x 800 (a horizontal scroll bar, the right edge cut off).
  normalisation_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  normalisation_->setMinimumContentsLength(6);
  normalisationGy_ = makeDoubleSpinBox("compareNormalisationSpin", 0.01, 1000, 2, 0.5, 2, " Gy");
  auto* norm = new QHBoxLayout;
  norm->addWidget(globalLocal_);
  norm->addWidget(new QLabel(tr("% of")));
  norm->addWidget(normalisation_, 1);
  form->addRow(tr("Dose"), norm);
  form->addRow(tr("Value"), normalisationGy_);
  connect(normalisation_, &QComboBox::currentIndexChanged, this, &ComparePanel::updateNormalisationControls);

  cutoff_ = makeDoubleSpinBox("compareCutoffSpin", 0, 100, 10, 1, 1, " %");
  cutoff_->setToolTip(tr("Reference points below this % of the normalisation dose are not evaluated"));
  cap_ = makeDoubleSpinBox("compareCapSpin", 1.1, 10, 2, 0.5, 1, QString());
  cap_->setToolTip(tr("Gamma values above the cap are reported as the cap (the search stops there)"));
  auto* limits = new QHBoxLayout;
  limits->addWidget(cutoff_);
  limits->addWidget(new QLabel(tr("cap")));
  limits->addWidget(cap_);
  form->addRow(tr("Cut-off"), limits);

  backend_ = new QComboBox;
  backend_->setObjectName("compareBackendCombo");
  backend_->addItem(tr("Auto (GPU when present)"), int(Backend::Auto));
  backend_->addItem(tr("CPU"), int(Backend::Cpu));
  backend_->addItem(tr("CUDA GPU"), int(Backend::Cuda));
  form->addRow(tr("Backend"), backend_);

  compute_ = makeButton(tr("Compute gamma"), "compareComputeButton");
  cancel_ = makeButton(tr("Cancel"), "compareCancelButton");
  cancel_->setEnabled(false);
  progress_ = new QProgressBar;
  progress_->setObjectName("compareProgressBar");
  progress_->setRange(0, 1000);
  progress_->setTextVisible(false);
  progress_->setMaximumHeight(12);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(compute_, 1);
  buttons->addWidget(cancel_);
  form->addRow(buttons);
  backends_ = makeButton(tr("Compare backends (recompute, compare)"), "compareBackendsButton");
  backends_->setToolTip(tr("Recompute the current dose set's plan on the other backend (CPU <-> CUDA; without a "
                           "GPU, the other ray-tracing variant) and compare the two doses"));
  form->addRow(backends_);
  form->addRow(progress_);
  connect(backends_, &QPushButton::clicked, this, &ComparePanel::compareBackends);
  connect(compute_, &QPushButton::clicked, this, &ComparePanel::compute);
  connect(cancel_, &QPushButton::clicked, controller_, &CompareController::cancel);
  return box;
}

void ComparePanel::rebuildDoseSetLists() {
  DoseSetStore* store = controller_->doseSets();
  const int a = reference_->currentData().isValid() ? reference_->currentData().toInt() : -1;
  const int b = evaluated_->currentData().isValid() ? evaluated_->currentData().toInt() : -1;
  for (QComboBox* c : {reference_, evaluated_}) {
    const QSignalBlocker block(c);
    c->clear();
    for (int i = 0; i < store->count(); ++i) {
      const auto set = store->at(i);
      c->addItem(set->name, set->id);
      c->setItemData(c->count() - 1, tr("%1 (max %2 Gy)").arg(set->name).arg(set->maxGy, 0, 'f', 2), Qt::ToolTipRole);
    }
  }
  // Keep the user's choice; otherwise A = the first set and B = the newest other one.
  const int n = store->count();
  const int ai = reference_->findData(a), bi = evaluated_->findData(b);
  reference_->setCurrentIndex(ai >= 0 ? ai : (n > 0 ? 0 : -1));
  evaluated_->setCurrentIndex(bi >= 0 ? bi : n - 1);
  compute_->setEnabled(n > 0 && !controller_->isRunning());
}

bool ComparePanel::setDoseSets(int referenceId, int evaluatedId) {
  const int ai = reference_->findData(referenceId), bi = evaluated_->findData(evaluatedId);
  if (ai < 0 || bi < 0) return false;
  reference_->setCurrentIndex(ai);
  evaluated_->setCurrentIndex(bi);
  return true;
}

void ComparePanel::updateNormalisationControls() {
  const auto n = compare::Normalisation(normalisation_->currentData().toInt());
  normalisationGy_->setEnabled(n == compare::Normalisation::Value);
  if (n == compare::Normalisation::Prescription) normalisationGy_->setValue(plan_->prescriptionGy());
  // The value row says which dose is meant (A's maximum is known only once computed).
  normalisationGy_->setVisible(n != compare::Normalisation::ReferenceMax);
  if (auto* form = qobject_cast<QFormLayout*>(normalisationGy_->parentWidget()->layout()))
    if (QWidget* label = form->labelForField(normalisationGy_)) label->setVisible(normalisationGy_->isVisibleTo(this));
}

CompareSettings ComparePanel::settings() const {
  CompareSettings s;
  s.referenceId = reference_->currentData().isValid() ? reference_->currentData().toInt() : -1;
  s.evaluatedId = evaluated_->currentData().isValid() ? evaluated_->currentData().toInt() : -1;
  compare::GammaCriteria& c = s.criteria;
  c.dosePercent = dosePercent_->value();
  c.distanceMm = distance_->value();
  c.local = globalLocal_->currentData().toBool();
  c.normalisation = compare::Normalisation(normalisation_->currentData().toInt());
  c.normalisationGy = c.normalisation == compare::Normalisation::Prescription ? plan_->prescriptionGy()
                                                                               : normalisationGy_->value();
  c.cutoffPercent = cutoff_->value();
  c.gammaCap = cap_->value();
  s.backend = Backend(backend_->currentData().toInt());
  return s;
}

void ComparePanel::compute() { controller_->compute(settings()); }

void ComparePanel::compareBackends() {
  if (controller_->compareOtherBackend(planner_, settings())) {
    compute_->setEnabled(false);
    backends_->setEnabled(false);
    setMessage(tr("Recomputing the plan on the other backend; the comparison follows."), false);
  }
}

void ComparePanel::setMessage(const QString& text, bool error) {
  message_->setText(text);
  message_->setStyleSheet(error ? "color: #b00020;" : QString());
  message_->setVisible(!text.isEmpty());
}

void ComparePanel::onStarted(Job* job) {
  setMessage({}, false);
  compute_->setEnabled(false);
  backends_->setEnabled(false);
  cancel_->setEnabled(true);
  progress_->setValue(0);
  connect(job, &Job::progressChanged, this, [this](double f) { progress_->setValue(int(f * 1000)); });
}

void ComparePanel::onFinished(bool ok, const QString& message) {
  compute_->setEnabled(controller_->doseSets()->count() > 0);
  backends_->setEnabled(true);
  cancel_->setEnabled(false);
  progress_->setValue(ok ? 1000 : 0);
  if (!ok) setMessage(message, true);
}

void ComparePanel::showResult() {
  const auto c = controller_->model()->current();
  if (!c || !c->result) {
    passRate_->setText(tr("No comparison yet: choose A and B and press Compute gamma."));
    report_->setEnabled(false);
    stats_->clear();
    for (ElidedLabel* name : names_) name->setFullText({});
    histogram_->clear();
    fillStructureTable(structures_, nullptr);
    showDvhTable();
    return emit refreshed();
  }
  report_->setEnabled(true);
  const compare::CompareResult& r = *c->result;
  const auto& g = r.gammaStats;
  const auto& d = r.differenceStats;
  passRate_->setText(passRateHeadline(c->criteria, r));
  const QString cap = g.max >= c->criteria.gammaCap ? tr(" (cap)") : QString();
  names_[0]->setFullText(tr("A: %1").arg(c->reference->name));
  names_[1]->setFullText(tr("B: %1").arg(c->evaluated->name));
  stats_->setText(tr("gamma mean %1, p95 %2, max %3%4\nA - B: mean %5 Gy, min %6, max %7 Gy\n"
                     "|A - B| <= DD at %8 % of the points\nnormalisation %9 Gy, cut-off %10 Gy\n"
                     "%11 points below the cut-off\n%12, %13 s")
                      .arg(g.mean, 0, 'f', 2)
                      .arg(g.p95, 0, 'f', 2)
                      .arg(g.max, 0, 'f', 2)
                      .arg(cap)
                      .arg(d.meanGy, 0, 'f', 2)
                      .arg(d.minGy, 0, 'f', 2)
                      .arg(d.maxGy, 0, 'f', 2)
                      .arg(d.withinDosePercent, 0, 'f', 1)
                      .arg(r.normalisationGy, 0, 'f', 2)
                      .arg(c->criteria.cutoffPercent / 100 * r.normalisationGy, 0, 'f', 2)
                      .arg(groupedCount(r.belowCutoff))
                      .arg(QString::fromStdString(r.device.empty() ? toString(r.backend) : r.device))
                      .arg(r.elapsedMs / 1000, 0, 'f', 1));
  histogram_->setStatistics(g, c->criteria.gammaCap);
  fillStructureTable(structures_, &r);
  // Show the gamma map once a comparison arrives (the user can switch back to the dose).
  if (controller_->model()->viewMode() == CompareViewMode::Dose) controller_->model()->setViewMode(CompareViewMode::Gamma);
  showDvhTable();
  emit refreshed();
}

void ComparePanel::showDvhTable() {
  const auto c = controller_->model()->current();
  if (!c) return fillDvhTable(dvhTable_, {});
  fillDvhTable(dvhTable_, dvhComparisonRows(dvhs_->forDoseSet(c->reference->id), dvhs_->forDoseSet(c->evaluated->id)));
}

}  // namespace penumbra::gui

namespace penumbra::gui {

bool ComparePanel::writeReport(const QString& path, QString* error) {
  const auto c = controller_->model()->current();
  if (!c || !c->result) {
    if (error) *error = tr("there is no comparison to report");
    return false;
  }
  CompareReportInput in;
  in.comparison = c.get();
  in.dvhRows = dvhComparisonRows(dvhs_->forDoseSet(c->reference->id), dvhs_->forDoseSet(c->evaluated->id));
  in.histogram = histogram_->grab().toImage();
  if (grabViews_) in.views = grabViews_();
  in.applicationVersion = QCoreApplication::applicationVersion();
  return writeCompareReport(path, in, error);
}

void ComparePanel::chooseAndWriteReport() {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export comparison report"), "comparison.pdf",
                                                    tr("PDF (*.pdf)"));
  if (path.isEmpty()) return;
  QString error;
  if (writeReport(path, &error))
    setMessage(tr("Report written to %1").arg(path), false);
  else
    setMessage(tr("The report could not be written to %1: %2").arg(path, error), true);
}

}  // namespace penumbra::gui
