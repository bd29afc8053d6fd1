#pragma once
/// The comparison report (issue 13, item 3) as PDF through QPdfWriter (A4, portrait): patient,
/// the two dose sets with their provenance, the criteria, the pass rate and statistics, the
/// gamma histogram, the per-structure pass rates, the DVH table of A against B, and one picture
/// of each slice view as it is on screen. Written on the GUI thread (pictures are grabs of
/// widgets; a few pages of vector text take milliseconds), atomically (QSaveFile).
#include <utility>
#include <vector>

#include <QImage>
#include <QString>

namespace penumbra::gui {

struct Comparison;
struct DvhComparisonRow;

struct CompareReportInput {
  const Comparison* comparison = nullptr;
  std::vector<DvhComparisonRow> dvhRows;
  QImage histogram;
  std::vector<std::pair<QString, QImage>> views;  ///< caption, picture
  QString applicationVersion;
};

/// Writes the report; false with `error` set when it cannot be written.
bool writeCompareReport(const QString& path, const CompareReportInput& input, QString* error = nullptr);

}  // namespace penumbra::gui
