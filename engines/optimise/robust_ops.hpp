#pragma once
// The robust optimiser's vector operations for projected_lbfgs.hpp (robust_optimise.hpp says
// what is minimised): host vectors made of blocks, one block for spot vectors and one block per
// scenario for dose vectors, so that the nominal optimiser's loop runs unchanged on the stacked
// problem [D_1; ...; D_S] w. Sums run over the blocks in order, each block in index order: with
// one scenario every operation is the nominal host loop's (HostOps in optimise.cpp), bit for bit.
// The per-scenario objective evaluations run on threads, one scenario each (independent, so
// the result does not depend on the thread count); the products run one after the other.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "core/parallel_for.hpp"
#include "optimise/objective.hpp"
#include "optimise/robust_optimise.hpp"
#include "spmv/spmv.hpp"

namespace penumbra::optimise::detail {

struct Blocks {
  std::vector<std::vector<double>> parts;
  /// Set by RobustOps::evaluate on a residual: block s is zero (its scenario's weight underflowed
  /// to 0 in the softmax), so the gradient skips its product. Other operations leave it alone.
  std::vector<char> zero;
};

struct RobustOps {
  using Vec = Blocks;
  using Mask = std::vector<char>;

  RobustOps(const std::vector<const spmv::SpmvEngine*>& e, const PlanObjective& f)
      : engines(e), objective(f) {}

  const std::vector<const spmv::SpmvEngine*>& engines;
  const PlanObjective& objective;
  RobustMode mode = RobustMode::ExpectedValue;
  std::vector<double> probabilities;  // ExpectedValue: normalised
  double tau = 1;                     // CompositeWorstCase temperature [f's units]
  std::size_t nominal = 0;
  std::size_t n = 0, m = 0;  // spots, dose voxels
  // Per-scenario objective values of the last evaluate(), and scratch.
  std::vector<double> values, weights, slopes, curvatures;
  std::vector<double> spotScratch;
  std::vector<std::vector<double>> doseScratch;  // per scenario
  int threads = resolveThreads(0);
  std::int64_t products = 0;  // single-scenario D^T products run by gradient()

  std::size_t scenarios() const { return engines.size(); }

  Vec spots() const {
    Blocks b;
    b.parts.assign(1, std::vector<double>(n));
    return b;
  }
  Vec doses() const {
    Blocks b;
    b.parts.assign(scenarios(), std::vector<double>(m, 0.0));
    return b;
  }
  Mask mask() const { return Mask(n); }
  static void upload(const std::vector<double>& h, Vec& v) { v.parts.assign(1, h); }
  /// Spot vectors: the weights; dose vectors: the nominal scenario's dose.
  void download(const Vec& v, std::vector<double>& h) const {
    h = v.parts.size() == 1 ? v.parts[0] : v.parts[nominal];
  }

  void dose(const Vec& w, Vec& d) const {
    d.parts.resize(scenarios());
    for (std::size_t s = 0; s < scenarios(); ++s)
      engines[s]->multiply(spmv::Product::D, w.parts[0], d.parts[s]);
  }
  /// g = sum_s D_s^T r_s, added in scenario order (r already carries the scenario weights).
  void gradient(const Vec& r, Vec& g) {
    g.parts.resize(1);
    // A zero block adds D_s^T 0 = 0: skipping it changes no bit (but -0 to +0).
    auto skip = [&](std::size_t s) { return s < r.zero.size() && r.zero[s]; };
    std::size_t first = 0;
    while (first + 1 < scenarios() && skip(first)) ++first;
    engines[first]->multiply(spmv::Product::Dt, r.parts[first], g.parts[0]);
    ++products;
    for (std::size_t s = first + 1; s < scenarios(); ++s) {
      if (skip(s)) continue;
      engines[s]->multiply(spmv::Product::Dt, r.parts[s], spotScratch);
      ++products;
      std::vector<double>& out = g.parts[0];
      for (std::size_t i = 0; i < out.size(); ++i) out[i] += spotScratch[i];
    }
  }

  /// The scenario weights of the current values: p (ExpectedValue) or softmax(f / tau).
  void scenarioWeights() {
    if (mode == RobustMode::ExpectedValue) {
      weights = probabilities;
      return;
    }
    const double top = *std::max_element(values.begin(), values.end());
    double sum = 0;
    weights.resize(values.size());
    for (std::size_t s = 0; s < values.size(); ++s)
      sum += weights[s] = std::exp((values[s] - top) / tau);
    for (double& x : weights) x /= sum;
  }
  /// F from the current values (and weights).
  double combined() const {
    if (mode == RobustMode::ExpectedValue) {
      double f = 0;
      for (std::size_t s = 0; s < values.size(); ++s) f += probabilities[s] * values[s];
      return f;
    }
    const double top = *std::max_element(values.begin(), values.end());
    double sum = 0;
    for (double v : values) sum += std::exp((v - top) / tau);
    return top + tau * std::log(sum);
  }

  /// F(d); r = dF/dd, block s = weight_s * df/dd(d_s).
  double evaluate(const Vec& d, Vec* r) {
    values.resize(scenarios());
    if (r) r->parts.resize(scenarios());
    parallelFor(scenarios(), threads, {}, [&](std::size_t s, int) {
      values[s] = objective.evaluate(d.parts[s], r ? &r->parts[s] : nullptr);
    });
    scenarioWeights();
    if (r) {
      parallelFor(scenarios(), threads, {}, [&](std::size_t s, int) {
        for (double& x : r->parts[s]) x *= weights[s];
      });
      r->zero.resize(scenarios());
      for (std::size_t s = 0; s < scenarios(); ++s) r->zero[s] = weights[s] == 0;
    }
    return combined();
  }

