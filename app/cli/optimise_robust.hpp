#pragma once
// `penumbra-cli optimise --robust cowc|expected`: the scenario set of the options, the
// per-scenario dose matrices, the nominal and the robust optimisation of one objective, and the
// per-scenario target D95 of both plans (optimise_robust.cpp).
#include <string>
#include <vector>

#include "optimise/robust_optimise.hpp"
#include "robust/robust_matrices.hpp"
#include "robust/scenario.hpp"

namespace penumbra::cli {

struct RobustCliOptions {
  optimise::RobustMode mode = optimise::RobustMode::CompositeWorstCase;
  robust::ScenarioOptions scenarios;  ///< --range, --setup
  int count = 0;                      ///< --scenarios N; 0: the options' default set
};

/// The scenario set of --range/--setup and --scenarios N: the combined set (range x setup, 21
/// by default) or the separate one (range, then setup: 9) when N is one of their sizes; another
/// N spreads the shifts over N / 3 - 1 (combined) or N - 3 (separate) directions on a sphere.
/// Throws InvalidArgument naming the sizes that exist otherwise.
std::vector<robust::Scenario> robustScenarioSet(robust::ScenarioOptions o, int count);

/// Builds the scenario matrices of `plan` (products on `plan.backend`), printing the memory
/// estimate and the build times.
robust::ScenarioMatrices buildRobustMatrices(const proton::ProtonDoseRequest& plan,
                                             const std::vector<robust::Scenario>& scenarios);

/// Optimises nominally (the nominal scenario's matrix alone) and robustly with `options`, prints
/// the iterations, both plans' target D95 in every scenario and the worst case of each, and
/// returns the robust result.
optimise::RobustOptimiseResult optimiseNominalAndRobust(
    const robust::ScenarioMatrices& set, const optimise::PlanObjective& objective,
    const std::vector<double>& initialWeights, const std::vector<std::int64_t>& targetVoxels,
    optimise::RobustMode mode, const optimise::OptimiserOptions& options);

}  // namespace penumbra::cli
