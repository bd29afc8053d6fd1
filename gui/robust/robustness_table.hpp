#pragma once
/// The Robustness panel's table ("robustnessTable"): one row per structure and metric of the
/// evaluation (robust::RobustnessRow: D98 / D95 / Dmean of each target, D2 / Dmax / Dmean of
/// each other structure) with the nominal, worst and best value over the scenarios [Gy], the
/// scenario that gave the worst, and the limit it is flagged against. Flagged rows (the worst
/// value breaks the limit) are tinted red and their worst value is bold; a stale table (the
/// plan changed since) is drawn in grey. Items hold the exact value in Qt::UserRole.
class QTableWidget;

namespace penumbra::robust {
struct RobustnessResult;
}

namespace penumbra::gui {

enum RobustnessColumn {
  kRobStructure,
  kRobMetric,
  kRobNominal,
  kRobWorst,
  kRobBest,
  kRobScenario,
  kRobLimit,
  kRobColumns
};

QTableWidget* makeRobustnessTable();
/// Fills the table (null: empty).
void fillRobustnessTable(QTableWidget* table, const robust::RobustnessResult* result, bool stale);
/// Greys the table (stale) or restores its colours without refilling it.
void setRobustnessTableStale(QTableWidget* table, bool stale);

}  // namespace penumbra::gui
