#pragma once
/// Robust spot-weight optimisation (issue 16, item 3): one dose-deposition matrix D_s per error
/// scenario s (robust/robust_matrices.hpp builds them), each on its own SpMV engine (GPU when
/// there is one), and one plan objective f (objective.hpp), minimised over w >= 0 as
///   ExpectedValue        F(w) = sum_s p_s f(D_s w)        (p_s >= 0, normalised; uniform default)
///   CompositeWorstCase   F(w) = max_s f(D_s w)            (matRad's COWC: the worst scenario's
///                                                          objective, composite over structures)
///
/// Why a smoothing, and which. The maximum is not differentiable where two scenarios tie, and
/// the optimum of a minimax problem is typically exactly there (the robust plan balances its
/// worst scenarios), so a quasi-Newton method on the raw maximum zig-zags between scenarios and
/// its line search stalls. COWC therefore minimises the log-sum-exp upper bound
///   F_tau(w) = tau log sum_s exp(f_s(w) / tau),   max_s f_s <= F_tau <= max_s f_s + tau log S,
/// which is smooth, and convex because every f_s is convex in w (objective.hpp) and log-sum-exp
/// is convex and increasing in each argument: projected L-BFGS reaches its global optimum, and
/// that optimum's worst case is within tau log S of the true minimax value. Its gradient is
/// sum_s pi_s D_s^T r_s with pi = softmax(f / tau) (the scenarios weighted by how close they are
/// to the worst), its exact curvature along a dose direction q (the line search's first step)
/// sum_s pi_s q_s^T H_s q_s + (1/tau) Var_pi(r_s . q_s). Alternatives considered: the epigraph
/// form (min t s.t. f_s <= t) needs a constrained solver; a subgradient method converges too
/// slowly for an interactive tool.
/// Temperature: relative to the objective's own scale, so that one setting fits any
/// prescription and any number of terms: round k minimises F_tau with
/// tau_k = t_k * max_s f_s(w) at the round's start, t_0 = initialTemperature, t_k shrinking by
/// temperatureFactor down to finalTemperature (defaults 0.1, 0.01, 0.001: three rounds; at the
/// last the bound is within 0.001 log S of the worst case, 0.3 % for 21 scenarios). A large
/// tau first averages the scenarios (an easy, well-conditioned problem); each round starts
/// from the previous round's weights with a fresh L-BFGS memory. Since F_tau decreases with
/// tau, the history's objective never increases across rounds either.
///
/// The loop is projected_lbfgs.hpp's (the nominal optimiser's, unchanged), on host vectors whose
/// dose vectors hold one block per scenario; the products run on each scenario's engine (on the
/// GPU when the engines are there). With one scenario and ExpectedValue the iterations are the
/// nominal optimiser's host loop, operation for operation.
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "optimise/objective.hpp"
#include "optimise/optimise.hpp"
#include "optimise/robust_mode.hpp"  // RobustMode (ExpectedValue, CompositeWorstCase)
#include "spmv/spmv.hpp"

namespace penumbra::optimise {

struct RobustOptions {
  RobustMode mode = RobustMode::CompositeWorstCase;
  /// ExpectedValue: one probability per scenario (>= 0, not all 0; normalised to sum 1);
  /// empty: uniform. CompositeWorstCase ignores them (every scenario counts, as in matRad).
  std::vector<double> probabilities;
  /// The scenario whose dose the result and the callback's iterates report (the nominal one;
  /// robust::makeScenarios puts it first).
  int nominalScenario = 0;
  /// CompositeWorstCase temperature schedule, relative to max_s f_s (see the file comment).
  double initialTemperature = 0.1;
  double finalTemperature = 1e-3;
  double temperatureFactor = 0.1;  ///< in (0, 1)
  /// maxIterations counts the iterations of all rounds together; the other settings apply to
  /// every round. hostLoop is implied (the loop always runs on the host). rescaleInitial scales
  /// the starting weights to minimise the mean scenario objective.
  OptimiserOptions optimiser;
};

/// OptimiseResult with the robust details. In the inherited fields: weights; dose = the nominal
/// scenario's D w [Gy]; objective and initialObjective = the robust objective F itself (for
/// COWC the true maximum, not its smoothing); history and the callback = every accepted
/// iteration of every round, numbered on, with the objective the round minimised (for COWC
/// F_tau >= max_s f_s; iteration 0 only once); doseProducts and gradientProducts count products
/// with single scenario matrices (an iteration costs S of each, but a D_s^T product is skipped,
/// exactly, where scenario s's softmax weight underflowed to 0); loopOnGpu is false.
struct RobustOptimiseResult : OptimiseResult {
  RobustMode mode = RobustMode::CompositeWorstCase;
  std::vector<double> scenarioObjectives;  ///< f(D_s w) at the returned weights, per scenario
  int worstScenario = 0;                   ///< the scenario with the largest f(D_s w)
  double smoothedObjective = 0;      ///< the last round's objective (= objective for ExpectedValue)
  std::vector<double> temperatures;  ///< tau of every round run (COWC) [f's units]
  int rounds = 0;
};

/// Minimises the robust objective over w >= 0 from `initialWeights` (negative or non-finite
/// entries clamped to 0; all zero: starts from 1). `scenarios`: one engine per scenario, all
/// of the same shape (dose voxels x spots), the nominal at options.nominalScenario. Throws
/// InvalidArgument for no scenarios, a null engine, differing shapes, a weight count that is not
/// the matrices' spot count, bad probabilities or temperatures, or an invalid objective. Never
/// throws CancelledError: a cancel ends in state Stopped with the last accepted weights.
/// Progress: the fraction of maxIterations done over all rounds.
RobustOptimiseResult optimiseRobust(const std::vector<const spmv::SpmvEngine*>& scenarios,
                                    const PlanObjective& objective,
                                    std::vector<double> initialWeights,
                                    const RobustOptions& options = {}, const JobControl& job = {},
                                    const IterationCallback& onIteration = {});

/// D_s w of every scenario [Gy] (one product each, in scenario order).
std::vector<std::vector<double>> scenarioDoses(
    const std::vector<const spmv::SpmvEngine*>& scenarios, const std::vector<double>& weights);

/// Dose statistics of `voxels` (e.g. a target's: D95, D98) in every scenario's dose D_s w.
std::vector<VoxelDoseStatistics> scenarioStatistics(
    const std::vector<const spmv::SpmvEngine*>& scenarios, const std::vector<double>& weights,
    const std::vector<std::int64_t>& voxels);

/// The robust objective of per-scenario objective values: the p-weighted mean (ExpectedValue;
/// probabilities as in RobustOptions) or the maximum (CompositeWorstCase).
double robustObjective(RobustMode mode, const std::vector<double>& scenarioValues,
                       const std::vector<double>& probabilities = {});

}  // namespace penumbra::optimise
