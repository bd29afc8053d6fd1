// DVH queries (dvh_query.hpp): a small hand-written parser and the evaluation on a cumulative
// curve through doseAtVolumeCc / volumeAtDoseCc (linear interpolation between bin edges).
#include "dvh/dvh_query.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace penumbra::dvh {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

bool parseOne(const std::string& token, DvhQuery& q) {
  std::string t = lower(token);
  // Optional result unit in brackets at the end.
  std::string result;
  if (const auto open = t.find('['); open != std::string::npos) {
    if (t.back() != ']') return false;
    result = t.substr(open + 1, t.size() - open - 2);
    t = t.substr(0, open);
  }
  if (t == "dmean" || t == "dmax" || t == "dmin") {
    q.kind = t == "dmean" ? DvhQuery::Kind::Mean : (t == "dmax" ? DvhQuery::Kind::Max : DvhQuery::Kind::Min);
    q.argumentUnit = DvhQuery::Unit::Gy;
  } else {
    if (t.size() < 3 || (t[0] != 'd' && t[0] != 'v')) return false;
    const bool dose = t[0] == 'd';
    const char* begin = t.c_str() + 1;
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(v) || v < 0) return false;
    const std::string unit(end);
    q.kind = dose ? DvhQuery::Kind::DoseAtVolume : DvhQuery::Kind::VolumeAtDose;
    q.value = v;
    if (unit == "%") {
      q.argumentUnit = DvhQuery::Unit::Percent;
      if (dose && v > 100) return false;
    } else if (dose && (unit == "cc" || unit == "cm3")) {
      q.argumentUnit = DvhQuery::Unit::Cc;
    } else if (!dose && unit == "gy") {
      q.argumentUnit = DvhQuery::Unit::Gy;
    } else {
      return false;
    }
  }
  const bool doseResult = q.kind != DvhQuery::Kind::VolumeAtDose;
  if (result.empty()) {
    q.resultUnit = doseResult ? DvhQuery::Unit::Gy : DvhQuery::Unit::Percent;
  } else if (result == "%") {
    q.resultUnit = DvhQuery::Unit::Percent;
  } else if (doseResult && result == "gy") {
    q.resultUnit = DvhQuery::Unit::Gy;
  } else if (!doseResult && (result == "cc" || result == "cm3")) {
    q.resultUnit = DvhQuery::Unit::Cc;
  } else {
    return false;
  }
  return true;
}

}  // namespace

std::string DvhQuery::label() const {
  std::string s;
  switch (kind) {
    case Kind::Mean: s = "Dmean"; break;
    case Kind::Max: s = "Dmax"; break;
    case Kind::Min: s = "Dmin"; break;
    case Kind::DoseAtVolume:
    case Kind::VolumeAtDose: {
      // One snprintf: GCC 12 warns falsely (-Wrestrict) on "D" + std::string.
      const char* unit = kind == Kind::DoseAtVolume ? (argumentUnit == Unit::Cc ? "cc" : "%")
                                                    : (argumentUnit == Unit::Gy ? "Gy" : "%");
      char buf[48];
      std::snprintf(buf, sizeof buf, "%c%g%s", kind == Kind::DoseAtVolume ? 'D' : 'V', value, unit);
      s = buf;
      break;
    }
  }
  const bool doseResult = kind != Kind::VolumeAtDose;
  if (doseResult && resultUnit == Unit::Percent) s += "[%]";
  if (!doseResult && resultUnit == Unit::Cc) s += "[cc]";
  return s;
}

std::string DvhQuery::resultUnitLabel() const {
  if (kind != Kind::VolumeAtDose) return resultUnit == Unit::Percent ? "% Rx" : "Gy";
  return resultUnit == Unit::Cc ? "cc" : "%";
}

DvhQueryParse parseDvhQueries(const std::string& text) {
  DvhQueryParse out;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    DvhQuery q;
    if (!parseOne(token, q)) {
      out.errors.push_back("'" + token + "' is not a DVH query (e.g. D95%, D0.03cc, V20Gy, V95%, Dmean)");
    } else if (std::none_of(out.queries.begin(), out.queries.end(),
                            [&](const DvhQuery& o) { return o.label() == q.label(); })) {
      out.queries.push_back(q);
    }
    token.clear();
  };
  for (char c : text) {
    if (c == ',' || c == ';' || std::isspace(static_cast<unsigned char>(c))) flush();
    else token += c;
  }
  flush();
  return out;
}

double evaluateDvhQuery(const DvhQuery& q, const DvhResult& dvh, double prescriptionGy) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const DvhCurve& c = dvh.curve;
  const DvhStatistics& s = dvh.stats;
  if (c.volumeCc.empty() || !(s.volumeCc > 0)) return nan;
  const bool haveRx = prescriptionGy > 0 && std::isfinite(prescriptionGy);
  auto doseOut = [&](double gy) {
    if (q.resultUnit != DvhQuery::Unit::Percent) return gy;
    return haveRx ? 100.0 * gy / prescriptionGy : nan;
  };
  switch (q.kind) {
    case DvhQuery::Kind::Mean: return doseOut(s.meanGy);
    case DvhQuery::Kind::Max: return doseOut(s.maxGy);
    case DvhQuery::Kind::Min: return doseOut(s.minGy);
    case DvhQuery::Kind::DoseAtVolume: {
      // As the statistics: clamped into [Dmin, Dmax] (the histogram smears each sample over
      // its bin, so an interpolated Dx may fall a fraction of a bin outside them).
      double gy = 0;
      if (q.argumentUnit == DvhQuery::Unit::Cc) {
        if (q.value > s.volumeCc) return nan;  // more than the structure holds
        gy = doseAtVolumeCc(c, q.value);
      } else {
        gy = doseAtVolumePercent(c, q.value);
      }
      return doseOut(std::clamp(gy, s.minGy, s.maxGy));
    }
    case DvhQuery::Kind::VolumeAtDose: {
      double gy = q.value;
      if (q.argumentUnit == DvhQuery::Unit::Percent) {
        if (!haveRx) return nan;
        gy = q.value / 100.0 * prescriptionGy;
      }
      const double cc = volumeAtDoseCc(c, gy);
      return q.resultUnit == DvhQuery::Unit::Cc ? cc : 100.0 * cc / s.volumeCc;
    }
  }
  return nan;
}

}  // namespace penumbra::dvh
