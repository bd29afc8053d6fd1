#include "compare/compare.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>

#include "compare/compare_internal.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/host_memory.hpp"
#include "core/parallel_for.hpp"

namespace penumbra::compare {

const char* toString(Normalisation n) {
  switch (n) {
    case Normalisation::ReferenceMax: return "reference maximum";
    case Normalisation::Prescription: return "prescription";
    case Normalisation::Value: return "value";
  }
  return "?";
}

namespace {

[[noreturn]] void invalid(const std::string& what) {
  throw Error(ErrorCode::InvalidArgument, "dose comparison: " + what);
}

void checkCriteria(const GammaCriteria& c, const CudaGammaTuning& t) {
  auto finite = [](double v) { return std::isfinite(v); };
  if (!finite(c.dosePercent) || c.dosePercent <= 0 || c.dosePercent > 100)
    invalid("dose criterion " + formatG(c.dosePercent) + " % must be in (0, 100]");
  if (!finite(c.distanceMm) || c.distanceMm <= 0 || c.distanceMm > 100)
    invalid("distance criterion " + formatG(c.distanceMm) + " mm must be in (0, 100] mm");
  if (!finite(c.cutoffPercent) || c.cutoffPercent < 0 || c.cutoffPercent >= 100)
    invalid("low-dose cut-off " + formatG(c.cutoffPercent) + " % must be in [0, 100)");
  if (c.local && c.cutoffPercent <= 0)
    invalid("a local gamma needs a low-dose cut-off above 0 % (its dose criterion is a "
            "percentage of each point's dose, which is 0 somewhere)");
  if (!finite(c.gammaCap) || c.gammaCap <= 1 || c.gammaCap > 100)
    invalid("gamma cap " + formatG(c.gammaCap) + " must be in (1, 100]");
  if (!finite(c.maxSearchMm) || c.maxSearchMm < 0)
    invalid("maximum search distance " + formatG(c.maxSearchMm) +
            " mm must be 0 (automatic) or positive");
  if (c.maxSearchMm > 0 && c.maxSearchMm < 1e-3)
    invalid("maximum search distance " + formatG(c.maxSearchMm) + " mm is below 0.001 mm");
  if (!finite(c.tolerance) || c.tolerance < 1e-6 || c.tolerance > 0.1)
    invalid("gamma tolerance " + formatG(c.tolerance) + " must be in [1e-6, 0.1]");
  if (t.stepBudget < 0)
    invalid("CUDA gamma step budget " + std::to_string(t.stepBudget) +
            " must be 0 (off) or positive");
  if (t.skipLimit < 0 || t.skipLimit > 64)
    invalid("CUDA gamma skip limit " + std::to_string(t.skipLimit) + " must be in [0, 64]");
  if (t.slabPointsLog2 < 10 || t.slabPointsLog2 > 31)
    invalid("CUDA gamma slab size 2^" + std::to_string(t.slabPointsLog2) +
            " points must be in [2^10, 2^31]");
  if (t.stackItems < 64 || t.stackItems > 4096)
    invalid("CUDA gamma stack of " + std::to_string(t.stackItems) +
            " entries must be in [64, 4096]");
  if (t.laneGroup != 8 && t.laneGroup != 16 && t.laneGroup != 32)
    invalid("CUDA gamma lane group of " + std::to_string(t.laneGroup) + " must be 8, 16 or 32");
  if (c.normalisation != Normalisation::ReferenceMax &&
      (!finite(c.normalisationGy) || c.normalisationGy <= 0))
    invalid(std::string("the ") + toString(c.normalisation) + " dose " +
            formatG(c.normalisationGy) + " Gy must be positive");
}

void checkGrid(const Volume<float>* v, const char* which) {
  if (!v || v->empty()) invalid(std::string("the ") + which + " dose is empty");
  v->validate();
  const Grid& g = v->grid;
  for (int a = 0; a < 3; ++a)
    if (!(std::isfinite(g.spacing[a]) && g.spacing[a] > 0))
      invalid(std::string("the ") + which + " dose's voxel spacing " + formatG(g.spacing[a]) +
              " mm (axis " + std::to_string(a) + ") is not positive");
  if (!g.isOrthonormal())
    invalid(std::string("the ") + which + " dose's grid directions are not orthonormal");
  // Index arithmetic of the search is int.
  if (g.voxelCount() > std::size_t(std::numeric_limits<int>::max()))
    invalid(std::string("the ") + which + " dose has more than 2^31 voxels");
}

/// Box of the voxel centres in patient space, as [lo, hi] per patient axis.
void centreBox(const Grid& g, Vec3& lo, Vec3& hi) {
  lo = hi = g.indexToWorld({0, 0, 0});
  for (int c = 1; c < 8; ++c) {
    const Vec3 p = g.indexToWorld({(c & 1) ? g.dims[0] - 1.0 : 0.0, (c & 2) ? g.dims[1] - 1.0 : 0.0,
                                   (c & 4) ? g.dims[2] - 1.0 : 0.0});
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::min(lo[a], p[a]);
      hi[a] = std::max(hi[a], p[a]);
    }
  }
}

std::string boxText(const Vec3& lo, const Vec3& hi) {
  char b[160];
  std::snprintf(b, sizeof b, "x %.1f..%.1f, y %.1f..%.1f, z %.1f..%.1f mm", lo.x, hi.x, lo.y,
                hi.y, lo.z, hi.z);
  return b;
}

}  // namespace

