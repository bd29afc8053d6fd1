// computePhotonDose(): validate, estimate, refuse what does not fit, resolve density, beams,
// cones and lattices, dispatch to the backend (the template method of DESIGN.md section 3).
// For the CUDA backend the density is left to the backend (deferred): it keeps the density on
// the GPU between calls and converts a CT or clamps a density volume there, so a repeated call
// on the same patient touches no host copy of the volume.
#include "photon/photon_dose.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <mutex>
#include <sstream>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/parallel_for.hpp"
#include "core/resource_dir.hpp"
#include "photon/photon_backend.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::photon {

namespace {

const Grid& inputGrid(const PhotonDoseRequest& r) {
  return r.density ? r.density->grid : r.ct->grid;
}

Grid resolveDoseGrid(const PhotonDoseRequest& r) {
  return r.doseGrid.empty() ? inputGrid(r) : r.doseGrid;
}

std::size_t physicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : 0;
}

bool finite(double x) { return std::isfinite(x); }

/// Trilinear sample of a volume at continuous index q; clamped to the edge voxels within the
/// volume's box [-0.5, dims - 0.5], `outside` beyond it.
double sampleTrilinear(const Volume<float>& v, Vec3 q, double outside) {
  const auto& d = v.grid.dims;
  for (int a = 0; a < 3; ++a)
    if (!(q[a] >= -0.5 && q[a] <= d[a] - 0.5)) return outside;
  int i0[3];
  double f[3];
  for (int a = 0; a < 3; ++a) {
    const double c = std::clamp(q[a], 0.0, double(d[a] - 1));
    i0[a] = std::min(int(std::floor(c)), std::max(0, d[a] - 2));
    f[a] = d[a] > 1 ? c - i0[a] : 0.0;
  }
  double s = 0;
  for (int dz = 0; dz < 2; ++dz)
    for (int dy = 0; dy < 2; ++dy)
      for (int dx = 0; dx < 2; ++dx) {
        const double w = (dx ? f[0] : 1 - f[0]) * (dy ? f[1] : 1 - f[1]) * (dz ? f[2] : 1 - f[2]);
        if (w == 0) continue;
        const int i = std::min(i0[0] + dx, d[0] - 1), j = std::min(i0[1] + dy, d[1] - 1),
                  k = std::min(i0[2] + dz, d[2] - 1);
        s += w * double(v.at(i, j, k));
      }
  return s;
}

int kernelPolarBins(const PhotonDoseRequest& r) {
  return r.model && r.model->kernel.polarUpperDeg.size() > 0
             ? int(r.model->kernel.polarUpperDeg.size())
             : 48;
}

}  // namespace

