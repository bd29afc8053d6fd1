// The "robustness" section of a case file: the error scenarios the user set (range and setup
// error magnitudes, the shift pattern, combined or separate) and the evaluation's dose grid.
// Reading and writing share one set of rules (firstProblem), so a case the writer accepts always
// reads back; the limits are the scenario model's (robust/scenario_options.hpp), so settings
// that load are settings makeScenarios accepts.
#include <cmath>
#include <optional>

#include "case/case_json_reader.hpp"

namespace penumbra::io::case_json {

namespace {

struct Problem {
  std::string path, what;
};

/// "-1 % is negative: ..." / "60 % is outside [0, 50) %": the magnitude `v` of a range or
/// setup error, or nothing when it is one the scenario model takes.
std::optional<std::string> magnitudeProblem(double v, const char* unit, double max,
                                            bool maxIncluded, const char* what) {
  const std::string value = formatG(v) + " " + unit;
  if (!std::isfinite(v)) return value + " is not a finite " + what;
  if (v < 0)
    return value + " is negative: the " + what +
           " is a magnitude, the scenarios take it with both signs (0: none)";
  if (maxIncluded ? v > max : v >= max)
    return value + " is outside [0, " + formatG(max) + (maxIncluded ? "] " : ") ") + unit;
  return std::nullopt;
}

/// The first value of `r` that a case may not hold, in document order; nothing when all is well.
std::optional<Problem> firstProblem(const CaseRobustness& r, const std::string& root) {
  const robust::ScenarioOptions& o = r.scenarios;
  if (auto p = magnitudeProblem(o.rangePercent, "%", robust::kMaxRangeErrorPercent, false,
                                "range error"))
    return Problem{member(root, "rangeError"), *p};
  if (auto p = magnitudeProblem(o.setupMm, "mm", robust::kMaxSetupErrorMm, true, "setup error"))
    return Problem{member(root, "setupError"), *p};
  if (o.sphereDirections < 0 || o.sphereDirections > robust::kMaxSphereDirections)
    return Problem{member(root, "sphereDirections"),
                   std::to_string(o.sphereDirections) + " is outside [1, " +
                       std::to_string(robust::kMaxSphereDirections) +
                       "] (directions on the sphere; 0: along the axes)"};
  const double mm = r.doseGridSpacingMm;
  if (mm != 0 && !(mm >= kMinDoseGridSpacingMm && mm <= kMaxDoseGridSpacingMm))
    return Problem{member(root, "doseGridSpacing"),
                   formatG(mm) + " mm is outside [" + formatG(kMinDoseGridSpacingMm) + ", " +
                       formatG(kMaxDoseGridSpacingMm) + "] mm (0: the plan's dose grid)"};
  return std::nullopt;
}

}  // namespace

CaseRobustness readRobustness(const json& j, const std::string& path) {
  ObjectReader r(j, path);
  CaseRobustness x;
  robust::ScenarioOptions& o = x.scenarios;
  o.rangePercent = r.finiteNumber("rangeError", o.rangePercent);
  o.setupMm = r.finiteNumber("setupError", o.setupMm);
  const bool sphere = r.choice("shiftPattern", {"axes", "sphere"}, o.sphereDirections > 0) == 1;
  if (sphere) {
    // No default: the count decides how many doses a run computes, so it is never guessed.
    if (!r.has("sphereDirections"))
      fail(r.path("sphereDirections"),
           "missing (shiftPattern \"sphere\" needs the number of directions)");
    o.sphereDirections = r.integer("sphereDirections");
    if (o.sphereDirections < 1)  // 0 would silently mean the axes
      fail(r.path("sphereDirections"), std::to_string(o.sphereDirections) + " is outside [1, " +
                                           std::to_string(robust::kMaxSphereDirections) +
                                           "] (directions on the sphere)");
  } else if (r.has("sphereDirections")) {
    r.get("sphereDirections");
    fail(r.path("sphereDirections"),
         "only with shiftPattern \"sphere\" (\"axes\" shifts along +-L, +-P, +-S)");
  }
  o.combine = r.boolean("combine", o.combine);
  x.doseGridSpacingMm = r.finiteNumber("doseGridSpacing", x.doseGridSpacingMm);
  r.finish();
  if (const auto p = firstProblem(x, path)) fail(p->path, p->what);
  return x;
}

nlohmann::ordered_json robustnessJson(const CaseRobustness& r) {
  if (const auto p = firstProblem(r, "robustness"))
    PENUMBRA_THROW(InvalidArgument, "case file: " + p->path + ": " + p->what);
  const robust::ScenarioOptions& o = r.scenarios;
  nlohmann::ordered_json out = {{"rangeError", o.rangePercent},
                                {"setupError", o.setupMm},
                                {"shiftPattern", o.sphereDirections > 0 ? "sphere" : "axes"}};
  if (o.sphereDirections > 0) out["sphereDirections"] = o.sphereDirections;
  out["combine"] = o.combine;
  out["doseGridSpacing"] = r.doseGridSpacingMm;
  return out;
}

}  // namespace penumbra::io::case_json
