#pragma once
/// The gamma search at one reference point (gamma_search.hpp for the method and the bounds):
/// the rings of cells around the point and the branch and bound inside each, as a resumable
/// state machine shared by the CPU reference and the CUDA kernel.
#include "compare/gamma_search.hpp"

namespace penumbra::compare {

namespace detail {

/// The evaluated dose at the 8 corners of cell (cx, cy, cz), times `scale`, in the order bit0 = x,
/// bit1 = y, bit2 = z (a one-voxel axis repeats its voxel).
template <typename Real>
PENUMBRA_GAMMA_HD void loadCorners(const GammaField<Real>& f, int cx, int cy, int cz, Real scale,
                                   Real corner[8]) {
  const int stride1 = f.n[0], stride2 = f.n[0] * f.n[1];
  const int base = cz * stride2 + cy * stride1 + cx;
  const int sx = f.n[0] > 1 ? 1 : 0, sy = f.n[1] > 1 ? stride1 : 0, sz = f.n[2] > 1 ? stride2 : 0;
  for (int k = 0; k < 8; ++k) {
    const int at = base + ((k & 1) ? sx : 0) + ((k & 2) ? sy : 0) + ((k & 4) ? sz : 0);
#if defined(__CUDA_ARCH__)
    corner[k] = Real(__ldg(f.dose + at)) * scale;
#else
    corner[k] = Real(f.dose[at]) * scale;
#endif
  }
}

}  // namespace detail

/// The search at one reference point as a resumable state machine: start(), then step() until
/// it returns false, then gamma(). Each step processes one box (then passes over the boxes that
/// the pre-test drops, skipRuledOut), or moves to the next cell of the rings (skipping the cells
/// the bounds rule out) and loads its 8 doses. gammaAt() runs it
/// to the end; the CUDA kernel keeps every lane of a warp busy by giving a lane whose point is
/// finished the next point while its neighbours go on (the number of boxes varies 100-fold
/// from point to point). Both visit the same boxes in the same order: the same result. (On the
/// GPU a point still searching after a budget of steps is finished by a group of lanes that
/// evaluate its boxes with the same bounds in another order: gamma_kernels.cuh.)
template <typename Real>
struct GammaSearch {
  detail::Best<Real> best;
  Real ur[3], d, invDd;
  int pc[3];
  int ring, lo3[3], hi3[3], oz, oy, ox;  ///< ring, its reachable offsets, the next cell (rel. to pc)
  bool done, inCell;
  Real corner[8], lo[3];
  detail::BoxCursor box;
  int scanLimit = 16;  ///< GPU: cell positions one step scans at most (see nextCell)
  int skipLimit = 2;   ///< GPU: boxes one step passes over at most (see skipRuledOut)

  /// e: the point's continuous index in the evaluated grid (inside [0, n - 1] on every axis;
  /// the caller checks), dr: the reference dose and invDd: 1 / DD in Gy^-1 (the caller divides
  /// by the local or global criterion).
  PENUMBRA_GAMMA_HD void start(const GammaField<Real>& f, const double e[3], Real dr, Real inv,
                               const GammaLimits<Real>& lim) {
    for (int a = 0; a < 3; ++a) {
      int c = int(e[a]);  // e >= 0
      if (c > f.cells[a] - 1) c = f.cells[a] - 1;
      if (c < 0) c = 0;
      pc[a] = c;
      ur[a] = Real(e[a] - double(c)) * f.h[a];
    }
    best.g2 = lim.cap2;
    best.tol = lim.tol;
    best.limit2 = lim.limit2;
    best.depthLimited = false;
    const Real b = detail::sqrtR(lim.cap2) - lim.tol;
    best.prune2 = b > Real(0) ? b * b : Real(0);
    invDd = inv;
    d = dr * inv;
    inCell = false;
    done = !beginRing(f, lim, 0);
  }

  /// One box, or the move to the next cell; false when the search is over.
  PENUMBRA_GAMMA_HD bool step(const GammaField<Real>& f, const GammaLimits<Real>& lim) {
    if (!inCell) {
      const int next = done ? 0 : nextCell(f, lim);
      if (next == 0) {
        done = true;
        return false;
      }
      if (next < 0) return true;  // SIMT: the scan goes on at the next step
      inCell = true;
      box = detail::BoxCursor{};
      // The cell's first box is pre-tested like the boxes after it (its doses are loaded now).
      if (!skipRuledOut(f)) {
        inCell = false;
        return true;
      }
    }
    inCell = detail::searchBox(corner, lo, f, ur, d, best, box) && skipRuledOut(f);
    return true;
  }

  PENUMBRA_GAMMA_HD GammaPoint result() const {
    GammaPoint out;
    out.gamma = double(detail::sqrtR(best.g2));
    out.depthLimited = best.depthLimited;
    return out;
  }

private:
  /// Moves the box cursor past the boxes that ruledOut drops (they could change nothing), so
  /// that a step is spent only on a box that needs both bounds; false when that finishes the
  /// cell. On the GPU at most skipLimit boxes a step (as nextCell's scan), so that a lane
  /// passing over many does not hold its warp's other lanes; the next step goes on from there.
  PENUMBRA_GAMMA_HD bool skipRuledOut(const GammaField<Real>& f) {
    for (int skipped = 0;; ++skipped) {
      if (PENUMBRA_GAMMA_SIMT && skipped == skipLimit) return true;
      if (!detail::ruledOut(corner, lo, f, ur, d, best, box)) return true;
      if (!detail::nextBox(box, false, 0, best.depthLimited)) return false;
    }
  }