void validate(const PhotonDoseRequest& r) {
  PENUMBRA_REQUIRE(r.density || r.ct, InvalidArgument,
                   "photon dose: no CT or relative electron density volume given");
  if (r.density)
    r.density->validate();
  else
    r.ct->validate();
  PENUMBRA_REQUIRE(!inputGrid(r).empty(), InvalidArgument, "photon dose: the CT is empty");
  (void)makeDdaGeometry(inputGrid(r));  // throws for bad spacing or direction cosines
  const Grid dg = resolveDoseGrid(r);
  PENUMBRA_REQUIRE(dg.dims[0] > 0 && dg.dims[1] > 0 && dg.dims[2] > 0, InvalidArgument,
                   "photon dose: the dose grid is empty");
  PENUMBRA_REQUIRE(dg.spacing.x > 0 && dg.spacing.y > 0 && dg.spacing.z > 0 && dg.isOrthonormal(),
                   InvalidArgument,
                   "photon dose: the dose grid needs positive spacing and orthonormal axes");
  requireDoseGridSpacing(dg, "photon dose");
  PENUMBRA_REQUIRE(!r.beams.empty(), InvalidArgument, "photon dose: the plan has no beams");
  const PhotonDoseParameters& p = r.params;
  const int bins = kernelPolarBins(r);
  PENUMBRA_REQUIRE(p.polarCones >= 1 && p.polarCones <= bins && bins % p.polarCones == 0,
                   InvalidArgument,
                   "photon dose: the number of polar cones (" + std::to_string(p.polarCones) +
                       ") must divide the kernel's " + std::to_string(bins) +
                       " polar bins (e.g. 4, 6, 8, 12, 16, 24, 48)");
  PENUMBRA_REQUIRE(p.azimuthalCones >= 1 && p.azimuthalCones <= 360, InvalidArgument,
                   "photon dose: the number of azimuthal cones must be between 1 and 360 (got " +
                       std::to_string(p.azimuthalCones) + ")");
  PENUMBRA_REQUIRE(p.cpuThreads >= 0, InvalidArgument,
                   "photon dose: cpuThreads must be >= 0 (0: all hardware threads)");
  if (r.model)
    PENUMBRA_REQUIRE(!r.model->spectrum.energyMeV.empty() &&
                         r.model->spectrum.energyMeV.size() == r.model->spectrum.fluence.size() &&
                         r.model->spectrum.energyMeV.size() == r.model->spectrum.muRho.size() &&
                         r.model->gyPerMuPerRawDose >= 0,
                     InvalidArgument,
                     "photon dose: the beam model has no spectrum with attenuation data, or a "
                     "negative calibration");
  for (const PhotonBeam& b : r.beams) {
    const std::string name = "photon dose: beam '" + b.name + "' ";
    PENUMBRA_REQUIRE(finite(b.gantryDeg) && finite(b.couchDeg) && finite(b.collimatorDeg),
                     InvalidArgument, name + "has a non-finite gantry, couch or collimator angle");
    PENUMBRA_REQUIRE(finite(b.isocenter.x) && finite(b.isocenter.y) && finite(b.isocenter.z),
                     InvalidArgument, name + "has a non-finite isocentre");
    PENUMBRA_REQUIRE(b.sadMm >= kMinSadMm && b.sadMm <= kMaxSadMm, InvalidArgument,
                     name + "has source-axis distance " + formatG(b.sadMm) + " mm outside [" +
                         formatG(kMinSadMm) + ", " + formatG(kMaxSadMm) + "] mm");
    PENUMBRA_REQUIRE(finite(b.x1Mm) && finite(b.x2Mm) && finite(b.y1Mm) && finite(b.y2Mm),
                     InvalidArgument, name + "has non-finite jaw positions");
    PENUMBRA_REQUIRE(b.x1Mm < b.x2Mm && b.y1Mm < b.y2Mm, InvalidArgument,
                     name + "has closed or crossed jaws (need x1 < x2 and y1 < y2; got x " +
                         std::to_string(b.x1Mm) + ".." + std::to_string(b.x2Mm) + ", y " +
                         std::to_string(b.y1Mm) + ".." + std::to_string(b.y2Mm) + " mm)");
    PENUMBRA_REQUIRE(b.x2Mm - b.x1Mm <= 1000 && b.y2Mm - b.y1Mm <= 1000, InvalidArgument,
                     name + "has a field wider than 100 cm at the isocentre");
    PENUMBRA_REQUIRE(b.monitorUnits >= 0 && b.monitorUnits <= kMaxMonitorUnits, InvalidArgument,
                     name + "has monitor units " + formatG(b.monitorUnits) + " outside [0, " +
                         formatG(kMaxMonitorUnits) + "]");
    for (const auto& poly : b.aperture) {
      PENUMBRA_REQUIRE(poly.size() >= 3, InvalidArgument,
                       name + "has an aperture polygon with fewer than 3 vertices");
      for (const auto& q : poly)
        PENUMBRA_REQUIRE(finite(q[0]) && finite(q[1]), InvalidArgument,
                         name + "has an aperture vertex that is not finite");
    }
  }
}