namespace detail {


PointSetup<double> makePointSetup(const CompareRequest& r, double normalisationGy) {
  const Grid& gr = r.reference->grid;
  const Grid& ge = r.evaluated->grid;
  const GammaCriteria& c = r.criteria;
  PointSetup<double> s;
  GammaField<double>& f = s.field;
  f.dose = r.evaluated->data.data();
  f.hmin = std::numeric_limits<double>::infinity();
  for (int a = 0; a < 3; ++a) {
    f.n[a] = ge.dims[a];
    f.cells[a] = std::max(ge.dims[a] - 1, 1);
    f.h[a] = ge.spacing[a] / c.distanceMm;
    f.w[a] = ge.dims[a] > 1 ? f.h[a] : 0.0;
    f.invw[a] = ge.dims[a] > 1 ? 1.0 / f.h[a] : 0.0;
    if (ge.dims[a] > 1) f.hmin = std::min(f.hmin, f.h[a]);
    s.refDims[a] = gr.dims[a];
  }
  if (!std::isfinite(f.hmin)) f.hmin = 1;  // a single evaluated voxel: ring 0 is all there is
  // e = S_e^-1 D_e^T (o_r - o_e + D_r S_r ijk)
  const Mat3 det = ge.direction.transposed();
  for (int col = 0; col < 3; ++col) {
    Vec3 axis = gr.direction.column(col);
    axis = det * Vec3{axis.x * gr.spacing[col], axis.y * gr.spacing[col], axis.z * gr.spacing[col]};
    for (int a = 0; a < 3; ++a) s.toEval[3 * a + col] = axis[a] / ge.spacing[a];
  }
  const Vec3 off = det * (gr.origin - ge.origin);
  for (int a = 0; a < 3; ++a) s.toEvalOffset[a] = off[a] / ge.spacing[a];
  s.sameGrid = gr.dims == ge.dims;
  for (int i = 0; i < 9; ++i) s.sameGrid = s.sameGrid && s.toEval[i] == (i % 4 == 0 ? 1.0 : 0.0);
  for (int a = 0; a < 3; ++a) s.sameGrid = s.sameGrid && s.toEvalOffset[a] == 0.0;

  const double cap = c.gammaCap;
  const double limit = c.maxSearchMm > 0 ? std::min(c.maxSearchMm / c.distanceMm, cap) : cap;
  s.limits.cap2 = cap * cap;
  s.limits.limit2 = limit * limit;
  s.limits.tol = c.tolerance;
  s.invDdGlobal = 1.0 / (c.dosePercent / 100.0 * normalisationGy);
  s.ddFraction = c.dosePercent / 100.0;
  s.local = c.local;
  s.gamma = r.computeGamma;
  s.cutoffGy = float(c.cutoffPercent / 100.0 * normalisationGy);
  return s;
}

PointSetup<float> toFloat(const PointSetup<double>& s) {
  PointSetup<float> f;
  f.field.dose = s.field.dose;
  for (int a = 0; a < 3; ++a) {
    f.field.n[a] = s.field.n[a];
    f.field.cells[a] = s.field.cells[a];
    f.field.h[a] = float(s.field.h[a]);
    f.field.w[a] = float(s.field.w[a]);
    f.field.invw[a] = float(s.field.invw[a]);
    f.toEvalOffset[a] = s.toEvalOffset[a];
    f.refDims[a] = s.refDims[a];
  }
  for (int i = 0; i < 9; ++i) f.toEval[i] = s.toEval[i];
  f.field.hmin = float(s.field.hmin);
  f.limits.cap2 = float(s.limits.cap2);
  f.limits.limit2 = float(s.limits.limit2);
  f.limits.tol = float(s.limits.tol);
  f.invDdGlobal = float(s.invDdGlobal);
  f.ddFraction = float(s.ddFraction);
  f.local = s.local;
  f.gamma = s.gamma;
  f.cutoffGy = s.cutoffGy;
  f.sameGrid = s.sameGrid;
  return f;
}

}  // namespace detail

