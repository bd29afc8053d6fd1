// Projected L-BFGS for spot weights (see optimise.hpp for the method). The vectors here are
// spot-sized (10^3 - 10^5); the cost of an iteration is the two SpMV products, so the
// bookkeeping stays plain serial C++.
#include "optimise/optimise.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "optimise/lbfgs_memory.hpp"

namespace penumbra::optimise {

const char* toString(OptimiseState s) {
  switch (s) {
    case OptimiseState::Converged:
      return "converged";
    case OptimiseState::MaxIterations:
      return "max-iterations";
    case OptimiseState::Stopped:
      return "stopped";
  }
  return "?";
}

std::vector<double> planWeights(const std::vector<proton::ProtonBeam>& beams) {
  std::vector<double> w;
  w.reserve(proton::totalSpotCount(beams));
  for (const auto& b : beams)
    for (const auto& l : b.layers)
      for (const auto& s : l.spots) w.push_back(s.weight);
  return w;
}

void setPlanWeights(std::vector<proton::ProtonBeam>& beams, const std::vector<double>& weights) {
  PENUMBRA_REQUIRE(weights.size() == proton::totalSpotCount(beams), InvalidArgument,
                   "setPlanWeights: " + std::to_string(weights.size()) + " weights for " +
                       std::to_string(proton::totalSpotCount(beams)) + " spots");
  std::size_t i = 0;
  for (auto& b : beams)
    for (auto& l : b.layers)
      for (auto& s : l.spots) s.weight = weights[i++];
}

namespace {

using Clock = std::chrono::steady_clock;

double projectedGradientNorm(const std::vector<double>& w, const std::vector<double>& g) {
  double m = 0;
  for (std::size_t i = 0; i < w.size(); ++i)
    m = std::max(m, std::abs(std::max(0.0, w[i] - g[i]) - w[i]));
  return m;
}

// The scalar a > 0 minimising f(a d0): f is convex along the ray, so Newton on f'(a) = r(a d0).d0
// inside a bracket [lo, hi] with f'(lo) < 0 < f'(hi), bisecting whenever Newton leaves it.
// Works on the dose alone (D (a w) = a D w): no products. Returns 1 when f'(0) >= 0.
double bestScale(const PlanObjective& obj, const std::vector<double>& d0) {
  std::vector<double> d(d0.size()), r;
  auto slope = [&](double a, double* curv) {
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = a * d0[i];
    obj.evaluate(d, &r);
    double s = 0;
    for (std::size_t i = 0; i < d.size(); ++i) s += r[i] * d0[i];
    if (curv) *curv = obj.curvature(d, d0);
    return s;
  };
  if (slope(0, nullptr) >= 0) return 1;
  double lo = 0, hi = 1;
  for (int i = 0; i < 200 && slope(hi, nullptr) < 0; ++i) lo = hi, hi *= 2;
  double a = 0.5 * (lo + hi);
  for (int it = 0; it < 60 && hi - lo > 1e-12 * hi; ++it) {
    double curv = 0;
    const double s = slope(a, &curv);
    if (s == 0) return a;
    (s < 0 ? lo : hi) = a;
    const double newton = curv > 0 ? a - s / curv : -1;
    a = (newton > lo && newton < hi) ? newton : 0.5 * (lo + hi);
  }
  return a;
}

}  // namespace

OptimiseResult optimiseSpotWeights(const spmv::SpmvEngine& engine, const PlanObjective& objective,
                                   std::vector<double> w, const OptimiserOptions& opt,
                                   const JobControl& job, const IterationCallback& onIteration) {
  const auto start = Clock::now();
  const spmv::HalfCsr& dm = engine.matrix(spmv::Product::D);
  PENUMBRA_REQUIRE(std::int64_t(w.size()) == dm.cols, InvalidArgument,
                   "optimise: " + std::to_string(w.size()) +
                       " initial weights for a dose matrix of " + std::to_string(dm.cols) +
                       " spots");
  PENUMBRA_REQUIRE(opt.maxIterations >= 0 && opt.memory >= 0 && opt.maxBacktracks > 0 &&
                       opt.armijoC1 > 0 && opt.armijoC1 < 1,
                   InvalidArgument, "optimise: invalid optimiser options");
  objective.validate(dm.rows);

  OptimiseResult res;
  res.backend = engine.backend();
  res.device = engine.deviceName();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto doseOf = [&](const std::vector<double>& x, std::vector<double>& d) {
    engine.multiply(spmv::Product::D, x, d);
    ++res.doseProducts;
  };
  auto gradientOf = [&](const std::vector<double>& r, std::vector<double>& g) {
    engine.multiply(spmv::Product::Dt, r, g);
    ++res.gradientProducts;
  };

  bool anyPositive = false;
  for (double& x : w) {
    x = std::isfinite(x) ? std::max(0.0, x) : 0.0;
    anyPositive = anyPositive || x > 0;
  }
  if (!anyPositive) std::fill(w.begin(), w.end(), 1.0);

  std::vector<double> d, r, g;
  doseOf(w, d);
  if (opt.rescaleInitial) {
    res.initialScale = bestScale(objective, d);
    for (double& x : w) x *= res.initialScale;
    doseOf(w, d);  // D (a w) again rather than a D w: the dose is always exactly the product
  }
  double f = objective.evaluate(d, &r);
  gradientOf(r, g);
  res.initialObjective = f;
  double pg = projectedGradientNorm(w, g);
  const double pg0 = pg;

  auto record = [&](int iteration, double step, int backtracks) {
    IterationRecord rec{iteration, f, pg, step, backtracks, seconds()};
    res.history.push_back(rec);
    if (onIteration) onIteration(rec);
    if (opt.maxIterations > 0)
      job.report(std::min(1.0, double(iteration) / opt.maxIterations), "optimising spot weights");
  };
  record(0, 0, 0);

  detail::LbfgsMemory memory(opt.memory);
  const std::size_t n = w.size();
  std::vector<double> p(n), wt(n), dt, rt, gt, q;
  std::vector<char> freeSet(n);
  int smallDecreases = 0;
  res.state = OptimiseState::MaxIterations;
  res.stopReason = "reached " + std::to_string(opt.maxIterations) + " iterations";

  for (int k = 1; k <= opt.maxIterations; ++k) {
    if (job.cancelled()) {
      res.state = OptimiseState::Stopped;
      res.stopReason =
          "stopped by the user after " + std::to_string(res.iterations) + " iterations";
      break;
    }
    if (pg == 0 || pg <= opt.projectedGradient * pg0) {
      res.state = OptimiseState::Converged;
      res.stopReason = "projected gradient below tolerance";
      break;
    }
    // Spots at the bound whose gradient points outward stay fixed this iteration.
    for (std::size_t i = 0; i < n; ++i) freeSet[i] = !(w[i] <= 0 && g[i] > 0);

    bool accepted = false, steepest = memory.empty();
    double alpha = 0, ft = f;
    int backtracks = 0;
    for (int attempt = 0; attempt < 2 && !accepted; ++attempt) {
      double alpha0 = 1;
      if (!steepest) {
        memory.direction(g, freeSet, p);  // p = -Z H Z g: a descent direction while Zg != 0
      } else {
        for (std::size_t i = 0; i < n; ++i) p[i] = freeSet[i] ? -g[i] : 0.0;
        // Exact minimiser of the local quadratic model along p: one extra product.
        doseOf(p, q);
        double gp = 0, pmax = 0, wmax = 0;
        for (std::size_t i = 0; i < n; ++i)
          gp += g[i] * p[i], pmax = std::max(pmax, std::abs(p[i])), wmax = std::max(wmax, w[i]);
        const double curv = objective.curvature(d, q);
        alpha0 = curv > 0 ? -gp / curv : (pmax > 0 ? std::max(wmax, 1.0) / pmax : 1.0);
      }
      alpha = alpha0;
      for (backtracks = 0; backtracks < opt.maxBacktracks; ++backtracks, alpha *= 0.5) {
        double gDelta = 0;
        for (std::size_t i = 0; i < n; ++i) {
          wt[i] = std::max(0.0, w[i] + alpha * p[i]);
          gDelta += g[i] * (wt[i] - w[i]);
        }
        if (!(gDelta < 0)) continue;
        doseOf(wt, dt);
        ft = objective.evaluate(dt, &rt);
        if (ft <= f + opt.armijoC1 * gDelta && ft < f) {
          accepted = true;
          break;
        }
      }
      if (!accepted && !steepest) {
        memory.clear();  // the quasi-Newton model misled the search: restart from the gradient
        steepest = true;
      } else if (!accepted) {
        break;
      }
    }
    if (!accepted) {
      res.state = OptimiseState::Converged;
      res.stopReason = "no further decrease along the projected gradient (converged to rounding)";
      break;
    }
    gradientOf(rt, gt);
    memory.push(w, wt, g, gt);
    const double relative = (f - ft) / std::max(std::abs(f), std::numeric_limits<double>::min());
    w.swap(wt);
    d.swap(dt);
    g.swap(gt);
    f = ft;
    pg = projectedGradientNorm(w, g);
    res.iterations = k;
    record(k, alpha, backtracks);
    smallDecreases = relative < opt.relativeDecrease ? smallDecreases + 1 : 0;
    if (smallDecreases >= opt.patience) {
      res.state = OptimiseState::Converged;
      res.stopReason = "relative decrease below tolerance";
      break;
    }
  }

  // Objective decreases monotonically, so the last accepted weights are the best.
  res.weights = std::move(w);
  res.dose = std::move(d);
  res.objective = f;
  res.elapsedSeconds = seconds();
  res.iterationsPerSecond = res.elapsedSeconds > 0 ? res.iterations / res.elapsedSeconds : 0;
  return res;
}

}  // namespace penumbra::optimise
