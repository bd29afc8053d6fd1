#include "gui/dose/dvh_panel.hpp"

#include <algorithm>
#include <cmath>

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QListWidget>
#include <QMessageBox>
#include <QPainter>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QStandardPaths>
#include <QTableWidget>
#include <QValueAxis>
#include <QVBoxLayout>

#include "gui/dose/dvh_bands.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/plural.hpp"
#include "gui/model/robustness_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/views/patient_tree.hpp"  // colorSwatch

namespace penumbra::gui {

namespace {

constexpr int kNameRole = Qt::UserRole;
constexpr int kIdRole = Qt::UserRole + 1;
/// At most this many points per curve: a 60 Gy curve in 0.01 Gy bins has 6000.
constexpr int kMaxPointsPerCurve = 1500;

Qt::PenStyle lineStyle(int doseSetIndex) {
  static const Qt::PenStyle styles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine,
                                        Qt::DashDotDotLine};
  return styles[std::max(0, doseSetIndex) % 5];
}

QIcon lineStyleIcon(Qt::PenStyle style) {
  QPixmap pix(28, 14);
  pix.fill(Qt::transparent);
  QPainter p(&pix);
  p.setPen(QPen(Qt::black, 2, style));
  p.drawLine(1, 7, 27, 7);
  return QIcon(pix);
}

QTableWidgetItem* numberItem(double value, int decimals) {
  auto* item = new QTableWidgetItem(std::isfinite(value) ? QString::number(value, 'f', decimals) : QString("-"));
  item->setData(Qt::UserRole, value);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

/// V(x % of the prescription) in % of the volume: the engine's figure when it was computed
/// for this prescription, else read off the cumulative curve.
double vPercent(const dvh::DvhResult& r, double computedForGy, double rxGy, double percent, double engineValue) {
  if (!(rxGy > 0)) return std::nan("");
  if (std::abs(computedForGy - rxGy) < 1e-12) return engineValue;
  if (!(r.stats.volumeCc > 0)) return std::nan("");
  return 100.0 * dvh::volumeAtDoseCc(r.curve, percent / 100.0 * rxGy) / r.stats.volumeCc;
}

}  // namespace

DvhPanel::DvhPanel(ViewState* state, DvhStore* dvhs, PlanModel* plan, QWidget* parent)
    : QWidget(parent), state_(state), dvhs_(dvhs), plan_(plan) {
  setObjectName("dvhPanel");
  chart_ = new QChart;
  chart_->legend()->hide();  // the structure list is the legend (colour swatches)
  chart_->setMargins(QMargins(4, 4, 4, 4));
  axisX_ = new QValueAxis;
  axisX_->setTitleText(tr("Dose (Gy)"));
  axisX_->setLabelFormat("%.1f");
  axisY_ = new QValueAxis;
  axisY_->setTitleText(tr("Volume (%)"));
  axisY_->setRange(0, 100);
  axisY_->setLabelFormat("%.0f");
  axisY_->setTickCount(6);
  chart_->addAxis(axisX_, Qt::AlignBottom);
  chart_->addAxis(axisY_, Qt::AlignLeft);
  view_ = new QChartView(chart_);
  view_->setObjectName("dvhChartView");
  view_->setRenderHint(QPainter::Antialiasing);
  view_->setMinimumHeight(160);

  structures_ = new QListWidget;
  structures_->setObjectName("dvhStructureList");
  structures_->setToolTip(tr("Structures drawn in the DVH and listed in the table"));
  doseSets_ = new QListWidget;
  doseSets_->setObjectName("dvhDoseSetList");
  doseSets_->setToolTip(tr("Dose sets overlaid for comparison (one line style each)"));
  status_ = new QLabel(tr("No dose yet: compute a dose to see DVHs."));
  status_->setObjectName("dvhStatusLabel");
  status_->setWordWrap(true);
  auto* lists = new QWidget;
  auto* listLayout = new QVBoxLayout(lists);
  listLayout->setContentsMargins(0, 0, 0, 0);
  listLayout->addWidget(new QLabel(tr("Structures")));
  listLayout->addWidget(structures_, 3);
  listLayout->addWidget(new QLabel(tr("Dose sets")));
  listLayout->addWidget(doseSets_, 1);
  listLayout->addWidget(status_);

  table_ = new QTableWidget(0, kStatColumns);
  table_->setObjectName("dvhStatsTable");
  table_->setHorizontalHeaderLabels({tr("Structure"), tr("Dose set"), tr("Volume (cc)"), tr("Dmin (Gy)"),
                                     tr("Dmean (Gy)"), tr("Dmax (Gy)"), tr("D98 (Gy)"), tr("D95 (Gy)"),
                                     tr("D50 (Gy)"), tr("D2 (Gy)"), tr("V95 (%)"), tr("V107 (%)")});
  table_->verticalHeader()->hide();
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->setToolTip(tr("V95/V107: % of the structure receiving at least 95/107 % of the prescription"));

  queryEdit_ = new QLineEdit;
  queryEdit_->setObjectName("dvhQueryEdit");
  queryEdit_->setPlaceholderText(tr("D0.03cc, V20Gy, D95%, V95%"));
  queryEdit_->setClearButtonEnabled(true);
  queryEdit_->setToolTip(tr("More columns, read off the cumulative DVH (linear interpolation):\n"
                            "D95% / D0.03cc: dose [Gy] to 95 % / the hottest 0.03 cc of the structure\n"
                            "V20Gy / V95%: volume [%] receiving 20 Gy / 95 % of the prescription\n"
                            "Dmean, Dmax, Dmin; [%] after a D gives % of the prescription, [cc] after a V cc"));
  export_ = new QPushButton(tr("Export CSV..."));
  export_->setObjectName("exportDvhCsv");
  export_->setToolTip(tr("The curves shown: structure, dose set, dose (Gy), volume (% and cc)"));
  export_->setEnabled(false);
  auto* queryBar = new QHBoxLayout;
  queryBar->setContentsMargins(0, 0, 0, 0);
  queryBar->addWidget(new QLabel(tr("Queries")));
  queryBar->addWidget(queryEdit_, 1);
  // In the query bar, not under the lists: the lists column sets the dock's minimum height,
  // which the views above it pay for at 1280 x 800.
  bandsCheck_ = new QCheckBox(tr("Robustness bands"));
  bandsCheck_->setObjectName("dvhBandsCheck");
  bandsCheck_->setToolTip(tr("Each structure's DVH range over the error scenarios of the last robustness "
                             "evaluation (Robustness dock), until the plan changes"));
  bandsCheck_->setVisible(false);  // until a robustness model is set
  queryBar->addWidget(bandsCheck_);
  queryBar->addWidget(export_);
  auto* bottom = new QWidget;
  auto* bottomLayout = new QVBoxLayout(bottom);
  bottomLayout->setContentsMargins(0, 0, 0, 0);
  bottomLayout->setSpacing(2);
  bottomLayout->addLayout(queryBar);
  bottomLayout->addWidget(table_, 1);
  connect(queryEdit_, &QLineEdit::editingFinished, this, [this] { setQueries(queryEdit_->text()); });
  connect(export_, &QPushButton::clicked, this, &DvhPanel::chooseAndExportCsv);

  auto* top = new QSplitter(Qt::Horizontal);
  top->addWidget(lists);
  top->addWidget(view_);
  top->setStretchFactor(1, 1);
  top->setSizes({180, 600});
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(top);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->addWidget(split);

  connect(structures_, &QListWidget::itemChanged, this, &DvhPanel::onItemChanged);
  connect(doseSets_, &QListWidget::itemChanged, this, &DvhPanel::onItemChanged);
  connect(state, &ViewState::sceneChanged, this, [this] {
    uncheckedSets_.clear();
    rebuildStructureList();
    rebuildDoseSetList();
    refresh();
  });
  DoseSetStore* store = dvhs->doseSets();
  connect(store, &DoseSetStore::doseSetAdded, this, &DvhPanel::rebuildDoseSetList);
  connect(store, &DoseSetStore::doseSetChanged, this, &DvhPanel::rebuildDoseSetList);
  connect(store, &DoseSetStore::doseSetRemoved, this, &DvhPanel::rebuildDoseSetList);
  connect(dvhs, &DvhStore::dvhsChanged, this, &DvhPanel::refresh);
  connect(dvhs, &DvhStore::cleared, this, &DvhPanel::refresh);
  connect(dvhs, &DvhStore::computeStarted, this, [this] { status_->setText(tr("Computing DVHs...")); });
  connect(plan, &PlanModel::prescriptionChanged, this, &DvhPanel::refreshTable);
  rebuildStructureList();
}

void DvhPanel::rebuildStructureList() {
  updating_ = true;
  structures_->clear();
  if (const auto& scene = state_->scene()) {
    for (const auto& s : scene->patient().structures.structures) {
      if (s.contours.empty() && s.mask.empty()) continue;
      const QString name = QString::fromStdString(s.name);
      auto* item = new QListWidgetItem(colorSwatch(QColor(s.color[0], s.color[1], s.color[2])), name, structures_);
      item->setData(kNameRole, name);
      item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
      item->setCheckState(hidden_.contains(name) ? Qt::Unchecked : Qt::Checked);
    }
  }
  updating_ = false;
}

void DvhPanel::rebuildDoseSetList() {
  updating_ = true;
  doseSets_->clear();
  DoseSetStore* store = dvhs_->doseSets();
  for (int i = 0; i < store->count(); ++i) {
    const auto set = store->at(i);
    auto* item = new QListWidgetItem(lineStyleIcon(lineStyle(i)), set->name, doseSets_);
    item->setData(kIdRole, set->id);
    item->setToolTip(set->name);
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable | Qt::ItemIsSelectable);
    item->setCheckState(uncheckedSets_.contains(set->id) ? Qt::Unchecked : Qt::Checked);
  }
  updating_ = false;
  refresh();
}

