#pragma once
/// L-BFGS memory and the two-loop recursion (Nocedal and Wright, Algorithm 7.4), restricted to a
/// free set by masking: p = -Z H Z g with Z the 0/1 diagonal of the free set and H the full
/// L-BFGS inverse-Hessian approximation. H is positive definite (pairs are kept only when
/// s.y > 0), so g.p = -(Zg)^T H (Zg) < 0 whenever Zg != 0: always a descent direction.
#include <cstddef>
#include <deque>
#include <utility>
#include <vector>

namespace penumbra::optimise::detail {

class LbfgsMemory {
 public:
  explicit LbfgsMemory(int pairs) : pairs_(pairs < 0 ? 0 : std::size_t(pairs)) {}

  bool empty() const { return s_.empty(); }
  void clear() { s_.clear(), y_.clear(), rho_.clear(); }

  /// Adds s = w1 - w0, y = g1 - g0 when the curvature condition s.y > 1e-12 y.y holds (it does
  /// for a convex objective unless the step was too small to measure); drops the oldest pair
  /// beyond the memory size.
  void push(const std::vector<double>& w0, const std::vector<double>& w1,
            const std::vector<double>& g0, const std::vector<double>& g1) {
    if (pairs_ == 0) return;
    std::vector<double> s(w0.size()), y(w0.size());
    double sy = 0, yy = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
      s[i] = w1[i] - w0[i];
      y[i] = g1[i] - g0[i];
      sy += s[i] * y[i];
      yy += y[i] * y[i];
    }
    if (!(sy > 1e-12 * yy) || yy == 0) return;
    if (s_.size() == pairs_) s_.pop_front(), y_.pop_front(), rho_.pop_front();
    s_.push_back(std::move(s));
    y_.push_back(std::move(y));
    rho_.push_back(1.0 / sy);
  }

  /// p = -Z H Z g (see the file comment). Requires !empty().
  void direction(const std::vector<double>& g, const std::vector<char>& freeSet,
                 std::vector<double>& p) const {
    const std::size_t n = g.size(), m = s_.size();
    p.resize(n);
    for (std::size_t i = 0; i < n; ++i) p[i] = freeSet[i] ? g[i] : 0.0;
    std::vector<double> alpha(m);
    for (std::size_t j = m; j-- > 0;) {
      alpha[j] = rho_[j] * dot(s_[j], p);
      axpy(-alpha[j], y_[j], p);
    }
    // Initial inverse Hessian gamma I with gamma = s.y / y.y of the newest pair.
    const std::vector<double>& yl = y_.back();
    const double gamma = 1.0 / (rho_.back() * dot(yl, yl));
    for (double& x : p) x *= gamma;
    for (std::size_t j = 0; j < m; ++j) {
      const double beta = rho_[j] * dot(y_[j], p);
      axpy(alpha[j] - beta, s_[j], p);
    }
    for (std::size_t i = 0; i < n; ++i) p[i] = freeSet[i] ? -p[i] : 0.0;
  }

 private:
  static double dot(const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  }
  static void axpy(double a, const std::vector<double>& x, std::vector<double>& y) {
    for (std::size_t i = 0; i < y.size(); ++i) y[i] += a * x[i];
  }

  std::size_t pairs_;
  std::deque<std::vector<double>> s_, y_;
  std::deque<double> rho_;
};

}  // namespace penumbra::optimise::detail
