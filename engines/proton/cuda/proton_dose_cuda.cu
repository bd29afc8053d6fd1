// CUDA backend of the proton dose engine: per beam three launches on one stream - BEV WEPL (ray
// tracing), Gaussian superposition, BEV -> patient resampling summed over beams; every beam's
// WEPL is enqueued first (it needs the beam's layout only), so that the host prepares the beams
// and stages their inputs while the GPU traces - with no host round trip between beams or
// layers: every intermediate (SPR, WEPL, BEV dose, patient dose) stays on the GPU, and only
// the final dose comes back, by DMA into page-locked memory that helper threads prepared.
// Cancel is checked before each beam is enqueued. Device outputs are poisoned with NaN (0xFF
// bytes) before they are computed, so an unwritten voxel shows up in the tests instead of
// passing as a zero.
//
// Between runs (proton_workspace.cuh, proton_dose.hpp "GPU cache across calls") the SPR, the
// tables, each beam's WEPL, BEV dose and superposition inputs, the dose buffer and the next
// results' host memory stay in the cache: a repeated run uploads nothing it has, traces no beam
// whose geometry is unchanged and superposes no beam whose inputs are unchanged. The resampling
// runs for every beam on every call (0.08 ms a beam for hn-2field on the H200), which keeps the
// sum over beams in the uncached order, so cached and uncached doses are the same bits.
//
// No CUDA graph: a run is 3 launches per beam plus a few copies (~10 launches for hn-2field,
// ~50 us of launch overhead against 2-6 ms of work), and the grid sizes change with every
// geometry edit, so a graph would need re-instantiating as often as it would be replayed. Not
// measured (no GPU where this was written); left out until a profile shows launch gaps.
#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/cpu_stage.hpp"
#include "core/cuda/device_attributes.cuh"
#include "core/device.hpp"
#include "proton/cuda/proton_workspace.cuh"
#include "proton/proton_gpu_cache.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::proton::detail {

namespace {

using penumbra::cuda::Event;
using penumbra::cuda::LaunchTimes;
using penumbra::cuda::launchProfile;

/// A run's workspace: the cached one (taken out of the slot: exclusive use), or a private one
/// while another run holds the cache. keep() puts the cached one back after a successful run
/// (unless releaseProtonGpuCache() was called meanwhile); on any other way out it is freed.
class WorkspaceLease {
 public:
  explicit WorkspaceLease(int device) : slot_(gpuCacheSlot()) {
    {
      const std::lock_guard<std::mutex> lock(slot_.mutex);
      generation_ = slot_.generation;
      if (!slot_.inUse) {
        owns_ = slot_.inUse = true;
        ws_ = std::static_pointer_cast<Workspace>(std::move(slot_.workspace));
        slot_.workspace.reset();
        slot_.deviceBytes = 0;
      }
    }
    try {
      if (ws_ && ws_->device != device) ws_.reset();  // another device's buffers: free them
      if (!ws_) {
        ws_ = std::make_shared<Workspace>();
        ws_->device = device;
      }
    } catch (...) {  // no destructor runs for a constructor that throws: give the slot back
      if (owns_) {
        const std::lock_guard<std::mutex> lock(slot_.mutex);
        slot_.inUse = false;
      }
      throw;
    }
  }
  ~WorkspaceLease() {
    if (!owns_) return;
    std::shared_ptr<Workspace> dropped;  // a failed run's workspace, freed outside the lock
    const std::lock_guard<std::mutex> lock(slot_.mutex);
    slot_.inUse = false;
    dropped = std::move(ws_);
  }
  WorkspaceLease(const WorkspaceLease&) = delete;
  WorkspaceLease& operator=(const WorkspaceLease&) = delete;

  Workspace& ws() { return *ws_; }
  bool ownsCache() const { return owns_; }
  void keep() {
    if (!owns_) return;
    const std::lock_guard<std::mutex> lock(slot_.mutex);
    if (slot_.generation == generation_) {
      slot_.deviceBytes = ws_->deviceBytes();
      slot_.workspace = std::move(ws_);
    }
    slot_.inUse = false;
    owns_ = false;
  }

