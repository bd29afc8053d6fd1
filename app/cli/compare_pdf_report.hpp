#pragma once
// penumbra-cli compare --report FILE.pdf: the comparison as an A4 PDF for review and signature,
// with the numbers of the text report (formatCompareReport) and, where the text has tables, the
// same values: the two doses, the criteria, pass rate and statistics, the gamma histogram, the
// central slices of the gamma map, per-structure pass rates and DVH differences, the notes, and
// a sign-off block. Made with io/report's PDF writer: the CLI has no Qt.
#include <string>

#include "compare_report.hpp"

namespace penumbra::cli {

struct PdfReportStamp {
  long long unixSeconds = 0;  ///< when the report was made
  std::string program;        ///< "penumbra-cli 0.1.0"
};

/// The report as the bytes of a PDF file.
std::string formatComparePdfReport(const CompareReport& report, const PdfReportStamp& stamp);

/// True when `path` ends in ".pdf" (any case): --report writes a PDF, else the text report.
bool isPdfPath(const std::string& path);

}  // namespace penumbra::cli