PhotonWorkspaceEstimate workspaceBytes(const PhotonDoseRequest& r) {
  validate(r);
  const Grid dg = resolveDoseGrid(r);
  const double n = double(dg.voxelCount()), inVox = double(inputGrid(r).voxelCount());
  const bool sameGrid = detail::doseGridIsInputGrid(r, dg);
  const double threads = double(resolveThreads(r.params.cpuThreads));
  const double dirs = double(r.params.polarCones) * double(r.params.azimuthalCones);
  const bool atomicFree = r.params.deposit == DepositStrategy::AtomicFree;
  // Open-field map of the largest beam at 0.5 mm (float).
  double mapBytes = 0;
  for (const PhotonBeam& b : r.beams)
    mapBytes =
        std::max(mapBytes, 4.0 * ((b.x2Mm - b.x1Mm) / 0.5 + 4) * ((b.y2Mm - b.y1Mm) / 0.5 + 4));
  const double lattices = dirs * double(sizeof(TransportLattice));
  // Host (CPU backend): input RED (CT path), RED on the dose grid, TERMA and dose in double, the
  // deposit buffers (3 slots per voxel in double, or one double accumulator per thread), the
  // float output (+ TERMA if kept).
  const double hIn = r.density ? 0 : 4.0 * inVox;
  const double hCpu = 4.0 * n + 8.0 * n + 8.0 * n + (atomicFree ? 24.0 * n : 8.0 * threads * n);
  const double hOut = 4.0 * n * (r.params.keepTerma ? 2 : 1);
  // Device (CUDA): RED, TERMA and dose in float, the CT in int16 and its HU -> RED table while
  // it is converted (same grid), the map, and for the atomic-free deposit the slot storage: at most
  // 3 floats per voxel and direction for all directions in one launch (the plan's own need, known
  // after its TERMA, is smaller: the directions' shadow boxes of the TERMA > 0 box), capped at
  // kMaxSlotBytes; at least one direction over the whole volume.
  // Per-block partial sums (<= 64 bytes each): the TERMA's blocks, or the transport's 32 x 4
  // lines per block over at most (dims[L0] + dims[A] + 3) x (dims[L1] + dims[A] + 3) lines per
  // direction; the slice tables of the atomic-free gather (16 bytes per slice and direction).
  const double dMax = double(std::max({dg.dims[0], dg.dims[1], dg.dims[2]}));
  const double linesPerDir = 2 * dMax + 4;
  const double partials = 64.0 * std::max(n / 256.0 + 1, dirs * std::ceil(linesPerDir / 32) *
                                                             std::ceil(linesPerDir / 4)) +
                          64.0 * double(r.beams.size()) * (dirs + 1);
  const double sliceTables =
      atomicFree ? 16.0 * dirs * double(dg.dims[0] + dg.dims[1] + dg.dims[2]) : 0.0;
  // The transport's TERMA bricks: one byte per 8^3 voxels (rounded up per axis).
  const double bricks = std::ceil(dg.dims[0] / 8.0) * std::ceil(dg.dims[1] / 8.0) *
                        std::ceil(dg.dims[2] / 8.0);
  const double dBase = 4.0 * n * 3 + (!r.density && sameGrid ? 2.0 * n + 4.0 * 65536 : 0.0) +
                       mapBytes + partials + sliceTables + bricks;
  const double slotMin = atomicFree ? 12.0 * n : 0.0;
  const double slotMax =
      atomicFree ? std::max(slotMin, std::min(12.0 * n * dirs, detail::kMaxSlotBytes)) : 0.0;
  PhotonWorkspaceEstimate e;
  e.deviceBytes = std::size_t(std::min(dBase + slotMax, 1.8e19));
  e.deviceBytesMinimum = std::size_t(std::min(dBase + slotMin, 1.8e19));
  e.hostBytes = std::size_t(std::min(hIn + hCpu + hOut + mapBytes + lattices, 1.8e19));
  std::ostringstream s;
  s << "host: density " << formatBytes(4.0 * n + hIn) << ", TERMA+dose " << formatBytes(16.0 * n)
    << ", deposit buffers " << formatBytes(atomicFree ? 24.0 * n : 8.0 * threads * n) << ", output "
    << formatBytes(hOut) << "; GPU: up to " << formatBytes(dBase + slotMax)
    << " (density, TERMA, dose " << formatBytes(12.0 * n);
  if (atomicFree)
    s << ", atomic-free slot storage up to " << formatBytes(slotMax) << " for " << int(dirs)
      << " cone directions, at least " << formatBytes(slotMin)
      << ", at most half the free GPU memory";
  s << "; kept in the GPU cache between calls, with a page-locked host buffer of "
    << formatBytes(4.0 * n) << ")";
  e.breakdown = s.str();
  return e;
}

