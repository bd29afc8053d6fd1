// CUDA backend of the photon CCCS engine. Per run: the density (from the GPU cache, or uploaded
// from the request's own volume and clamped, or converted from the int16 CT through the HU ->
// RED table, on the GPU); per beam: the TERMA kernel (one thread per voxel) and the fixed-order
// sum of its block partials (TERMA energy, the index box of TERMA > 0), one small download of
// that box, host-side culling of every direction's lines against it, then the transport
// launches (all directions in one launch for the atomic deposit; for the atomic-free deposit as
// many directions per launch as their slot storage fits in the budget, each launch followed by
// its gather). The dose stays on the GPU until the end and then goes by DMA straight into the
// result's page-locked memory. Cancel is checked between launches. Device outputs are poisoned
// with NaN (0xFF bytes) first - TERMA always, the dose for the atomic-free deposit (whose
// gather writes every voxel) - so an unwritten voxel shows up in the tests instead of passing
// as a zero.
//
// Between runs (photon_workspace.cuh, photon_dose.hpp "GPU cache across calls"): the density
// with the key of its volume, every device buffer, and the next result's host memory
// (zero-filled and page-locked on a helper thread, started at the beginning of each run) stay in
// the cache, so a repeated run on the same patient uploads nothing, allocates nothing and
// touches no fresh host page.
//
// Memory: density, TERMA and dose (3 x 4 bytes per voxel), the open-field map, per-block
// partials, and for the atomic-free deposit the slot buffers (1-3 floats per voxel of each
// direction's shadow box, one per pattern segment of the voxel's slice; at most kMaxSlotBytes
// or half the free GPU memory per launch); computeCuda refuses, before allocating anything, a
// plan whose minimum (one direction per launch) does not fit.
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/cuda/device_attributes.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/host_upload.cuh"
#include "core/cuda/stream_event.cuh"
#include "core/device.hpp"
#include "photon/cuda/photon_cuda.cuh"
#include "photon/cuda/photon_workspace.cuh"
#include "photon/photon_backend.hpp"
#include "photon/terma_box.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::photon::detail {

namespace {

template <typename T>
using DeviceBuffer = penumbra::cuda::DeviceBuffer<T>;
namespace pc = penumbra::photon::cuda;

using penumbra::cuda::Event;
using penumbra::cuda::LaunchTimes;
using penumbra::cuda::launchProfile;
using penumbra::cuda::Stream;

/// Grows (never shrinks) a buffer to at least n elements.
template <typename T>
void ensure(DeviceBuffer<T>& b, std::size_t n) {
  if (b.size() < n) b.allocate(n);
}

#include "photon/cuda/direction_plan.cuh"
#include "photon/cuda/launch_setup.cuh"
#include "photon/cuda/run_profiles.cuh"

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}


#include "photon/cuda/density_upload.cuh"

}  // namespace