void releaseCompareGpuCache() { detail::releaseGpuCache(); }

void validate(const CompareRequest& r) {
  checkGrid(r.reference.get(), "reference");
  checkGrid(r.evaluated.get(), "evaluated");
  checkCriteria(r.criteria, r.cudaTuning);
  if (!r.referenceFrame.empty() && !r.evaluatedFrame.empty() &&
      r.referenceFrame != r.evaluatedFrame)
    invalid("the doses are in different frames of reference (" + r.referenceFrame + " and " +
            r.evaluatedFrame + "): their coordinates cannot be compared without a registration");
  Vec3 rlo, rhi, elo, ehi;
  centreBox(r.reference->grid, rlo, rhi);
  centreBox(r.evaluated->grid, elo, ehi);
  for (int a = 0; a < 3; ++a)
    if (rhi[a] < elo[a] - 1e-3 || ehi[a] < rlo[a] - 1e-3)
      invalid("the doses do not overlap: reference " + boxText(rlo, rhi) + ", evaluated " +
              boxText(elo, ehi));
  auto checkMask = [&](const Mask* m, const std::string& what) {
    if (!m) return;
    if (m->grid.dims != r.reference->grid.dims || !m->grid.sameGeometry(r.reference->grid))
      invalid(what + " is not on the reference dose's grid");
    m->validate();
    if (std::none_of(m->data.begin(), m->data.end(), [](std::uint8_t v) { return v != 0; }))
      invalid(what + " is empty (no voxel inside)");
  };
  checkMask(r.mask.get(), "the mask");
  for (const StructureMask& s : r.structures)
    if (!s.mask)
      invalid("structure '" + s.name + "' has no mask");
    else if (s.mask->grid.dims != r.reference->grid.dims ||
             !s.mask->grid.sameGeometry(r.reference->grid))
      invalid("structure '" + s.name + "' is not on the reference dose's grid");
}

WorkspaceEstimate workspaceBytes(const CompareRequest& r, Backend backend) {
  WorkspaceEstimate w;
  const double nr = r.reference ? double(r.reference->grid.voxelCount()) : 0;
  const double ne = r.evaluated ? double(r.evaluated->grid.voxelCount()) : 0;
  const double masks = r.mask ? nr : 0;
  w.hostBytes = std::size_t(2 * 4 * nr);  // gamma and difference volumes
  // CUDA: both doses, gamma and difference, the mask and the two lists of points to search
  // (every point, and those handed on to a lane group).
  if (backend == Backend::Cuda)
    w.deviceBytes = std::size_t(4 * (nr + ne) + 2 * 4 * nr + masks + 2 * 4 * nr);
  w.breakdown = "reference " + formatBytes(4 * nr) + ", evaluated " + formatBytes(4 * ne) +
                ", gamma and difference " + formatBytes(8 * nr) +
                (masks > 0 ? ", mask " + formatBytes(masks) : std::string()) +
                (backend == Backend::Cuda ? ", point lists " + formatBytes(8 * nr) : std::string());
  return w;
}

namespace {

std::int64_t runCpu(const CompareRequest& r, const PointSetup<double>& s, int threads,
                    CompareResult& out, const JobControl& job) {
  const Grid& g = r.reference->grid;
  const float* ref = r.reference->data.data();
  const std::uint8_t* mask = r.mask ? r.mask->data.data() : nullptr;
  float* gamma = out.gamma.data.data();
  float* diff = out.difference.data.data();
  const std::size_t rows = std::size_t(g.dims[1]) * g.dims[2];
  std::atomic<std::int64_t> depthLimited{0};
  std::atomic<std::size_t> done{0};
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  parallelFor(rows, threads, job, [&](std::size_t row, int) {
    const int j = int(row % g.dims[1]), k = int(row / g.dims[1]);
    std::int64_t limited = 0;
    for (int i = 0; i < g.dims[0]; ++i) {
      const std::size_t at = g.linearIndex(i, j, k);
      const PointOutcome o =
          comparePoint(s, i, j, k, ref[at], mask ? mask[at] != 0 : true);
      diff[at] = o.cls == kOutsideEvaluated ? nan : o.difference;
      gamma[at] = o.cls == kEvaluated && s.gamma ? o.gamma : nan;
      limited += o.depthLimited;
    }
    depthLimited += limited;
    const std::size_t n = ++done;
    if (n % 64 == 0) job.report(double(n) / double(rows), "gamma (CPU)");
  });
  return depthLimited;
}

}  // namespace

