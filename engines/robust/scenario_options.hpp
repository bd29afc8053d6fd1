#pragma once
/// What a scenario set is made of (scenario.hpp builds it), in a header without the proton
/// engine's, so that code that only stores the settings (case files, io/case) need not include
/// the engine. The limits are makeScenarios' own: a case that holds settings within them is one
/// the engine accepts.

namespace penumbra::robust {

/// Range errors must stay below this magnitude [%]: at 50 % the scaled SPR of -r is half the
/// nominal, far outside any CT calibration's uncertainty.
inline constexpr double kMaxRangeErrorPercent = 50;  // exclusive
/// Largest setup shift [mm] (inclusive).
inline constexpr double kMaxSetupErrorMm = 50;
/// Most shift directions on the sphere (inclusive): each is a full dose computation per range
/// value.
inline constexpr int kMaxSphereDirections = 1000;

struct ScenarioOptions {
  double rangePercent = 3.5;  ///< magnitude of the range errors [%]; 0: no range scenarios
  double setupMm = 3.0;       ///< magnitude of the setup shifts [mm]; 0: no shift scenarios
  /// 0: shifts along +-L, +-P, +-S (6 directions); N > 0: N directions spread evenly on the
  /// sphere (Fibonacci lattice) instead.
  int sphereDirections = 0;
  /// true: every range value combined with every shift (3 x 7 = 21 by default); false: range
  /// scenarios and shift scenarios separately (1 + 2 + 6 = 9).
  bool combine = true;
};

}  // namespace penumbra::robust