namespace detail {

ResolvedRequest resolveRequest(const PhotonDoseRequest& req, const PhotonBeamModel& model,
                               bool deferDensity, const ConeSet* cones) {
  ResolvedRequest r;
  r.request = &req;
  r.grid = resolveDoseGrid(req);
  r.threads = resolveThreads(req.params.cpuThreads);
  r.model = &model;
  r.cones = cones ? *cones
                  : collapseKernel(model.kernel, req.params.polarCones, req.params.azimuthalCones);
  if (!req.density) r.hlut = effectiveHlut(req);
  r.densityDeferred = deferDensity;
  if (!deferDensity) r.density = resolveDensity(req, r.grid);
  for (const PhotonBeam& b : req.beams) r.beams.push_back(prepareBeam(b, r.grid, r.cones, model));
  return r;
}

std::shared_ptr<const ConeSet> cachedCones(const std::shared_ptr<const PhotonBeamModel>& model,
                                           int polar, int azimuthal) {
  struct Entry {
    std::weak_ptr<const PhotonBeamModel> model;
    const double* kernelData;  // also catches a kernel table replaced in a shared model
    std::size_t kernelSize;
    int polar, azimuthal;
    std::shared_ptr<const ConeSet> cones;
  };
  static std::mutex mutex;
  static std::vector<Entry> entries;
  auto sameModel = [&](const Entry& e) {
    return !e.model.owner_before(model) && !model.owner_before(e.model) && !e.model.expired() &&
           e.kernelData == model->kernel.value.data() && e.kernelSize == model->kernel.value.size();
  };
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const Entry& e : entries)
      if (sameModel(e) && e.polar == polar && e.azimuthal == azimuthal) return e.cones;
  }
  auto cones =
      std::make_shared<const ConeSet>(collapseKernel(model->kernel, polar, azimuthal));  // unlocked
  const std::lock_guard<std::mutex> lock(mutex);
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const Entry& e) { return e.model.expired(); }),
                entries.end());
  if (entries.size() >= 16) entries.erase(entries.begin());  // oldest first
  entries.push_back(
      {model, model->kernel.value.data(), model->kernel.value.size(), polar, azimuthal, cones});
  return cones;
}

CalibrationCurve effectiveHlut(const PhotonDoseRequest& q) {
  if (!q.hlut.points().empty()) return q.hlut;
  static const CalibrationCurve curve =
      CalibrationCurve::load(resourceDir() + "/calibration/hu_to_red_matrad_default.csv");
  return curve;
}

std::vector<float> huToRedTable(const CalibrationCurve& hlut) {
  // One table over int16 HU: 65536 curve evaluations instead of one per voxel.
  std::vector<float> lut(65536);
  for (int h = 0; h < 65536; ++h) lut[std::size_t(h)] = float(hlut(double(h - 32768)));
  return lut;
}

bool doseGridIsInputGrid(const PhotonDoseRequest& q, const Grid& doseGrid) {
  return doseGrid.sameGeometry(inputGrid(q), 1e-6);
}

std::vector<float> resolveDensity(const PhotonDoseRequest& q, const Grid& grid) {
  std::vector<float> out;
  if (doseGridIsInputGrid(q, grid)) {
    // Voxel for voxel: one pass into a vector that is not zero-filled first.
    if (q.density) {
      out.assign(q.density->data.begin(), q.density->data.end());
    } else {
      const std::vector<float> lut = huToRedTable(effectiveHlut(q));
      out.reserve(q.ct->data.size());
      for (const std::int16_t hu : q.ct->data) out.push_back(lut[std::size_t(int(hu) + 32768)]);
    }
  } else {
    Volume<float> red;
    if (q.density) {
      red = *q.density;
    } else {
      const std::vector<float> lut = huToRedTable(effectiveHlut(q));
      red.grid = q.ct->grid;
      red.data.reserve(q.ct->data.size());
      for (const std::int16_t hu : q.ct->data)
        red.data.push_back(lut[std::size_t(int(hu) + 32768)]);
    }
    out.resize(grid.voxelCount());
    const double air = double(kMinDensity);
    for (int k = 0; k < grid.dims[2]; ++k)
      for (int j = 0; j < grid.dims[1]; ++j)
        for (int i = 0; i < grid.dims[0]; ++i) {
          const Vec3 p = grid.indexToWorld(Vec3{double(i), double(j), double(k)});
          out[grid.linearIndex(i, j, k)] =
              float(sampleTrilinear(red, red.grid.worldToIndex(p), air));
        }
  }
  for (float& d : out)
    if (!(d >= kMinDensity)) d = kMinDensity;  // also catches NaN
  return out;
}

