// Contour-based DVH: slabs of the contour planes sampled on a sub-voxel lattice, dose by
// trilinear interpolation. Planes are shared out to threads; each thread fills its own
// histogram (no atomics, and the merge order is fixed, so results do not depend on timing
// beyond floating-point summation order within a plane).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "dvh/contour_slabs.hpp"
#include "dvh/dose_sampler.hpp"
#include "dvh/dvh_internal.hpp"

namespace penumbra::dvh {

namespace {

using detail::DoseHistogram;
using detail::DoseMoments;

struct Lattice {
  double su = 0, sv = 0, step = 0;  // in-plane steps (mm) and the target through-slab step
  Vec3 i0, iu, iv, iw;              // dose index = i0 + u*iu + v*iv + w*iw
};

// Largest step <= target that divides `spacing` (so lattice lines fall on voxel faces).
double snapToSpacing(double target, double spacing) {
  return spacing / std::ceil(spacing / target - 1e-9);
}

Lattice chooseLattice(const detail::SlabStack& st, const Grid& grid, const DvhOptions& o) {
  Lattice L;
  const double volume = std::max(st.volumeEstimateMm3(), 1e-6);
  double step = std::clamp(std::cbrt(volume / o.sampleTarget), o.minStepMm, o.maxStepMm);
  // Very large structures (a 15 L BODY would need 1e9 samples at 0.25 mm): grow the step to
  // stay within the budget; dose grids are rarely finer than 1 mm where such ROIs matter.
  if (volume / (step * step * step) > o.sampleBudget) step = std::cbrt(volume / o.sampleBudget);
  L.step = step;
  L.su = st.alignedWithDoseGrid ? snapToSpacing(step, grid.spacing.x) : step;
  L.sv = st.alignedWithDoseGrid ? snapToSpacing(step, grid.spacing.y) : step;
  L.i0 = grid.worldToIndex(st.anchor);
  L.iu = grid.worldToIndex(st.anchor + st.u) - L.i0;
  L.iv = grid.worldToIndex(st.anchor + st.v) - L.i0;
  L.iw = grid.worldToIndex(st.anchor + st.n) - L.i0;
  return L;
}

struct Partial {
  DoseHistogram hist;
  DoseMoments moments;
  double outsideMm3 = 0;
  std::size_t samples = 0;
  explicit Partial(DoseHistogram h) : hist(std::move(h)) {}
};

// Samples one slab into `out`.
void samplePlane(const detail::SlabPlane& plane, const Lattice& L, const detail::DoseSampler& ds,
                 const DvhOptions& o, Partial& out) {
  const double thickness = plane.wHi - plane.wLo;
  const int nw = std::max(1, int(std::ceil(thickness / L.step - 1e-9)));
  const double sw = thickness / nw;
  const bool keepOutside = o.outside == OutsideDosePolicy::ZeroDose;
  std::vector<double> xs;
  const long b0 = long(std::floor(plane.vMin / L.sv - 0.5));
  const long b1 = long(std::ceil(plane.vMax / L.sv));
  for (long b = b0; b <= b1; ++b) {
    const double v = (double(b) + 0.5) * L.sv;
    if (v < plane.vMin || v > plane.vMax) continue;
    detail::rowCrossings(plane, v, xs);
    for (std::size_t c = 0; c + 1 < xs.size(); c += 2) {
      const double ua = xs[c], ub = xs[c + 1];
      if (!(ub > ua)) continue;
      // Pieces of the exact interval cut at lattice lines: the volume along u is exact, the
      // dose is taken at each piece's midpoint.
      double pa = ua;
      while (pa < ub) {
        const double m = std::floor(pa / L.su);
        double pb = (m + 1.0) * L.su;
        if (pb <= pa) pb = (m + 2.0) * L.su;  // pa rounded just below a lattice line
        pb = std::min(ub, pb);
        const double len = pb - pa;
        const double uc = 0.5 * (pa + pb);
        const Vec3 row = L.i0 + uc * L.iu + v * L.iv;
        for (int j = 0; j < nw; ++j) {
          const double w = plane.wLo + (j + 0.5) * sw;
          const Vec3 p = row + w * L.iw;
          const double vol = len * L.sv * sw;
          ++out.samples;
          if (!ds.inside(p.x, p.y, p.z)) {
            out.outsideMm3 += vol;
            if (keepOutside) {
              out.hist.addPoint(0.0, vol);
              out.moments.add(0.0, vol);
            }
            continue;
          }
          double g[3];
          const double d = ds.eval(p.x, p.y, p.z, g);
          // Dose range over the cell for a locally linear dose: the exact spread along one
          // axis; for oblique gradients the uniform of equal variance (sum of squares).
          const double gu = (g[0] * L.iu.x + g[1] * L.iu.y + g[2] * L.iu.z) * len;
          const double gv = (g[0] * L.iv.x + g[1] * L.iv.y + g[2] * L.iv.z) * L.sv;
          const double gw = (g[0] * L.iw.x + g[1] * L.iw.y + g[2] * L.iw.z) * sw;
          const double half = 0.5 * std::sqrt(gu * gu + gv * gv + gw * gw);
          out.hist.addUniform(d - half, d + half, vol);
          out.moments.add(d, vol);
        }
        pa = pb;
      }
    }
  }
  // Extremes of a linear dose over a prism lie on its vertices: evaluate every contour vertex
  // on both slab faces, so Dmin/Dmax do not depend on how close a sample came to the edge.
  for (const auto& poly : plane.polys)
    for (std::size_t a = 0; a < poly.u.size(); ++a)
      for (double w : {plane.wLo, plane.wHi}) {
        const Vec3 p = L.i0 + poly.u[a] * L.iu + poly.v[a] * L.iv + w * L.iw;
        if (ds.inside(p.x, p.y, p.z)) out.moments.seen(ds.eval(p.x, p.y, p.z, nullptr));
      }
}

}  // namespace

DvhResult computeContourDvh(const Structure& structure, const DoseVolume& dose,
                            const DvhOptions& options, const JobControl& job) {
  const auto t0 = std::chrono::steady_clock::now();
  detail::validateDose(dose);
  const Grid& grid = dose.dose.grid;
  DvhResult result;
  result.structureName = structure.name;
  result.method = DvhMethod::Contours;
  const detail::SlabStack st =
      detail::buildSlabStack(structure.contours, grid, options.singlePlaneThicknessMm);
  for (const auto& w : st.warnings) result.warnings.push_back("'" + structure.name + "': " + w);
  PENUMBRA_REQUIRE(!st.planes.empty(), InvalidArgument,
                   "structure '" + structure.name + "' has no closed planar contours");
  const Lattice L = chooseLattice(st, grid, options);
  result.contourPlanes = int(st.planes.size());
  result.stepMm[0] = L.su;
  result.stepMm[1] = L.sv;
  result.stepMm[2] = L.step;

  const detail::DoseSampler ds(dose.dose);
  const int nThreads = detail::threadCount(options, st.planes.size());
  std::vector<Partial> partials;
  partials.reserve(std::size_t(nThreads));
  for (int t = 0; t < nThreads; ++t) partials.emplace_back(detail::makeHistogram(dose, options));
  std::atomic<std::size_t> next{0}, done{0};
  std::atomic<bool> stop{false};
  auto worker = [&](int t, bool reporter) {
    for (;;) {
      if (stop.load(std::memory_order_relaxed)) return;
      if (job.cancelled()) {
        stop = true;
        return;
      }
      const std::size_t i = next.fetch_add(1);
      if (i >= st.planes.size()) return;
      samplePlane(st.planes[i], L, ds, options, partials[std::size_t(t)]);
      const std::size_t n = done.fetch_add(1) + 1;
      // Only the calling thread talks to the progress sink (sinks need not be thread-safe).
      if (reporter) job.report(double(n) / double(st.planes.size()), "DVH " + structure.name);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < nThreads; ++t) pool.emplace_back(worker, t, false);
  worker(0, true);
  for (auto& th : pool) th.join();
  job.checkCancel();

  for (int t = 1; t < nThreads; ++t) {
    partials[0].hist.merge(partials[std::size_t(t)].hist);
    partials[0].moments.merge(partials[std::size_t(t)].moments);
    partials[0].outsideMm3 += partials[std::size_t(t)].outsideMm3;
    partials[0].samples += partials[std::size_t(t)].samples;
  }
  Partial& all = partials[0];
  result.samples = all.samples;
  const double totalMm3 = all.moments.volume +
                          (options.outside == OutsideDosePolicy::Exclude ? all.outsideMm3 : 0.0);
  detail::noteOutside(all.outsideMm3, totalMm3, options, result);
  detail::fillCurveAndStatistics(all.hist, all.moments, options, result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

}  // namespace penumbra::dvh