void DvhPanel::onItemChanged(QListWidgetItem* item) {
  if (updating_) return;
  const bool on = item->checkState() == Qt::Checked;
  if (item->listWidget() == structures_) {
    const QString name = item->data(kNameRole).toString();
    hidden_.removeAll(name);
    if (!on) hidden_.append(name);
    // Toggling a structure hides or shows its curves without rebuilding the others.
    for (QLineSeries* s : series_.value(name)) s->setVisible(on);
    if (QAreaSeries* b = bands_.value(name)) b->setVisible(on);
    refreshTable();
    emit refreshed();
  } else {
    const int id = item->data(kIdRole).toInt();
    uncheckedSets_.removeAll(id);
    if (!on) uncheckedSets_.append(id);
    refresh();
  }
}

void DvhPanel::refresh() {
  for (QAbstractSeries* s : chart_->series()) {
    chart_->removeSeries(s);
    delete s;
  }
  series_.clear();
  bands_.clear();
  DoseSetStore* store = dvhs_->doseSets();
  // Bands first: the chart draws later series on top, and the curves must stay readable.
  double maxGy = addBands();
  int curves = 0, pending = 0;
  const auto& scene = state_->scene();
  for (int i = 0; scene && i < store->count(); ++i) {
    const auto set = store->at(i);
    if (uncheckedSets_.contains(set->id)) continue;
    const DoseSetDvhs* d = dvhs_->forDoseSet(set->id);
    if (!d) {
      ++pending;
      continue;
    }
    for (const auto& r : d->results) {
      const QString name = QString::fromStdString(r.structureName);
      const Structure* st = scene->patient().structures.find(r.structureName);
      const auto& c = r.curve;
      if (c.doseGy.empty()) continue;
      auto* line = new QLineSeries;
      line->setName(name + " / " + set->name);
      QPen pen(st ? QColor(st->color[0], st->color[1], st->color[2]) : QColor(Qt::black), 2, lineStyle(i));
      line->setPen(pen);
      // Last bin with volume, and the points thinned evenly to at most kMaxPointsPerCurve.
      std::size_t last = c.volumePercent.size();
      while (last > 1 && c.volumePercent[last - 1] <= 0) --last;
      last = std::min(c.volumePercent.size(), last + 1);
      const std::size_t step = std::max<std::size_t>(1, last / kMaxPointsPerCurve);
      QList<QPointF> points;
      points.reserve(qsizetype(last / step + 2));
      for (std::size_t k = 0; k < last; k += step) points.append(QPointF(c.doseGy[k], c.volumePercent[k]));
      if ((last - 1) % step != 0) points.append(QPointF(c.doseGy[last - 1], c.volumePercent[last - 1]));
      maxGy = std::max(maxGy, c.doseGy[last - 1]);
      line->replace(points);
      chart_->addSeries(line);
      line->attachAxis(axisX_);
      line->attachAxis(axisY_);
      line->setVisible(!hidden_.contains(name));
      series_[name].append(line);
      ++curves;
    }
  }
  axisX_->setRange(0, maxGy > 0 ? maxGy * 1.05 : 1.0);
  axisX_->applyNiceNumbers();
  if (!scene || store->count() == 0)
    status_->setText(tr("No dose yet: compute a dose to see DVHs."));
  else if (dvhs_->isBusy())
    status_->setText(tr("Computing DVHs..."));
  else if (pending > 0)
    status_->setText(tr("%1; no DVH for %2 (see the messages)").arg(countOf(curves, "curve"), countOf(pending, "dose set")));
  else
    status_->setText(countOf(curves, "curve"));
  curveStatus_ = status_->text();
  refreshTable();
  emit refreshed();
}

