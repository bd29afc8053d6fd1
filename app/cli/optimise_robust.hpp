#pragma once
// `penumbra-cli optimise --robust cowc|expected`: the per-scenario dose matrices, the nominal
// and the robust optimisation of one objective, and the per-scenario target D95 of both plans
// (optimise_robust.cpp). The scenario set comes from robust_options.hpp, shared with `robust`.
#include <string>
#include <vector>

#include "optimise/robust_optimise.hpp"
#include "robust/robust_matrices.hpp"
#include "robust/scenario.hpp"

namespace penumbra::cli {

struct RobustCliOptions {
  optimise::RobustMode mode = optimise::RobustMode::CompositeWorstCase;
  /// The set of --range, --setup and --scenarios N (robust_options.hpp: scenarioSetOf), made
  /// and checked before the import.
  std::vector<robust::Scenario> scenarios;
  robust::ScenarioOptions options;  ///< what makes `scenarios` (saved with the optimised case)
};

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
