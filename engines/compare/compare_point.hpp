#pragma once
/// One reference point of a comparison, as the CPU reference and the CUDA kernel both run it:
/// where the point falls in the evaluated grid, its class (evaluated, below the cut-off,
/// outside the mask, outside the evaluated dose), its dose difference and its gamma.
#include <cstdint>

#include "compare/gamma_point_search.hpp"

namespace penumbra::compare {

/// Why a reference point has (or has not) a gamma value. The order is the order of the tests.
enum PointClass : std::uint8_t {
  kEvaluated = 0,
  kOutsideEvaluated = 1,  ///< the evaluated dose's box does not reach the point: no difference
  kOutsideMask = 2,
  kBelowCutoff = 3,
};

/// Everything a point needs, computed once on the host (compare.cpp: makePointSetup).
template <typename Real>
struct PointSetup {
  GammaField<Real> field;
  GammaLimits<Real> limits;
  double toEval[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};  ///< reference index -> evaluated index (row major)
  double toEvalOffset[3] = {0, 0, 0};
  int refDims[3] = {0, 0, 0};
  Real invDdGlobal = 1;    ///< 1 / (DD% x normalisation), Gy^-1
  Real ddFraction = 0.03;  ///< DD / 100, for local gamma
  bool local = false;
  bool gamma = true;       ///< false: difference only
  float cutoffGy = 0;
  /// The evaluated grid is the reference grid (same dims, and toEval the identity with no
  /// offset, exactly): a reference point is an evaluated voxel centre, whose trilinear value is
  /// that voxel's dose. The comparison then reads the voxel instead of interpolating (the CUDA
  /// classification skips the point's position altogether): the same value, except on the last
  /// voxel of an axis, where the interpolation's a + 1 * (b - a) can miss b by a rounding.
  bool sameGrid = false;
};

/// The evaluated dose's trilinear value at continuous index e (inside its box).
template <typename Real>
PENUMBRA_GAMMA_HD Real sampleTrilinear(const GammaField<Real>& f, const double e[3]) {
  int c[3];
  Real t[3];
  for (int a = 0; a < 3; ++a) {
    int i = int(e[a]);
    if (i > f.n[a] - 2) i = f.n[a] - 2;
    if (i < 0) i = 0;
    c[a] = i;
    t[a] = f.n[a] > 1 ? Real(e[a] - double(i)) : Real(0);
  }
  Real v[8];
  detail::loadCorners(f, c[0], c[1], c[2], Real(1), v);
  return detail::trilinear(v, t[0], t[1], t[2]);
}

/// The evaluated dose at voxel (i, j, k) of the evaluated grid.
template <typename Real>
PENUMBRA_GAMMA_HD Real voxelDose(const GammaField<Real>& f, int i, int j, int k) {
  const long long at = ((long long)k * f.n[1] + j) * f.n[0] + i;
#if defined(__CUDA_ARCH__)
  return Real(__ldg(f.dose + at));
#else
  return Real(f.dose[at]);
#endif
}

struct PointOutcome {
  PointClass cls = kOutsideEvaluated;
  float gamma = 0;  ///< valid for kEvaluated
  float difference = 0;  ///< reference - evaluated, Gy; valid unless kOutsideEvaluated
  bool depthLimited = false;
};

/// The point (i, j, k) of the reference grid with reference dose dr; inMask: the optional
/// mask's value there (true without a mask).
/// The point (i, j, k) of the reference grid as a continuous index e of the evaluated grid;
/// false when the evaluated dose's box does not reach it.
template <typename Real>
PENUMBRA_GAMMA_HD bool locatePoint(const PointSetup<Real>& s, int i, int j, int k, double e[3]) {
  const double* m = s.toEval;
  for (int a = 0; a < 3; ++a) {
    e[a] = m[3 * a] * i + m[3 * a + 1] * j + m[3 * a + 2] * k + s.toEvalOffset[a];
    // A point within a millionth of a voxel of the box is in it (rounding of origins).
    const double hi = double(s.field.n[a] - 1);
    if (!(e[a] >= -1e-6 && e[a] <= hi + 1e-6)) return false;
    e[a] = e[a] < 0 ? 0 : (e[a] > hi ? hi : e[a]);
  }
  return true;
}

/// 1 / DD in Gy^-1 at a point of reference dose dr: global, or DD% of dr for local gamma.
template <typename Real>
PENUMBRA_GAMMA_HD Real inverseDoseCriterion(const PointSetup<Real>& s, float dr) {
  return s.local ? Real(1) / (s.ddFraction * Real(dr)) : s.invDdGlobal;
}

/// The class and difference of a reference point inside the evaluated box, of reference dose
/// dr and evaluated dose de (the gamma is left to the caller).
template <typename Real>
PENUMBRA_GAMMA_HD PointOutcome classifyPoint(const PointSetup<Real>& s, float dr, Real de,
                                             bool inMask) {
  PointOutcome out;
  out.difference = float(Real(dr) - de);
  if (!inMask) {
    out.cls = kOutsideMask;
    return out;
  }
  if (!(dr >= s.cutoffGy)) {
    out.cls = kBelowCutoff;
    return out;
  }
  out.cls = kEvaluated;
  return out;
}

template <typename Real>
PENUMBRA_GAMMA_HD PointOutcome comparePoint(const PointSetup<Real>& s, int i, int j, int k,
                                            float dr, bool inMask) {
  double e[3];
  if (!locatePoint(s, i, j, k, e)) return PointOutcome{};
  const Real de = s.sameGrid ? voxelDose(s.field, i, j, k) : sampleTrilinear(s.field, e);
  PointOutcome out = classifyPoint(s, dr, de, inMask);
  if (out.cls == kEvaluated && s.gamma) {
    const GammaPoint g = gammaAt(s.field, e, Real(dr), inverseDoseCriterion(s, dr), s.limits);
    out.gamma = float(g.gamma);
    out.depthLimited = g.depthLimited;
  }
  return out;
}

}  // namespace penumbra::compare
