// Mask-based DVH, method dispatch, and the helpers shared by both methods.
#include "dvh/dvh.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "dvh/dose_sampler.hpp"
#include "dvh/dvh_internal.hpp"

namespace penumbra::dvh {

namespace detail {

void validateDose(const DoseVolume& dose) {
  PENUMBRA_REQUIRE(!dose.dose.empty(), InvalidArgument, "the dose volume is empty");
  dose.dose.validate();
  PENUMBRA_REQUIRE(dose.dose.grid.isOrthonormal(), InvalidArgument,
                   "the dose grid's direction cosines are not orthonormal");
}

DoseHistogram makeHistogram(const DoseVolume& dose, const DvhOptions& options) {
  float maxDose = 0;
  for (float d : dose.dose.data)
    if (d > maxDose) maxDose = d;
  // Headroom above the maximum: a sample's smear reaches up to half a cell beyond its
  // centre dose, and interpolated doses never exceed the grid maximum.
  const double top = std::max(double(maxDose) * 1.02, 1e-3);
  double width = options.binWidthGy > 0 ? options.binWidthGy : 0.01;
  if (top / width > 200000) width = top / 200000;
  const auto bins = std::size_t(std::ceil(top / width)) + 2;
  return DoseHistogram(width, bins);
}

int threadCount(const DvhOptions& options, std::size_t items) {
  unsigned hw = options.threads > 0 ? unsigned(options.threads) : std::thread::hardware_concurrency();
  if (hw == 0) hw = 1;
  return int(std::max<std::size_t>(1, std::min<std::size_t>(hw, items)));
}

void noteOutside(double outsideMm3, double totalMm3, const DvhOptions& options,
                 DvhResult& result) {
  result.outsideDoseGridCc = outsideMm3 / 1000.0;
  result.outsideDoseGridFraction = totalMm3 > 0 ? outsideMm3 / totalMm3 : 0.0;
  if (outsideMm3 <= 0) return;
  char buf[256];
  std::snprintf(buf, sizeof buf, "'%s': %.3g cm3 (%.2f %% of the structure) lie outside the dose "
                "grid and %s",
                result.structureName.c_str(), outsideMm3 / 1000.0,
                100.0 * result.outsideDoseGridFraction,
                options.outside == OutsideDosePolicy::ZeroDose
                    ? "are counted at 0 Gy"
                    : "are left out of the histogram and the volume");
  result.warnings.emplace_back(buf);
}

}  // namespace detail

DvhResult computeMaskDvh(const Mask& mask, const DoseVolume& dose, const DvhOptions& options,
                         const JobControl& job, const std::string& name) {
  const auto t0 = std::chrono::steady_clock::now();
  detail::validateDose(dose);
  mask.validate();
  PENUMBRA_REQUIRE(!mask.empty(), InvalidArgument, "structure '" + name + "' has no mask");
  DvhResult result;
  result.structureName = name;
  result.method = DvhMethod::Mask;
  const Grid& mg = mask.grid;
  const Grid& dg = dose.dose.grid;
  const bool same = mg.sameGeometry(dg);
  const double voxelMm3 = mg.voxelVolumeMm3();
  const detail::DoseSampler ds(dose.dose);
  const int nz = mg.dims[2];
  const int nThreads = detail::threadCount(options, std::size_t(nz));

  struct Partial {
    detail::DoseHistogram hist;
    detail::DoseMoments moments;
    double outsideMm3 = 0;
    std::size_t samples = 0;
  };
  std::vector<Partial> parts;
  for (int t = 0; t < nThreads; ++t) parts.push_back({detail::makeHistogram(dose, options), {}});
  const bool keepOutside = options.outside == OutsideDosePolicy::ZeroDose;
  std::atomic<int> next{0}, done{0};
  std::atomic<bool> stop{false};
  auto worker = [&](int t, bool reporter) {
    Partial& out = parts[std::size_t(t)];
    for (;;) {
      if (stop.load(std::memory_order_relaxed)) return;
      if (job.cancelled()) {
        stop = true;
        return;
      }
      const int k = next.fetch_add(1);
      if (k >= nz) return;
      for (int j = 0; j < mg.dims[1]; ++j)
        for (int i = 0; i < mg.dims[0]; ++i) {
          if (!mask.at(i, j, k)) continue;
          ++out.samples;
          double d = 0;
          bool inside = true;
          if (same) {
            d = dose.dose.at(i, j, k);
          } else {
            const Vec3 p = dg.worldToIndex(mg.indexToWorld({double(i), double(j), double(k)}));
            inside = ds.inside(p.x, p.y, p.z);
            if (inside) d = ds.eval(p.x, p.y, p.z, nullptr);
          }
          if (!inside) {
            out.outsideMm3 += voxelMm3;
            if (!keepOutside) continue;
          }
          out.hist.addPoint(d, voxelMm3);
          out.moments.add(d, voxelMm3);
        }
      const int n = done.fetch_add(1) + 1;
      if (reporter) job.report(double(n) / nz, "DVH " + name);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < nThreads; ++t) pool.emplace_back(worker, t, false);
  worker(0, true);
  for (auto& th : pool) th.join();
  job.checkCancel();
  for (int t = 1; t < nThreads; ++t) {
    parts[0].hist.merge(parts[std::size_t(t)].hist);
    parts[0].moments.merge(parts[std::size_t(t)].moments);
    parts[0].outsideMm3 += parts[std::size_t(t)].outsideMm3;
    parts[0].samples += parts[std::size_t(t)].samples;
  }
  result.samples = parts[0].samples;
  result.stepMm[0] = mg.spacing.x;
  result.stepMm[1] = mg.spacing.y;
  result.stepMm[2] = mg.spacing.z;
  const double totalMm3 = parts[0].moments.volume + (keepOutside ? 0.0 : parts[0].outsideMm3);
  detail::noteOutside(parts[0].outsideMm3, totalMm3, options, result);
  detail::fillCurveAndStatistics(parts[0].hist, parts[0].moments, options, result);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

namespace {
bool hasPolygons(const Structure& s) {
  return std::any_of(s.contours.begin(), s.contours.end(),
                     [](const Contour& c) { return c.points.size() >= 3; });
}
}  // namespace

DvhResult computeDvh(const Structure& structure, const DoseVolume& dose, const DvhOptions& options,
                     const JobControl& job) {
  if (hasPolygons(structure)) return computeContourDvh(structure, dose, options, job);
  PENUMBRA_REQUIRE(!structure.mask.empty(), InvalidArgument,
                   "structure '" + structure.name + "' has neither contours nor a mask");
  return computeMaskDvh(structure.mask, dose, options, job, structure.name);
}

std::vector<DvhResult> computeDvhs(const StructureSet& set, const DoseVolume& dose,
                                   const DvhOptions& options, const JobControl& job) {
  std::vector<const Structure*> todo;
  for (const auto& s : set.structures)
    if (hasPolygons(s) || !s.mask.empty()) todo.push_back(&s);
  std::vector<DvhResult> out;
  for (std::size_t i = 0; i < todo.size(); ++i) {
    job.checkCancel();
    job.report(double(i) / double(todo.size()), "DVH " + todo[i]->name);
    // Per-structure progress is not forwarded: the structure count is the useful granularity.
    out.push_back(computeDvh(*todo[i], dose, options, JobControl{nullptr, job.cancel}));
  }
  job.report(1.0, "DVH done");
  return out;
}

}  // namespace penumbra::dvh
