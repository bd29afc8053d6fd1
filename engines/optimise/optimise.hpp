#pragma once
/// Spot-weight optimisation (issue 5, item 4): minimise f(D w) over w >= 0 with projected
/// L-BFGS, every dose d = D w and gradient g = D^T r from the SpMV engine (GPU when the engine
/// is on it, its CPU reference otherwise).
///
/// Method (one iteration = one D product + one D^T product, plus one D product per backtrack):
///  - free set: spots with w > 0, or w = 0 and g < 0 (a spot at the bound whose gradient pushes
///    it below 0 stays fixed at 0 this iteration);
///  - direction: L-BFGS two-loop recursion (memory m pairs, initial scaling s.y / y.y) on the
///    gradient restricted to the free set, then restricted to the free set again; when it is not
///    a descent direction the memory is cleared and steepest descent used;
///  - step: the first trial step is 1 for quasi-Newton directions and the exact minimiser of
///    the local quadratic model along steepest descent (one extra D product: q = D p,
///    alpha = -g.p / q^T H q); then backtracking (halving) along the projected path
///    w(alpha) = max(0, w + alpha p) until Armijo holds:
///    f(w(alpha)) <= f(w) + c1 g.(w(alpha) - w), with g.(w(alpha) - w) < 0. An accepted step
///    therefore strictly decreases f: the objective never increases;
///  - memory update with (s, y) only when s.y > 1e-12 y.y (curvature condition), so the
///    inverse-Hessian approximation stays positive definite;
///  - stop on: relative decrease (f_k - f_{k+1}) / f_k < relativeDecrease for `patience`
///    consecutive iterations; projected-gradient norm ||P(w - g) - w||_inf below
///    projectedGradient x its initial value; maxIterations; cancel; a line search that finds no
///    decrease even along steepest descent (converged to rounding).
///
/// Cancel (JobControl) is checked once per iteration and before every trial step of the line
/// search, and ends in state Stopped with the best weights so far (with monotone decrease, the
/// last accepted ones). The callback receives every iteration's record on the optimiser's
/// thread (the GUI queues it to its own), with the current weights and dose as often as
/// OptimiserOptions::iterateIntervalSeconds asks.
///
/// Where the loop runs: with the SpMV engine on the GPU, on the GPU (cuda/optimise_cuda.cu:
/// weights, doses, residuals, gradients and the L-BFGS pairs stay on the device, reductions are
/// deterministic trees, so a run is bitwise reproducible; only scalars and the iterates asked
/// for cross the bus); otherwise, or with hostLoop, on the host around the engine's products.
/// Both run one template (projected_lbfgs.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/progress.hpp"
#include "optimise/objective.hpp"
#include "proton/proton_plan.hpp"
#include "spmv/spmv.hpp"

namespace penumbra::optimise {

struct OptimiserOptions {
  int maxIterations = 200;
  int memory = 10;                  ///< L-BFGS pairs kept
  double relativeDecrease = 1e-6;   ///< stop below this relative decrease of f ...
  int patience = 3;                 ///< ... for this many consecutive iterations
  double projectedGradient = 1e-6;  ///< stop when ||P(w - g) - w||_inf < this x its start value
  double armijoC1 = 1e-4;
  int maxBacktracks = 30;
  /// Scale the initial weights by the scalar that minimises f along them (exact 1-D Newton on
  /// the dose, no extra products), so a plan with uniform weights 1 starts near the right dose.
  bool rescaleInitial = true;
  /// Seconds between iterates handed to the callback (weights and dose in the record); < 0:
  /// never, 0: every iteration. On the GPU each one is a download of both vectors.
  double iterateIntervalSeconds = -1;
  /// Keep the loop on the host even when the SpMV engine is on the GPU (the products still run
  /// there): the reference path the GPU loop is compared with.
  bool hostLoop = false;
};

/// One accepted iteration (iteration 0 = the starting point).
struct IterationRecord {
  int iteration = 0;
  double objective = 0;
  double projectedGradientNorm = 0;  ///< ||P(w - g) - w||_inf
  double step = 0;                   ///< accepted alpha (0 for iteration 0)
  int backtracks = 0;
  double elapsedSeconds = 0;  ///< since the optimiser started
  /// The iterate (weights in the dose matrix's column order, dose on the dose grid [Gy]) when
  /// due (OptimiserOptions::iterateIntervalSeconds); null otherwise and in the history.
  std::shared_ptr<const std::vector<double>> weights, dose;
};

using IterationCallback = std::function<void(const IterationRecord&)>;

enum class OptimiseState {
  Converged,  ///< relative decrease, projected gradient, or no further decrease possible
  MaxIterations,
  Stopped,  ///< cancelled by the user: best weights kept
};
const char* toString(OptimiseState s);  ///< "converged", "max-iterations", "stopped"

struct OptimiseResult {
  std::vector<double> weights;  ///< best (lowest-objective) weights, >= 0, units of 1e9 protons
  std::vector<double> dose;     ///< D weights [Gy], dose-grid voxels
  double objective = 0;         ///< f(weights)
  double initialObjective = 0;  ///< f at the (rescaled) starting weights
  double initialScale = 1;      ///< factor applied to the initial weights (rescaleInitial)
  int iterations = 0;           ///< accepted iterations
  OptimiseState state = OptimiseState::Converged;
  std::string stopReason;                ///< user-facing
  std::vector<IterationRecord> history;  ///< iteration 0 .. iterations
  Backend backend = Backend::Cpu;        ///< where the products ran
  bool loopOnGpu = false;                ///< the loop's vectors lived on the GPU
  std::string device;
  std::int64_t doseProducts = 0, gradientProducts = 0;
  double elapsedSeconds = 0;
  double iterationsPerSecond = 0;  ///< iterations / elapsedSeconds
};

/// Minimises objective(D w) over w >= 0 starting from `initialWeights` (negative entries are
/// clamped to 0; all zero: starts from 1). Throws InvalidArgument for a size mismatch or an
/// invalid objective. Never throws CancelledError: a cancel ends in state Stopped.
OptimiseResult optimiseSpotWeights(const spmv::SpmvEngine& engine, const PlanObjective& objective,
                                   std::vector<double> initialWeights,
                                   const OptimiserOptions& options = {}, const JobControl& job = {},
                                   const IterationCallback& onIteration = {});

namespace detail {
/// The GPU loop (cuda/optimise_cuda.cu; throws Unsupported in builds without CUDA).
void optimiseOnGpu(const spmv::SpmvEngine& engine, const PlanObjective& objective,
                   const std::vector<double>& w0, const OptimiserOptions& options,
                   const JobControl& job, const IterationCallback& onIteration,
                   OptimiseResult& result);
}  // namespace detail

/// The spot weights of a plan in the dose matrix's column order (beam, layer, spot) and back
/// (setPlanWeights throws InvalidArgument when the count differs from the plan's spots).
std::vector<double> planWeights(const std::vector<proton::ProtonBeam>& beams);
void setPlanWeights(std::vector<proton::ProtonBeam>& beams, const std::vector<double>& weights);

}  // namespace penumbra::optimise
