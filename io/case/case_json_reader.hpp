#pragma once
// Internal to io/case (includes nlohmann/json, which case_file.hpp keeps away from its callers):
// the reading helpers shared by the sections of a case file, and the "optimisation" section's
// reader and writer (case_objectives.cpp), kept out of case_file.cpp so that each file stays
// under 400 lines.
#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "case/case_file.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace penumbra::io::case_json {

using nlohmann::json;

[[noreturn]] inline void fail(const std::string& path, const std::string& what) {
  PENUMBRA_THROW(Format, (path.empty() ? std::string("(document)") : path) + ": " + what);
}
inline std::string member(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
inline std::string element(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
/// Fails with "PATH: VALUE UNIT is outside [LO, HI] UNIT" unless lo <= v <= hi; the limits are
/// the engines' (proton_plan.hpp, photon_dose.hpp, core/grid.hpp), so a case that loads is one
/// the engines accept.
inline void requireRange(double v, double lo, double hi, const std::string& path,
                         const std::string& unit, const std::string& note = "") {
  if (!(v >= lo && v <= hi))
    fail(path, formatG(v) + unit + " is outside [" + formatG(lo) + ", " + formatG(hi) + "]" + unit +
                   note);
}

/// ", got VALUE" for a type error: the value as JSON text, cut at 40 characters (an object or
/// array in the wrong place can be long).
inline std::string got(const json& v) {
  std::string text = v.dump();
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return ", got " + text;
}

/// Reading side: one JSON object and its path, with typed accessors that name the path of any
/// problem. Every key read is remembered, so that leftovers can be reported as unknown.
class ObjectReader {
public:
  ObjectReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) fail(path_, "expected an object");
  }
  bool has(const char* key) const { return j_.contains(key); }
  const json& get(const char* key) {
    seen_.push_back(key);
    if (!j_.contains(key)) fail(member(path_, key), "missing");
    return j_.at(key);
  }
  double number(const char* key) {
    const json& v = get(key);
    if (!v.is_number()) fail(member(path_, key), "expected a number" + got(v));
    return v.get<double>();
  }
  double number(const char* key, double fallback) { return has(key) ? number(key) : (seen_.push_back(key), fallback); }
  int integer(const char* key) {
    const json& v = get(key);
    if (!v.is_number_integer()) fail(member(path_, key), "expected an integer" + got(v));
    const auto x = v.get<long long>();
    if (x < -2147483647LL || x > 2147483647LL) fail(member(path_, key), "integer out of range");
    return int(x);
  }
  int integer(const char* key, int fallback) { return has(key) ? integer(key) : (seen_.push_back(key), fallback); }
  std::string string(const char* key) {
    const json& v = get(key);
    if (!v.is_string()) fail(member(path_, key), "expected a string" + got(v));
    return v.get<std::string>();
  }
  std::string string(const char* key, std::string fallback) {
    return has(key) ? string(key) : (seen_.push_back(key), std::move(fallback));
  }
  bool boolean(const char* key) {
    const json& v = get(key);
    if (!v.is_boolean()) fail(member(path_, key), "expected true or false" + got(v));
    return v.get<bool>();
  }
  bool boolean(const char* key, bool fallback) {
    return has(key) ? boolean(key) : (seen_.push_back(key), fallback);
  }
  /// A number that must be finite: JSON writers (nlohmann's among them) turn NaN and infinity
  /// into null, so null gets its own message rather than a bare "expected a number".
  double finiteNumber(const char* key) {
    if (has(key) && j_.at(key).is_null())
      fail(member(path_, key),
           "null is not a finite number (NaN and infinity are written as null)");
    return number(key);
  }
  double finiteNumber(const char* key, double fallback) {
    return has(key) ? finiteNumber(key) : number(key, fallback);
  }
  const json& array(const char* key) {
    const json& v = get(key);
    if (!v.is_array()) fail(member(path_, key), "expected an array" + got(v));
    return v;
  }
  /// One of `names` (index returned); anything else is an error listing them.
  int choice(const char* key, std::initializer_list<const char*> names, int fallback) {
    if (!has(key)) return seen_.push_back(key), fallback;
    const std::string s = string(key);
    int i = 0;
    std::string list;
    for (const char* n : names) {
      if (s == n) return i;
      list += (i++ ? ", " : "") + std::string("\"") + n + "\"";
    }
    fail(member(path_, key), "\"" + s + "\" is not one of " + list);
  }
  std::string path(const char* key) const { return member(path_, key); }
  /// Throws for the first key not read (misspellings must not fall back to defaults silently).
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (std::find(seen_.begin(), seen_.end(), it.key()) == seen_.end())
        fail(member(path_, it.key()), "unknown key");
  }

private:
  const json& j_;
  std::string path_;
  std::vector<std::string> seen_;
};

/// Names in the file of the robust optimisation modes ("robustMode"), kept here rather than taken
/// from optimise::toString(): a display or CLI name may change, a file format may not. "none"
/// (no mode: the nominal plan) is not among them.
inline constexpr std::pair<optimise::RobustMode, const char*> kRobustModeNames[] = {
    {optimise::RobustMode::ExpectedValue, "expected-value"},
    {optimise::RobustMode::CompositeWorstCase, "composite-worst-case"}};

/// The "optimisation" section (case_objectives.cpp). Throws Error(Format) naming the JSON path,
/// and the structure for anything inside one structure's objective.
CaseOptimisation readOptimisation(const json& j, const std::string& path);
/// Its JSON (ordered keys, for people). Throws InvalidArgument for what readOptimisation would
/// refuse, so that a written case always reads back.
nlohmann::ordered_json optimisationJson(const CaseOptimisation& o);

/// The "robustness" section (case_robustness.cpp), with the same contract as the two above:
/// every value the reader refuses, the writer refuses too, with the same path.
CaseRobustness readRobustness(const json& j, const std::string& path);
nlohmann::ordered_json robustnessJson(const CaseRobustness& r);

}  // namespace penumbra::io::case_json
