#include "core/calibration.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/error.hpp"

namespace penumbra {

CalibrationCurve::CalibrationCurve(std::string name, std::vector<std::pair<double, double>> pts)
    : name_(std::move(name)), points_(std::move(pts)) {
  PENUMBRA_REQUIRE(!points_.empty(), InvalidArgument,
                   "calibration curve '" + name_ + "' has no points");
  for (std::size_t i = 1; i < points_.size(); ++i)
    PENUMBRA_REQUIRE(points_[i].first > points_[i - 1].first, InvalidArgument,
                     "calibration curve '" + name_ + "': HU values must increase strictly");
}

static bool parseDouble(const std::string& s, double& v) {
  const char* b = s.c_str();
  char* e = nullptr;
  v = std::strtod(b, &e);
  if (e == b) return false;
  while (*e && std::isspace(static_cast<unsigned char>(*e))) ++e;
  return *e == '\0';
}

CalibrationCurve CalibrationCurve::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) PENUMBRA_THROW(Io, "cannot open calibration curve file '" + path + "'");
  std::vector<std::pair<double, double>> pts;
  std::string line;
  int lineNo = 0;
  bool firstData = true;
  while (std::getline(in, line)) {
    ++lineNo;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::replace(line.begin(), line.end(), ';', ',');
    std::stringstream ss(line);
    std::string a, b, extra;
    std::getline(ss, a, ',');
    std::getline(ss, b, ',');
    double x = 0, y = 0;
    if (!parseDouble(a, x) || !parseDouble(b, y)) {
      if (firstData) {  // header line such as "HU,SPR"
        firstData = false;
        continue;
      }
      PENUMBRA_THROW(Format, path + ":" + std::to_string(lineNo) +
                                 ": expected two numbers 'HU,value', got '" + line + "'");
    }
    firstData = false;
    pts.emplace_back(x, y);
  }
  std::string name = path.substr(path.find_last_of('/') + 1);
  try {
    return CalibrationCurve(name, std::move(pts));
  } catch (const Error& e) {
    PENUMBRA_THROW(Format, path + ": " + e.message());
  }
}

double CalibrationCurve::operator()(double hu) const {
  if (hu <= points_.front().first) return points_.front().second;
  if (hu >= points_.back().first) return points_.back().second;
  const auto it = std::upper_bound(points_.begin(), points_.end(), hu,
                                   [](double v, const auto& p) { return v < p.first; });
  const auto& p1 = *it;
  const auto& p0 = *(it - 1);
  const double t = (hu - p0.first) / (p1.first - p0.first);
  return p0.second + t * (p1.second - p0.second);
}

}  // namespace penumbra
