// Projected L-BFGS for spot weights (see optimise.hpp for the method): argument checks, the
// host's vector operations, and the choice between the host loop and the GPU loop; the loop
// itself is projected_lbfgs.hpp.
#include "optimise/optimise.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "optimise/projected_lbfgs.hpp"

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

/// The host's vector operations for projected_lbfgs.hpp: serial loops, sums in index order.
/// The products go through the engine, so they run on the GPU when the engine is there.
struct HostOps {
  using Vec = std::vector<double>;
  using Mask = std::vector<char>;
  const spmv::SpmvEngine& engine;
  const PlanObjective& objective;
  std::size_t n, m;  // spots, dose voxels

  Vec spots() const { return Vec(n); }
  Vec doses() const { return Vec(m, 0.0); }
  Mask mask() const { return Mask(n); }
  void upload(const std::vector<double>& h, Vec& v) const { v = h; }
  void download(const Vec& v, std::vector<double>& h) const { h = v; }
  void dose(const Vec& w, Vec& d) const { engine.multiply(spmv::Product::D, w, d); }
  void gradient(const Vec& r, Vec& g) const { engine.multiply(spmv::Product::Dt, r, g); }
  double evaluate(const Vec& d, Vec* r) const { return objective.evaluate(d, r); }
  double curvature(const Vec& d, const Vec& q) const { return objective.curvature(d, q); }
  static double dot(const Vec& a, const Vec& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  }
  static void axpy(double a, const Vec& x, Vec& y) {
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += a * x[i];
  }
  static void scale(double a, Vec& x) {
    for (double& v : x) v *= a;
  }
  static void scaled(double a, const Vec& x, Vec& y) {
    y.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = a * x[i];
  }
  static void difference(const Vec& a, const Vec& b, Vec& out) {
    out.resize(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] - b[i];
  }
  static double maxAbs(const Vec& x) {
    double m = 0;
    for (double v : x) m = std::max(m, std::abs(v));
    return m;
  }
  static double maxValue(const Vec& x) {
    double m = -std::numeric_limits<double>::infinity();
    for (double v : x) m = std::max(m, v);
    return m;
  }
  static double projectedGradientNorm(const Vec& w, const Vec& g) {
    double m = 0;
    for (std::size_t i = 0; i < w.size(); ++i)
      m = std::max(m, std::abs(std::max(0.0, w[i] - g[i]) - w[i]));
    return m;
  }
  static void freeSet(const Vec& w, const Vec& g, Mask& free) {
    for (std::size_t i = 0; i < w.size(); ++i) free[i] = !(w[i] <= 0 && g[i] > 0);
  }
  static void masked(const Vec& x, const Mask& free, double sign, Vec& y) {
    y.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) y[i] = free[i] ? sign * x[i] : 0.0;
  }
  static double trialStep(const Vec& w, const Vec& p, double alpha, const Vec& g, Vec& wt) {
    double gDelta = 0;
    for (std::size_t i = 0; i < w.size(); ++i) {
      wt[i] = std::max(0.0, w[i] + alpha * p[i]);
      gDelta += g[i] * (wt[i] - w[i]);
    }
    return gDelta;
  }
};

}  // namespace

OptimiseResult optimiseSpotWeights(const spmv::SpmvEngine& engine, const PlanObjective& objective,
                                   std::vector<double> w, const OptimiserOptions& opt,
                                   const JobControl& job, const IterationCallback& onIteration) {
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
  bool anyPositive = false;
  for (double& x : w) {
    x = std::isfinite(x) ? std::max(0.0, x) : 0.0;
    anyPositive = anyPositive || x > 0;
  }
  if (!anyPositive) std::fill(w.begin(), w.end(), 1.0);

  if (engine.backend() == Backend::Cuda && !opt.hostLoop) {
    res.loopOnGpu = true;
    detail::optimiseOnGpu(engine, objective, w, opt, job, onIteration, res);
  } else {
    HostOps ops{engine, objective, w.size(), std::size_t(dm.rows)};
    detail::runProjectedLbfgs(ops, w, opt, job, onIteration, res);
  }
  return res;
}

}  // namespace penumbra::optimise
