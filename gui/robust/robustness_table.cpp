#include "gui/robust/robustness_table.hpp"

#include <QHeaderView>
#include <QTableWidget>
#include <cmath>

#include "gui/robust/robustness_inputs.hpp"
#include "robust/robustness.hpp"

namespace penumbra::gui {

namespace {

constexpr int kViolatedRole = Qt::UserRole + 1;

/// The flagged rows' tint and their worst value's colour: readable on the light tint.
const QColor kFlagTint(248, 215, 218);
const QColor kFlagText(150, 0, 20);
const QColor kStaleText(128, 128, 128);

QTableWidgetItem* textItem(const QString& text) {
  auto* item = new QTableWidgetItem(text);
  item->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled);
  return item;
}

QTableWidgetItem* numberItem(double v) {
  auto* item = textItem(std::isfinite(v) ? QString::number(v, 'f', 2) : QStringLiteral("-"));
  item->setData(Qt::UserRole, v);
  item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return item;
}

}  // namespace

QTableWidget* makeRobustnessTable() {
  auto* t = new QTableWidget(0, kRobColumns);
  t->setObjectName("robustnessTable");
  t->setHorizontalHeaderLabels({QObject::tr("Structure"), QObject::tr("Metric"),
                                QObject::tr("Nominal"), QObject::tr("Worst"), QObject::tr("Best"),
                                QObject::tr("Scenario"), QObject::tr("Limit")});
  t->horizontalHeaderItem(kRobNominal)
      ->setToolTip(QObject::tr("The plan's value without errors [Gy]"));
  t->horizontalHeaderItem(kRobWorst)->setToolTip(QObject::tr(
      "The lowest value over the scenarios for a target's D98 / D95 / Dmean, the highest for the "
      "other structures' D2 / Dmax / Dmean [Gy]"));
  t->horizontalHeaderItem(kRobBest)->setToolTip(
      QObject::tr("The other end of the range over the scenarios [Gy]"));
  t->horizontalHeaderItem(kRobScenario)
      ->setToolTip(
          QObject::tr("The scenario that gave the worst value (the Worst column): range error [%], "
                      "setup shift [mm] and its direction "
                      "(L, P, S: along a patient axis, \"-3.5% L-3mm\"; dir k/N: on the sphere)"));
  t->horizontalHeaderItem(kRobLimit)->setToolTip(QObject::tr(
      "From the Optimise panel's objectives: a target's highest min-dose level (95 % of the "
      "prescription without one), another structure's lowest max-dose level [Gy]"));
  t->verticalHeader()->setVisible(false);
  t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setWordWrap(false);
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  // The scenario's name is the long one: it takes the room that is left, elided at its end.
  t->horizontalHeader()->setSectionResizeMode(kRobScenario, QHeaderView::Stretch);
  t->setTextElideMode(Qt::ElideRight);
  t->setMinimumHeight(120);
  return t;
}

void fillRobustnessTable(QTableWidget* t, const robust::RobustnessResult* r, bool stale) {
  t->setRowCount(0);
  if (!r) return;
  t->setRowCount(int(r->table.size()));
  for (int i = 0; i < int(r->table.size()); ++i) {
    const robust::RobustnessRow& row = r->table[std::size_t(i)];
    auto* name = textItem(QString::fromStdString(row.structure));
    name->setData(kViolatedRole, row.violated);
    t->setItem(i, kRobStructure, name);
    t->setItem(i, kRobMetric, textItem(QString::fromStdString(row.metric)));
    t->setItem(i, kRobNominal, numberItem(row.nominalGy));
    t->setItem(i, kRobWorst, numberItem(row.worstGy));
    t->setItem(i, kRobBest, numberItem(row.bestGy));
    auto* scenario = textItem(compactScenarioLabel(*r, row.worstScenario));
    scenario->setData(Qt::UserRole, row.worstScenario);
    scenario->setToolTip(scenarioLabel(*r, row.worstScenario));
    t->setItem(i, kRobScenario, scenario);
    t->setItem(i, kRobLimit, numberItem(row.limitGy));
    if (row.violated) {
      const QString why = QObject::tr("%1 %2: worst %3 Gy breaks the limit %4 Gy (%5)")
                              .arg(name->text(), QString::fromStdString(row.metric))
                              .arg(row.worstGy, 0, 'f', 2)
                              .arg(row.limitGy, 0, 'f', 2)
                              .arg(scenarioLabel(*r, row.worstScenario));
      for (int c = 0; c < kRobColumns; ++c) t->item(i, c)->setToolTip(why);
      QFont bold = t->item(i, kRobWorst)->font();
      bold.setBold(true);
      t->item(i, kRobWorst)->setFont(bold);
    }
  }
  setRobustnessTableStale(t, stale);
}

void setRobustnessTableStale(QTableWidget* t, bool stale) {
  for (int i = 0; i < t->rowCount(); ++i) {
    const bool violated = t->item(i, kRobStructure)->data(kViolatedRole).toBool();
    for (int c = 0; c < kRobColumns; ++c) {
      QTableWidgetItem* item = t->item(i, c);
      item->setBackground(violated ? QBrush(kFlagTint) : QBrush());
      if (stale)
        item->setForeground(kStaleText);
      else if (violated && c == kRobWorst)
        item->setForeground(kFlagText);
      else
        item->setForeground(QBrush());
    }
  }
}

}  // namespace penumbra::gui