  /// Cells are visited in rings of growing Chebyshev distance; a ring starts only while its
  /// nearest possible distance is below min(best, search limit). Per axis, the ring's offsets
  /// are cut to those whose gap from the point along that axis alone (the same axisGap2 as the
  /// cell test in nextCell) is within that reach: a cell beyond it along any axis is one that
  /// the cell test would drop (its distance is at least that gap, and best only decreases), so
  /// the search visits the same cells in the same order, without scanning the others. The cut
  /// is asymmetric: a reference point on a voxel centre of the evaluated grid (the usual case,
  /// two doses on one grid) touches the 8 cells at offsets -1 and 0, and its +1 cells are a
  /// whole voxel away; ring 1 then scans those 7 positions instead of 26.
  PENUMBRA_GAMMA_HD bool beginRing(const GammaField<Real>& f, const GammaLimits<Real>& lim,
                                   int r) {
    const Real reach2 = detail::minR(best.g2, lim.limit2);
    if (r >= 1) {
      const Real near = Real(r - 1) * f.hmin;
      if (near * near >= reach2) return false;
    }
    bool any = false;
    for (int a = 0; a < 3; ++a) {
      int lo = 0, hi = 0;
      if (f.n[a] > 1) {
        while (hi < r && detail::axisGap2(ur[a], Real(hi + 1) * f.h[a], f.w[a]) <= reach2) ++hi;
        while (lo > -r && detail::axisGap2(ur[a], Real(lo - 1) * f.h[a], f.w[a]) <= reach2) --lo;
      }
      lo3[a] = lo;
      hi3[a] = hi;
      if (lo == -r || hi == r) any = true;
    }
    if (!any) return false;  // every axis is out of reach at this ring: so are all farther rings
    ring = r;
    oz = lo3[2];
    oy = lo3[1];
    ox = lo3[0];
    return true;
  }

  /// From (oz, oy, ox) on, in the ring loops' order (z, then y, then x; inside the ring only
  /// its two x faces), the next cell in the grid that the bounds do not rule out: loads its
  /// doses and moves the position past it (1). 0 when no ring has one left. On the GPU the scan
  /// stops after a few positions (-1, resumed at the next step), so that a lane skipping many
  /// cells does not hold its warp's other lanes (see PENUMBRA_GAMMA_SIMT).
  PENUMBRA_GAMMA_HD int nextCell(const GammaField<Real>& f, const GammaLimits<Real>& lim) {
    const Real pruneAt = best.pruneLevel();  // best does not change during the scan
    for (int scanned = 0;; ++scanned) {
      if (PENUMBRA_GAMMA_SIMT && scanned == scanLimit) return -1;
      if (oz > hi3[2]) {
        if (!beginRing(f, lim, ring + 1)) return 0;
        continue;
      }
      const int cz = pc[2] + oz;
      if (oy > hi3[1] || cz < 0 || cz >= f.cells[2]) {
        ++oz;
        oy = lo3[1];
        ox = lo3[0];
        continue;
      }
      const int cy = pc[1] + oy;
      // Inside the ring's shell only x = -ring and x = +ring belong to the ring.
      const bool shell = (oz == ring || oz == -ring || oy == ring || oy == -ring);
      const int x = !shell && ox > -ring && ox < ring ? ring : ox;
      if (x > hi3[0] || cy < 0 || cy >= f.cells[1]) {
        ++oy;
        ox = lo3[0];
        continue;
      }
      ox = !shell && x == -ring ? ring : x + 1;
      const int cx = pc[0] + x;
      if (cx < 0 || cx >= f.cells[0]) continue;
      lo[0] = Real(x) * f.h[0];
      lo[1] = Real(oy) * f.h[1];
      lo[2] = Real(oz) * f.h[2];
      // Quick cell test on distance alone before loading 8 doses.
      const Real g2 = detail::axisGap2(ur[0], lo[0], f.w[0]) +
                      detail::axisGap2(ur[1], lo[1], f.w[1]) +
                      detail::axisGap2(ur[2], lo[2], f.w[2]);
      if (best.prunesAt(g2, pruneAt) || g2 > lim.limit2) continue;
      detail::loadCorners(f, cx, cy, cz, invDd, corner);
      return 1;
    }
  }
};

/// Gamma at one reference point (see GammaSearch::start for the arguments).
template <typename Real>
PENUMBRA_GAMMA_HD GammaPoint gammaAt(const GammaField<Real>& f, const double e[3], Real dr,
                                     Real invDd, const GammaLimits<Real>& lim) {
  GammaSearch<Real> s;
  s.start(f, e, dr, invDd, lim);
  while (s.step(f, lim)) {
  }
  return s.result();
}

}  // namespace penumbra::compare
