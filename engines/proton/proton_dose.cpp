// computeProtonDose(): validate, estimate, refuse what does not fit, prepare tables and beams,
// dispatch to the backend (the template method of DESIGN.md section 3).
#include "proton/proton_dose.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <set>
#include <sstream>

#include "core/cpu_stage.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/parallel_for.hpp"
#include "proton/physics/bragg_kleeman.hpp"
#include "proton/prepare_cache.hpp"
#include "proton/proton_backend.hpp"
#include "proton/proton_gpu_cache.hpp"
#include "raytrace/raytrace.hpp"
#include "spmv/half_float.hpp"

namespace penumbra::proton {

namespace {

const Grid& inputGrid(const ProtonDoseRequest& r) { return r.spr ? r.spr->grid : r.ct->grid; }

Grid resolveDoseGrid(const ProtonDoseRequest& r) {
  return r.doseGrid.empty() ? inputGrid(r) : r.doseGrid;
}

std::shared_ptr<const ProtonMachine> resolveMachine(const ProtonDoseRequest& r) {
  return r.machine ? r.machine : ProtonMachine::generic();
}

std::size_t physicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? std::size_t(pages) * std::size_t(page) : 0;
}

}  // namespace

std::vector<double> DoseMatrixCsr::multiply(const std::vector<double>& w) const {
  PENUMBRA_REQUIRE(std::int64_t(w.size()) == cols, InvalidArgument,
                   "dose matrix: weight vector length differs from the number of spots");
  std::vector<double> y(std::size_t(rows), 0.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (std::int64_t e = rowPtr[std::size_t(r)]; e < rowPtr[std::size_t(r) + 1]; ++e)
      s += double(spmv::halfBitsToFloat(values[std::size_t(e)])) * w[std::size_t(colIdx[std::size_t(e)])];
    y[std::size_t(r)] = s * scale;
  }
  return y;
}

void validate(const ProtonDoseRequest& r) {
  PENUMBRA_REQUIRE(r.spr || r.ct, InvalidArgument, "proton dose: no CT or SPR volume given");
  if (r.spr) r.spr->validate();
  else r.ct->validate();
  PENUMBRA_REQUIRE(!inputGrid(r).empty(), InvalidArgument, "proton dose: the CT is empty");
  (void)makeDdaGeometry(inputGrid(r));  // throws for bad spacing or direction cosines
  const Grid dg = resolveDoseGrid(r);
  PENUMBRA_REQUIRE(dg.dims[0] > 0 && dg.dims[1] > 0 && dg.dims[2] > 0, InvalidArgument,
                   "proton dose: the dose grid is empty");
  PENUMBRA_REQUIRE(dg.spacing.x > 0 && dg.spacing.y > 0 && dg.spacing.z > 0 && dg.isOrthonormal(),
                   InvalidArgument,
                   "proton dose: the dose grid needs positive spacing and orthonormal axes");
  requireDoseGridSpacing(dg, "proton dose");
  PENUMBRA_REQUIRE(!r.beams.empty(), InvalidArgument, "proton dose: the plan has no beams");
  const auto& p = r.params;
  PENUMBRA_REQUIRE(p.sampling.lateralSpacingMm >= 0 && p.sampling.depthStepMm >= 0,
                   InvalidArgument, "proton dose: BEV spacing must be >= 0 (0: automatic)");
  PENUMBRA_REQUIRE(p.sampling.cutoffSigmas >= 1 && p.sampling.cutoffSigmas <= 10, InvalidArgument,
                   "proton dose: kernel cut-off must be between 1 and 10 sigma");
  PENUMBRA_REQUIRE(p.doseMatrixRelativeCutoff >= 0 && p.doseMatrixRelativeCutoff < 1,
                   InvalidArgument, "proton dose: matrix cut-off must be in [0, 1)");
  PENUMBRA_REQUIRE(totalSpotCount(r.beams) < (std::size_t(1) << 31), InvalidArgument,
                   "proton dose: more than 2^31 spots");
  const auto machine = resolveMachine(r);
  for (const ProtonBeam& b : r.beams) {
    const double vsad = b.virtualSourceDistanceMm;
    PENUMBRA_REQUIRE(vsad >= kMinVirtualSourceDistanceMm && vsad <= kMaxVirtualSourceDistanceMm,
                     InvalidArgument,
                     "proton dose: beam '" + b.name + "' has virtual source distance " +
                         formatG(vsad) + " mm outside [" + formatG(kMinVirtualSourceDistanceMm) +
                         ", " + formatG(kMaxVirtualSourceDistanceMm) + "] mm");
    (void)makeBeamFrame(b);
    for (const EnergyLayer& l : b.layers) {
      PENUMBRA_REQUIRE(l.energyMeV >= machine->beamModel().minEnergyMeV() &&
                           l.energyMeV <= machine->beamModel().maxEnergyMeV(),
                       InvalidArgument,
                       "proton dose: beam '" + b.name + "' has energy " +
                           std::to_string(l.energyMeV) + " MeV outside the beam model");
      for (const ProtonSpot& s : l.spots) {
        PENUMBRA_REQUIRE(
            std::isfinite(s.x) && std::isfinite(s.y), InvalidArgument,
            "proton dose: beam '" + b.name + "' has a spot with a non-finite position");
        PENUMBRA_REQUIRE(s.weight >= 0 && s.weight <= kMaxSpotWeight, InvalidArgument,
                         "proton dose: beam '" + b.name + "' has spot weight " + formatG(s.weight) +
                             " outside [0, " + formatG(kMaxSpotWeight) +
                             "] (units of 1e9 protons)");
      }
    }
  }
}

