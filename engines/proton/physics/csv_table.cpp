#include "proton/physics/csv_table.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace penumbra::proton {

namespace {
bool parseDouble(const std::string& s, double& v) {
  const char* b = s.c_str();
  while (*b && std::isspace(static_cast<unsigned char>(*b))) ++b;
  char* e = nullptr;
  v = std::strtod(b, &e);
  if (e == b) return false;
  while (*e && std::isspace(static_cast<unsigned char>(*e))) ++e;
  return *e == '\0';
}
}  // namespace

CsvTable readNumericCsv(const std::string& path, int columns) {
  std::ifstream in(path);
  if (!in) PENUMBRA_THROW(Io, "cannot open '" + path + "'");
  CsvTable table;
  std::string line;
  int lineNo = 0;
  bool firstData = true;
  while (std::getline(in, line)) {
    ++lineNo;
    const auto hash = line.find('#');
    if (hash != std::string::npos) {
      table.comments.push_back(line.substr(hash + 1));
      line.erase(hash);
    }
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::replace(line.begin(), line.end(), ';', ',');
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string f; std::getline(ss, f, ',');) fields.push_back(f);
    std::vector<double> row;
    bool numeric = true;
    for (const auto& f : fields) {
      double v = 0;
      if (!parseDouble(f, v)) {
        numeric = false;
        break;
      }
      row.push_back(v);
    }
    if (!numeric && firstData) {  // a header such as "energy_MeV,sigma_mm,spread_percent"
      table.header = line;
      firstData = false;
      continue;
    }
    if (!numeric || static_cast<int>(row.size()) != columns)
      PENUMBRA_THROW(Format, path + ":" + std::to_string(lineNo) + ": expected " +
                                 std::to_string(columns) + " numbers, got '" + line + "'");
    firstData = false;
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace penumbra::proton
