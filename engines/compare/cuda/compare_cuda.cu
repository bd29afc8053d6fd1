// CUDA backend of the dose comparison, in two kernels per launch group so that progress and
// cancel are honoured:
//  1. classifyKernel, one thread per reference point: its class (evaluated, below the cut-off,
//     outside the mask or the evaluated dose) and dose difference; the points that need a gamma
//     are appended to a list (their order in it does not matter: each point's result is
//     written at its own index, so the output is the same whatever the order);
//  2. searchKernel, persistent warps over that list: each lane runs GammaSearch (the same code
//     as the CPU reference, the search in float, positions in double) one box per loop turn,
//     and a lane whose point is finished takes the next one from the list while its neighbours
//     go on. The number of boxes a point needs varies 100-fold (5 to 700 on box4-256 at
//     2 %/2 mm), and one thread per point left a warp waiting for its slowest lane: 31 % of
//     the lanes busy on average.
// The doses stay on the GPU between calls (a new criterion on the same doses uploads nothing)
// and the result downloads by DMA into host memory prepared on helper threads. Statistics are
// computed on the host from the volumes (compare_stats.cpp), as for the CPU.
#include <cuda_runtime.h>

#include <cmath>
#include <future>
#include <limits>
#include <memory>
#include <mutex>

#include "compare/compare_internal.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_attributes.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/host_output.cuh"
#include "core/cuda/launch_profile.cuh"
#include "core/cuda/stream_event.cuh"

