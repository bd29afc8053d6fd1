// The error-scenario options of `robust` and `optimise --robust`: see robust_options.hpp.
#include "robust_options.hpp"

#include "cli_args.hpp"
#include "core/error.hpp"
#include "core/format.hpp"

namespace penumbra::cli {

robust::ScenarioOptions scenarioOptionsOf(const std::optional<std::string>& rangeText,
                                          const std::optional<std::string>& setupText) {
  robust::ScenarioOptions o;
  if (rangeText) o.rangePercent = parseOptionNumber(*rangeText, "--range");
  if (setupText) o.setupMm = parseOptionNumber(*setupText, "--setup");
  return o;
}

std::vector<robust::Scenario> scenarioSetOf(robust::ScenarioOptions o, const std::string& countText,
                                            bool sphereGiven, robust::ScenarioOptions* used) {
  robust::ScenarioOptions ignored;
  robust::ScenarioOptions& out = used ? *used : ignored;
  out = o;
  if (countText.empty()) return robust::makeScenarios(o);
  const int n = parseOptionInteger(countText, "--scenarios");
  o.combine = true;
  const std::vector<robust::Scenario> combined = robust::makeScenarios(o);
  if (n == int(combined.size())) {
    out = o;
    return combined;
  }
  o.combine = false;
  const std::vector<robust::Scenario> separate = robust::makeScenarios(o);
  if (n == int(separate.size())) {
    out = o;
    return separate;
  }
  const int ranges = o.rangePercent > 0 ? 3 : 1;
  if (!sphereGiven && o.setupMm > 0 && n > ranges) {
    o.combine = n % ranges == 0 && n / ranges >= 2;
    o.sphereDirections = o.combine ? n / ranges - 1 : n - ranges;
    out = o;
    return robust::makeScenarios(o);
  }
  PENUMBRA_THROW(InvalidArgument,
                 "--scenarios " + countText + ": with --range " + formatG(o.rangePercent) +
                     " and --setup " + formatG(o.setupMm) +
                     (sphereGiven ? " and --sphere " + std::to_string(o.sphereDirections) : "") +
                     " the set has " + std::to_string(combined.size()) + " (range x setup) or " +
                     std::to_string(separate.size()) + " (range, then setup) scenarios");
}

}  // namespace penumbra::cli