CompareResult compareDoses(const CompareRequest& r, const JobControl& job) {
  const auto t0 = std::chrono::steady_clock::now();
  validate(r);
  CompareResult out;
  const int threads = resolveThreads(r.cpuThreads);
  const auto v0 = std::chrono::steady_clock::now();
  const detail::VolumeFacts facts = detail::checkVolumes(r, threads, job);
  const double checkMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - v0).count();
  out.referenceMaxGy = facts.referenceMax;
  out.evaluatedMaxGy = facts.evaluatedMax;
  if (!(facts.referenceMax > 0))
    invalid("the reference dose is zero everywhere (maximum " + formatG(facts.referenceMax) +
            " Gy): there is nothing to normalise to");
  const GammaCriteria& c = r.criteria;
  out.normalisationGy =
      c.normalisation == Normalisation::ReferenceMax ? facts.referenceMax : c.normalisationGy;
  const PointSetup<double> setup = detail::makePointSetup(r, out.normalisationGy);

  {
    const WorkspaceEstimate host = workspaceBytes(r, Backend::Cpu);
    refuseIfHostMemoryExceeded(double(host.hostBytes), "dose comparison", host.breakdown);
  }
  // The device, and whether the run fits on it. The free memory is read only when the backend
  // must allocate beyond the buffers it keeps from earlier calls (a new criterion on the same
  // doses allocates nothing); those buffers count as free, since the run reuses them.
  const auto b0 = std::chrono::steady_clock::now();
  const BackendChoice choice = selectBackend(r.backend, /*withFreeMemory=*/false);
  if (!choice.message.empty()) out.messages.push_back(choice.message);
  if (choice.backend == Backend::Cuda && choice.device) {
    const detail::GpuCacheUse cache = detail::gpuCacheUse(r);
    if (cache.toGrow > 0) {
      const WorkspaceEstimate est = workspaceBytes(r, Backend::Cuda);
      const double free = double(cudaFreeMemoryBytes(choice.device->index)) + cache.held;
      if (double(est.deviceBytes) > 0.95 * free)
        throw Error(ErrorCode::OutOfMemory,
                    "dose comparison needs " + formatBytes(double(est.deviceBytes)) +
                        " on the GPU but " + formatBytes(free) + " are free (" + est.breakdown +
                        ")",
                    __FILE__, __LINE__);
    }
  }
  const double chooseMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - b0).count();
  detail::PointSummary sums;
  std::int64_t depthLimited = 0;
  if (choice.backend == Backend::Cuda) {
    out.backend = Backend::Cuda;
    sums = detail::runCompareCuda(r, setup, out, job);
  } else {
    out.backend = Backend::Cpu;
    out.device = "cpu (" + std::to_string(threads) + " threads)";
    out.gamma = Volume<float>(r.reference->grid, 0.0f);
    out.difference = Volume<float>(r.reference->grid, 0.0f);
    const auto c0 = std::chrono::steady_clock::now();
    depthLimited = runCpu(r, setup, threads, out, job);
    KernelProfile p;
    p.kernel = "gamma_search";
    p.variant = c.local ? "local" : "global";
    p.backend = "cpu";
    p.device = out.device;
    p.repetitions = 1;
    p.medianMs = p.minMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count();
    out.profiles.push_back(p);
  }
  out.profiles.push_back(hostStageProfile("check doses (host)", "host", checkMs));
  out.profiles.push_back(
      hostStageProfile("choose backend, check GPU memory (host)", "host", chooseMs));
  const auto s0 = std::chrono::steady_clock::now();
  if (out.backend == Backend::Cpu) {
    sums = detail::sumPoints(r, setup, threads, out);
    sums.depthLimited = depthLimited;
  }
  detail::summarise(r, setup, sums, out);
  out.profiles.push_back(hostStageProfile(
      out.backend == Backend::Cpu ? "statistics (host)" : "statistics (host, from GPU sums)",
      "host",
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s0).count()));
  if (out.outsideEvaluated > 0)
    out.messages.push_back(std::to_string(out.outsideEvaluated) +
                           " reference voxel(s) lie outside the evaluated dose and have no "
                           "difference or gamma");
  if (out.gammaStats.depthLimitedPoints > 0)
    out.messages.push_back(std::to_string(out.gammaStats.depthLimitedPoints) +
                           " point(s) reached the search's depth limit: their gamma is an "
                           "upper bound within more than the tolerance");
  out.elapsedMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace penumbra::compare