bool DvhPanel::setQueries(const QString& text) {
  const dvh::DvhQueryParse parsed = dvh::parseDvhQueries(text.toStdString());
  queries_ = parsed.queries;
  queryErrors_.clear();
  for (const auto& e : parsed.errors) queryErrors_ << QString::fromStdString(e);
  if (queryEdit_->text() != text) queryEdit_->setText(text);
  queryEdit_->setStyleSheet(parsed.ok() ? QString() : QStringLiteral("QLineEdit { color: #b00020; }"));
  refreshTable();
  status_->setText(parsed.ok() ? curveStatus_ : queryErrors_.join('\n'));
  emit refreshed();
  return parsed.ok();
}

int DvhPanel::queryColumn(const QString& label) const {
  for (std::size_t q = 0; q < queries_.size(); ++q)
    if (QString::fromStdString(queries_[q].label()) == label) return kStatColumns + int(q);
  return -1;
}

QString DvhPanel::csv() const {
  QStringList lines{QStringLiteral("structure,dose_set,dose_gy,volume_percent,volume_cc")};
  auto field = [](QString f) {
    if (f.contains(',') || f.contains('"') || f.contains('\n')) f = '"' + f.replace("\"", "\"\"") + '"';
    return f;
  };
  DoseSetStore* store = dvhs_->doseSets();
  for (int i = 0; state_->scene() && i < store->count(); ++i) {
    const auto set = store->at(i);
    const DoseSetDvhs* d = dvhs_->forDoseSet(set->id);
    if (!d || uncheckedSets_.contains(set->id)) continue;
    for (const auto& r : d->results) {
      const QString name = QString::fromStdString(r.structureName);
      if (hidden_.contains(name)) continue;
      // The dose set by its short name, as in the table ("Dose 2", "Optimised 1").
      const QString prefix = field(name) + ',' + field(set->name.section(':', 0, 0)) + ',';
      const auto& c = r.curve;
      for (std::size_t k = 0; k < c.doseGy.size(); ++k)
        lines << prefix + QString::number(c.doseGy[k], 'g', 10) + ',' + QString::number(c.volumePercent[k], 'g', 10) +
                     ',' + QString::number(c.volumeCc[k], 'g', 10);
    }
  }
  return lines.join('\n') + '\n';
}