  /// q^T H q of F at d along the dose direction q: sum_s w_s q_s^T H_s q_s, plus for the
  /// log-sum-exp (1 / tau) Var_w(r_s . q_s) with r_s = df/dd(d_s) (the softmax's own curvature).
  double curvature(const Vec& d, const Vec& q) {
    curvatures.resize(scenarios());
    const bool softmax = mode == RobustMode::CompositeWorstCase;
    values.resize(scenarios());
    slopes.resize(scenarios());
    doseScratch.resize(scenarios());
    parallelFor(scenarios(), threads, {}, [&](std::size_t s, int) {
      curvatures[s] = objective.curvature(d.parts[s], q.parts[s]);
      if (!softmax) return;
      std::vector<double>& rs = doseScratch[s];
      values[s] = objective.evaluate(d.parts[s], &rs);
      double a = 0;
      for (std::size_t i = 0; i < rs.size(); ++i) a += rs[i] * q.parts[s][i];
      slopes[s] = a;
    });
    if (!softmax) {
      double h = 0;
      for (std::size_t s = 0; s < scenarios(); ++s) h += probabilities[s] * curvatures[s];
      return h;
    }
    scenarioWeights();
    double h = 0, mean = 0;
    for (std::size_t s = 0; s < scenarios(); ++s) {
      h += weights[s] * curvatures[s];
      mean += weights[s] * slopes[s];
    }
    double variance = 0;
    for (std::size_t s = 0; s < scenarios(); ++s)
      variance += weights[s] * (slopes[s] - mean) * (slopes[s] - mean);
    return h + variance / tau;
  }

  // Vector algebra over all blocks (spot vectors have one).
  static double dot(const Vec& a, const Vec& b) {
    double s = 0;
    for (std::size_t k = 0; k < a.parts.size(); ++k)
      for (std::size_t i = 0; i < a.parts[k].size(); ++i) s += a.parts[k][i] * b.parts[k][i];
    return s;
  }
  static void axpy(double a, const Vec& x, Vec& y) {
    for (std::size_t k = 0; k < y.parts.size(); ++k)
      for (std::size_t i = 0; i < y.parts[k].size(); ++i) y.parts[k][i] += a * x.parts[k][i];
  }
  static void scale(double a, Vec& x) {
    for (auto& part : x.parts)
      for (double& v : part) v *= a;
  }
  static void scaled(double a, const Vec& x, Vec& y) {
    y.parts.resize(x.parts.size());
    for (std::size_t k = 0; k < x.parts.size(); ++k) {
      y.parts[k].resize(x.parts[k].size());
      for (std::size_t i = 0; i < x.parts[k].size(); ++i) y.parts[k][i] = a * x.parts[k][i];
    }
  }
  static void difference(const Vec& a, const Vec& b, Vec& out) {
    out.parts.resize(a.parts.size());
    for (std::size_t k = 0; k < a.parts.size(); ++k) {
      out.parts[k].resize(a.parts[k].size());
      for (std::size_t i = 0; i < a.parts[k].size(); ++i)
        out.parts[k][i] = a.parts[k][i] - b.parts[k][i];
    }
  }
  static double maxAbs(const Vec& x) {
    double m = 0;
    for (const auto& part : x.parts)
      for (double v : part) m = std::max(m, std::abs(v));
    return m;
  }
  static double maxValue(const Vec& x) {
    double m = -std::numeric_limits<double>::infinity();
    for (const auto& part : x.parts)
      for (double v : part) m = std::max(m, v);
    return m;
  }

  // Spot vectors only (one block).
  static double projectedGradientNorm(const Vec& w, const Vec& g) {
    const std::vector<double>&wv = w.parts[0], &gv = g.parts[0];
    double m = 0;
    for (std::size_t i = 0; i < wv.size(); ++i)
      m = std::max(m, std::abs(std::max(0.0, wv[i] - gv[i]) - wv[i]));
    return m;
  }
  static void freeSet(const Vec& w, const Vec& g, Mask& free) {
    for (std::size_t i = 0; i < w.parts[0].size(); ++i)
      free[i] = !(w.parts[0][i] <= 0 && g.parts[0][i] > 0);
  }
  static void masked(const Vec& x, const Mask& free, double sign, Vec& y) {
    y.parts.resize(1);
    std::vector<double>& out = y.parts[0];
    const std::vector<double>& in = x.parts[0];
    out.resize(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = free[i] ? sign * in[i] : 0.0;
  }
  static double trialStep(const Vec& w, const Vec& p, double alpha, const Vec& g, Vec& wt) {
    const std::vector<double>&wv = w.parts[0], &pv = p.parts[0], &gv = g.parts[0];
    std::vector<double>& out = wt.parts[0];
    double gDelta = 0;
    for (std::size_t i = 0; i < wv.size(); ++i) {
      out[i] = std::max(0.0, wv[i] + alpha * pv[i]);
      gDelta += gv[i] * (out[i] - wv[i]);
    }
    return gDelta;
  }
};

}  // namespace penumbra::optimise::detail
