#pragma once
// Doses with known gamma for the comparison tests: analytic functions sampled on grids.
#include <cmath>
#include <functional>
#include <memory>
#include <random>

#include "compare/compare.hpp"

namespace penumbra::compare::test {

inline Grid makeGrid(int nx, int ny, int nz, Vec3 spacing, Vec3 origin,
                     Mat3 direction = Mat3{}) {
  Grid g;
  g.dims = {nx, ny, nz};
  g.spacing = spacing;
  g.origin = origin;
  g.direction = direction;
  return g;
}

/// f sampled at every voxel centre of g (patient mm).
inline std::shared_ptr<Volume<float>> sample(const Grid& g, const std::function<double(Vec3)>& f) {
  auto v = std::make_shared<Volume<float>>(g, 0.0f);
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = 0; i < g.dims[0]; ++i) v->at(i, j, k) = float(f(g.indexToWorld({double(i), double(j), double(k)})));
  return v;
}

/// A smooth random dose: a sum of `n` Gaussians of random centre, width and height inside the
/// box [lo, hi] (seeded).
inline std::function<double(Vec3)> randomSmoothDose(unsigned seed, Vec3 lo, Vec3 hi, int n = 6) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  struct Blob {
    Vec3 c;
    double s, a;
  };
  std::vector<Blob> blobs;
  for (int b = 0; b < n; ++b)
    blobs.push_back({{lo.x + u(rng) * (hi.x - lo.x), lo.y + u(rng) * (hi.y - lo.y),
                      lo.z + u(rng) * (hi.z - lo.z)},
                     6 + 14 * u(rng), 0.5 + 1.5 * u(rng)});
  return [blobs](Vec3 p) {
    double d = 0;
    for (const auto& b : blobs) {
      const Vec3 q = p - b.c;
      d += b.a * std::exp(-(q.x * q.x + q.y * q.y + q.z * q.z) / (2 * b.s * b.s));
    }
    return d;
  };
}

inline CompareRequest request(std::shared_ptr<Volume<float>> ref, std::shared_ptr<Volume<float>> eval,
                              double dd, double dta, Backend backend = Backend::Cpu) {
  CompareRequest r;
  r.reference = std::move(ref);
  r.evaluated = std::move(eval);
  r.criteria.dosePercent = dd;
  r.criteria.distanceMm = dta;
  r.backend = backend;
  return r;
}

}  // namespace penumbra::compare::test
