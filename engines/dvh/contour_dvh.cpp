// Contour-based DVH (model in dvh.hpp): shape-based interpolation between the contour planes
// (or the slab model), end caps, sampled on a sub-voxel lattice, dose by trilinear
// interpolation. Work items (runs of intervals, caps, slabs) are shared out to threads; each
// thread fills its own histogram (no atomics, and the merge order is fixed, so results do
// not depend on timing beyond floating-point summation order).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <initializer_list>
#include <memory>
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

// Largest step <= target that divides `spacing` an even number of times, so that lattice
// lines fall on voxel faces and voxel centres: contour edges there (voxel-edge outlines,
// synthetic phantoms drawn through voxel centres) lie between sample rows, never on one
// (a row on an edge would count a half-row slab wholly in or out).
double snapToSpacing(double target, double spacing) {
  double m = std::ceil(spacing / target - 1e-9);
  if (std::fmod(m, 2.0) != 0) m += 1;
  return spacing / m;
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

// Deposits the row interval [ua, ub] at v, cut into pieces at the u lattice lines (the
// volume along u is exact, the dose is taken at each piece's midpoint), for the nw layers
// w0 + (j + 0.5) sw. `boundaryExtremes`: the dose at both ends counts for Dmin/Dmax.
void sampleSpan(double ua, double ub, double v, double w0, double sw, int nw,
                bool boundaryExtremes, const Lattice& L, const detail::DoseSampler& ds,
                const DvhOptions& o, Partial& out) {
  if (!(ub > ua)) return;
  const bool keepOutside = o.outside == OutsideDosePolicy::ZeroDose;
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
      const double w = w0 + (j + 0.5) * sw;
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
  if (boundaryExtremes)
    for (double u : {ua, ub}) {
      const Vec3 p = L.i0 + u * L.iu + v * L.iv + (w0 + 0.5 * sw) * L.iw;
      if (ds.inside(p.x, p.y, p.z)) out.moments.seen(ds.eval(p.x, p.y, p.z, nullptr));
    }
}

// Extremes of a linear dose over a prism lie on its vertices: every contour vertex of the
// plane at the given positions along the normal, so that Dmin/Dmax do not depend on how
// close a sample came to the edge.
void seeVertices(const detail::SlabPlane& plane, std::initializer_list<double> ws,
                 const Lattice& L, const detail::DoseSampler& ds, Partial& out) {
  for (const auto& poly : plane.polys)
    for (std::size_t a = 0; a < poly.u.size(); ++a)
      for (double w : ws) {
        const Vec3 p = L.i0 + poly.u[a] * L.iu + poly.v[a] * L.iv + w * L.iw;
        if (ds.inside(p.x, p.y, p.z)) out.moments.seen(ds.eval(p.x, p.y, p.z, nullptr));
      }
}

// Samples the plane's contours extruded over [wLo, wHi] (a slab, or an end cap).
void sampleSlab(const detail::SlabPlane& plane, double wLo, double wHi, const Lattice& L,
                const detail::DoseSampler& ds, const DvhOptions& o, Partial& out) {
  const double thickness = wHi - wLo;
  const int nw = std::max(1, int(std::ceil(thickness / L.step - 1e-9)));
  const double sw = thickness / nw;
  std::vector<double> xs;
  const long b0 = long(std::floor(plane.vMin / L.sv - 0.5));
  const long b1 = long(std::ceil(plane.vMax / L.sv));
  for (long b = b0; b <= b1; ++b) {
    const double v = (double(b) + 0.5) * L.sv;
    if (v < plane.vMin || v > plane.vMax) continue;
    detail::rowCrossings(plane, v, xs);
    for (std::size_t c = 0; c + 1 < xs.size(); c += 2)
      sampleSpan(xs[c], xs[c + 1], v, wLo, sw, nw, false, L, ds, o, out);
  }
  seeVertices(plane, {wLo, wHi}, L, ds, out);
}

// Shape-based interpolation between planes a and a + 1 (distance maps A and B): layers of
// thickness <= L.step; in each, the rows' crossings of the morph boundary come from the
// linear interpolation of (1 - s) dA + s dB between adjacent lattice cells.
void sampleInterval(const detail::SlabStack& st, std::size_t a, const detail::DistanceMap& A,
                    const detail::DistanceMap& B, const Lattice& L,
                    const detail::DoseSampler& ds, const DvhOptions& o, Partial& out) {
  const double wa = st.planes[a].w, gap = st.planes[a + 1].w - wa;
  const int nw = std::max(1, int(std::ceil(gap / L.step - 1e-9)));
  const double sw = gap / nw;
  const long k0 = std::max(A.k0, B.k0), k1 = std::min(A.k0 + A.nk, B.k0 + B.nk);
  const long b0 = std::max(A.b0, B.b0), b1 = std::min(A.b0 + A.nb, B.b0 + B.nb);
  std::vector<double> xs;
  for (int j = 0; j < nw; ++j) {
    const double t = (j + 0.5) / nw;
    const double s = detail::morphFraction(st, a, t);
    for (long b = b0; b < b1; ++b) {
      const double v = (double(b) + 0.5) * L.sv;
      const double* ra = A.row(b);
      const double* rb = B.row(b);
      xs.clear();
      double fPrev = (1 - s) * ra[k0] + s * rb[k0];
      for (long k = k0 + 1; k < k1; ++k) {
        const double f = (1 - s) * ra[k] + s * rb[k];
        if ((f < 0) != (fPrev < 0)) xs.push_back((double(k) - 0.5 + fPrev / (fPrev - f)) * L.su);
        fPrev = f;
      }
      for (std::size_t c = 0; c + 1 < xs.size(); c += 2)
        sampleSpan(xs[c], xs[c + 1], v, wa + j * sw, sw, 1, true, L, ds, o, out);
    }
  }
}

// One unit of work: a plane's slab (slab model), an end cap, or a run of consecutive
// intervals [first, last) between joined planes (shape-based model; a run computes each
// plane's distance map once and keeps only the two current planes' maps, plus their copies
// with the interval's ray correspondence).
struct WorkItem {
  enum Kind { Slab, Cap, Intervals } kind;
  std::size_t first, last;
  double wLo = 0, wHi = 0;
};

std::vector<WorkItem> makeWorkItems(const detail::SlabStack& st, ContourInterpolation mode,
                                    int threads) {
  std::vector<WorkItem> items;
  const auto& P = st.planes;
  if (mode == ContourInterpolation::Slab) {
    for (std::size_t i = 0; i < P.size(); ++i)
      items.push_back({WorkItem::Slab, i, i + 1, P[i].wLo, P[i].wHi});
    return items;
  }
  std::size_t intervals = 0;
  for (std::size_t i = 0; i < P.size(); ++i) {
    intervals += P[i].joinAbove;
    // Nelms' half-slice end caps: the end contour extruded beyond an unjoined side.
    if (!P[i].joinBelow && !P[i].joinAbove)
      items.push_back({WorkItem::Cap, i, i + 1, P[i].wLo, P[i].wHi});
    else if (!P[i].joinBelow)
      items.push_back({WorkItem::Cap, i, i + 1, P[i].wLo, P[i].w});
    else if (!P[i].joinAbove)
      items.push_back({WorkItem::Cap, i, i + 1, P[i].w, P[i].wHi});
  }
  // Runs of about intervals / (2 threads) intervals: balance against the maps built twice.
  const std::size_t perRun = 2 * std::size_t(threads);
  const std::size_t run = std::max<std::size_t>(2, (intervals + perRun - 1) / perRun);
  for (std::size_t i = 0; i + 1 < P.size();) {
    if (!P[i].joinAbove) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j + 1 < P.size() && P[j].joinAbove && j - i < run) ++j;
    items.push_back({WorkItem::Intervals, i, j});
    i = j;
  }
  return items;
}