void computeCuda(const ResolvedRequest& r, PhotonDoseResult& result, const JobControl& job) {
  const auto tEntry = std::chrono::steady_clock::now();
  penumbra::cuda::requireCudaDevice();
  const PhotonDoseRequest& req = *r.request;
  const DdaVariant variant = req.params.variant;
  const bool atomicFree = req.params.deposit == DepositStrategy::AtomicFree;
  const Grid& g = r.grid;
  const std::size_t n = g.voxelCount();
  RunTimers T;  // events and traffic of the run (run_profiles.cuh)
  PENUMBRA_REQUIRE(
      n < std::size_t(INT_MAX) / 2, Unsupported,
      "photon dose (GPU): the dose grid has " + std::to_string(n) +
          " voxels; the CUDA backend indexes voxels with 32-bit integers (at most ~1e9)");
  const std::vector<double>& fluence = r.model->spectrum.fluence;
  PENUMBRA_REQUIRE(fluence.size() <= std::size_t(pc::kMaxSpectrum), Unsupported,
                   "photon dose (GPU): the beam model has " + std::to_string(fluence.size()) +
                       " energy bins; the CUDA backend takes at most " +
                       std::to_string(pc::kMaxSpectrum));
  const std::size_t nDir = r.cones.directions.size();
  const int termaBlocks = int((n + pc::kTermaBlock - 1) / pc::kTermaBlock);
  int brickCounts[3];
  pc::brickDims(g.dims.data(), brickCounts);
  const std::size_t nBricks =
      std::size_t(brickCounts[0]) * std::size_t(brickCounts[1]) * std::size_t(brickCounts[2]);
  int dev = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));

  // ---- the workspace: the cached one (or a new one that becomes the cache), or a private one
  // while another run holds the cache ------------------------------------------------------------
  GpuCacheSlot& slot = gpuCacheSlot();
  std::shared_ptr<Workspace> ws;
  std::uint64_t generation = 0;
  bool ownsCache = false;
  {
    const std::lock_guard<std::mutex> lock(slot.mutex);
    generation = slot.generation;
    if (!slot.inUse) {
      ownsCache = slot.inUse = true;
      ws = std::static_pointer_cast<Workspace>(std::move(slot.workspace));
      slot.workspace.reset();
      slot.deviceBytes = 0;
    }
  }
  // Gives the cache back on every way out (on an error without the workspace: freed below).
  struct CacheRelease {
    GpuCacheSlot& slot;
    bool owns;
    ~CacheRelease() {
      if (!owns) return;
      const std::lock_guard<std::mutex> lock(slot.mutex);
      slot.inUse = false;
    }
  } cacheRelease{slot, ownsCache};
  if (ws && ws->device != dev) ws.reset();  // another device's buffers: free them
  if (!ws) {
    ws = std::make_shared<Workspace>();
    ws->device = dev;
  }
  Workspace& W = *ws;
  const bool densityHit = densityKeyMatches(W.key, r);
  const bool sameGrid = doseGridIsInputGrid(req, g);
  const bool ctOnGpu = !densityHit && r.densityDeferred && sameGrid && !req.density;

  // ---- memory: check the minimum before allocating anything --------------------------------
  const double slotBudget = checkDeviceMemory(r, W.deviceBytes(), ctOnGpu, atomicFree, termaBlocks);

  // ---- the result's host memory: prepared during the previous run, or now on a helper thread
  // (its zero fill then overlaps the GPU work). The next run's is started now, so that it has
  // this whole run and any pause after it (~14 ms for 64 MiB on the H200 machine: zero fill
  // 10.5 ms with huge pages, page-locking 3.6 ms): back-to-back runs then find it ready too. ---
  std::future<HostOutput> output;
  if (W.nextOutput.valid() && W.nextOutputSize == n) {
    output = std::move(W.nextOutput);
  } else {
    W.nextOutput = {};  // another size: wait for it and free it
    output = std::async(std::launch::async, &HostOutput::make, n, dev, 0.0f);
  }
  W.nextOutputSize = 0;
  if (ownsCache) {
    W.nextOutput = std::async(std::launch::async, &HostOutput::make, n, dev, 0.0f);
    W.nextOutputSize = n;
  }

  Stream stream;
  const cudaStream_t s = stream.s;
  PENUMBRA_CUDA_CHECK(cudaEventRecord(T.tStart.e, s));
  const double setupMs = msSince(tEntry);

  ensure(W.terma, n);
  ensure(W.dose, n);
  ensure(W.partials, std::max<std::size_t>(termaBlocks, 1));
  ensure(W.stats, r.beams.size() * (nDir + 1));

  // ---- density: from the cache, or uploaded and converted on the GPU -------------------------
  DeviceBuffer<std::int16_t> dHu;  // CT in HU while it is converted (kept until the end: a
  DeviceBuffer<float> dLut;        // cudaFree here would wait for the upload)
  std::unique_ptr<HostUpload> upload;
  std::vector<float> hostDensity;  // the dose grid differs from the input's: resampled on the host
  const int densityBlocks = int((n + kDensityBlock - 1) / kDensityBlock);
  if (!densityHit) {
    W.key = DensityKey{};  // invalid until the new density is on its way
    ensure(W.density, n);
    T.tUpload.begin(s);
    if (ctOnGpu) {
      const std::vector<float> lut = huToRedTable(r.hlut);
      dLut.allocate(lut.size());
      dHu.allocate(n);
      PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(dLut.get(), lut.data(), lut.size() * sizeof(float),
                                          cudaMemcpyHostToDevice, s));
      upload =
          std::make_unique<HostUpload>(dHu.get(), req.ct->data.data(), n * sizeof(std::int16_t), s);
      huToRedKernel<<<densityBlocks, kDensityBlock, 0, s>>>(dHu.get(), dLut.get(), W.density.get(),
                                                            int(n));
      PENUMBRA_CUDA_CHECK_LAUNCH("huToRedKernel");
      T.uploadHow = "int16 CT, HU -> RED on the GPU";
    } else {
      const float* src = nullptr;
      if (!r.densityDeferred) {
        src = r.density.data();  // resolved on the host by the caller
      } else if (sameGrid) {
        src = req.density->data.data();  // the request's volume itself, clamped on the GPU
      } else {
        hostDensity = resolveDensity(req, g);  // resampled on the host
        src = hostDensity.data();
      }
      upload = std::make_unique<HostUpload>(W.density.get(), src, n * sizeof(float), s);
      clampDensityKernel<<<densityBlocks, kDensityBlock, 0, s>>>(W.density.get(), int(n));
      PENUMBRA_CUDA_CHECK_LAUNCH("clampDensityKernel");
      T.uploadHow = !r.densityDeferred ? "float RED from the host"
                  : sameGrid         ? "float RED, clamped on the GPU"
                                     : "float RED resampled on the host";
    }
    T.uploadHow += upload->pageLocked() ? ", page-locked memcpy" : ", pageable memcpy";
    T.tUpload.end(s);
    if (r.densityDeferred) W.key = densityKeyOf(r);
  }
  result.densityCached = densityHit;

  if (atomicFree)
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(W.dose.get(), 0xFF, n * sizeof(float), s));
  else
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(W.dose.get(), 0, n * sizeof(float), s));

  const dda::Geometry geo = makeDdaGeometry(g);
  std::vector<double> termaSum;
  std::vector<float> termaHost;
  if (req.params.keepTerma) termaSum.assign(n, 0.0);
  int statsUsed = 0;
  std::vector<int> transportStats;  // stats entries of the transport launches
  bool doseWritten = !atomicFree;   // the atomic path starts from zeros
  int directionLaunches = 0;
  double slotBytesMax = 0;

  for (std::size_t bi = 0; bi < r.beams.size(); ++bi) {
    job.checkCancel();
    const double f0 = double(bi) / double(r.beams.size()), fb = 1.0 / double(r.beams.size());
    const std::string stage = "photon dose (GPU): beam " + std::to_string(bi + 1) + " of " +
                              std::to_string(r.beams.size());
    job.report(f0, stage + ": TERMA");
    const PreparedBeam& beam = r.beams[bi];
    if (beam.openFraction.empty() || beam.mapNu <= 0 || beam.mapNv <= 0) continue;  // closed

    // ---- TERMA ---------------------------------------------------------------------------
    ensure(W.map, beam.openFraction.size());
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(W.map.get(), beam.openFraction.data(),
                                        beam.openFraction.size() * sizeof(float),
                                        cudaMemcpyHostToDevice, s));
    const pc::TermaConst tc = termaConstOf(r, beam, g, geo);
    pc::uploadTermaConst(tc, s);
    // The kernel runs over the box of voxels whose TERMA can be > 0 (terma_box.hpp: its own
    // quick-reject test, bounded on the host); every other voxel is exactly 0. (No voxel can:
    // one voxel, which the kernel finds to be 0.)
    pc::TermaBox box{};
    int boxLo[3], boxHi[3];
    if (!termaIndexBox(tc, boxLo, boxHi))
      for (int a = 0; a < 3; ++a) boxLo[a] = boxHi[a] = 0;
    box.voxels = 1;
    for (int a = 0; a < 3; ++a) {
      box.lo[a] = boxLo[a];
      box.dims[a] = boxHi[a] - boxLo[a] + 1;
      box.voxels *= box.dims[a];
    }
    const int boxBlocks = (box.voxels + pc::kTermaBlock - 1) / pc::kTermaBlock;
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(W.terma.get(), 0, n * sizeof(float), s));
    T.tTerma.begin(s);
    pc::launchTerma(variant,
                    {W.density.get(), W.map.get(), W.terma.get(), W.partials.get(), box, boxBlocks},
                    s, T.stTerma);
    T.tTerma.end(s);
    const int termaStat = statsUsed++;
    T.tReduce.begin(s);
    pc::launchReducePartials(W.partials.get(), boxBlocks, W.stats.get() + termaStat, s, T.stReduce);
    T.tReduce.end(s);
    // Which 8^3 bricks hold TERMA > 0: the transport skips segments in the others.
    ensure(W.bricks, nBricks);
    T.tBricks.begin(s);
    pc::launchTermaBricks(W.terma.get(), W.bricks.get(), g.dims.data(), s, T.stBricks);
    T.tBricks.end(s);

    // Host work that does not need the box overlaps the TERMA kernel.
    std::vector<DirectionPlan> plans(nDir);
    for (std::size_t d = 0; d < nDir; ++d) {
      plans[d].cone = int(d);
      plans[d].L = &beam.lattices[d];
      describePattern(plans[d], variant);
    }
    pc::Partial ts{};
    PENUMBRA_CUDA_CHECK(
        cudaMemcpyAsync(&ts, W.stats.get() + termaStat, sizeof ts, cudaMemcpyDeviceToHost, s));
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
    T.stTerma.bytes += 4.0 * double(n) + 4.0 * double(ts.count);  // TERMA out, density along rays
    if (req.params.keepTerma) {
      termaHost.resize(n);
      PENUMBRA_CUDA_CHECK(
          cudaMemcpy(termaHost.data(), W.terma.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
      for (std::size_t v = 0; v < n; ++v) termaSum[v] += double(termaHost[v]);
    }
    result.energy.termaEnergy += ts.sum[0];
    if (ts.hi[0] < ts.lo[0]) continue;  // no TERMA > 0 in the volume: nothing to transport
    job.checkCancel();

    // ---- transport launches ----------------------------------------------------------------
    job.report(f0 + 0.1 * fb, stage + ": collapsed cones");
    std::vector<int> order;
    for (std::size_t d = 0; d < nDir; ++d) {
      cullAgainstBox(plans[d], ts.lo, ts.hi);
      if (!plans[d].empty()) order.push_back(int(d));
    }
    std::size_t next = 0;
    while (next < order.size()) {
      const TransportBatch batch =
          nextTransportBatch(r, beam, plans, order, next, ts, atomicFree, slotBudget);
      const std::vector<pc::LineDirection>& lines = batch.lines;
      const std::vector<pc::GatherDirection>& gathers = batch.gathers;
      const std::vector<pc::SliceEntry>& sliceTable = batch.sliceTable;
      const int blocks = batch.blocks;
      const long long slotBase = batch.slotBase;
      ensure(W.partials, std::size_t(blocks));
      if (atomicFree) {
        ensure(W.slices, sliceTable.size());
        ensure(W.slots, std::size_t(slotBase));
        slotBytesMax = std::max(slotBytesMax, 4.0 * double(slotBase));
        // The zero fill: entries that no line writes (lines that never start, segments before
        // a line's first TERMA > 0) are summed as zeros by the gather.
        T.tFill.begin(s);
        PENUMBRA_CUDA_CHECK(
            cudaMemsetAsync(W.slots.get(), 0, std::size_t(slotBase) * sizeof(float), s));
        T.tFill.end(s);
        T.fillBytes += 4.0 * double(slotBase);
        PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(W.slices.get(), sliceTable.data(),
                                            sliceTable.size() * sizeof(pc::SliceEntry),
                                            cudaMemcpyHostToDevice, s));
        pc::uploadGatherDirections(gathers.data(), int(gathers.size()), s);
      }
      pc::uploadLineDirections(lines.data(), int(lines.size()), s);
      T.tTransport.begin(s);
      pc::launchTransport(variant, atomicFree,
                          {W.density.get(), W.terma.get(), W.dose.get(), W.slots.get(),
                           W.partials.get(), W.bricks.get(), int(lines.size()), blocks},
                          s, T.stTransport);
      T.tTransport.end(s);
      const int stat = statsUsed++;
      transportStats.push_back(stat);
      T.tReduce.begin(s);
      pc::launchReducePartials(W.partials.get(), blocks, W.stats.get() + stat, s, T.stReduce);
      T.tReduce.end(s);
      if (atomicFree) {
        pc::GatherLaunch ga{};
        ga.slots = W.slots.get();
        ga.slices = W.slices.get();
        ga.dose = W.dose.get();
        for (int a = 0; a < 3; ++a) ga.dims[a] = g.dims[a];
        ga.nVoxels = (long long)n;
        ga.directions = int(gathers.size());
        ga.first = !doseWritten;
        T.tGather.begin(s);
        pc::launchGather(ga, s, T.stGather);
        T.tGather.end(s);
        doseWritten = true;
        T.stGather.bytes += 8.0 * double(n);  // dose in and out (+ the slots, below)
      }
      directionLaunches += 1;
      job.checkCancel();
      job.report(f0 + fb * (0.1 + 0.9 * double(next) / double(order.size())),
                 stage + ": collapsed cones");
    }
  }
  // The input's pages were locked only for the upload, long finished by now (the TERMA box was
  // read back after it): unlock them while the GPU runs the transport.
  if (upload) upload->finish();
  if (!doseWritten) PENUMBRA_CUDA_CHECK(cudaMemsetAsync(W.dose.get(), 0, n * sizeof(float), s));

  // ---- the dose straight into the result's (page-locked) memory --------------------------------
  const auto tWait = std::chrono::steady_clock::now();
  HostOutput out = output.get();
  const double waitMs = msSince(tWait);
  T.tDownload.begin(s);
  PENUMBRA_CUDA_CHECK(
      cudaMemcpyAsync(out.data.data(), W.dose.get(), n * sizeof(float), cudaMemcpyDeviceToHost, s));
  T.tDownload.end(s);
  std::vector<pc::Partial> stats(static_cast<std::size_t>(statsUsed));
  if (statsUsed)
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(stats.data(), W.stats.get(),
                                        stats.size() * sizeof(pc::Partial), cudaMemcpyDeviceToHost,
                                        s));
  PENUMBRA_CUDA_CHECK(cudaEventRecord(T.tStop.e, s));
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
  // The result stays page-locked: the voxel pool keeps its block so for the next result.
  const bool outputLocked = out.locked;
  result.dose.grid = g;
  result.dose.data = std::move(out.data);
  const auto tDone = std::chrono::steady_clock::now();
  job.checkCancel();

  std::uint64_t segments = 0;
  for (int k : transportStats) {
    const pc::Partial& p = stats[std::size_t(k)];
    result.energy.released += p.sum[0];
    result.energy.deposited += p.sum[1];
    result.energy.escaped += p.sum[2];
    segments += p.count;
  }
  result.voxelDirectionSteps += segments;
  // Traffic model of the transport: density and TERMA read, dose (atomic) or slot written per
  // segment; the gather reads what the transport wrote.
  T.stTransport.bytes = 12.0 * double(segments);
  if (atomicFree) T.stGather.bytes += T.fillBytes;  // every slot entry is read once
  if (req.params.keepTerma) {
    result.terma = Volume<float>(g);
    for (std::size_t v = 0; v < n; ++v) result.terma.data[v] = float(termaSum[v]);
  }

  appendRunProfiles(result, T, toString(variant), atomicFree ? "atomic-free" : "atomic", n,
                    ctOnGpu, outputLocked);
  result.profiles.push_back(
      hostStageProfile("host_output", "wait for the result's memory", waitMs));
  if (atomicFree)
    result.messages.push_back("GPU atomic-free deposit: " + std::to_string(directionLaunches) +
                              " transport launch(es), slot storage up to " +
                              formatBytes(slotBytesMax) + " (budget " + formatBytes(slotBudget) +
                              ": at most " + formatBytes(kMaxSlotBytes) +
                              " or half the free GPU memory)");
  result.backend = Backend::Cuda;
  result.profiles.push_back(hostStageProfile(
      "host_setup", "workspace, memory check, result memory, stream (before the first GPU work)",
      setupMs));
  result.profiles.push_back(
      hostStageProfile("host_finish", "energy, segments, profiles (after the dose is in host memory)",
                       msSince(tDone)));

  // ---- back into the cache (with the next result's memory on its way), unless
  // releasePhotonGpuCache() was called meanwhile --------------------------------------------------
  if (ownsCache) {
    const std::lock_guard<std::mutex> lock(slot.mutex);
    if (slot.generation == generation) {
      slot.deviceBytes = W.deviceBytes();
      slot.workspace = ws;
      ws.reset();
    }
  }
  job.report(1.0, "photon dose: done");
}

}  // namespace penumbra::photon::detail
