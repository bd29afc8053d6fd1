#pragma once
// Helpers of the GUI tests that read the Optimise panel's objectives table: a column by its
// header, a row by structure and objective kind, and the rows as text for a failure message.
#include <vector>

#include <QString>
#include <QTableWidget>

#include "gui/optimise/optimise_controller.hpp"

namespace penumbra::test {

/// The table's column whose header reads `title` (so the test follows the panel's labels), or -1.
inline int column(QTableWidget* table, const QString& title) {
  for (int c = 0; c < table->columnCount(); ++c)
    if (table->horizontalHeaderItem(c)->text() == title) return c;
  return -1;
}

/// The first row of `rows` for `structure` and `kind`, or -1.
inline int rowOf(const std::vector<gui::ObjectiveRow>& rows, const QString& structure,
                 optimise::TermType kind) {
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i].structure == structure && rows[i].kind == kind) return int(i);
  return -1;
}

/// "OuterTarget 0 min 1.94 Gy w 20; ..." with every digit of the levels and weights.
inline QString describe(const std::vector<gui::ObjectiveRow>& rows) {
  QString s;
  for (const auto& r : rows)
    s += QString("%1 %2 %3 %4 Gy w %5; ")
             .arg(r.structure)
             .arg(int(r.role))
             .arg(optimise::toString(r.kind))
             .arg(r.levelGy, 0, 'g', 17)
             .arg(r.weight, 0, 'g', 17);
  return s;
}

}  // namespace penumbra::test