void runWorkItem(const WorkItem& item, const detail::SlabStack& st, const Lattice& L,
                 const detail::DoseSampler& ds, const DvhOptions& o, const JobControl& job,
                 Partial& out) {
  const auto& P = st.planes;
  if (item.kind != WorkItem::Intervals) {
    sampleSlab(P[item.first], item.wLo, item.wHi, L, ds, o, out);
    return;
  }
  auto tree = std::make_unique<detail::EdgeTree>(P[item.first].polys);
  detail::DistanceMap A = detail::buildDistanceMap(st, item.first, *tree, L.su, L.sv);
  seeVertices(P[item.first], {P[item.first].w}, L, ds, out);
  for (std::size_t a = item.first; a < item.last; ++a) {
    if (job.cancelled()) return;
    auto treeB = std::make_unique<detail::EdgeTree>(P[a + 1].polys);
    detail::DistanceMap B = detail::buildDistanceMap(st, a + 1, *treeB, L.su, L.sv);
    seeVertices(P[a + 1], {P[a + 1].w}, L, ds, out);
    detail::DistanceMap ma = A, mb = B;  // the ray correspondence is per interval
    detail::rayCorrespond(*tree, *treeB, ma, mb, L.su, L.sv);
    sampleInterval(st, a, ma, mb, L, ds, o, out);
    A = std::move(B);
    tree = std::move(treeB);
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
  detail::SlabStack st =
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
  if (options.interpolation == ContourInterpolation::ShapeBased) detail::computeInradii(st);
  const int hw = detail::threadCount(options, 1 << 20);
  const std::vector<WorkItem> items = makeWorkItems(st, options.interpolation, hw);
  const int nThreads = detail::threadCount(options, items.size());
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
      if (i >= items.size()) return;
      runWorkItem(items[i], st, L, ds, options, job, partials[std::size_t(t)]);
      const std::size_t n = done.fetch_add(1) + 1;
      // Only the calling thread talks to the progress sink (sinks need not be thread-safe).
      if (reporter) job.report(double(n) / double(items.size()), "DVH " + structure.name);
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
