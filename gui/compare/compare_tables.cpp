#include "gui/compare/compare_tables.hpp"

#include <cmath>
#include <limits>

#include <QHeaderView>
#include <QTableWidget>

#include "compare/compare.hpp"
#include "gui/compare/compare_controller.hpp"
#include "gui/dose/dvh_store.hpp"

namespace penumbra::gui {

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

QTableWidgetItem* textItem(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  return item;
}

QTableWidgetItem* numberItem(double v, int decimals, const QString& shown = {}) {
  auto* item = textItem(shown.isEmpty() ? formatValue(v, decimals) : shown);
  item->setData(Qt::UserRole, v);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

QTableWidget* makeTable(const char* name, const QStringList& headers) {
  auto* t = new QTableWidget(0, int(headers.size()));
  t->setObjectName(name);
  t->setHorizontalHeaderLabels(headers);
  t->verticalHeader()->setVisible(false);
  t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  t->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
  t->setMinimumHeight(160);
  return t;
}

struct Quantity {
  const char* name;
  const char* unit;
  double (*value)(const dvh::DvhStatistics&);
};

const Quantity kQuantities[] = {
    {"Dmean", "Gy", [](const dvh::DvhStatistics& s) { return s.meanGy; }},
    {"D98", "Gy", [](const dvh::DvhStatistics& s) { return s.d98Gy; }},
    {"D95", "Gy", [](const dvh::DvhStatistics& s) { return s.d95Gy; }},
    {"D50", "Gy", [](const dvh::DvhStatistics& s) { return s.d50Gy; }},
    {"D2", "Gy", [](const dvh::DvhStatistics& s) { return s.d2Gy; }},
    {"V95", "%", [](const dvh::DvhStatistics& s) { return s.v95Percent; }},
    {"V107", "%", [](const dvh::DvhStatistics& s) { return s.v107Percent; }},
};

}  // namespace

QString formatValue(double v, int decimals) { return std::isfinite(v) ? QString::number(v, 'f', decimals) : "-"; }

std::vector<DvhComparisonRow> dvhComparisonRows(const DoseSetDvhs* a, const DoseSetDvhs* b) {
  QStringList names;
  for (const DoseSetDvhs* set : {a, b})
    if (set)
      for (const auto& r : set->results)
        if (!names.contains(QString::fromStdString(r.structureName))) names << QString::fromStdString(r.structureName);
  std::vector<DvhComparisonRow> rows;
  for (const QString& name : names) {
    const dvh::DvhResult* ra = a ? a->find(name) : nullptr;
    const dvh::DvhResult* rb = b ? b->find(name) : nullptr;
    for (const Quantity& q : kQuantities)
      rows.push_back({name, q.name, q.unit, ra ? q.value(ra->stats) : kNan, rb ? q.value(rb->stats) : kNan});
  }
  return rows;
}

QTableWidget* makeStructureTable() {
  return makeTable("compareStructureTable",
                   {QObject::tr("Structure"), QObject::tr("Points"), QObject::tr("Pass %"), QObject::tr("Mean gamma")});
}

QTableWidget* makeDvhTable() {
  return makeTable("compareDvhTable", {QObject::tr("Structure"), QObject::tr("Quantity"), QObject::tr("A"),
                                       QObject::tr("B"), QObject::tr("A - B")});
}

void fillStructureTable(QTableWidget* table, const compare::CompareResult* result) {
  table->setSortingEnabled(false);
  table->setRowCount(0);
  if (!result) return;
  table->setRowCount(int(result->structures.size()));
  int row = 0;
  for (const auto& s : result->structures) {
    table->setItem(row, kStructName, textItem(QString::fromStdString(s.name)));
    table->setItem(row, kStructPoints, numberItem(double(s.evaluatedPoints), 0, groupedCount(s.evaluatedPoints)));
    table->setItem(row, kStructPassRate, numberItem(s.passRatePercent, 1));
    table->setItem(row, kStructMeanGamma,
                   numberItem(s.evaluatedPoints > 0 ? s.meanGamma : kNan, 2));
    ++row;
  }
}

void fillDvhTable(QTableWidget* table, const std::vector<DvhComparisonRow>& rows) {
  table->setRowCount(int(rows.size()));
  for (int i = 0; i < int(rows.size()); ++i) {
    const DvhComparisonRow& r = rows[std::size_t(i)];
    // The structure's name on its first row only: seven rows read as one block.
    const bool first = i == 0 || rows[std::size_t(i) - 1].structure != r.structure;
    auto* name = textItem(first ? r.structure : QString());
    name->setData(Qt::UserRole, r.structure);
    table->setItem(i, kDvhStructure, name);
    table->setItem(i, kDvhQuantity, textItem(QString("%1 (%2)").arg(r.quantity, r.unit)));
    const int decimals = r.unit == "%" ? 1 : 2;
    table->setItem(i, kDvhA, numberItem(r.a, decimals));
    table->setItem(i, kDvhB, numberItem(r.b, decimals));
    table->setItem(i, kDvhDiff, numberItem(r.a - r.b, decimals));
  }
}

}  // namespace penumbra::gui