namespace penumbra::compare::detail {

namespace {

constexpr int kBlock = 128;

/// Counters of one run: [0] points listed for a gamma, [1] depth-limited points, [2] the next
/// list entry the search hands out.
enum Counter { kListed = 0, kDepthLimited = 1, kNext = 2, kCounters = 3 };

__global__ void __launch_bounds__(kBlock)
    classifyKernel(PointSetup<float> s, const float* __restrict__ ref,
                   const std::uint8_t* __restrict__ mask, float* __restrict__ gamma,
                   float* __restrict__ diff, unsigned* __restrict__ list, int firstSlice,
                   int lastSlice, unsigned long long* counters) {
  const long long slice = (long long)s.refDims[0] * s.refDims[1];
  const long long at = (long long)firstSlice * slice + (long long)blockIdx.x * kBlock + threadIdx.x;
  const bool inside = at < (long long)lastSlice * slice;
  bool needsGamma = false;
  if (inside) {
    const int i = int(at % s.refDims[0]);
    const int j = int(at / s.refDims[0] % s.refDims[1]);
    const int k = int(at / slice);
    const float nan = __int_as_float(0x7fc00000);
    PointSetup<float> classify = s;
    classify.gamma = false;  // the difference and the class only; the search comes next
    const PointOutcome o =
        comparePoint(classify, i, j, k, __ldg(ref + at), mask ? __ldg(mask + at) != 0 : true);
    diff[at] = o.cls == kOutsideEvaluated ? nan : o.difference;
    gamma[at] = nan;
    needsGamma = o.cls == kEvaluated && s.gamma;
  }
  // One atomic a warp for the list.
  const unsigned lanes = __ballot_sync(0xffffffffu, needsGamma);
  if (!lanes) return;
  const int lane = threadIdx.x & 31;
  const int leader = __ffs(lanes) - 1;
  unsigned base = 0;
  if (lane == leader) base = unsigned(atomicAdd(counters + kListed, (unsigned long long)__popc(lanes)));
  base = __shfl_sync(0xffffffffu, base, leader);
  if (needsGamma) list[base + __popc(lanes & ((1u << lane) - 1u))] = unsigned(at);
}

__global__ void __launch_bounds__(kBlock)
    searchKernel(PointSetup<float> s, const float* __restrict__ ref,
                 const unsigned* __restrict__ list, unsigned first, unsigned last,
                 float* __restrict__ gamma, unsigned long long* counters) {
  const int lane = threadIdx.x & 31;
  GammaSearch<float> g;
  long long at = -1;  // this lane's point; -1: none (take one), -2: the list is exhausted
  for (;;) {
    const unsigned wants = __ballot_sync(0xffffffffu, at == -1);
    if (wants) {
      const int leader = __ffs(wants) - 1;
      unsigned base = 0;
      if (lane == leader) base = first + unsigned(atomicAdd(counters + kNext, (unsigned long long)__popc(wants)));
      base = __shfl_sync(0xffffffffu, base, leader);
      if (at == -1) {
        const unsigned idx = base + __popc(wants & ((1u << lane) - 1u));
        if (idx < last) {
          at = __ldg(list + idx);
          const long long slice = (long long)s.refDims[0] * s.refDims[1];
          const int i = int(at % s.refDims[0]);
          const int j = int(at / s.refDims[0] % s.refDims[1]);
          const int k = int(at / slice);
          const float dr = __ldg(ref + at);
          double e[3];
          locatePoint(s, i, j, k, e);  // inside: the classification said so
          g.start(s.field, e, dr, inverseDoseCriterion(s, dr), s.limits);
        } else {
          at = -2;
        }
      }
    }
    if (__all_sync(0xffffffffu, at == -2)) return;
    if (at >= 0 && !g.step(s.field, s.limits)) {
      const GammaPoint r = g.result();
      gamma[at] = float(r.gamma);
      if (r.depthLimited) atomicAdd(counters + kDepthLimited, 1ull);
      at = -1;
    }
  }
}

}  // namespace

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
    if (data != v->data.data() || voxels != v->data.size() || grid.dims != v->grid.dims) return false;
    for (int i = 0; i < 3; ++i) {
      if (grid.spacing[i] != v->grid.spacing[i] || grid.origin[i] != v->grid.origin[i]) return false;
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
/// their keys (a new criterion on the same doses uploads nothing), the output buffers (grown,
/// never shrunk) and the host memory of the next result's two volumes, made on helper threads.
struct Workspace {
  int device = -1;
  VolumeKey refKey, evalKey;
  penumbra::cuda::DeviceBuffer<float> ref, eval, gamma, diff;
  penumbra::cuda::DeviceBuffer<std::uint8_t> mask;
  penumbra::cuda::DeviceBuffer<unsigned> list;
  penumbra::cuda::DeviceBuffer<unsigned long long> counters;
  std::future<penumbra::cuda::HostOutput> nextGamma, nextDiff;
  std::size_t nextSize = 0;
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

void grow(penumbra::cuda::DeviceBuffer<float>& b, std::size_t n) {
  if (b.size() < n) b.allocate(n);
}

}  // namespace

std::int64_t runCompareCuda(const CompareRequest& r, const PointSetup<double>& setup,
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
  WorkspaceLease lease(device);
  Workspace& W = *lease;

  // The result's host memory: ready from the previous run of this size, else made now on helper
  // threads while the GPU works; then the next run's, also off the critical path.
  std::future<HostOutput> gammaOut, diffOut;
  if (W.nextSize == nRef && W.nextGamma.valid() && W.nextDiff.valid()) {
    gammaOut = std::move(W.nextGamma);
    diffOut = std::move(W.nextDiff);
  } else {
    gammaOut = std::async(std::launch::async, &HostOutput::make, nRef, device);
    diffOut = std::async(std::launch::async, &HostOutput::make, nRef, device);
  }
  W.nextGamma = std::async(std::launch::async, &HostOutput::make, nRef, device);
  W.nextDiff = std::async(std::launch::async, &HostOutput::make, nRef, device);
  W.nextSize = nRef;

  penumbra::cuda::Stream stream;
  penumbra::cuda::LaunchTimes upload, classify, kernel, download;
  upload.begin(stream.s);
  double uploaded = 0;
  if (!W.refKey.matches(r.reference)) {
    W.refKey.valid = false;
    grow(W.ref, nRef);
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(W.ref.get(), r.reference->data.data(), nRef * 4,
                                        cudaMemcpyHostToDevice, stream.s));
    uploaded += double(nRef) * 4;
  }
  if (!W.evalKey.matches(r.evaluated)) {
    W.evalKey.valid = false;
    grow(W.eval, nEval);
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(W.eval.get(), r.evaluated->data.data(), nEval * 4,
                                        cudaMemcpyHostToDevice, stream.s));
    uploaded += double(nEval) * 4;
  }
  if (r.mask) {
    if (W.mask.size() < nRef) W.mask.allocate(nRef);
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(W.mask.get(), r.mask->data.data(), nRef,
                                        cudaMemcpyHostToDevice, stream.s));
    uploaded += double(nRef);
  }
  grow(W.gamma, nRef);
  grow(W.diff, nRef);
  if (W.list.size() < nRef) W.list.allocate(nRef);
  if (W.counters.size() < kCounters) W.counters.allocate(kCounters);
  PENUMBRA_CUDA_CHECK(
      cudaMemsetAsync(W.counters.get(), 0, kCounters * sizeof(unsigned long long), stream.s));
  upload.end(stream.s);

  PointSetup<float> s = toFloat(setup);
  s.field.dose = W.eval.get();
  const Grid& g = r.reference->grid;
  const long long slice = (long long)g.dims[0] * g.dims[1];
  // Classification: about 2^23 points a launch (a few hundred microseconds each).
  const int slicesPerLaunch = int(std::max<long long>(1, (1ll << 23) / std::max(1ll, slice)));
  penumbra::cuda::KernelStats classifyStats, searchStats;
  classifyStats.fn = (const void*)classifyKernel;
  classifyStats.block = kBlock;
  for (int k0 = 0; k0 < g.dims[2]; k0 += slicesPerLaunch) {
    job.checkCancel();
    const int k1 = std::min(g.dims[2], k0 + slicesPerLaunch);
    const long long points = (long long)(k1 - k0) * slice;
    const int blocks = int((points + kBlock - 1) / kBlock);
    classifyStats.grid = blocks;
    classify.begin(stream.s);
    classifyKernel<<<blocks, kBlock, 0, stream.s>>>(s, W.ref.get(),
                                                    r.mask ? W.mask.get() : nullptr, W.gamma.get(),
                                                    W.diff.get(), W.list.get(), k0, k1,
                                                    W.counters.get());
    PENUMBRA_CUDA_CHECK_LAUNCH("classifyKernel");
    classify.end(stream.s);
  }
  unsigned long long listed = 0;
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(&listed, W.counters.get() + kListed, sizeof listed,
                                      cudaMemcpyDeviceToHost, stream.s));
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream.s));
  job.report(0.05, "gamma (CUDA)");

  // The search: persistent blocks, as many as fit on the GPU at once, over 2^21 listed points a
  // launch (a few milliseconds: a cancel is noticed soon, and the tail where a few lanes finish
  // their last points is short against the launch).
  int blocksPerSm = 0, sms = 0;
  PENUMBRA_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSm, searchKernel, kBlock, 0));
  PENUMBRA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const long long perLaunch = 1ll << 21;
  searchStats.fn = (const void*)searchKernel;
  searchStats.block = kBlock;
  for (unsigned long long p0 = 0; p0 < listed; p0 += perLaunch) {
    job.checkCancel();
    const unsigned long long p1 = std::min<unsigned long long>(listed, p0 + perLaunch);
    const int blocks = int(std::max<long long>(
        1, std::min<long long>((long long)blocksPerSm * sms, ((long long)(p1 - p0) + kBlock - 1) / kBlock)));
    searchStats.grid = blocks;
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(W.counters.get() + kNext, 0, sizeof(unsigned long long),
                                        stream.s));
    kernel.begin(stream.s);
    searchKernel<<<blocks, kBlock, 0, stream.s>>>(s, W.ref.get(), W.list.get(), unsigned(p0),
                                                  unsigned(p1), W.gamma.get(), W.counters.get());
    PENUMBRA_CUDA_CHECK_LAUNCH("searchKernel");
    kernel.end(stream.s);
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream.s));
    job.report(0.05 + 0.95 * double(p1) / double(listed), "gamma (CUDA)");
  }
  // The doses are on the GPU now: the keys say so (set only after every copy succeeded).
  W.refKey.set(r.reference);
  W.evalKey.set(r.evaluated);

  HostOutput gammaHost = gammaOut.get(), diffHost = diffOut.get();
  download.begin(stream.s);
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(gammaHost.data.data(), W.gamma.get(), nRef * 4,
                                      cudaMemcpyDeviceToHost, stream.s));
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(diffHost.data.data(), W.diff.get(), nRef * 4,
                                      cudaMemcpyDeviceToHost, stream.s));
  unsigned long long limited = 0;
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(&limited, W.counters.get() + kDepthLimited, sizeof limited,
                                      cudaMemcpyDeviceToHost, stream.s));
  download.end(stream.s);
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream.s));
  const bool locked = gammaHost.registered && diffHost.registered;
  gammaHost.unregister();
  diffHost.unregister();
  out.gamma.grid = g;
  out.gamma.data = std::move(gammaHost.data);
  out.difference.grid = g;
  out.difference.data = std::move(diffHost.data);

  // Traffic model: classification reads each reference dose (and mask), the evaluated dose
  // through the cache (at least once), and writes two floats and the list; the search reads
  // its listed points' index and dose and writes their gamma.
  classifyStats.bytes = double(nRef) * (4 + 8 + (r.mask ? 1 : 0)) + double(nEval) * 4 + double(listed) * 4;
  searchStats.bytes = double(listed) * 12;
  const std::string variant = r.criteria.local ? "local" : "global";
  if (s.gamma)
    out.profiles.push_back(penumbra::cuda::launchProfile("gamma_search", variant, searchStats,
                                                         kernel.totalMs(), kernel.launches(),
                                                         out.device));
  out.profiles.push_back(penumbra::cuda::launchProfile("classify points", variant, classifyStats,
                                                       classify.totalMs(), classify.launches(),
                                                       out.device));
  penumbra::cuda::KernelStats copyIn;
  copyIn.bytes = uploaded;
  out.profiles.push_back(penumbra::cuda::launchProfile(
      "upload doses", uploaded > 0 ? "copy" : "cached on the GPU", copyIn, upload.totalMs(), 1,
      out.device));
  penumbra::cuda::KernelStats copyOut;
  copyOut.bytes = double(nRef) * 8;
  out.profiles.push_back(penumbra::cuda::launchProfile("download gamma + difference",
                                                       locked ? "page-locked" : "pageable",
                                                       copyOut, download.totalMs(), 1, out.device));
  lease.succeeded();
  return std::int64_t(limited);
}

void releaseGpuCache() {
  const std::lock_guard<std::mutex> lock(slot().mutex);
  ++slot().generation;
  slot().workspace.reset();
}

}  // namespace penumbra::compare::detail