WorkspaceEstimate workspaceBytes(const ProtonDoseRequest& r) { return detail::estimate(r, nullptr); }

namespace detail {

WorkspaceEstimate estimate(const ProtonDoseRequest& r, std::vector<BeamLayout>* layoutsOut) {
  validate(r);
  const Grid dg = resolveDoseGrid(r);
  const auto machine = resolveMachine(r);
  const double inVox = double(inputGrid(r).voxelCount()), doseVox = double(dg.voxelCount());
  double bevMax = 0, tilesMax = 0, tableBytes = 0, matrixEntries = 0;
  detail::DoseMatrixDeviceSizes mSizes;  // the GPU matrix build keeps every beam's WEPL
  std::set<double> energies;
  // The beams' layouts (cached), on this thread: with the tile lists' length bounded instead of
  // counted, a layout takes ~16 us for an hn-2field beam on the development machine, less than
  // starting a thread (the GPU machine's host took longer to start threads than a beam's exact
  // count took, docs/benchmarks.md).
  std::vector<BeamLayout> layouts(r.beams.size());
  for (std::size_t i = 0; i < r.beams.size(); ++i)
    layouts[i] = detail::cachedLayoutBeam(r.beams[i], dg, machine, r.params.sampling);
  for (std::size_t bi = 0; bi < r.beams.size(); ++bi) {
    const ProtonBeam& b = r.beams[bi];
    const BeamLayout& L = layouts[bi];
    bevMax = std::max(bevMax, double(L.bevSamples()));
    tilesMax = std::max(tilesMax, double(L.tileListBound) +
                                      double(L.tileCount()) * double(b.layers.size() + 1));
    mSizes.bevSamples += double(L.bevSamples());
    mSizes.tileEntries += double(L.tileListBound);
    mSizes.tileBegins += double(L.tileCount()) * double(b.layers.size()) + 1;
    for (std::size_t l = 0; l < b.layers.size(); ++l) {
      const double e = b.layers[l].energyMeV;
      if (energies.insert(e).second)
        tableBytes += 8.0 * (10.0 * (rangeCm(e) + 2.0) / machine->iddStepMm() + 2);
      if (r.params.computeDoseMatrix && !L.empty) {
        // Voxels in a spot's cylinder: pi (c sigma_max)^2 x the depth span, per spot.
        const double rad = L.cullRadiusIsoMm[l] * L.bev.d0 / L.bev.sad;
        const double depth = double(L.bev.nD) * L.bev.dd;
        matrixEntries += double(b.layers[l].spots.size()) * 3.14159 * rad * rad * depth /
                         dg.voxelVolumeMm3();
      }
    }
  }
  const double spots = double(totalSpotCount(r.beams));
  WorkspaceEstimate e;
  std::ostringstream s;
  // Device: CT (int16) + SPR + HU LUT, patient dose, BEV WEPL + dose of the largest beam (the
  // buffers are reused beam after beam), tables, spots, tile lists.
  const double dCt = r.spr ? 0 : 2.0 * inVox + 4.0 * 65536;
  const double dSpr = 4.0 * inVox, dDose = 4.0 * doseVox, dBev = 8.0 * bevMax;
  const double dMisc = tableBytes + 24.0 * spots + 4.0 * tilesMax;
  // The GPU matrix build runs after the dose (whose buffers are then freed): its working
  // arrays here; its entries (6 B each) are counted on the GPU and checked before allocation.
  mSizes.inputVoxels = inVox;
  mSizes.fromCt = !r.spr;
  mSizes.rows = doseVox;
  mSizes.cols = spots;
  mSizes.tableValues = tableBytes / 4.0;  // IDD and sigma, in double
  const double dMatrixWork = r.params.computeDoseMatrix ? detail::doseMatrixWorkBytes(mSizes) : 0;
  const double device = std::max(dCt + dSpr + dDose + dBev + dMisc, dMatrixWork);
  // Host: the float output; the CPU backend adds SPR, a double accumulator and BEV arrays;
  // the matrix needs 8 bytes per entry while built and 6 in CSR.
  const double hCpu = (r.spr ? 0 : 4.0 * inVox) + 8.0 * doseVox + 16.0 * bevMax + 4.0 * tilesMax;
  const double hMatrix = r.params.computeDoseMatrix ? 14.0 * matrixEntries + 8.0 * doseVox : 0;
  const double host = 4.0 * doseVox + hCpu + hMatrix;
  s << "GPU: CT " << formatBytes(dCt) << ", SPR " << formatBytes(dSpr) << ", dose "
    << formatBytes(dDose) << ", BEV WEPL+dose " << formatBytes(dBev) << ", tables/spots/tiles "
    << formatBytes(dMisc) << "; host: output " << formatBytes(4.0 * doseVox) << ", CPU work "
    << formatBytes(hCpu);
  if (r.params.computeDoseMatrix)
    s << ", dose matrix ~" << formatBytes(hMatrix) << " (GPU build: working arrays "
      << formatBytes(dMatrixWork) << " + ~" << formatBytes(6.0 * matrixEntries) << " of entries)";
  e.matrixEntries = std::size_t(std::min(matrixEntries, 1.8e19));
  e.deviceBytes = std::size_t(std::min(device, 1.8e19));
  e.hostBytes = std::size_t(std::min(host, 1.8e19));
  e.breakdown = s.str();
  if (layoutsOut) *layoutsOut = std::move(layouts);
  return e;
}

std::shared_ptr<const std::vector<float>> makeSprLut(const CalibrationCurve& hlut) {
  // The last table is kept: re-planning converts the same CT through the same curve, and the
  // 65536 curve evaluations cost ~1 ms, a noticeable share of an interactive GPU dose. Shared,
  // not copied: the GPU cache then knows its table by the pointer (proton_workspace.cu).
  static std::mutex mutex;
  static std::vector<std::pair<double, double>> lastPoints;
  static std::shared_ptr<const std::vector<float>> lastLut;
  std::lock_guard<std::mutex> lock(mutex);
  if (lastLut && lastPoints == hlut.points()) return lastLut;
  auto lut = std::make_shared<std::vector<float>>(65536);
  for (int h = 0; h < 65536; ++h) (*lut)[std::size_t(h)] = float(hlut(double(h - 32768)));
  lastPoints = hlut.points();
  lastLut = std::move(lut);
  return lastLut;
}

Volume<float> resolveSpr(const ResolvedRequest& r) {
  const ProtonDoseRequest& q = *r.request;
  if (q.spr) return *q.spr;
  Volume<float> spr(q.ct->grid);
  PENUMBRA_REQUIRE(r.sprLut, Internal, "proton dose: a CT without its HU -> SPR table");
  const std::vector<float>& lut = *r.sprLut;
  const std::size_t n = spr.data.size();
  const std::size_t chunk = 1 << 20;
  parallelFor((n + chunk - 1) / chunk, r.threads, JobControl{}, [&](std::size_t c, int) {
    for (std::size_t v = c * chunk; v < std::min(n, (c + 1) * chunk); ++v)
      spr.data[v] = lut[std::size_t(int(q.ct->data[v]) + 32768)];
  });
  return spr;
}

}  // namespace detail

