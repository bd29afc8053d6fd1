// Robust spot-weight optimisation (robust_optimise.hpp says what and why): argument checks, the
// temperature rounds of the composite worst case, and the merge of the rounds into one result.
// The loop itself is projected_lbfgs.hpp on the block vectors of robust_ops.hpp.
#include "optimise/robust_optimise.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

#include "core/error.hpp"
#include "optimise/projected_lbfgs.hpp"
#include "optimise/robust_ops.hpp"

namespace penumbra::optimise {

const char* toString(RobustMode m) {
  switch (m) {
    case RobustMode::ExpectedValue:
      return "expected";
    case RobustMode::CompositeWorstCase:
      return "cowc";
  }
  return "?";
}

RobustMode parseRobustMode(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  if (t == "expected" || t == "expected-value") return RobustMode::ExpectedValue;
  if (t == "cowc" || t == "worst-case") return RobustMode::CompositeWorstCase;
  PENUMBRA_THROW(InvalidArgument,
                 "robust mode '" + text + "': use 'cowc' (composite worst case) or 'expected'");
}

namespace {

using Clock = std::chrono::steady_clock;

std::vector<double> normalisedProbabilities(const std::vector<double>& p, std::size_t scenarios) {
  if (p.empty()) return std::vector<double>(scenarios, 1.0 / double(scenarios));
  PENUMBRA_REQUIRE(p.size() == scenarios, InvalidArgument,
                   "robust optimisation: " + std::to_string(p.size()) + " probabilities for " +
                       std::to_string(scenarios) + " scenarios");
  double sum = 0;
  for (double x : p) {
    PENUMBRA_REQUIRE(std::isfinite(x) && x >= 0, InvalidArgument,
                     "robust optimisation: scenario probabilities must be finite and >= 0");
    sum += x;
  }
  PENUMBRA_REQUIRE(sum > 0, InvalidArgument,
                   "robust optimisation: the scenario probabilities are all 0");
  std::vector<double> out(p);
  if (scenarios > 1 || out[0] != 1.0)  // one scenario of probability 1 stays exactly 1
    for (double& x : out) x /= sum;
  return out;
}

void validate(const std::vector<const spmv::SpmvEngine*>& engines, const PlanObjective& objective,
              std::size_t weights, const RobustOptions& opt) {
  PENUMBRA_REQUIRE(!engines.empty(), InvalidArgument, "robust optimisation: no scenarios");
  for (std::size_t s = 0; s < engines.size(); ++s)
    PENUMBRA_REQUIRE(engines[s], InvalidArgument,
                     "robust optimisation: scenario " + std::to_string(s) + " has no dose matrix");
  const spmv::HalfCsr& d0 = engines[0]->matrix(spmv::Product::D);
  for (std::size_t s = 1; s < engines.size(); ++s) {
    const spmv::HalfCsr& ds = engines[s]->matrix(spmv::Product::D);
    PENUMBRA_REQUIRE(ds.rows == d0.rows && ds.cols == d0.cols, InvalidArgument,
                     "robust optimisation: scenario " + std::to_string(s) + "'s dose matrix is " +
                         std::to_string(ds.rows) + " x " + std::to_string(ds.cols) +
                         ", scenario 0's " + std::to_string(d0.rows) + " x " +
                         std::to_string(d0.cols) +
                         " (every scenario needs the same dose grid and spots)");
  }
  PENUMBRA_REQUIRE(std::int64_t(weights) == d0.cols, InvalidArgument,
                   "robust optimisation: " + std::to_string(weights) +
                       " initial weights for dose matrices of " + std::to_string(d0.cols) +
                       " spots");
  PENUMBRA_REQUIRE(opt.nominalScenario >= 0 && std::size_t(opt.nominalScenario) < engines.size(),
                   InvalidArgument, "robust optimisation: nominal scenario out of range");
  const OptimiserOptions& o = opt.optimiser;
  PENUMBRA_REQUIRE(o.maxIterations >= 0 && o.memory >= 0 && o.maxBacktracks > 0 && o.armijoC1 > 0 &&
                       o.armijoC1 < 1,
                   InvalidArgument, "robust optimisation: invalid optimiser options");
  if (opt.mode == RobustMode::CompositeWorstCase)
    PENUMBRA_REQUIRE(
        std::isfinite(opt.initialTemperature) && opt.finalTemperature > 0 &&
            std::isfinite(opt.finalTemperature) && opt.temperatureFactor > 0 &&
            opt.temperatureFactor < 1,
        InvalidArgument,
        "robust optimisation: temperatures must be finite and > 0, the factor in (0, 1)");
  objective.validate(d0.rows);
}

/// The relative temperatures of the rounds: initial, shrinking by the factor, the last = final.
std::vector<double> temperatureSchedule(const RobustOptions& o) {
  std::vector<double> t;
  for (double x = o.initialTemperature; x > o.finalTemperature * (1 + 1e-9) && t.size() < 60;
       x *= o.temperatureFactor)
    t.push_back(x);
  t.push_back(o.finalTemperature);
  return t;
}

/// Progress of one round mapped onto the whole run.
class RoundProgress : public ProgressSink {
 public:
  RoundProgress(const JobControl& outer, double offset, double span)
      : outer_(outer), offset_(offset), span_(span) {}
  void report(double fraction, std::string_view stage) override {
    outer_.report(std::min(1.0, offset_ + span_ * fraction), stage);
  }