 private:
  GpuCacheSlot& slot_;
  std::shared_ptr<Workspace> ws_;
  std::uint64_t generation_ = 0;
  bool owns_ = false;
};

/// Waits for the stream when an exception leaves the run, before the buffers and host memory
/// that the work on it uses are freed by the unwinding. Disarmed once the run has synchronised
/// (the workspace, and its stream, may then belong to the cache and another thread).
struct SyncOnExit {
  cudaStream_t s;
  ~SyncOnExit() {
    if (s) cudaStreamSynchronize(s);
  }
};

/// The host memory of this run's result: made earlier (by a previous run of the cache), or now
/// on a helper thread (its zero fill then overlaps the GPU work). The cache's owner also starts
/// the next results' memory, so that back-to-back runs find it ready.
std::future<HostOutput> takeOutput(Workspace& W, std::size_t n, int device, bool ownsCache) {
  std::future<HostOutput> out;
  if (W.nextOutputSize == n && !W.nextOutputs.empty()) {
    out = std::move(W.nextOutputs.front());
    W.nextOutputs.pop_front();
  } else {
    W.nextOutputs.clear();  // another size: waits for them and frees them
    out = std::async(std::launch::async, &HostOutput::make, n, device, 0.0f);
  }
  W.nextOutputSize = n;
  while (ownsCache && W.nextOutputs.size() < outputsAhead(n))
    W.nextOutputs.push_back(std::async(std::launch::async, &HostOutput::make, n, device, 0.0f));
  return out;
}


}  // namespace

