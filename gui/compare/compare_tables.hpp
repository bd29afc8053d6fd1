#pragma once
/// The Compare panel's two tables, and the rows they show as plain data (the PDF report prints
/// the same rows):
///   "compareStructureTable"  gamma pass rate per structure: points evaluated, pass %, mean
///                            gamma (the engine's StructurePassRate, structures on A's grid);
///   "compareDvhTable"        DVH points of A and B per structure and their difference A - B:
///                            Dmean, D98, D95, D50, D2 (Gy) and V95, V107 (% of the volume, of
///                            the prescription), read from the DvhStore's results for the two
///                            dose sets (the contour DVH engine: no second DVH code path).
/// Table items hold the exact value in Qt::UserRole and show it rounded.
#include <vector>

#include <QString>

class QTableWidget;

namespace penumbra::compare {
struct CompareResult;
}

namespace penumbra::gui {

struct DoseSetDvhs;

struct DvhComparisonRow {
  QString structure;
  QString quantity;  ///< "Dmean", "D98", ... "V107"
  QString unit;      ///< "Gy" or "%"
  double a = 0, b = 0;  ///< NaN where that dose set has no DVH for the structure
};

/// Rows for every structure that has a DVH in A or B (A's order, then B's extras), seven
/// quantities each.
std::vector<DvhComparisonRow> dvhComparisonRows(const DoseSetDvhs* a, const DoseSetDvhs* b);

enum StructureColumn { kStructName, kStructPoints, kStructPassRate, kStructMeanGamma, kStructColumns };
enum DvhColumn { kDvhStructure, kDvhQuantity, kDvhA, kDvhB, kDvhDiff, kDvhColumns };

/// Creates the tables with their headers and objectNames.
QTableWidget* makeStructureTable();
QTableWidget* makeDvhTable();
/// Fills them (null result / no rows: empty).
void fillStructureTable(QTableWidget* table, const compare::CompareResult* result);
void fillDvhTable(QTableWidget* table, const std::vector<DvhComparisonRow>& rows);

/// "12.34" for a finite value, "-" otherwise.
QString formatValue(double v, int decimals);

}  // namespace penumbra::gui
