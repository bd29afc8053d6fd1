#pragma once
// The error-scenario options that `penumbra-cli robust` and `penumbra-cli optimise --robust`
// share: --range, --setup and --scenarios N, read and checked in one place so that both commands
// build the same set from the same words and refuse a bad value with the same message.
#include <optional>
#include <string>
#include <vector>

#include "robust/scenario.hpp"

namespace penumbra::cli {

/// --range [%] and --setup [mm] as typed (absent: ScenarioOptions' defaults, 3.5 % and 3 mm).
/// Throws InvalidArgument naming the option for a value that is not a number ("--range:
/// expected a number, got 'abc'"); the magnitudes are checked by scenarioSetOf.
robust::ScenarioOptions scenarioOptionsOf(const std::optional<std::string>& rangeText,
                                          const std::optional<std::string>& setupText);

/// The scenario set of `o` and --scenarios N (`countText`; empty: makeScenarios(o)): the
/// combined set (range x setup, 21 by default) or the separate one (range, then setup: 9) when
/// N is one of their sizes; another N spreads the shifts over N / 3 - 1 (combined, N a multiple
/// of the range values) or N - 3 (separate) directions on a sphere, unless --sphere fixed them
/// (`sphereGiven`, robust only). Throws InvalidArgument for a count that is not an integer, for
/// one no set has (naming the sizes that exist), and for magnitudes makeScenarios refuses.
/// `used` (optional) receives the options that make the returned set (makeScenarios(*used)),
/// e.g. to save them with a case.
std::vector<robust::Scenario> scenarioSetOf(robust::ScenarioOptions o, const std::string& countText,
                                            bool sphereGiven, robust::ScenarioOptions* used = nullptr);

}  // namespace penumbra::cli
