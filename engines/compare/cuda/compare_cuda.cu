// CUDA backend of the dose comparison: the doses stay on the GPU between calls (a new
// criterion on the same doses uploads nothing); classification, the gamma search
// (gamma_kernels.cuh) and the statistics (compare_stats_kernel.cuh) are enqueued at once, and
// the two result volumes download by DMA into host memory prepared (touched and page-locked) on
// helper threads: the difference while the search runs, the gamma slab by slab as the search
// finishes each slab (only the last slab's download follows the search), and of each slab only
// the boxes that hold a difference other than +0 and the listed points (the host memory holds
// +0 and NaN elsewhere, as the GPU does).
//
// Tried and dropped (H200, 2026-11-26): downloading through a page-locked staging buffer in
// chunks with host threads copying out of it, to spare the page-locking of each result: the
// host copies 64 MB too slowly (4 threads did not finish the difference during a 3.3 ms
// search) and the warm call stayed at 11.3-12.3 ms.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <vector>

#include "compare/compare_internal.hpp"
#include "compare/cuda/compare_stats_kernel.cuh"
#include "compare/cuda/gamma_kernels.cuh"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_attributes.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/host_output.cuh"
#include "core/cuda/launch_profile.cuh"
#include "core/cuda/pinned_buffer.cuh"
#include "core/cuda/stream_event.cuh"

namespace penumbra::compare::detail {

using namespace gpu;

namespace {

/// Identity of a dose on the GPU: the volume's owner, data, size and grid. Doses reach the
/// engine as shared_ptr<const Volume>, which nobody may change while they are shared (the GUI's
/// dose sets are immutable), so an identical key means identical voxels.
struct VolumeKey {
  std::weak_ptr<const void> owner;
  const void* data = nullptr;
  std::size_t voxels = 0;
  Grid grid;
  bool valid = false;