bool DvhPanel::exportCsv(const QString& path, QString* error) const {
  // QSaveFile writes a temporary file and renames it on commit(): never a half-written file.
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text) || file.write(csv().toUtf8()) < 0 || !file.commit()) {
    if (error) *error = file.errorString();
    return false;
  }
  return true;
}

void DvhPanel::chooseAndExportCsv() {
  const QString dir = QStandardPaths::writableLocation(QStandardPaths::DocumentsLocation);
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Export DVH"), dir + "/penumbra-dvh.csv", tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportCsv(path, &error)) {
    auto* box = new QMessageBox(QMessageBox::Critical, tr("Export failed"), tr("Could not write %1: %2").arg(path, error),
                                QMessageBox::Ok, this);
    box->setObjectName("fileErrorDialog");
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->show();
  }
}

void DvhPanel::refreshTable() {
  table_->setRowCount(0);
  table_->setColumnCount(kStatColumns + int(queries_.size()));
  for (std::size_t q = 0; q < queries_.size(); ++q) {
    const QString label = QString::fromStdString(queries_[q].label());
    auto* header = new QTableWidgetItem(tr("%1 (%2)").arg(label, QString::fromStdString(queries_[q].resultUnitLabel())));
    header->setData(Qt::UserRole, label);
    const int column = kStatColumns + int(q);
    table_->setHorizontalHeaderItem(column, header);
    // Shown right after the dose set (what the user asked for, in sight); the logical
    // column stays kStatColumns + q.
    QHeaderView* h = table_->horizontalHeader();
    h->moveSection(h->visualIndex(column), kVolumeCc + int(q));
  }
  const auto& scene = state_->scene();
  DoseSetStore* store = dvhs_->doseSets();
  const double rx = plan_->prescriptionGy();
  bool anyCurve = false;
  for (int i = 0; scene && i < store->count(); ++i) {
    const auto set = store->at(i);
    const DoseSetDvhs* d = dvhs_->forDoseSet(set->id);
    if (!d || uncheckedSets_.contains(set->id)) continue;
    for (const auto& r : d->results) {
      const QString name = QString::fromStdString(r.structureName);
      if (hidden_.contains(name)) continue;
      const int row = table_->rowCount();
      table_->insertRow(row);
      auto* nameItem = new QTableWidgetItem(name);
      if (const Structure* st = scene->patient().structures.find(r.structureName))
        nameItem->setIcon(colorSwatch(QColor(st->color[0], st->color[1], st->color[2])));
      table_->setItem(row, kStructure, nameItem);
      // "Dose 2" (the name up to its colon) keeps the table narrow; the tooltip has it all.
      auto* setItem = new QTableWidgetItem(lineStyleIcon(lineStyle(i)), set->name.section(':', 0, 0));
      setItem->setToolTip(set->name);
      setItem->setData(Qt::UserRole, set->id);
      table_->setItem(row, kDoseSet, setItem);
      const auto& s = r.stats;
      table_->setItem(row, kVolumeCc, numberItem(s.volumeCc, 2));
      table_->setItem(row, kDmin, numberItem(s.minGy, 2));
      table_->setItem(row, kDmean, numberItem(s.meanGy, 2));
      table_->setItem(row, kDmax, numberItem(s.maxGy, 2));
      table_->setItem(row, kD98, numberItem(s.d98Gy, 2));
      table_->setItem(row, kD95, numberItem(s.d95Gy, 2));
      table_->setItem(row, kD50, numberItem(s.d50Gy, 2));
      table_->setItem(row, kD2, numberItem(s.d2Gy, 2));
      table_->setItem(row, kV95, numberItem(vPercent(r, d->prescriptionGy, rx, 95, s.v95Percent), 1));
      table_->setItem(row, kV107, numberItem(vPercent(r, d->prescriptionGy, rx, 107, s.v107Percent), 1));
      for (std::size_t q = 0; q < queries_.size(); ++q) {
        const bool gy = queries_[q].kind != dvh::DvhQuery::Kind::VolumeAtDose &&
                        queries_[q].resultUnit == dvh::DvhQuery::Unit::Gy;
        table_->setItem(row, kStatColumns + int(q), numberItem(dvh::evaluateDvhQuery(queries_[q], r, rx), gy ? 2 : 1));
      }
      anyCurve = anyCurve || !r.curve.doseGy.empty();
      if (r.outsideDoseGridCc > 0)
        nameItem->setToolTip(tr("%1 cc of %2 lies outside the dose grid (counted at 0 Gy)")
                                 .arg(r.outsideDoseGridCc, 0, 'f', 2).arg(name));
    }
  }
  export_->setEnabled(anyCurve);
}

