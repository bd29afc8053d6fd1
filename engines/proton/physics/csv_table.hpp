#pragma once
/// Minimal numeric CSV reader shared by the beam-data loaders of this folder: '#' starts a
/// comment, ',' or ';' separate fields, one optional non-numeric header line is skipped, every
/// other line must hold exactly `columns` numbers. Comment lines are returned too, so loaders
/// can keep the provenance text of a data file.
#include <string>
#include <vector>

namespace penumbra::proton {

struct CsvTable {
  std::vector<std::vector<double>> rows;
  std::vector<std::string> comments;  ///< text after '#' of each comment line, in order
  std::string header;                 ///< the skipped header line, if any
};

/// Throws Io when the file cannot be opened and Format (naming file and line) on a malformed
/// line or a wrong number of fields.
CsvTable readNumericCsv(const std::string& path, int columns);

}  // namespace penumbra::proton
