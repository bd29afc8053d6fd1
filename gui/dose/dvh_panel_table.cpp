// DvhPanel: the statistics table (dvh_panel.hpp), one row per shown structure and dose set,
// and its query columns ("dvhQueryEdit", engines/dvh/dvh_query.hpp). Items show the value
// rounded and hold it exact in Qt::UserRole. Also the walk over the shown curves that the
// table and the CSV export share (forEachShownResult).
#include <cmath>

#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>

#include "gui/dose/dvh_line_style.hpp"
#include "gui/dose/dvh_panel.hpp"
#include "gui/dose/dvh_store.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/views/patient_tree.hpp"  // colorSwatch

namespace penumbra::gui {

namespace {

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
  const double rx = plan_->prescriptionGy();
  bool anyCurve = false;
  forEachShownResult([&](int i, const DoseSet& set, const DoseSetDvhs& dvhs, const dvh::DvhResult& r) {
    const QString name = QString::fromStdString(r.structureName);
    const int row = table_->rowCount();
    table_->insertRow(row);
    auto* nameItem = new QTableWidgetItem(name);
    if (const Structure* st = scene->patient().structures.find(r.structureName))
      nameItem->setIcon(colorSwatch(QColor(st->color[0], st->color[1], st->color[2])));
    table_->setItem(row, kStructure, nameItem);
    // "Dose 2" (the name up to its colon) keeps the table narrow; the tooltip has it all.
    auto* setItem = new QTableWidgetItem(lineStyleIcon(doseSetLineStyle(i)), set.name.section(':', 0, 0));
    setItem->setToolTip(set.name);
    setItem->setData(Qt::UserRole, set.id);
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
    table_->setItem(row, kV95, numberItem(vPercent(r, dvhs.prescriptionGy, rx, 95, s.v95Percent), 1));
    table_->setItem(row, kV107, numberItem(vPercent(r, dvhs.prescriptionGy, rx, 107, s.v107Percent), 1));
    for (std::size_t q = 0; q < queries_.size(); ++q) {
      const bool gy = queries_[q].kind != dvh::DvhQuery::Kind::VolumeAtDose &&
                      queries_[q].resultUnit == dvh::DvhQuery::Unit::Gy;
      table_->setItem(row, kStatColumns + int(q), numberItem(dvh::evaluateDvhQuery(queries_[q], r, rx), gy ? 2 : 1));
    }
    anyCurve = anyCurve || !r.curve.doseGy.empty();
    if (r.outsideDoseGridCc > 0)
      nameItem->setToolTip(tr("%1 cc of %2 lies outside the dose grid (counted at 0 Gy)")
                               .arg(r.outsideDoseGridCc, 0, 'f', 2).arg(name));
  });
  export_->setEnabled(anyCurve);
}

void DvhPanel::forEachShownResult(
    const std::function<void(int, const DoseSet&, const DoseSetDvhs&, const dvh::DvhResult&)>& fn) const {
  DoseSetStore* store = dvhs_->doseSets();
  for (int i = 0; state_->scene() && i < store->count(); ++i) {
    const auto set = store->at(i);
    const DoseSetDvhs* d = dvhs_->forDoseSet(set->id);
    if (!d || uncheckedSets_.contains(set->id)) continue;
    for (const auto& r : d->results)
      if (!hidden_.contains(QString::fromStdString(r.structureName))) fn(i, *set, *d, r);
  }
}

int DvhPanel::statisticsRow(const QString& structure, int doseSetId) const {
  for (int r = 0; r < table_->rowCount(); ++r)
    if (table_->item(r, kStructure)->text() == structure && table_->item(r, kDoseSet)->data(Qt::UserRole).toInt() == doseSetId)
      return r;
  return -1;
}

}  // namespace penumbra::gui