QList<QLineSeries*> DvhPanel::series(const QString& structure) const { return series_.value(structure); }

void DvhPanel::setRobustnessModel(RobustnessModel* model) {
  if (robustness_) disconnect(robustness_, nullptr, this, nullptr);
  robustness_ = model;
  bandsCheck_->setVisible(model != nullptr);
  if (model) {
    connect(model, &RobustnessModel::bandsChanged, this, [this] {
      const QSignalBlocker block(bandsCheck_);
      bandsCheck_->setChecked(robustness_->bandsVisible());
      bandsCheck_->setEnabled(robustness_->bands() != nullptr);
      refresh();
    });
    connect(bandsCheck_, &QCheckBox::toggled, model, &RobustnessModel::setBandsVisible, Qt::UniqueConnection);
    bandsCheck_->setChecked(model->bandsVisible());
    bandsCheck_->setEnabled(model->bands() != nullptr);
  }
  refresh();
}

double DvhPanel::addBands() {
  const auto result = robustness_ ? robustness_->bands() : nullptr;
  const auto& scene = state_->scene();
  if (!result || !robustness_->bandsVisible() || !scene) return 0;
  double maxGy = 0;
  for (const auto& s : result->structures) {
    const Structure* st = scene->patient().structures.find(s.name);
    const QColor colour = st ? QColor(st->color[0], st->color[1], st->color[2]) : QColor(Qt::black);
    double reach = 0;
    QAreaSeries* area = makeDvhBand(s, colour, kMaxPointsPerCurve, &reach);
    if (!area) continue;
    const QString name = QString::fromStdString(s.name);
    chart_->addSeries(area);
    area->attachAxis(axisX_);
    area->attachAxis(axisY_);
    area->setVisible(!hidden_.contains(name));
    bands_.insert(name, area);
    maxGy = std::max(maxGy, reach);
  }
  return maxGy;
}