PreparedBeam prepareBeam(const PhotonBeam& beam, const Grid& grid, const ConeSet& cones,
                         const PhotonBeamModel& model) {
  PreparedBeam pb;
  pb.beam = beam;
  beamAxes(beam, pb.source, pb.u, pb.v, pb.w);
  pb.sadMm = beam.sadMm;
  rasteriseOpenField(pb);
  // An uncalibrated model (calibration itself) gives raw dose: scale 1, MU ignored.
  pb.gyPerRawDose = model.gyPerMuPerRawDose > 0 ? beam.monitorUnits * model.gyPerMuPerRawDose : 1.0;
  // The kernel is not tilted per ray: every voxel uses the cones about the central axis w
  // (a common CCCS approximation; the ray divergence is at most ~12 deg for a 40 cm field).
  for (const ConeDirection& d : cones.directions) {
    const Vec3 dir = normalized(d.x * pb.u + d.y * pb.v + d.z * pb.w);
    pb.coneDirections.push_back(dir);
    pb.lattices.push_back(makeLattice(grid, dir));
  }
  return pb;
}

}  // namespace detail

PhotonDoseResult computePhotonDose(const PhotonDoseRequest& req, const JobControl& job) {
  const auto start = std::chrono::steady_clock::now();
  const PhotonWorkspaceEstimate est = workspaceBytes(req);  // validates
  PhotonDoseResult result;
  const BackendChoice choice = selectBackend(req.backend);
  if (!choice.message.empty()) result.messages.push_back(choice.message);
  if (choice.backend == Backend::Cuda && choice.device) {
    // The cache's own buffers are reused by this run: they count as free.
    const double free = double(choice.device->freeMemoryBytes) + detail::gpuCacheBytes();
    if (double(est.deviceBytesMinimum) > 0.95 * free)
      throw Error(ErrorCode::OutOfMemory,
                  "photon dose needs at least " + formatBytes(double(est.deviceBytesMinimum)) +
                      " on the GPU but " + formatBytes(free) + " are free (" + est.breakdown + ")",
                  __FILE__, __LINE__);
  }
  const double hostNeed = choice.backend == Backend::Cuda
                              ? 12.0 * double(resolveDoseGrid(req).voxelCount())
                              : double(est.hostBytes);
  const double ram = double(physicalMemoryBytes());
  if (ram > 0 && hostNeed > 0.9 * ram)
    throw Error(ErrorCode::OutOfMemory,
                "photon dose needs " + formatBytes(hostNeed) +
                    " of host memory, more than 90 % of the " + formatBytes(ram) + " installed (" +
                    est.breakdown + ")",
                __FILE__, __LINE__);
  job.checkCancel();

  const std::shared_ptr<const PhotonBeamModel> model = req.model ? req.model : defaultPhotonModel();
  job.report(0.0, "photon dose: density and beams");
  const bool cuda = choice.backend == Backend::Cuda;
  const std::shared_ptr<const ConeSet> cones =
      detail::cachedCones(model, req.params.polarCones, req.params.azimuthalCones);
  const detail::ResolvedRequest r =
      detail::resolveRequest(req, *model, /*deferDensity=*/cuda, cones.get());
  {
    KernelProfile host;
    host.kernel = "host_prepare";
    host.variant =
        cuda ? "validate, cones, beams, lattices" : "validate, cones, density, beams, lattices";
    host.backend = "cpu";
    host.device = "host";
    host.repetitions = 1;
    host.medianMs = host.minMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    result.profiles.push_back(host);
  }
  if (model->gyPerMuPerRawDose <= 0)
    result.messages.push_back(
        "the beam model is not calibrated (gyPerMuPerRawDose = 0): the dose is in raw units "
        "(MeV/g per photon/cm^2 at the isocentre), summed over beams without MU weighting");
  job.checkCancel();
  if (cuda)
    detail::computeCuda(r, result, job);
  else
    detail::computeCpu(r, result, job);
  result.elapsedMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

namespace detail {

GpuCacheSlot& gpuCacheSlot() {
  static GpuCacheSlot slot;
  return slot;
}

double gpuCacheBytes() {
  GpuCacheSlot& slot = gpuCacheSlot();
  const std::lock_guard<std::mutex> lock(slot.mutex);
  return slot.workspace ? double(slot.deviceBytes) : 0.0;
}

}  // namespace detail

void releasePhotonGpuCache() {
  std::shared_ptr<void> old;
  {
    detail::GpuCacheSlot& slot = detail::gpuCacheSlot();
    const std::lock_guard<std::mutex> lock(slot.mutex);
    old = std::move(slot.workspace);
    ++slot.generation;  // a run that holds the workspace now drops it instead of putting it back
  }
  old.reset();  // frees device and page-locked memory outside the lock
}

}  // namespace penumbra::photon
