#pragma once
/// Trilinear dose interpolation in continuous index coordinates (internal to engines/dvh).
#include <algorithm>
#include <cmath>

#include "core/dose_volume.hpp"

namespace penumbra::dvh::detail {

/// Dose and its gradient at a point given in the dose grid's continuous index (voxel centres
/// at integers). The grid covers [-0.5, n - 0.5] along each axis (the outer faces of its
/// boundary voxels); between the outermost centres and those faces the dose is held constant
/// (nearest centre), beyond them the point is outside.
class DoseSampler {
public:
  explicit DoseSampler(const Volume<float>& dose)
      : d_(dose.data.data()), nx_(dose.grid.dims[0]), ny_(dose.grid.dims[1]),
        nz_(dose.grid.dims[2]) {}

  bool inside(double x, double y, double z) const {
    return x >= -0.5 && y >= -0.5 && z >= -0.5 && x <= nx_ - 0.5 && y <= ny_ - 0.5 &&
           z <= nz_ - 0.5;
  }

  /// Dose (grid units) at (x, y, z); `g` receives d(dose)/d(index) per axis (0 along an axis
  /// where the point lies in the constant border). Caller checks inside() first.
  double eval(double x, double y, double z, double g[3]) const {
    int i0, j0, k0;
    double fx, fy, fz;
    bool cx, cy, cz;  // clamped: gradient along that axis is 0
    axis(x, nx_, i0, fx, cx);
    axis(y, ny_, j0, fy, cy);
    axis(z, nz_, k0, fz, cz);
    const int i1 = std::min(i0 + 1, nx_ - 1), j1 = std::min(j0 + 1, ny_ - 1),
              k1 = std::min(k0 + 1, nz_ - 1);
    const double c000 = at(i0, j0, k0), c100 = at(i1, j0, k0), c010 = at(i0, j1, k0),
                 c110 = at(i1, j1, k0), c001 = at(i0, j0, k1), c101 = at(i1, j0, k1),
                 c011 = at(i0, j1, k1), c111 = at(i1, j1, k1);
    const double c00 = c000 + fx * (c100 - c000), c10 = c010 + fx * (c110 - c010);
    const double c01 = c001 + fx * (c101 - c001), c11 = c011 + fx * (c111 - c011);
    const double c0 = c00 + fy * (c10 - c00), c1 = c01 + fy * (c11 - c01);
    if (g) {
      const double dx0 = (c100 - c000) + fy * ((c110 - c010) - (c100 - c000));
      const double dx1 = (c101 - c001) + fy * ((c111 - c011) - (c101 - c001));
      g[0] = cx ? 0.0 : dx0 + fz * (dx1 - dx0);
      g[1] = cy ? 0.0 : (c10 - c00) + fz * ((c11 - c01) - (c10 - c00));
      g[2] = cz ? 0.0 : c1 - c0;
    }
    return c0 + fz * (c1 - c0);
  }

private:
  static void axis(double x, int n, int& i0, double& f, bool& clamped) {
    clamped = x <= 0.0 || x >= n - 1.0 || n == 1;
    const double c = std::clamp(x, 0.0, double(std::max(n - 1, 0)));
    i0 = std::min(int(c), std::max(n - 2, 0));
    f = n == 1 ? 0.0 : c - i0;
  }
  double at(int i, int j, int k) const {
    return d_[(std::size_t(k) * std::size_t(ny_) + std::size_t(j)) * std::size_t(nx_) +
              std::size_t(i)];
  }

  const float* d_;
  int nx_, ny_, nz_;
};

}  // namespace penumbra::dvh::detail