void computeCuda(ResolvedRequest& r, ProtonDoseResult& result, const JobControl& job) {
  // The caller (computeProtonDose) chose this backend through selectBackend(), which checked
  // for a usable device; here only the cheap count, for direct callers.
  penumbra::cuda::requireCudaDevice();
  const ProtonDoseRequest& req = *r.request;
  int dev = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));
  WorkspaceLease lease(dev);
  Workspace& W = lease.ws();
  const cudaStream_t s = W.stream.s;
  std::vector<std::unique_ptr<BeamSlot>> unusedSlots;  // freed after the final synchronisation
  SprLoad spr;
  HostOutput out;
  SyncOnExit sync{s};  // declared last: runs first on unwinding

  const Grid& dg = r.doseGrid;
  const std::size_t nDose = dg.voxelCount();
  std::future<HostOutput> output = takeOutput(W, nDose, dev, lease.ownsCache());
  Event tStart, tStop;
  PENUMBRA_CUDA_CHECK(cudaEventRecord(tStart.e, s));

  // ---- SPR: from the cache, or uploaded (a CT converted on the GPU) ------------------------
  const bool sprHit = sprKeyMatches(W.sprKey, r);
  if (!sprHit) loadSpr(W, r, s, spr);
  const Grid& inGrid = req.spr ? req.spr->grid : req.ct->grid;
  const dda::Geometry geo = makeDdaGeometry(inGrid);

  // ---- slots, memory ---------------------------------------------------------------------------
  const auto tInputs = std::chrono::steady_clock::now();
  double inputBytes = 0;
  std::size_t freeBytes = 0, totalBytes = 0;
  PENUMBRA_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  // Slots of their own for every beam when they fit with room to spare (the buffers this
  // workspace holds are reused, so they count as free); else one shared slot, as computeProton-
  // Dose's estimate assumes (the BEV arrays of the largest beam), and no reuse across calls.
  // The tables count as held so far: a new energy's (~25 KB) fits in the fifth kept free.
  const double available = double(freeBytes) + double(W.deviceBytes());
  const double baseBytes = 4.0 * double(inGrid.voxelCount() + nDose) +
                           4.0 * double(W.tables.idd.size() + W.tables.sigma.size());
  const bool perBeam =
      perBeamBuffersAllowed() && baseBytes + perBeamSlotBytes(r) <= 0.8 * available;
  const std::vector<BeamSlot*> slotOf = assignSlots(W, r, req.variant, perBeam, unusedSlots);
  ensure(W.dDose, nDose);
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(W.dDose.get(), 0xFF, nDose * sizeof(float), s));
  double inputsMs = msSince(tInputs);

  int dims[3] = {dg.dims[0], dg.dims[1], dg.dims[2]};
  double origin[3] = {dg.origin.x, dg.origin.y, dg.origin.z};
  double axes[3][3];
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 3; ++c) axes[a][c] = dg.direction.m[a][c] * dg.spacing[c];

  // ---- WEPL: every beam's first, where each has a slot ----------------------------------------
  // A trace needs the beam's layout only, so with a deferred preparation (r.prepareBeams: an
  // isocentre drag) the GPU traces while the host prepares the beams and stages their inputs.
  cuda::KernelStats stWepl, stSuper, stResample;
  LaunchTimes tWepl, tSuper, tResample;
  std::vector<char> weplHit(r.beams.size(), 0);
  const auto traceWepl = [&](std::size_t bi) {
    const BeamLayout& L = r.beams[bi].layout;
    BeamSlot& S = *slotOf[bi];
    const WeplKey key{L.bev, req.variant, W.sprGeneration, true};
    weplHit[bi] = sameWepl(S.wepl, key);
    if (weplHit[bi]) {
      ++result.weplCachedBeams;
      return;
    }
    S.wepl = {};
    S.bevValid = false;
    ensure(S.dWepl, L.bevSamples());
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(S.dWepl.get(), 0xFF, L.bevSamples() * sizeof(float), s));
    tWepl.begin(s);
    cuda::launchBevWepl(req.variant, geo, W.dSpr.get(), L.bev, S.dWepl.get(), s, stWepl);
    tWepl.end(s);
    S.wepl = key;
  };
  if (perBeam)
    for (std::size_t bi = 0; bi < r.beams.size(); ++bi)
      if (!r.beams[bi].layout.empty) traceWepl(bi);
  double deferredMs = -1;
  if (r.prepareBeams) {
    const auto t = std::chrono::steady_clock::now();
    r.prepareBeams(r.beams);
    r.prepareBeams = nullptr;
    deferredMs = msSince(t);
  }
  job.checkCancel();
  const auto tTables = std::chrono::steady_clock::now();
  const std::vector<std::vector<cuda::DevLayer>> layers = stageTables(W.tables, r, s, &inputBytes);
  inputsMs += msSince(tTables);

  // ---- per beam: inputs, (WEPL,) superposition, resampling -------------------------------------
  TileListBuilds tileLists;
  bool written = false;
  const double cutoff = req.params.sampling.cutoffSigmas;
  for (std::size_t bi = 0; bi < r.beams.size(); ++bi) {
    job.checkCancel();
    job.report(double(bi) / double(r.beams.size()), "proton dose (GPU): beam " + std::to_string(bi + 1));
    const PreparedBeam& b = r.beams[bi];
    if (b.layout.empty) continue;
    BeamSlot& S = *slotOf[bi];
    if (!perBeam) {
      S.invalidate();  // the shared slot holds the previous beam
      traceWepl(bi);
    }
    const pb::BevGeometry& g = b.layout.bev;
    const std::size_t nBev = b.layout.bevSamples();
    const auto t0 = std::chrono::steady_clock::now();
    const bool inputsSame =
        stageInputs(S, b, layers[bi], W.tables.generation, cutoff, s, &inputBytes, tileLists);
    inputsMs += msSince(t0);

    if (weplHit[bi] && inputsSame && S.bevValid) {
      ++result.bevDoseCachedBeams;
    } else {
      S.bevValid = false;
      ensure(S.dBev, nBev);
      PENUMBRA_CUDA_CHECK(cudaMemsetAsync(S.dBev.get(), 0xFF, nBev * sizeof(float), s));
      cuda::SuperpositionArgs A{};
      A.wepl = S.dWepl.get();
      A.bevDose = S.dBev.get();
      A.tableIdd = W.tables.dIdd.get();
      A.tableSigma = W.tables.dSigma.get();
      A.layers = S.dLayers.get();
      A.nLayers = int(b.layers.size());
      A.spots = S.dSpots.get();
      A.tileLayerBegin = S.dTileBegin.get();
      A.tileSpots = S.dTileSpots.get();
      A.tilesA = b.layout.tilesA;
      A.nA = g.nA; A.nB = g.nB; A.nD = g.nD;
      A.a0 = float(g.a0); A.b0 = float(g.b0); A.da = float(g.da); A.db = float(g.db);
      A.d0 = float(g.d0); A.dd = float(g.dd); A.invSad = float(1.0 / g.sad);
      A.cut2 = float(cutoff * cutoff);
      A.normK = float(gaussianNormalisation(cutoff));
      tSuper.begin(s);
      cuda::launchSuperposition(A, s, stSuper);
      tSuper.end(s);
      S.bevValid = true;
    }

    tResample.begin(s);
    cuda::launchBevToPatient(g, S.dBev.get(), dims, origin, axes, W.dDose.get(), written, s, stResample);
    tResample.end(s);
    written = true;
  }
  if (!written) PENUMBRA_CUDA_CHECK(cudaMemsetAsync(W.dDose.get(), 0, nDose * sizeof(float), s));
  // The caller's CT pages were locked only for the upload, long finished by now: unlock them
  // while the GPU works.
  if (spr.upload) spr.upload->finish();

  // ---- the dose straight into the result's (page-locked) memory ------------------------------
  const auto tWait = std::chrono::steady_clock::now();
  out = output.get();
  const double waitMs = msSince(tWait);
  LaunchTimes tDownload;
  tDownload.begin(s);
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(out.data.data(), W.dDose.get(), nDose * sizeof(float),
                                      cudaMemcpyDeviceToHost, s));
  tDownload.end(s);
  PENUMBRA_CUDA_CHECK(cudaEventRecord(tStop.e, s));
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
  // The result stays page-locked: the voxel pool keeps its block so for the next result.
  const bool outputLocked = out.locked;
  result.dose.grid = dg;
  result.dose.data = std::move(out.data);
  sync.s = nullptr;
  job.checkCancel();

  // ---- profiles ------------------------------------------------------------------------------
  result.sprCached = sprHit;
  result.device = penumbra::cuda::currentDeviceName();
  const std::string& device = result.device;
  if (spr.tUpload.launches()) {
    cuda::KernelStats copy;
    copy.bytes = spr.bytes;
    result.profiles.push_back(launchProfile("spr_upload", spr.how, copy, spr.tUpload.totalMs(), 1, device));
  }
  if (spr.tConvert.launches()) {
    const std::size_t nIn = inGrid.voxelCount();
    cuda::KernelStats st;
    st.grid = int(std::min<std::size_t>((nIn + 255) / 256, 65536));
    st.block = 256;
    st.bytes = 6.0 * double(nIn);
    result.profiles.push_back(launchProfile("hu_to_spr", "lut", st, spr.tConvert.totalMs(), 1, device));
  }
  if (tileLists.times.launches())
    result.profiles.push_back(launchProfile("tile_lists", "count-scan-fill", tileLists.stats,
                                            tileLists.times.totalMs(),
                                            tileLists.times.launches(), device));
  if (tWepl.launches())
    result.profiles.push_back(launchProfile("bev_wepl_dda", toString(req.variant), stWepl,
                                            tWepl.totalMs(), tWepl.launches(), device));
  if (tSuper.launches())
    result.profiles.push_back(launchProfile("gaussian_superposition", "tile-gather", stSuper,
                                            tSuper.totalMs(), tSuper.launches(), device));
  if (tResample.launches())
    result.profiles.push_back(launchProfile("bev_to_patient_trilinear", "sum-beams", stResample,
                                            tResample.totalMs(), tResample.launches(), device));
  {
    cuda::KernelStats copy;
    copy.bytes = 4.0 * double(nDose);
    result.profiles.push_back(launchProfile(
        "dose_download",
        outputLocked ? "DMA into the result (page-locked)" : "pageable memcpy into the result", copy,
        tDownload.totalMs(), 1, device));
    float ms = 0;
    PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&ms, tStart.e, tStop.e));
    cuda::KernelStats none;
    result.profiles.push_back(launchProfile(
        "proton_device_total", std::string(sprHit ? "warm" : "cold") + ", first copy to download end",
        none, double(ms), 1, device));
  }
  result.profiles.push_back(hostStageProfile(
      "host_gpu_inputs",
      "tables, spots, tile lists staged; " + formatBytes(inputBytes) + " uploaded", inputsMs));
  result.profiles.push_back(
      hostStageProfile("host_output", "wait for the result's memory", waitMs));
  if (deferredMs >= 0)
    result.profiles.push_back(hostStageProfile(
        "host_prepare_beams", "beams prepared while the GPU traces their WEPL", deferredMs));
  if (!perBeam)
    result.messages.push_back(
        "GPU memory is short: the beams shared one set of BEV buffers, and nothing of them is "
        "kept for the next dose");
  result.backend = Backend::Cuda;
  lease.keep();
  job.report(1.0, "proton dose: done");
}

}  // namespace penumbra::proton::detail