  bool matches(const std::shared_ptr<const Volume<float>>& v) const {
    if (!valid || owner.expired() || owner.lock() != std::shared_ptr<const void>(v)) return false;
    if (data != v->data.data() || voxels != v->data.size() || grid.dims != v->grid.dims)
      return false;
    for (int i = 0; i < 3; ++i) {
      if (grid.spacing[i] != v->grid.spacing[i] || grid.origin[i] != v->grid.origin[i])
        return false;
      for (int j = 0; j < 3; ++j)
        if (grid.direction.m[i][j] != v->grid.direction.m[i][j]) return false;
    }
    return true;
  }
  void set(const std::shared_ptr<const Volume<float>>& v) {
    owner = v;
    data = v->data.data();
    voxels = v->data.size();
    grid = v->grid;
    valid = true;
  }
};

/// What the backend keeps between calls (releaseCompareGpuCache() drops it): both doses with
/// their keys (a new criterion on the same doses uploads nothing), the streams, the output and
/// list buffers (grown, never shrunk) and the host memory of the next result's two volumes,
/// made on helper threads.
struct Workspace {
  int device = -1;
  VolumeKey refKey, evalKey;
  penumbra::cuda::DeviceBuffer<float> ref, eval, gamma, diff;
  penumbra::cuda::DeviceBuffer<std::uint8_t> mask;
  penumbra::cuda::DeviceBuffer<unsigned> list, longList;
  penumbra::cuda::DeviceBuffer<unsigned long long> counters, histogram;
  penumbra::cuda::DeviceBuffer<PointSums> runs;
  penumbra::cuda::PinnedBuffer<unsigned char> small;  ///< sums, histogram, counters
  penumbra::cuda::PinnedBuffer<unsigned long long> ranges;  ///< each slab's two boxes (kBoxes)
  std::unique_ptr<penumbra::cuda::Stream> compute, compute2, copy;
  /// Timing events and the call's other events, kept for the next call (reset at its start).
  struct Timers {
    penumbra::cuda::LaunchTimes upload, classify, kernel, longKernel, stats, download;
    void reset() {
      for (penumbra::cuda::LaunchTimes* t : {&upload, &classify, &kernel, &longKernel, &stats,
                                             &download})
        t->reset();
    }
  } timers;
  penumbra::cuda::EventPool events;
  std::future<penumbra::cuda::HostOutput> nextGamma, nextDiff;
  std::size_t nextSize = 0;
  /// The counters and the histogram were zeroed at the end of the last call (queued behind
  /// their download), so that the next call's first GPU work is its classification.
  bool countersZeroed = false;
  ~Workspace() {
    if (nextGamma.valid()) nextGamma.wait();
    if (nextDiff.valid()) nextDiff.wait();
  }
};

struct Slot {
  std::mutex mutex;
  std::unique_ptr<Workspace> workspace;
  std::uint64_t generation = 0;
};

Slot& slot() {
  static Slot s;
  return s;
}

/// Takes the cached workspace for this run (or a fresh one when another run holds it or the
/// device changed) and puts it back afterwards unless the cache was released meanwhile or the
/// run failed (a failed run may leave buffers in any state).
class WorkspaceLease {
public:
  explicit WorkspaceLease(int device) {
    const std::lock_guard<std::mutex> lock(slot().mutex);
    generation_ = slot().generation;
    ws_ = std::move(slot().workspace);
    if (!ws_ || ws_->device != device) {
      ws_ = std::make_unique<Workspace>();
      ws_->device = device;
    }
  }
  ~WorkspaceLease() {
    if (!done_) return;
    const std::lock_guard<std::mutex> lock(slot().mutex);
    if (slot().generation == generation_ && !slot().workspace) slot().workspace = std::move(ws_);
  }
  Workspace& operator*() { return *ws_; }
  void succeeded() { done_ = true; }

private:
  std::unique_ptr<Workspace> ws_;
  std::uint64_t generation_ = 0;
  bool done_ = false;
};

template <typename T>
void grow(penumbra::cuda::DeviceBuffer<T>& b, std::size_t n) {
  if (b.size() < n) b.allocate(n);
}

/// Calls f(buffer, elements) for each large buffer of a run of r (doses, results, lists, mask;
/// the small ones are left out): runCompareCuda grows them and gpuCacheUse counts them from this
/// one list, so that the fit check cannot miss a buffer the run allocates.
template <typename Ws, typename F>
void forEachLargeBuffer(Ws& W, const CompareRequest& r, F&& f) {
  const std::size_t nRef = r.reference ? r.reference->data.size() : 0;
  const std::size_t nEval = r.evaluated ? r.evaluated->data.size() : 0;
  const bool longList = r.computeGamma && r.cudaTuning.stepBudget > 0;
  f(W.ref, nRef);
  f(W.eval, nEval);
  f(W.gamma, nRef);
  f(W.diff, nRef);
  f(W.list, nRef);
  f(W.longList, longList ? nRef : std::size_t(0));
  f(W.mask, r.mask ? nRef : std::size_t(0));
}

/// One profile row per launch of `t`: "timeline <what>", its start after `origin` in the
/// variant and its length as the time (CudaGammaTuning::timeline).
void addTimeline(std::vector<KernelProfile>& out, const std::string& what,
                 const penumbra::cuda::LaunchTimes& t, cudaEvent_t origin,
                 const std::string& device) {
  for (std::size_t i = 0; i < std::size_t(t.launches()); ++i) {
    float at = 0, ms = 0;
    PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&at, origin, t.start[i]->e));
    PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&ms, t.start[i]->e, t.stop[i]->e));
    char when[48];
    std::snprintf(when, sizeof when, "from %.3f ms", double(at));
    out.push_back(penumbra::cuda::launchProfile("timeline " + what + " " + std::to_string(i),
                                                when, penumbra::cuda::KernelStats{}, ms, 1,
                                                device));
  }
}

/// Blocks of the search kernel that fit on the GPU at once, at most `enough`.
template <typename Kernel>
int residentBlocks(Kernel kernel, long long enough, int block = kBlock,
                   std::size_t sharedBytes = 0) {
  const penumbra::cuda::Residency r =
      penumbra::cuda::kernelResidency((const void*)kernel, block, sharedBytes);
  return int(std::max<long long>(1, std::min<long long>((long long)r.blocksPerSm * r.sms, enough)));
}

}  // namespace

