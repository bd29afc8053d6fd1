#pragma once
/// The projected L-BFGS loop of optimise.hpp, written once over the vector operations of a
/// backend (Ops), so that the CPU reference and the GPU run the same iterations:
///   CpuOps (optimise.cpp): std::vector, serial sums in index order, the SpMV engine's products;
///   CudaOps (cuda/optimise_cuda.cu): device vectors, deterministic tree reductions, the SpMV
///   engine's device matrices; only scalars cross the bus inside the loop.
/// Ops provides: Vec, Mask; spots(), doses() (new vectors; doses() zeroed); upload(host, v),
/// download(v, host); dose(w, d) = D w; gradient(r, g) = D^T r; evaluate(d, r*) -> f, r = df/dd;
/// curvature(d, q) -> q^T H q; dot, axpy, scale, scaled (y = a x), difference (a - b), maxAbs,
/// maxValue, projectedGradientNorm(w, g), freeSet(w, g, mask), masked(x, mask, sign, y),
/// trialStep(w, p, alpha, g, wt) -> g.(wt - w) with wt = max(0, w + alpha p).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "optimise/lbfgs_memory.hpp"
#include "optimise/optimise.hpp"

namespace penumbra::optimise::detail {

/// The scalar a > 0 minimising f(a d0): f is convex along the ray, so Newton on f'(a) = r(a d0).d0
/// inside a bracket [lo, hi] with f'(lo) < 0 < f'(hi), bisecting whenever Newton leaves it.
/// Works on the dose alone (D (a w) = a D w): no products. Returns 1 when f'(0) >= 0.
template <class Ops>
double bestScale(Ops& ops, const typename Ops::Vec& d0) {
  typename Ops::Vec d = ops.doses(), r = ops.doses();
  auto slope = [&](double a, double* curv) {
    ops.scaled(a, d0, d);
    ops.evaluate(d, &r);
    const double s = ops.dot(r, d0);
    if (curv) *curv = ops.curvature(d, d0);
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

/// The loop itself; `res` arrives with backend and device set. w: the clamped starting weights.
template <class Ops>
void runProjectedLbfgs(Ops& ops, const std::vector<double>& w0, const OptimiserOptions& opt,
                       const JobControl& job, const IterationCallback& onIteration,
                       OptimiseResult& res) {
  using Clock = std::chrono::steady_clock;
  using Vec = typename Ops::Vec;
  const auto start = Clock::now();
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  auto doseOf = [&](const Vec& x, Vec& d) {
    ops.dose(x, d);
    ++res.doseProducts;
  };
  auto gradientOf = [&](const Vec& r, Vec& g) {
    ops.gradient(r, g);
    ++res.gradientProducts;
  };

  Vec w = ops.spots(), d = ops.doses(), r = ops.doses(), g = ops.spots();
  ops.upload(w0, w);
  doseOf(w, d);
  if (opt.rescaleInitial) {
    res.initialScale = bestScale(ops, d);
    ops.scale(res.initialScale, w);
    doseOf(w, d);  // D (a w) again rather than a D w: the dose is always exactly the product
  }
  double f = ops.evaluate(d, &r);
  gradientOf(r, g);
  res.initialObjective = f;
  double pg = ops.projectedGradientNorm(w, g);
  const double pg0 = pg;

  double lastIterate = -std::numeric_limits<double>::infinity();
  auto record = [&](int iteration, double step, int backtracks) {
    IterationRecord rec;
    rec.iteration = iteration;
    rec.objective = f;
    rec.projectedGradientNorm = pg;
    rec.step = step;
    rec.backtracks = backtracks;
    rec.elapsedSeconds = seconds();
    res.history.push_back(rec);
    if (onIteration) {
      // The iterate itself only as often as asked: on the GPU it is the one download of the loop.
      if (opt.iterateIntervalSeconds >= 0 && rec.elapsedSeconds - lastIterate >= opt.iterateIntervalSeconds) {
        auto wh = std::make_shared<std::vector<double>>(), dh = std::make_shared<std::vector<double>>();
        ops.download(w, *wh);
        ops.download(d, *dh);
        rec.weights = std::move(wh);
        rec.dose = std::move(dh);
        lastIterate = rec.elapsedSeconds;
      }
      onIteration(rec);
    }
    if (opt.maxIterations > 0)
      job.report(std::min(1.0, double(iteration) / opt.maxIterations), "optimising spot weights");
  };
  record(0, 0, 0);

  LbfgsMemory<Ops> memory(ops, opt.memory);
  Vec p = ops.spots(), wt = ops.spots(), dt = ops.doses(), rt = ops.doses(), gt = ops.spots(),
      q = ops.doses();
  typename Ops::Mask freeSet = ops.mask();
  int smallDecreases = 0;
  res.state = OptimiseState::MaxIterations;
  res.stopReason = "reached " + std::to_string(opt.maxIterations) + " iterations";
  auto stopByUser = [&] {
    res.state = OptimiseState::Stopped;
    res.stopReason = "stopped by the user after " + std::to_string(res.iterations) + " iterations";
  };

  for (int k = 1; k <= opt.maxIterations; ++k) {
    if (job.cancelled()) {
      stopByUser();
      break;
    }
    if (pg == 0 || pg <= opt.projectedGradient * pg0) {
      res.state = OptimiseState::Converged;
      res.stopReason = "projected gradient below tolerance";
      break;
    }
    // Spots at the bound whose gradient points outward stay fixed this iteration.
    ops.freeSet(w, g, freeSet);

    bool accepted = false, steepest = memory.empty(), cancelled = false;
    double alpha = 0, ft = f;
    int backtracks = 0;
    for (int attempt = 0; attempt < 2 && !accepted && !cancelled; ++attempt) {
      double alpha0 = 1;
      if (!steepest) {
        memory.direction(g, freeSet, p);  // p = -Z H Z g: a descent direction while Zg != 0
      } else {
        ops.masked(g, freeSet, -1.0, p);
        // Exact minimiser of the local quadratic model along p: one extra product.
        doseOf(p, q);
        const double gp = ops.dot(g, p), pmax = ops.maxAbs(p), wmax = std::max(0.0, ops.maxValue(w));
        const double curv = ops.curvature(d, q);
        alpha0 = curv > 0 ? -gp / curv : (pmax > 0 ? std::max(wmax, 1.0) / pmax : 1.0);
      }
      alpha = alpha0;
      for (backtracks = 0; backtracks < opt.maxBacktracks; ++backtracks, alpha *= 0.5) {
        // A cancel lands inside the line search too: each trial costs a product.
        if (job.cancelled()) {
          cancelled = true;
          break;
        }
        const double gDelta = ops.trialStep(w, p, alpha, g, wt);
        if (!(gDelta < 0)) continue;
        doseOf(wt, dt);
        ft = ops.evaluate(dt, &rt);
        if (ft <= f + opt.armijoC1 * gDelta && ft < f) {
          accepted = true;
          break;
        }
      }
      if (cancelled) break;
      if (!accepted && !steepest) {
        memory.clear();  // the quasi-Newton model misled the search: restart from the gradient
        steepest = true;
      } else if (!accepted) {
        break;
      }
    }
    if (cancelled) {
      stopByUser();
      break;
    }
    if (!accepted) {
      res.state = OptimiseState::Converged;
      res.stopReason = "no further decrease along the projected gradient (converged to rounding)";
      break;
    }
    gradientOf(rt, gt);
    memory.push(w, wt, g, gt);
    const double relative = (f - ft) / std::max(std::abs(f), std::numeric_limits<double>::min());
    std::swap(w, wt);
    std::swap(d, dt);
    std::swap(g, gt);
    std::swap(r, rt);
    f = ft;
    pg = ops.projectedGradientNorm(w, g);
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
  ops.download(w, res.weights);
  ops.download(d, res.dose);
  res.objective = f;
  res.elapsedSeconds = seconds();
  res.iterationsPerSecond = res.elapsedSeconds > 0 ? res.iterations / res.elapsedSeconds : 0;
}

}  // namespace penumbra::optimise::detail