 private:
  const JobControl& outer_;
  double offset_, span_;
};

}  // namespace

std::vector<std::vector<double>> scenarioDoses(
    const std::vector<const spmv::SpmvEngine*>& scenarios, const std::vector<double>& weights) {
  std::vector<std::vector<double>> d(scenarios.size());
  for (std::size_t s = 0; s < scenarios.size(); ++s)
    scenarios[s]->multiply(spmv::Product::D, weights, d[s]);
  return d;
}

std::vector<VoxelDoseStatistics> scenarioStatistics(
    const std::vector<const spmv::SpmvEngine*>& scenarios, const std::vector<double>& weights,
    const std::vector<std::int64_t>& voxels) {
  std::vector<VoxelDoseStatistics> out;
  std::vector<double> d;
  for (const spmv::SpmvEngine* e : scenarios) {
    e->multiply(spmv::Product::D, weights, d);
    out.push_back(voxelDoseStatistics(d, voxels));
  }
  return out;
}

double robustObjective(RobustMode mode, const std::vector<double>& values,
                       const std::vector<double>& probabilities) {
  PENUMBRA_REQUIRE(!values.empty(), InvalidArgument, "robust objective: no scenario values");
  if (mode == RobustMode::CompositeWorstCase)
    return *std::max_element(values.begin(), values.end());
  const std::vector<double> p = normalisedProbabilities(probabilities, values.size());
  double f = 0;
  for (std::size_t s = 0; s < values.size(); ++s) f += p[s] * values[s];
  return f;
}

RobustOptimiseResult optimiseRobust(const std::vector<const spmv::SpmvEngine*>& engines,
                                    const PlanObjective& objective, std::vector<double> w,
                                    const RobustOptions& opt, const JobControl& job,
                                    const IterationCallback& onIteration) {
  validate(engines, objective, w.size(), opt);
  const auto start = Clock::now();
  const std::size_t S = engines.size();
  RobustOptimiseResult res;
  res.mode = opt.mode;
  res.backend = engines[0]->backend();
  res.device = engines[0]->deviceName();
  bool anyPositive = false;
  for (double& x : w) {
    x = std::isfinite(x) ? std::max(0.0, x) : 0.0;
    anyPositive = anyPositive || x > 0;
  }
  if (!anyPositive) std::fill(w.begin(), w.end(), 1.0);

  detail::RobustOps ops(engines, objective);
  ops.probabilities = normalisedProbabilities(
      opt.mode == RobustMode::ExpectedValue ? opt.probabilities : std::vector<double>{}, S);
  ops.nominal = std::size_t(opt.nominalScenario);
  ops.n = w.size();
  ops.m = std::size_t(engines[0]->matrix(spmv::Product::D).rows);

  const int budget = opt.optimiser.maxIterations;
  int done = 0;
  double smoothed = 0;
  // One round of projected L-BFGS from w; its records join the result's history numbered on.
  auto runRound = [&](int roundBudget, bool rescale, bool first) {
    OptimiserOptions o = opt.optimiser;
    o.maxIterations = roundBudget;
    o.rescaleInitial = rescale;
    o.hostLoop = true;
    const double total = std::max(1, budget);
    RoundProgress sink(job, done / total, roundBudget / total);
    const JobControl roundJob{job.progress ? &sink : nullptr, job.cancel};
    const int offset = done;
    const double secondsBefore = std::chrono::duration<double>(Clock::now() - start).count();
    auto shifted = [offset, secondsBefore](IterationRecord r) {
      r.iteration += offset;
      r.elapsedSeconds += secondsBefore;
      return r;
    };
    IterationCallback cb;
    if (onIteration)
      cb = [&, first](const IterationRecord& r) {
        if (first || r.iteration > 0) onIteration(shifted(r));
      };
    OptimiseResult out;
    detail::runProjectedLbfgs(ops, w, o, roundJob, cb, out);
    for (const IterationRecord& r : out.history)
      if (first || r.iteration > 0) res.history.push_back(shifted(r));
    res.doseProducts += out.doseProducts * std::int64_t(S);
    res.gradientProducts = ops.products;  // skipped zero blocks not counted
    done += out.iterations;
    w = out.weights;
    smoothed = out.objective;
    if (first) {
      res.initialScale = out.initialScale;
      res.initialObjective = out.initialObjective;
    }
    return out;
  };

  if (opt.mode == RobustMode::ExpectedValue) {
    const OptimiseResult out = runRound(budget, opt.optimiser.rescaleInitial, true);
    res.state = out.state;
    res.stopReason = out.stopReason;
    res.rounds = 1;
  } else {
    detail::Blocks wb, d;
    // The start: scaled to minimise the mean scenario objective (the temperature is not known
    // before the objective's scale is), then the worst case there sets the first temperature.
    auto worstAt = [&]() {
      ops.upload(w, wb);
      ops.dose(wb, d);
      res.doseProducts += std::int64_t(S);
      ops.evaluate(d, nullptr);
      return *std::max_element(ops.values.begin(), ops.values.end());
    };
    if (opt.optimiser.rescaleInitial) {
      ops.mode = RobustMode::ExpectedValue;
      ops.upload(w, wb);
      ops.dose(wb, d);
      res.doseProducts += std::int64_t(S);
      res.initialScale = detail::bestScale(ops, d);
      for (double& x : w) x *= res.initialScale;
    }
    ops.mode = RobustMode::CompositeWorstCase;
    double worst = worstAt();
    res.initialObjective = worst;
    smoothed = worst;
    const std::vector<double> schedule = temperatureSchedule(opt);
    res.state = OptimiseState::MaxIterations;
    res.stopReason = "reached " + std::to_string(budget) + " iterations";
    for (std::size_t k = 0; k < schedule.size(); ++k) {
      const int left = budget - done, roundsLeft = int(schedule.size() - k);
      const int roundBudget =
          k + 1 == schedule.size() ? left : (left + roundsLeft - 1) / roundsLeft;
      if (roundBudget <= 0) {
        res.stopReason = "reached " + std::to_string(budget) + " iterations before round " +
                         std::to_string(k + 1) + " of " + std::to_string(schedule.size());
        break;
      }
      // tau relative to the worst scenario's objective; a zero objective needs no smoothing.
      ops.tau = schedule[k] * (worst > 0 ? worst : 1.0);
      res.temperatures.push_back(ops.tau);
      const OptimiseResult out = runRound(roundBudget, false, k == 0);
      ++res.rounds;
      char prefix[96];
      std::snprintf(prefix, sizeof prefix, "round %zu of %zu (tau %.3g): ", k + 1, schedule.size(),
                    ops.tau);
      res.stopReason = prefix + out.stopReason;
      if (out.state == OptimiseState::Stopped) {
        res.state = OptimiseState::Stopped;
        res.stopReason = "stopped by the user after " + std::to_string(done) + " iterations";
        break;
      }
      res.state = k + 1 == schedule.size() ? out.state : OptimiseState::MaxIterations;
      if (k + 1 < schedule.size()) worst = worstAt();
    }
  }

  // Every scenario's objective at the returned weights, and the nominal dose.
  const std::vector<std::vector<double>> doses = scenarioDoses(engines, w);
  res.doseProducts += std::int64_t(S);
  res.scenarioObjectives.resize(S);
  for (std::size_t s = 0; s < S; ++s) res.scenarioObjectives[s] = objective.evaluate(doses[s]);
  res.worstScenario =
      int(std::max_element(res.scenarioObjectives.begin(), res.scenarioObjectives.end()) -
          res.scenarioObjectives.begin());
  // The probabilities as the loop used them (normalised once), so that F here is the loop's F.
  res.objective = *std::max_element(res.scenarioObjectives.begin(), res.scenarioObjectives.end());
  if (opt.mode == RobustMode::ExpectedValue) {
    res.objective = 0;
    for (std::size_t s = 0; s < S; ++s)
      res.objective += ops.probabilities[s] * res.scenarioObjectives[s];
  }
  res.smoothedObjective = opt.mode == RobustMode::ExpectedValue ? res.objective : smoothed;
  res.weights = std::move(w);
  res.dose = doses[ops.nominal];
  res.iterations = done;
  res.elapsedSeconds = std::chrono::duration<double>(Clock::now() - start).count();
  res.iterationsPerSecond = res.elapsedSeconds > 0 ? res.iterations / res.elapsedSeconds : 0;
  return res;
}

}  // namespace penumbra::optimise