ProtonDoseResult computeProtonDose(const ProtonDoseRequest& req, const JobControl& job) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<BeamLayout> layouts;
  const WorkspaceEstimate est = detail::estimate(req, &layouts);  // validates
  ProtonDoseResult result;
  const BackendChoice choice = selectBackend(req.backend);
  if (!choice.message.empty()) result.messages.push_back(choice.message);
  if (choice.backend == Backend::Cuda && choice.device) {
    // The cache's own buffers are reused by this run: they count as free.
    const double free = double(choice.device->freeMemoryBytes) + detail::gpuCacheBytes();
    if (double(est.deviceBytes) > 0.95 * free)
      throw Error(ErrorCode::OutOfMemory,
                  "proton dose needs " + formatBytes(double(est.deviceBytes)) + " on the GPU but " +
                      formatBytes(free) + " are free (" + est.breakdown + ")",
                  __FILE__, __LINE__);
  }
  // The CUDA backend needs the host output only, plus the matrix's CSR (6 B per entry and the
  // row offsets) when it builds one; the CPU backend its working arrays too.
  const double doseVoxels = double(resolveDoseGrid(req).voxelCount());
  const double hostNeed =
      choice.backend == Backend::Cuda
          ? 4.0 * doseVoxels +
                (req.params.computeDoseMatrix && !req.params.doseMatrixOnDevice
                     ? 6.0 * double(est.matrixEntries) + 8.0 * doseVoxels
                     : 0)
          : double(est.hostBytes);
  const double ram = double(physicalMemoryBytes());
  if (ram > 0 && hostNeed > 0.9 * ram)
    throw Error(ErrorCode::OutOfMemory,
                "proton dose needs " + formatBytes(hostNeed) + " of host memory, more than 90 % of the " +
                    formatBytes(ram) + " installed (" + est.breakdown + ")",
                __FILE__, __LINE__);
  job.checkCancel();
  const double checkMs = msSince(start);

  detail::ResolvedRequest r;
  r.request = &req;
  r.doseGrid = resolveDoseGrid(req);
  r.threads = resolveThreads(req.params.cpuThreads);
  const auto machine = resolveMachine(req);
  std::vector<double> energies;
  for (const auto& b : req.beams)
    for (const auto& l : b.layers) energies.push_back(l.energyMeV);
  job.report(0.0, "proton dose: depth-dose and sigma tables");
  machine->prepare(energies, r.threads);
  job.checkCancel();
  // The beams' tile lists: built on the GPU by the CUDA dose backend (no host pass after a
  // geometry edit), on the host for the CPU backend and the dose matrix (cached; after a
  // geometry edit ~0.3 ms a beam for hn-2field, side by side, one thread a beam). Each beam's
  // first global spot is fixed beforehand.
  const TileLists lists = choice.backend == Backend::Cuda && !req.params.computeDoseMatrix
                              ? TileLists::OnDevice
                              : TileLists::OnHost;
  std::vector<std::size_t> firstSpots(req.beams.size(), 0);
  for (std::size_t bi = 1; bi < req.beams.size(); ++bi)
    firstSpots[bi] = firstSpots[bi - 1] + req.beams[bi - 1].spotCount();
  r.beams.resize(req.beams.size());
  if (lists == TileLists::OnDevice) {
    // Deferred (ResolvedRequest::prepareBeams): the CUDA backend starts the beams' WEPL traces
    // on the layouts first and prepares the beams while the GPU traces.
    for (std::size_t bi = 0; bi < req.beams.size(); ++bi) r.beams[bi].layout = layouts[bi];
    r.prepareBeams = [&req, &r, machine, firstSpots](std::vector<PreparedBeam>& beams) {
      for (std::size_t bi = 0; bi < req.beams.size(); ++bi)
        beams[bi] = detail::cachedPrepareBeam(req.beams[bi], r.doseGrid, machine,
                                              req.params.sampling, firstSpots[bi], nullptr,
                                              TileLists::OnDevice);
    };
  } else {
    parallelFor(req.beams.size(), int(req.beams.size()), job, [&](std::size_t bi, int) {
      r.beams[bi] = detail::cachedPrepareBeam(req.beams[bi], r.doseGrid, machine,
                                              req.params.sampling, firstSpots[bi], nullptr, lists);
    });
  }
  job.checkCancel();
  for (std::size_t bi = 0; bi < req.beams.size(); ++bi)
    if (r.beams[bi].layout.empty)
      result.messages.push_back("beam '" + req.beams[bi].name + "' misses the dose grid or has no spots");
  if (!req.spr) {
    r.sprLut = detail::makeSprLut(req.hlut.points().empty() ? detail::defaultHuToSprCurve()
                                                             : req.hlut);
  }
  // Where the host time of a call goes (an interactive GPU dose takes a few ms in all).
  result.profiles.push_back(hostStageProfile("host_check", "validate, estimate, backend, memory", checkMs));
  result.profiles.push_back(hostStageProfile(
      "host_prepare",
      lists == TileLists::OnDevice ? "tables, beams (tile lists on the GPU), HU->SPR table"
                                   : "tables, beams (tile lists), HU->SPR table",
      msSince(start) - checkMs));
  if (choice.backend == Backend::Cuda)
    detail::computeCuda(r, result, job);
  else
    detail::computeCpu(r, result, job);
  if (req.params.computeDoseMatrix) {
    job.checkCancel();
    if (choice.backend == Backend::Cuda && req.params.doseMatrixOnDevice) {
      result.deviceMatrix = detail::buildDoseMatrixCudaOnDevice(r, job, result.profiles);
    } else if (choice.backend == Backend::Cuda) {
      result.matrix = detail::buildDoseMatrixCuda(r, job, result.profiles);
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      const Volume<float> spr = detail::resolveSpr(r);
      result.matrix = detail::buildDoseMatrixCpu(r, spr, job);
      result.profiles.push_back(cpuProfile("dose_matrix_build", "cpu", msSince(t0), r.threads));
    }
  }
  result.elapsedMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace penumbra::proton
