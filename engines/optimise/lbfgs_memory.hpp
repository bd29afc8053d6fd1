#pragma once
/// L-BFGS memory and the two-loop recursion (Nocedal and Wright, Algorithm 7.4), restricted to a
/// free set by masking: p = -Z H Z g with Z the 0/1 diagonal of the free set and H the full
/// L-BFGS inverse-Hessian approximation. H is positive definite (pairs are kept only when
/// s.y > 0), so g.p = -(Zg)^T H (Zg) < 0 whenever Zg != 0: always a descent direction.
///
/// Written once over the optimiser's vector operations (Ops: CpuOps in optimise.cpp, the CUDA
/// ones in cuda/optimise_cuda.cu), so that both backends run the same recursion; the vectors
/// of dropped pairs are reused (no allocation per iteration on the GPU).
#include <cstddef>
#include <deque>
#include <utility>
#include <vector>

namespace penumbra::optimise::detail {

template <class Ops>
class LbfgsMemory {
 public:
  using Vec = typename Ops::Vec;
  using Mask = typename Ops::Mask;

  LbfgsMemory(Ops& ops, int pairs) : ops_(ops), pairs_(pairs < 0 ? 0 : std::size_t(pairs)) {}

  bool empty() const { return s_.empty(); }
  void clear() {
    while (!s_.empty()) dropOldest();
  }

  /// Adds s = w1 - w0, y = g1 - g0 when the curvature condition s.y > 1e-12 y.y holds (it does
  /// for a convex objective unless the step was too small to measure); drops the oldest pair
  /// beyond the memory size.
  void push(const Vec& w0, const Vec& w1, const Vec& g0, const Vec& g1) {
    if (pairs_ == 0) return;
    Vec s = take(), y = take();
    ops_.difference(w1, w0, s);
    ops_.difference(g1, g0, y);
    const double sy = ops_.dot(s, y), yy = ops_.dot(y, y);
    if (!(sy > 1e-12 * yy) || yy == 0) {
      spare_.push_back(std::move(s));
      spare_.push_back(std::move(y));
      return;
    }
    if (s_.size() == pairs_) dropOldest();
    s_.push_back(std::move(s));
    y_.push_back(std::move(y));
    rho_.push_back(1.0 / sy);
  }

  /// p = -Z H Z g (see the file comment). Requires !empty().
  void direction(const Vec& g, const Mask& freeSet, Vec& p) {
    const std::size_t m = s_.size();
    ops_.masked(g, freeSet, 1.0, p);
    std::vector<double> alpha(m);
    for (std::size_t j = m; j-- > 0;) {
      alpha[j] = rho_[j] * ops_.dot(s_[j], p);
      ops_.axpy(-alpha[j], y_[j], p);
    }
    // Initial inverse Hessian gamma I with gamma = s.y / y.y of the newest pair.
    const double gamma = 1.0 / (rho_.back() * ops_.dot(y_.back(), y_.back()));
    ops_.scale(gamma, p);
    for (std::size_t j = 0; j < m; ++j) {
      const double beta = rho_[j] * ops_.dot(y_[j], p);
      ops_.axpy(alpha[j] - beta, s_[j], p);
    }
    ops_.masked(p, freeSet, -1.0, p);
  }

 private:
  Vec take() {
    if (spare_.empty()) return ops_.spots();
    Vec v = std::move(spare_.back());
    spare_.pop_back();
    return v;
  }
  void dropOldest() {
    spare_.push_back(std::move(s_.front()));
    spare_.push_back(std::move(y_.front()));
    s_.pop_front();
    y_.pop_front();
    rho_.pop_front();
  }

  Ops& ops_;
  std::size_t pairs_;
  std::deque<Vec> s_, y_;
  std::deque<double> rho_;
  std::vector<Vec> spare_;
};

}  // namespace penumbra::optimise::detail