PointSummary runCompareCuda(const CompareRequest& r, const PointSetup<double>& setup,
                            CompareResult& out, const JobControl& job) {
  using penumbra::cuda::HostOutput;
  penumbra::cuda::requireCudaDevice();
  int device = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&device));
  out.device = penumbra::cuda::currentDeviceName();
  const std::size_t nRef = r.reference->data.size();
  const std::size_t nEval = r.evaluated->data.size();
  // The list of points holds 32-bit indices (4 G points: a 1600^3 grid).
  if (nRef >= (std::size_t(1) << 32))
    throw Error(ErrorCode::InvalidArgument,
                "dose comparison: the CUDA backend takes at most 2^32 reference points; use the "
                "CPU backend or a coarser grid");
  // Host stages of the call (the profiling panel's "where a warm call goes").
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  auto msSince = [](Clock::time_point a) {
    return std::chrono::duration<double, std::milli>(Clock::now() - a).count();
  };
  double waitMemoryMs = 0;
  WorkspaceLease lease(device);
  Workspace& W = *lease;
  if (!W.compute) W.compute = std::make_unique<penumbra::cuda::Stream>();
  if (!W.compute2) W.compute2 = std::make_unique<penumbra::cuda::Stream>();
  if (!W.copy) W.copy = std::make_unique<penumbra::cuda::Stream>();
  const cudaStream_t stream = W.compute->s;

  W.timers.reset();
  W.events.reset();
  penumbra::cuda::LaunchTimes &upload = W.timers.upload, &classify = W.timers.classify,
                              &kernel = W.timers.kernel, &longKernel = W.timers.longKernel,
                              &stats = W.timers.stats, &download = W.timers.download;
  upload.begin(stream);
  const double firstQueuedMs = msSince(start);
  // A buffer that holds a cached dose is already large enough for it: growing leaves it alone.
  forEachLargeBuffer(W, r, [](auto& b, std::size_t n) { grow(b, n); });
  double uploaded = 0;
  if (!W.refKey.matches(r.reference)) {
    W.refKey.valid = false;
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(W.ref.get(), r.reference->data.data(), nRef * 4,
                                        cudaMemcpyHostToDevice, stream));
    uploaded += double(nRef) * 4;
  }
  if (!W.evalKey.matches(r.evaluated)) {
    W.evalKey.valid = false;
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(W.eval.get(), r.evaluated->data.data(), nEval * 4,
                                        cudaMemcpyHostToDevice, stream));
    uploaded += double(nEval) * 4;
  }
  if (r.mask) {
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(W.mask.get(), r.mask->data.data(), nRef,
                                        cudaMemcpyHostToDevice, stream));
    uploaded += double(nRef);
  }
  const long long statsRuns = ((long long)nRef + kStatsRun - 1) / kStatsRun;
  const CudaGammaTuning& tuning = r.cudaTuning;
  const bool handOn = tuning.stepBudget > 0 && setup.gamma;
  grow(W.counters, std::size_t(kCounters));
  grow(W.histogram, std::size_t(kGammaHistogramBins));
  grow(W.runs, std::size_t(statsRuns));
  auto zeroCounters = [&] {
    PENUMBRA_CUDA_CHECK(
        cudaMemsetAsync(W.counters.get(), 0, kCounters * sizeof(unsigned long long), stream));
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(W.histogram.get(), 0,
                                        kGammaHistogramBins * sizeof(unsigned long long), stream));
  };
  // On a warm call the last call zeroed them: each API call before the classification delays
  // it (6 of them took the host 73 us after a 50 ms pause, one H200 machine, 2026-11-27).
  if (!W.countersZeroed) zeroCounters();
  W.countersZeroed = false;
  upload.end(stream);

  PointSetup<float> s = toFloat(setup);
  s.field.dose = W.eval.get();
  const Grid& g = r.reference->grid;
  const long long slice = (long long)g.dims[0] * g.dims[1];
  // Slabs of slices, all classified, then each searched (persistent blocks over its part of the
  // list), then downloaded while the next slabs are searched: the gamma volume's download
  // (1.2 ms for 64 MiB) hides behind the search except for the last slab's. About 2^23 points
  // a slab, at most kMaxSlabs. Successive slabs' searches run on two streams, so that a slab's
  // blocks start while the previous slab's last points finish (no idle GPU between them).
  // Slab size on box4-256 (2 %/2 mm, one H100, 2026-11-26, with the lane groups), search span:
  // 2^21 points (8 slabs) 2.44 ms and 2^22 (4) 2.36 ms with half the blocks a launch, 2^23 (2)
  // 1.94 ms with half and 1.85 ms with all, one slab 2.0 ms but the whole call 1.2 ms longer (no
  // download hidden). Before the lane groups 2^22 was best (the fifth session). Again on one
  // H200 (2026-11-27, statistics 0.07 ms): 2^22 2.20-2.25 ms and 2^21 2.20-2.40 ms whole call
  // (50 ms apart) against 2.15-2.17 ms for 2^23 (CudaGammaTuning::slabPointsLog2).
  const long long slabPoints = 1ll << tuning.slabPointsLog2;
  const int slabSlices = int(std::max<long long>(
      {1, slabPoints / std::max(1ll, slice), ((long long)g.dims[2] + kMaxSlabs - 1) / kMaxSlabs}));
  const int slabs = (g.dims[2] + slabSlices - 1) / slabSlices;
  penumbra::cuda::KernelStats classifyStats, searchStats, statsStats;
  classifyStats.fn = (const void*)classifyKernel;
  classifyStats.block = kBlock;
  std::vector<cudaEvent_t> searchedSlab;
  double classifyQueuedMs = 0;
  for (int b = 0; b < slabs; ++b) {
    job.checkCancel();
    const int k0 = b * slabSlices, k1 = std::min(g.dims[2], k0 + slabSlices);
    const long long points = (long long)(k1 - k0) * slice;
    const int blocks = int((points + kBlock * kClassifyPoints - 1) / (kBlock * kClassifyPoints));
    classifyStats.grid = blocks;
    classify.begin(stream);
    classifyKernel<<<blocks, kBlock, 0, stream>>>(s, W.ref.get(), r.mask ? W.mask.get() : nullptr,
                                                  W.gamma.get(), W.diff.get(), W.list.get(), k0,
                                                  k1, b, W.counters.get());
    PENUMBRA_CUDA_CHECK_LAUNCH("classifyKernel");
    classify.end(stream);
    if (b == 0) classifyQueuedMs = msSince(start);
  }
  // Every slab is classified before any is searched. With each slab's search behind its own
  // slab's classification, the later slabs' classifications waited for SM slots behind a
  // persistent search, and their profile read 1.2-1.4 ms where the kernels take 0.22 ms alone
  // (box4-256, H100, 2026-11-26); the whole call took the same time either way (4.8-5.8 ms).
  const cudaEvent_t classified = W.events.next();
  PENUMBRA_CUDA_CHECK(cudaEventRecord(classified, stream));

  // The result's host memory: ready from the previous run of this size, else made now on helper
  // threads while the GPU works; then the next run's, off the critical path. The difference's is
  // +0 and the gamma's NaN: only each slab's boxes are downloaded (see the downloads). The next
  // run's helpers start once this run's kernels are queued, because starting a thread costs
  // 50-80 us on the GPU machine: behind the classification (0.12 ms on box4-256 since the
  // same-grid path) they held back the search's launch by 0.06 ms (one H200, 2026-11-27,
  // CudaGammaTuning::timeline). Persistent helper threads (a pool fed by a lock and
  // a notify) made back-to-back calls wait for their memory more often (back to back 2.43-6.02
  // ms against 2.41-3.08 ms; 50 ms apart alike, 2.31-2.50 ms; box4-256 2 %/2 mm, one H100,
  // 2026-11-26, three runs each alternated).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto make = [nRef, device](float fill) {
    return std::async(std::launch::async, &HostOutput::make, nRef, device, fill);
  };
  std::future<HostOutput> gammaOut, diffOut;
  if (W.nextSize == nRef && W.nextGamma.valid() && W.nextDiff.valid()) {
    gammaOut = std::move(W.nextGamma);
    diffOut = std::move(W.nextDiff);
  } else {
    gammaOut = make(nan);
    diffOut = make(0.0f);
  }
  // Each slab's two boxes (gamma_kernels.cuh, BoxSet) once every slab is classified: a few
  // hundred bytes, read on the copy stream while the search starts.
  W.ranges.reserve(std::size_t(kMaxSlabs) * kBoxEntries);
  const cudaEvent_t rangesRead = W.events.next();
  PENUMBRA_CUDA_CHECK(cudaStreamWaitEvent(W.copy->s, classified, 0));
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(W.ranges.get(), W.counters.get() + kBoxes,
                                      std::size_t(slabs) * kBoxEntries * sizeof(unsigned long long),
                                      cudaMemcpyDeviceToHost, W.copy->s));
  PENUMBRA_CUDA_CHECK(cudaEventRecord(rangesRead, W.copy->s));

  // The search: persistent blocks, as many as fit on the GPU at once, over ranges of 2^23 list
  // entries a launch (a slab's whole list unless slabs are larger), enqueued straight behind the
  // classification without waiting for the counts (each launch reads its slab's list range from
  // device memory, and one past it returns at once): the host waits for nothing until the
  // result is down. From the second launch on the host records an event after each and waits
  // for the one before, to report progress and honour a cancel: the GPU keeps one or two
  // launches queued. (It used to read a counter there through a pageable copy, which waits for
  // the GPU and, with a download queued on the copy engine, for that download too.)
  // Until 2026-11-27 a launch took 2^21 entries: box4-256's slabs of 2^23 points had 4 launches
  // each, 3 of them empty, and an empty launch still waits for SM room behind the other
  // stream's persistent blocks. The timeline showed slab 0's lane groups held back 0.33 ms that
  // way, and slab 1's 0.19 ms (one H200, CudaGammaTuning::timeline).
  // Refill when 16 lanes are idle. First measured at 8: 3.54 / 4.24 ms (2 %/2 mm, 1 %/1 mm on
  // box4-256, H100 2026-11-26) against 3.72 / 4.68 ms for every lane at once, 4 and 16 alike.
  // With the boxes passed over inside a step (shorter points, more refills) 16 is ahead: search
  // 1.52-1.53 / 1.96 ms against 1.57 / 2.02 ms at 8, 1.61-1.62 / 2.10 ms at 4, 1.52-1.53 /
  // 1.96-1.97 ms at 24 and 1.54 / 1.99-2.00 ms at 32 (one H200, 2026-11-27, two runs each).
  // (Also measured, within the noise of these: at most 2, 4, 8 or 16 cell positions scanned a
  // step (16 kept), and 64 registers for 8 blocks an SM: 3.6-4.2 ms.)
  const auto searchFn = searchKernel<16>;
  searchStats.fn = (const void*)searchFn;
  searchStats.block = kBlock;
  const unsigned long long perLaunch = 1ull << 23;
  const int blocks = residentBlocks(
      searchFn,
      ((long long)std::min<unsigned long long>(nRef, perLaunch) + kBlock - 1) / kBlock);
  // Every launch takes all the resident blocks. (The sixth session gave each of two or more
  // slabs' launches half of them, so that a slab's drain - a warp lasted as long as its longest
  // point, up to ~1200 boxes - overlapped the next slab's start: search 3.6 -> 3.2 ms. With the
  // long points handed to lane groups the drain is at most the budget, and with 2 slabs all the
  // blocks for each launch searched in 1.85 ms against 1.94 ms with half, box4-256 2 %/2 mm, one
  // H100, 2026-11-26.)
  const int blocksUsed = blocks;
  searchStats.grid = blocksUsed;
  // The long points of each slab: groups of lanes, each with a stack in shared memory, as many
  // as fit.
  const auto longFn = tuning.laneGroup == 8    ? longSearchKernel<8>
                      : tuning.laneGroup == 16 ? longSearchKernel<16>
                                               : longSearchKernel<32>;
  const std::size_t longShared = std::size_t(kLongWarps) * std::size_t(32 / tuning.laneGroup) *
                                 std::size_t(tuning.stackItems) * 8;
  int longBlocks = 0;
  if (handOn) {
    PENUMBRA_CUDA_CHECK(cudaFuncSetAttribute(longFn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(longShared)));
    longBlocks = residentBlocks(longFn, 1ll << 20, 32 * kLongWarps, longShared);
  }
  int launches = 0;
  std::vector<cudaEvent_t> launchGroups;
  for (int b = 0; b < slabs && s.gamma; ++b) {
    const cudaStream_t ss = b % 2 == 0 ? stream : W.compute2->s;
    if (ss != stream) PENUMBRA_CUDA_CHECK(cudaStreamWaitEvent(ss, classified, 0));
    const int k0 = b * slabSlices, k1 = std::min(g.dims[2], k0 + slabSlices);
    const unsigned long long slabPoints = (unsigned long long)(k1 - k0) * (unsigned long long)slice;
    for (unsigned long long p0 = 0; p0 < slabPoints; p0 += perLaunch, ++launches) {
      if (launches > 0) {
        launchGroups.push_back(W.events.next());
        PENUMBRA_CUDA_CHECK(cudaEventRecord(launchGroups.back(), ss));
        if (launchGroups.size() >= 2)
          PENUMBRA_CUDA_CHECK(cudaEventSynchronize(launchGroups[launchGroups.size() - 2]));
        job.report(0.05 + 0.9 * double(b) / double(slabs), "gamma (CUDA)");
        job.checkCancel();
      }
      const unsigned long long p1 = std::min<unsigned long long>(slabPoints, p0 + perLaunch);
      // The slab's fetch counter starts from zero (zeroed with the others) and again for each
      // later launch of a slab larger than one launch.
      if (p0 > 0)
        PENUMBRA_CUDA_CHECK(
            cudaMemsetAsync(W.counters.get() + kNext + b, 0, sizeof(unsigned long long), ss));
      kernel.begin(ss);
      searchFn<<<blocksUsed, kBlock, 0, ss>>>(s, W.ref.get(), W.list.get(), b, unsigned(p0),
                                          unsigned(p1), W.gamma.get(), W.counters.get(),
                                          handOn ? tuning.stepBudget : 0, tuning.skipLimit,
                                          W.longList.get());
      PENUMBRA_CUDA_CHECK_LAUNCH("searchKernel");
      kernel.end(ss);
    }
    // The slab's long points, behind its one-lane search on the same stream. (On a third stream
    // of their own, so that the next slab's one-lane search would not wait for them, the search
    // span was longer: 2.35 -> 2.64 ms, 2 %/2 mm on box4-256, one H100, 2026-11-26.)
    if (handOn) {
      longKernel.begin(ss);
      longFn<<<longBlocks, 32 * kLongWarps, longShared, ss>>>(
          s, W.ref.get(), W.longList.get(), b, W.gamma.get(), W.counters.get(), tuning.stackItems);
      PENUMBRA_CUDA_CHECK_LAUNCH("longSearchKernel");
      longKernel.end(ss);
    }
    searchedSlab.push_back(W.events.next());
    PENUMBRA_CUDA_CHECK(cudaEventRecord(searchedSlab.back(), ss));
  }
  // The statistics need every slab's gamma.
  for (const cudaEvent_t e : searchedSlab) PENUMBRA_CUDA_CHECK(cudaStreamWaitEvent(stream, e, 0));
  // The search's span on the GPU: from the end of the classification to the last slab's last
  // point (the launches of successive slabs overlap, so their own intervals do not add up).
  const cudaEvent_t searchDone = W.events.next();
  PENUMBRA_CUDA_CHECK(cudaEventRecord(searchDone, stream));

  // Statistics on the GPU; the sums and counters go into page-locked memory (a copy into
  // pageable memory would hold the host until the search is done).
  const double ddGy = 1.0 / setup.invDdGlobal;
  statsStats.fn = (const void*)statsKernel;
  statsStats.block = kStatsBlock;
  statsStats.grid = int(statsRuns);
  stats.begin(stream);
  statsKernel<<<int(statsRuns), kStatsBlock, 0, stream>>>(
      W.ref.get(), W.gamma.get(), W.diff.get(), r.mask ? W.mask.get() : nullptr,
      (long long)nRef, setup.cutoffGy, ddGy, r.criteria.gammaCap, setup.gamma, W.runs.get(),
      W.histogram.get());
  PENUMBRA_CUDA_CHECK_LAUNCH("statsKernel");
  stats.end(stream);
  const std::size_t runBytes = std::size_t(statsRuns) * sizeof(PointSums);
  const std::size_t histBytes = kGammaHistogramBins * sizeof(unsigned long long);
  const std::size_t counterBytes = kCounters * sizeof(unsigned long long);
  W.small.reserve(runBytes + histBytes + counterBytes);
  unsigned char* small = W.small.get();
  PENUMBRA_CUDA_CHECK(
      cudaMemcpyAsync(small, W.runs.get(), runBytes, cudaMemcpyDeviceToHost, stream));
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(small + runBytes, W.histogram.get(), histBytes,
                                      cudaMemcpyDeviceToHost, stream));
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(small + runBytes + histBytes, W.counters.get(), counterBytes,
                                      cudaMemcpyDeviceToHost, stream));

  // Zeroed for the next call behind their last readers: the download above on this stream and
  // the boxes' on the copy stream. A failed call drops the workspace, and the next one zeroes
  // them first.
  PENUMBRA_CUDA_CHECK(cudaStreamWaitEvent(stream, rangesRead, 0));
  zeroCounters();

  // The downloads, on the copy stream: each slab's box of differences other than +0 (final
  // since the classification), then each slab's box of listed points' gammas once that slab's
  // search is done. Outside the boxes the host memory holds what the GPU holds there: +0 and
  // NaN. (Until 2026-11-27 the whole difference and each slab's stretch from its first to its
  // last listed point went down: 82 MB on box4-256, 1.56 ms of PCIe that bounded the call once
  // the search was faster; one H200.) Both results stay page-locked (the voxel pool keeps their
  // blocks so); a box's copy is 3D, rows of its x extent.
  // The next call's memory: its helpers start once this call's kernels are queued, but before
  // this call waits for its own memory. (Started after that wait, back-to-back calls each
  // waited for a whole fill of their memory: 9-16 ms against 2.0-2.5 ms, box4-256, one H200,
  // 2026-11-27.)
  W.nextGamma = make(nan);
  W.nextDiff = make(0.0f);
  W.nextSize = nRef;
  Clock::time_point w0 = Clock::now();
  HostOutput diffHost = diffOut.get();
  HostOutput gammaHost = gammaOut.get();
  waitMemoryMs += msSince(w0);
  PENUMBRA_CUDA_CHECK(cudaEventSynchronize(rangesRead));
  double downloadBytes = 0;
  auto copyBox = [&](float* host, const float* dev, int slab, BoxSet set) {
    const unsigned long long* e = W.ranges.get() + std::size_t(slab) * kBoxEntries + set * 6;
    if (e[1] == 0) return;  // empty box
    std::size_t lo[3], n[3];
    for (int a = 0; a < 3; ++a) {
      lo[a] = std::size_t(kBoxKey - e[2 * a]);
      n[a] = std::size_t(e[2 * a + 1]) - lo[a];
    }
    cudaMemcpy3DParms p{};
    const std::size_t pitch = std::size_t(g.dims[0]) * sizeof(float);
    p.srcPtr = make_cudaPitchedPtr(const_cast<float*>(dev), pitch, std::size_t(g.dims[0]),
                                   std::size_t(g.dims[1]));
    p.dstPtr = make_cudaPitchedPtr(host, pitch, std::size_t(g.dims[0]), std::size_t(g.dims[1]));
    p.srcPos = p.dstPos = make_cudaPos(lo[0] * sizeof(float), lo[1], lo[2]);
    p.extent = make_cudaExtent(n[0] * sizeof(float), n[1], n[2]);
    p.kind = cudaMemcpyDeviceToHost;
    download.begin(W.copy->s);
    PENUMBRA_CUDA_CHECK(cudaMemcpy3DAsync(&p, W.copy->s));
    download.end(W.copy->s);
    downloadBytes += double(n[0] * n[1] * n[2]) * sizeof(float);
  };
  for (int b = 0; b < slabs; ++b) copyBox(diffHost.data.data(), W.diff.get(), b, kDifferenceBox);
  for (int b = 0; b < int(searchedSlab.size()); ++b) {
    PENUMBRA_CUDA_CHECK(cudaStreamWaitEvent(W.copy->s, searchedSlab[std::size_t(b)], 0));
    copyBox(gammaHost.data.data(), W.gamma.get(), b, kListedBox);
  }
  const bool diffLocked = diffHost.locked;
  const double queuedMs = msSince(start);
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream));
  // The doses are on the GPU now: the keys say so (set only after every copy succeeded).
  W.refKey.set(r.reference);
  W.evalKey.set(r.evaluated);
  const bool locked = gammaHost.locked && diffLocked;
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(W.copy->s));  // both volumes; reports a failed copy
  const double syncedMs = msSince(start);
  W.countersZeroed = true;

  PointSummary sums;
  sums.runs.resize(std::size_t(statsRuns));
  std::memcpy(sums.runs.data(), small, runBytes);
  if (setup.gamma) {
    const auto* h = reinterpret_cast<const unsigned long long*>(small + runBytes);
    sums.histogram.assign(h, h + kGammaHistogramBins);
  }
  const auto* counters = reinterpret_cast<const unsigned long long*>(small + runBytes + histBytes);
  sums.depthLimited = std::int64_t(counters[kDepthLimited]);
  const unsigned long long listed = counters[kListed];
  unsigned long long handedOn = 0;
  for (int b = 0; b < slabs && b < kMaxSlabs; ++b) handedOn += counters[kLong + b];
  out.gamma.grid = g;
  out.gamma.data = std::move(gammaHost.data);
  out.difference.grid = g;
  out.difference.data = std::move(diffHost.data);

  // Traffic model: classification reads each reference dose (and mask), the evaluated dose
  // through the cache (at least once), and writes two floats and the list; the search reads
  // its listed points' index and dose and writes their gamma; the statistics read three
  // volumes (and the mask).
  classifyStats.bytes =
      double(nRef) * (4 + 8 + (r.mask ? 1 : 0)) + double(nEval) * 4 + double(listed) * 4;
  searchStats.bytes = double(listed) * 12;
  statsStats.bytes = double(nRef) * (12 + (r.mask ? 1 : 0));
  const std::string variant =
      std::string(r.criteria.local ? "local" : "global") +
      (handOn ? ", " + std::to_string(handedOn) + " points past " +
                    std::to_string(tuning.stepBudget) + " steps finished by groups of " +
                    std::to_string(tuning.laneGroup) + " lanes"
              : std::string(", one lane a point"));
  float searchSpanMs = 0;
  if (s.gamma)
    PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&searchSpanMs, classified, searchDone));
  if (s.gamma) {
    out.profiles.push_back(penumbra::cuda::launchProfile("gamma_search", variant, searchStats,
                                                         searchSpanMs, kernel.launches(),
                                                         out.device));
    // Its two parts, launch by launch. Those of the two streams overlap in time, and a launch's
    // interval includes its wait for SM room behind the other stream's blocks, so these sums
    // can exceed the span (e.g. 2.36 ms of one-lane launches in a 1.73 ms search): the rows
    // say so, the span row above is the search's time.
    penumbra::cuda::KernelStats lanes = searchStats, warps;
    lanes.bytes = 0;
    warps.fn = (const void*)longFn;
    warps.block = 32 * kLongWarps;
    warps.grid = longBlocks;
    const std::string summed = "; launch intervals summed, overlapping";
    out.profiles.push_back(penumbra::cuda::launchProfile(
        "gamma_search, one lane a point",
        (handOn ? "up to " + std::to_string(tuning.stepBudget) + " steps" : "to the end") + summed,
        lanes, kernel.totalMs(), kernel.launches(), out.device));
    if (handOn)
      out.profiles.push_back(penumbra::cuda::launchProfile(
          "gamma_search, lane groups",
          std::to_string(handedOn) + " long points, " + std::to_string(tuning.laneGroup) +
              " lanes each" + summed,
          warps, longKernel.totalMs(), longKernel.launches(), out.device));
  }
  out.profiles.push_back(penumbra::cuda::launchProfile("classify points",
                                                       r.criteria.local ? "local" : "global",
                                                       classifyStats,
                                                       classify.totalMs(), classify.launches(),
                                                       out.device));
  out.profiles.push_back(penumbra::cuda::launchProfile("statistics", "GPU", statsStats,
                                                       stats.totalMs(), 1, out.device));
  penumbra::cuda::KernelStats copyIn;
  copyIn.bytes = uploaded;
  out.profiles.push_back(penumbra::cuda::launchProfile(
      "upload doses", uploaded > 0 ? "copy" : "cached on the GPU", copyIn, upload.totalMs(), 1,
      out.device));
  penumbra::cuda::KernelStats copyOut;
  copyOut.bytes = downloadBytes;
  out.profiles.push_back(penumbra::cuda::launchProfile(
      "download gamma + difference",
      std::string(locked ? "page-locked" : "pageable") +
          ", the boxes of differences other than +0 and of listed points' gammas of " +
          std::to_string(slabs) + " slab(s), the gammas as the search ends each",
      copyOut, download.totalMs(), download.launches(), out.device));
  if (tuning.timeline) {
    const cudaEvent_t origin = upload.start[0]->e;
    addTimeline(out.profiles, "classify", classify, origin, out.device);
    addTimeline(out.profiles, "search one lane", kernel, origin, out.device);
    addTimeline(out.profiles, "search groups", longKernel, origin, out.device);
    addTimeline(out.profiles, "statistics", stats, origin, out.device);
    addTimeline(out.profiles, "download", download, origin, out.device);
    // The host's side, from the call's start (the GPU's origin is a little later).
    out.profiles.push_back(
        hostStageProfile("timeline host: first GPU work queued", "host", firstQueuedMs));
    out.profiles.push_back(
        hostStageProfile("timeline host: first classification queued", "host", classifyQueuedMs));
    out.profiles.push_back(hostStageProfile(
        "timeline host: all GPU work queued (after its memory and boxes)", "host", queuedMs));
    out.profiles.push_back(hostStageProfile("timeline host: synchronised", "host", syncedMs));
  }
  out.profiles.push_back(
      hostStageProfile("wait for result memory (host)", "made on helper threads", waitMemoryMs));
  out.profiles.push_back(hostStageProfile("after the GPU: sums and profile rows (host)", "host",
                                          msSince(start) - syncedMs));
  out.profiles.push_back(hostStageProfile("CUDA backend (host wall)", "whole", msSince(start)));
  lease.succeeded();
  return sums;
}

void releaseGpuCache() {
  const std::lock_guard<std::mutex> lock(slot().mutex);
  ++slot().generation;
  slot().workspace.reset();
}

GpuCacheUse gpuCacheUse(const CompareRequest& r) {
  GpuCacheUse use;
  const std::lock_guard<std::mutex> lock(slot().mutex);
  const Workspace* W = slot().workspace.get();
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) (void)cudaGetLastError();
  // A workspace of another device, or none, holds nothing this run can use.
  const Workspace none;
  const Workspace& held = W && W->device == device ? *W : none;
  forEachLargeBuffer(held, r, [&use](const auto& b, std::size_t n) {
    const double bytes = double(b.size() * sizeof(*b.get()));
    use.held += bytes;
    use.toGrow += std::max(0.0, double(n * sizeof(*b.get())) - bytes);
  });
  return use;
}

}  // namespace penumbra::compare::detail