QAreaSeries* DvhPanel::band(const QString& structure) const { return bands_.value(structure); }

int DvhPanel::visibleBandCount() const {
  int n = 0;
  for (QAreaSeries* b : bands_) n += b->isVisible();
  return n;
}

int DvhPanel::visibleSeriesCount() const {
  int n = 0;
  for (const auto& list : series_)
    for (QLineSeries* s : list) n += s->isVisible();
  return n;
}

void DvhPanel::setStructureChecked(const QString& structure, bool on) {
  for (int r = 0; r < structures_->count(); ++r)
    if (structures_->item(r)->data(kNameRole).toString() == structure)
      structures_->item(r)->setCheckState(on ? Qt::Checked : Qt::Unchecked);
}

void DvhPanel::setDoseSetChecked(int doseSetId, bool on) {
  for (int r = 0; r < doseSets_->count(); ++r)
    if (doseSets_->item(r)->data(kIdRole).toInt() == doseSetId)
      doseSets_->item(r)->setCheckState(on ? Qt::Checked : Qt::Unchecked);
}

int DvhPanel::statisticsRow(const QString& structure, int doseSetId) const {
  for (int r = 0; r < table_->rowCount(); ++r)
    if (table_->item(r, kStructure)->text() == structure && table_->item(r, kDoseSet)->data(Qt::UserRole).toInt() == doseSetId)
      return r;
  return -1;
}

QStringList DvhPanel::hiddenStructures() const { return hidden_; }

void DvhPanel::setHiddenStructures(const QStringList& names) {
  hidden_ = names;
  rebuildStructureList();
  refresh();
}

}  // namespace penumbra::gui
