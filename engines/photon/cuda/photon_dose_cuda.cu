// CUDA backend of the photon CCCS engine. Uploads the density once; per beam: the TERMA kernel
// (one thread per voxel) and the fixed-order sum of its block partials (TERMA energy, the index
// box of TERMA > 0), one small download of that box, host-side culling of every direction's
// lines against it, then the transport launches (all directions in one launch for the atomic
// deposit; for the atomic-free deposit as many directions per launch as their slot buffers fit
// in half the free GPU memory, each launch followed by its gather). The dose stays on the GPU
// until the end. Cancel is checked between launches. Device outputs are poisoned with NaN
// (0xFF bytes) first - TERMA always, the dose for the atomic-free deposit (whose gather writes
// every voxel) - so an unwritten voxel shows up in the tests instead of passing as a zero.
//
// Memory: density, TERMA and dose (3 x 4 bytes per voxel), the open-field map, per-block
// partials, and for the atomic-free deposit the slot buffers (1-3 floats per voxel of each
// direction's shadow box, one per pattern segment of the voxel's slice); computeCuda refuses,
// before allocating anything, a plan whose minimum (one direction per launch) does not fit.
#include <algorithm>
#include <climits>
#include <cmath>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/device.hpp"
#include "photon/cuda/photon_cuda.cuh"
#include "photon/photon_backend.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::photon::detail {

namespace {

template <typename T>
using DeviceBuffer = penumbra::cuda::DeviceBuffer<T>;
namespace pc = penumbra::photon::cuda;

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { PENUMBRA_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { PENUMBRA_CUDA_CHECK(cudaEventCreate(&e)); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

/// Per-kernel-kind event pairs; times summed over launches after the final synchronisation.
struct Timed {
  std::vector<std::unique_ptr<Event>> start, stop;
  void begin(cudaStream_t s) {
    start.push_back(std::make_unique<Event>());
    stop.push_back(std::make_unique<Event>());
    PENUMBRA_CUDA_CHECK(cudaEventRecord(start.back()->e, s));
  }
  void end(cudaStream_t s) { PENUMBRA_CUDA_CHECK(cudaEventRecord(stop.back()->e, s)); }
  double totalMs() const {
    double ms = 0;
    for (std::size_t i = 0; i < start.size(); ++i) {
      float t = 0;
      PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&t, start[i]->e, stop[i]->e));
      ms += t;
    }
    return ms;
  }
  int launches() const { return int(start.size()); }
};

/// Grows (never shrinks) a buffer to at least n elements.
template <typename T>
void ensure(DeviceBuffer<T>& b, std::size_t n) {
  if (b.size() < n) b.allocate(n);
}

std::string deviceName() {
  int dev = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));
  static std::map<int, std::string> names;  // cudaGetDeviceProperties is slow: once per device
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (!names.count(dev)) {
    cudaDeviceProp prop{};
    PENUMBRA_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    names[dev] = prop.name;
  }
  return names[dev];
}

/// One cone direction of one beam, prepared on the host.
struct DirectionPlan {
  int cone = 0;  ///< ConeSet index
  const TransportLattice* L = nullptr;
  dda::Start<float> start{};
  /// Per dominant slice (= virtual x): pattern index of slot 0, virtual lateral positions of
  /// the slots, and the slice's lateral range (for culling).
  std::vector<pc::SliceEntry> slices;
  std::vector<int> min0, max0, min1, max1;
  // Filled per beam once the TERMA box is known:
  int rect0Lo = 0, rect0Hi = -1, rect1Lo = 0, rect1Hi = -1;  ///< inclusive
  int lo[3] = {0, 0, 0}, hi[3] = {-1, -1, -1};               ///< shadow box
  int nBase = 0, nSpan = 0;  ///< pattern indices of the shadow box's slices, in walk order
  long long slotElems = 0;   ///< AtomicFree entries: nSpan x lateral box area
  bool empty() const { return rect0Hi < rect0Lo || rect1Hi < rect1Lo; }
  int blocks() const {
    if (empty()) return 0;
    const int w0 = rect0Hi - rect0Lo + 1, w1 = rect1Hi - rect1Lo + 1;
    return ((w0 + pc::kLinesX - 1) / pc::kLinesX) * ((w1 + pc::kLinesY - 1) / pc::kLinesY);
  }
};

/// Line (0,0)'s pattern in float as a per-slice table: the walk of latticePattern<float>
/// (transport_lattice.cpp; not visible to nvcc), i.e. dda::traverse on the virtual grid from
/// the same start state, so the pattern index n of every segment is the one the kernel counts.
/// Throws Internal for a slice with more than 3 segments or a lateral move of more than one
/// voxel (impossible for makeLattice()'s lattices).
void describePattern(DirectionPlan& p, DdaVariant variant) {
  const TransportLattice& L = *p.L;
  PENUMBRA_REQUIRE(lineStart(L, p.start), Internal, "photon CUDA: degenerate transport lattice");
  const int nA = L.line.dims[0];
  p.slices.assign(std::size_t(nA), pc::SliceEntry{0, 0, 0, 0});
  p.min0.assign(std::size_t(nA), INT_MAX);
  p.max0.assign(std::size_t(nA), INT_MIN);
  p.min1 = p.min0;
  p.max1 = p.max0;
  int n = 0, slice = p.start.voxel[0], slot = 0;
  bool bad = false;
  auto visit = [&](int a, int l0, int l1, float) {
    if (a != slice) {
      slice = a;
      slot = 0;
    }
    if (a < 0 || a >= nA || slot >= kMaxSliceSlots) {
      bad = true;
      return;
    }
    pc::SliceEntry& e = p.slices[std::size_t(a)];
    if (slot == 0) {
      e = pc::SliceEntry{n, l0, l1, 1};
    } else {
      const int d0 = l0 - e.y, d1 = l1 - e.z;
      if (d0 < -1 || d0 > 1 || d1 < -1 || d1 > 1) bad = true;
      e.w = (e.w & ~3) | (slot + 1);
      e.w |= ((d0 + 1) << (slot == 1 ? 2 : 6)) | ((d1 + 1) << (slot == 1 ? 4 : 8));
    }
    const std::size_t i = std::size_t(a);
    p.min0[i] = std::min(p.min0[i], l0), p.max0[i] = std::max(p.max0[i], l0);
    p.min1[i] = std::min(p.min1[i], l1), p.max1[i] = std::max(p.max1[i], l1);
    ++slot;
    ++n;
  };
  dda::traverse(variant, p.start, L.line.dims, visit);
  PENUMBRA_REQUIRE(!bad, Internal,
                   "photon CUDA: a transport line has more than 3 segments in one slice or moves "
                   "more than one voxel laterally within a slice");
}

/// The lines that can meet the TERMA box (a superset widened by one line each side; the
/// kernel's own tests are exact) and the direction's shadow box.
void cullAgainstBox(DirectionPlan& p, const int lo[3], const int hi[3]) {
  const TransportLattice& L = *p.L;
  const int A = L.dominant, l0 = L.lateral0, l1 = L.lateral1;
  int mn0 = INT_MAX, mx0 = INT_MIN, mn1 = INT_MAX, mx1 = INT_MIN;
  for (int a = std::max(0, lo[A]); a <= std::min(hi[A], L.line.dims[0] - 1); ++a) {
    const std::size_t i = std::size_t(a);
    if (p.max0[i] < p.min0[i]) continue;
    mn0 = std::min(mn0, p.min0[i]), mx0 = std::max(mx0, p.max0[i]);
    mn1 = std::min(mn1, p.min1[i]), mx1 = std::max(mx1, p.max1[i]);
  }
  p.rect0Lo = 0, p.rect0Hi = -1, p.rect1Lo = 0, p.rect1Hi = -1;
  if (mx0 < mn0) return;
  // Real lateral = virtual + o must reach [lo, hi]: o in [lo - max, hi - min].
  p.rect0Lo = std::max(L.off0Lo, lo[l0] - mx0 - 1);
  p.rect0Hi = std::min(L.off0Hi - 1, hi[l0] - mn0 + 1);
  p.rect1Lo = std::max(L.off1Lo, lo[l1] - mx1 - 1);
  p.rect1Hi = std::min(L.off1Hi - 1, hi[l1] - mn1 + 1);
  // A line walks monotonically along d from its first TERMA > 0 voxel (inside the box), so
  // it can reach only the box's downstream side along every axis (one voxel of margin).
  for (int c = 0; c < 3; ++c) {
    const double cs = L.cosines[c];
    p.lo[c] = cs > 0 ? lo[c] - 1 : (cs < 0 ? 0 : lo[c] - 1);
    p.hi[c] = cs > 0 ? L.dims[c] - 1 : (cs < 0 ? hi[c] + 1 : hi[c] + 1);
    p.lo[c] = std::max(p.lo[c], 0);
    p.hi[c] = std::min(p.hi[c], L.dims[c] - 1);
  }
  // Pattern indices of the box's slices: from the first slice in walk order to the last.
  const bool forward = p.start.step[0] > 0;
  const pc::SliceEntry& e0 = p.slices[std::size_t(forward ? p.lo[A] : p.hi[A])];
  const pc::SliceEntry& e1 = p.slices[std::size_t(forward ? p.hi[A] : p.lo[A])];
  PENUMBRA_REQUIRE((e0.w & 3) > 0 && (e1.w & 3) > 0, Internal,
                   "photon CUDA: a transport line crosses a slice without a segment");
  p.nBase = e0.x;
  p.nSpan = e1.x + (e1.w & 3) - e0.x;
  p.slotElems = (long long)p.nSpan * (p.hi[l0] - p.lo[l0] + 1) * (p.hi[l1] - p.lo[l1] + 1);
}

KernelProfile makeProfile(const std::string& kernel, const std::string& variant,
                          const pc::KernelStats& st, double ms, int launches,
                          const std::string& device) {
  KernelProfile p;
  p.device = device;
  p.kernel = kernel;
  p.variant = variant;
  p.gridX = st.grid;
  p.blockX = st.block;
  p.backend = "cuda";
  if (st.fn) pc::describeKernel(st.fn, st.block, p);
  p.repetitions = launches;
  p.medianMs = p.minMs = ms;  // one run: the sum of this kernel's launches
  p.bytes = st.bytes;
  p.flops = st.flops;
  return p;
}

}  // namespace

void computeCuda(const ResolvedRequest& r, PhotonDoseResult& result, const JobControl& job) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    (void)cudaGetLastError();
    PENUMBRA_THROW(Unsupported, "no usable CUDA device");
  }
  const PhotonDoseRequest& req = *r.request;
  const DdaVariant variant = req.params.variant;
  const bool atomicFree = req.params.deposit == DepositStrategy::AtomicFree;
  const Grid& g = r.grid;
  const std::size_t n = g.voxelCount();
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

  // ---- memory: check the minimum before allocating anything --------------------------------
  std::size_t mapMax = 0, blocksMax = 0;
  for (const PreparedBeam& b : r.beams) {
    mapMax = std::max(mapMax, b.openFraction.size());
    std::size_t blocks = 0;
    for (const TransportLattice& L : b.lattices) {
      blocks += std::size_t((L.lines0() + pc::kLinesX - 1) / pc::kLinesX) *
                std::size_t((L.lines1() + pc::kLinesY - 1) / pc::kLinesY);
    }
    blocksMax = std::max(blocksMax, blocks);
  }
  std::size_t freeBytes = 0, totalBytes = 0;
  PENUMBRA_CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
  const double volBytes = 4.0 * double(n);
  const double baseBytes =
      3 * volBytes + 4.0 * double(mapMax) +
      double(sizeof(pc::Partial)) * double(std::max<std::size_t>(termaBlocks, blocksMax)) +
      double(sizeof(pc::Partial)) * double(r.beams.size() * (nDir + 1)) +
      (atomicFree ? 16.0 * double(nDir) * double(g.dims[0] + g.dims[1] + g.dims[2]) : 0.0);
  // AtomicFree minimum: one direction whose shadow box is the whole volume (<= 3 pattern
  // segments per slice).
  const double minSlotBytes = atomicFree ? 3 * volBytes : 0.0;
  if (baseBytes + minSlotBytes > 0.95 * double(freeBytes))
    throw Error(ErrorCode::OutOfMemory,
                "photon dose (GPU) needs at least " + formatBytes(baseBytes + minSlotBytes) +
                    " on the GPU (density, TERMA, dose " + formatBytes(3 * volBytes) +
                    (atomicFree ? ", atomic-free slot buffers " + formatBytes(minSlotBytes)
                                : std::string()) +
                    ") but " + formatBytes(double(freeBytes)) + " are free",
                __FILE__, __LINE__);
  // Slot buffers of as many directions per launch as fit in half of what is left.
  const double slotBudget =
      atomicFree ? std::max(minSlotBytes, 0.5 * (double(freeBytes) - baseBytes)) : 0.0;

  Stream stream;
  const cudaStream_t s = stream.s;
  Event tStart, tStop;
  PENUMBRA_CUDA_CHECK(cudaEventRecord(tStart.e, s));

  DeviceBuffer<float> dDensity(n), dTerma(n), dDose(n), dMap, dSlots;
  DeviceBuffer<pc::SliceEntry> dSlices;
  DeviceBuffer<pc::Partial> dPartials(std::max<std::size_t>(termaBlocks, 1));
  DeviceBuffer<pc::Partial> dStats(r.beams.size() * (nDir + 1));
  Timed tUpload, tDownload;
  tUpload.begin(s);
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(dDensity.get(), r.density.data(), n * sizeof(float),
                                      cudaMemcpyHostToDevice, s));
  tUpload.end(s);
  // The host output on a helper thread: its zero fill of fresh pages overlaps the GPU work
  // instead of stalling the launches (on the H200 machine a scratch program measured 48 ms for
  // a fresh 64 MiB vector plus the download, 6 ms for the download into touched pages;
  // the bench's device span of the water cube was 61-64 ms before this thread, 44-63 ms in
  // the two runs after it).
  std::future<Volume<float>> hostDose =
      std::async(std::launch::async, [&g] { return Volume<float>(g); });
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dTerma.get(), 0xFF, n * sizeof(float), s));
  if (atomicFree)
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dDose.get(), 0xFF, n * sizeof(float), s));
  else
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dDose.get(), 0, n * sizeof(float), s));

  const dda::Geometry geo = makeDdaGeometry(g);
  pc::KernelStats stTerma, stTransport, stGather, stReduce;
  Timed tTerma, tTransport, tGather, tReduce, tFill;
  double fillBytes = 0;
  std::vector<double> termaSum;
  std::vector<float> termaHost;
  if (req.params.keepTerma) termaSum.assign(n, 0.0);
  int statsUsed = 0;
  std::vector<int> transportStats;  // dStats entries of the transport launches
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
    ensure(dMap, beam.openFraction.size());
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(dMap.get(), beam.openFraction.data(),
                                        beam.openFraction.size() * sizeof(float),
                                        cudaMemcpyHostToDevice, s));
    pc::TermaConst tc{};
    tc.geo = geo;
    for (int a = 0; a < 3; ++a) {
      tc.source[a] = beam.source[a];
      tc.u[a] = beam.u[a];
      tc.v[a] = beam.v[a];
      tc.w[a] = beam.w[a];
    }
    tc.sad = beam.sadMm;
    voxelFootprint(beam, g, tc.footU, tc.footV);
    tc.mapU0 = beam.mapU0;
    tc.mapV0 = beam.mapV0;
    tc.mapPitch = beam.mapPitch;
    tc.mapNu = beam.mapNu;
    tc.mapNv = beam.mapNv;
    const Spectrum& sp = r.model->spectrum;
    tc.nE = int(sp.energyMeV.size());
    for (int e = 0; e < tc.nE; ++e) {
      tc.released[e] = float(sp.fluence[std::size_t(e)] * sp.energyMeV[std::size_t(e)] *
                             sp.muRho[std::size_t(e)]);
      tc.muMm[e] = float(sp.muRho[std::size_t(e)] / 10.0);
    }
    tc.softeningPerDeg = r.model->offAxisSofteningPerDeg;
    tc.voxelCm3 = g.voxelVolumeMm3() / 1000.0;
    pc::uploadTermaConst(tc, s);
    tTerma.begin(s);
    pc::launchTerma(
        variant, {dDensity.get(), dMap.get(), dTerma.get(), dPartials.get(), int(n), termaBlocks},
        s, stTerma);
    tTerma.end(s);
    const int termaStat = statsUsed++;
    tReduce.begin(s);
    pc::launchReducePartials(dPartials.get(), termaBlocks, dStats.get() + termaStat, s, stReduce);
    tReduce.end(s);

    // Host work that does not need the box overlaps the TERMA kernel.
    std::vector<DirectionPlan> plans(nDir);
    for (std::size_t d = 0; d < nDir; ++d) {
      plans[d].cone = int(d);
      plans[d].L = &beam.lattices[d];
      describePattern(plans[d], variant);
    }
    pc::Partial ts{};
    PENUMBRA_CUDA_CHECK(
        cudaMemcpyAsync(&ts, dStats.get() + termaStat, sizeof ts, cudaMemcpyDeviceToHost, s));
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
    stTerma.bytes += 4.0 * double(n) + 4.0 * double(ts.count);  // TERMA out, density along rays
    if (req.params.keepTerma) {
      termaHost.resize(n);
      PENUMBRA_CUDA_CHECK(
          cudaMemcpy(termaHost.data(), dTerma.get(), n * sizeof(float), cudaMemcpyDeviceToHost));
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
      // Directions of this launch (ConeSet order): atomic-free ones while the slots fit.
      std::vector<pc::LineDirection> lines;
      std::vector<pc::GatherDirection> gathers;
      std::vector<pc::SliceEntry> sliceTable;
      int blocks = 0;
      long long slotBase = 0;
      while (next < order.size() && int(lines.size()) < pc::kMaxDirectionsPerLaunch) {
        const DirectionPlan& p = plans[std::size_t(order[next])];
        const long long slotElems = p.slotElems;
        if (atomicFree && !lines.empty() && 4.0 * double(slotBase + slotElems) > slotBudget) break;
        const TransportLattice& L = *p.L;
        const ConeDirection& cd = r.cones.directions[std::size_t(p.cone)];
        const ConeBand& band = r.cones.bands[std::size_t(cd.band)];
        pc::LineDirection D{};
        for (int a = 0; a < 3; ++a) {
          D.tNext[a] = p.start.tNext[a];
          D.tDelta[a] = p.start.tDelta[a];
          D.voxel[a] = p.start.voxel[a];
          D.step[a] = p.start.step[a];
        }
        D.length = p.start.length;
        D.nA = L.line.dims[0];
        D.vdims1 = L.line.dims[1];
        D.vdims2 = L.line.dims[2];
        D.n0 = L.dims[L.lateral0];
        D.n1 = L.dims[L.lateral1];
        D.strideA = int(L.stride[L.dominant]);
        D.stride0 = int(L.stride[L.lateral0]);
        D.stride1 = int(L.stride[L.lateral1]);
        D.rect0Lo = p.rect0Lo;
        D.rect1Lo = p.rect1Lo;
        D.rectW0 = p.rect0Hi - p.rect0Lo + 1;
        D.rectW1 = p.rect1Hi - p.rect1Lo + 1;
        D.tiles0 = (D.rectW0 + pc::kLinesX - 1) / pc::kLinesX;
        D.blockBegin = blocks;
        D.boxALo = ts.lo[L.dominant];
        D.boxAHi = ts.hi[L.dominant];
        D.box0Lo = ts.lo[L.lateral0];
        D.box0Hi = ts.hi[L.lateral0];
        D.box1Lo = ts.lo[L.lateral1];
        D.box1Hi = ts.hi[L.lateral1];
        D.amp0 = float(band.A * cd.weight / 10.0);
        D.mu0 = float(band.a / 10.0);
        D.amp1 = float(band.B * cd.weight / 10.0);
        D.mu1 = float(band.b / 10.0);
        D.doseScale = float(beam.gyPerRawDose / (L.sliceChordMm / 10.0));
        D.crossCm2 = float(L.crossSectionMm2 / 100.0);
        D.slotBase = slotBase;
        D.nBase = p.nBase;
        D.area =
            (p.hi[L.lateral0] - p.lo[L.lateral0] + 1) * (p.hi[L.lateral1] - p.lo[L.lateral1] + 1);
        D.lat0Lo = p.lo[L.lateral0];
        D.lat1Lo = p.lo[L.lateral1];
        D.ext0 = p.hi[L.lateral0] - p.lo[L.lateral0] + 1;
        lines.push_back(D);
        if (atomicFree) {
          pc::GatherDirection G{};
          G.A = L.dominant;
          G.L0 = L.lateral0;
          G.L1 = L.lateral1;
          for (int c = 0; c < 3; ++c) G.lo[c] = p.lo[c], G.hi[c] = p.hi[c];
          G.sliceBase = int(sliceTable.size());
          G.nBase = D.nBase;
          G.area = D.area;
          G.ext0 = D.ext0;
          G.slotBase = slotBase;
          gathers.push_back(G);
          sliceTable.insert(sliceTable.end(), p.slices.begin(), p.slices.end());
        }
        blocks += p.blocks();
        slotBase += slotElems;
        ++next;
      }
      ensure(dPartials, std::size_t(blocks));
      if (atomicFree) {
        ensure(dSlices, sliceTable.size());
        ensure(dSlots, std::size_t(slotBase));
        slotBytesMax = std::max(slotBytesMax, 4.0 * double(slotBase));
        // The zero fill: entries that no line writes (lines that never start, segments before
        // a line's first TERMA > 0) are summed as zeros by the gather.
        tFill.begin(s);
        PENUMBRA_CUDA_CHECK(
            cudaMemsetAsync(dSlots.get(), 0, std::size_t(slotBase) * sizeof(float), s));
        tFill.end(s);
        fillBytes += 4.0 * double(slotBase);
        PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(dSlices.get(), sliceTable.data(),
                                            sliceTable.size() * sizeof(pc::SliceEntry),
                                            cudaMemcpyHostToDevice, s));
        pc::uploadGatherDirections(gathers.data(), int(gathers.size()), s);
      }
      pc::uploadLineDirections(lines.data(), int(lines.size()), s);
      tTransport.begin(s);
      pc::launchTransport(variant, atomicFree,
                          {dDensity.get(), dTerma.get(), dDose.get(), dSlots.get(), dPartials.get(),
                           int(lines.size()), blocks},
                          s, stTransport);
      tTransport.end(s);
      const int stat = statsUsed++;
      transportStats.push_back(stat);
      tReduce.begin(s);
      pc::launchReducePartials(dPartials.get(), blocks, dStats.get() + stat, s, stReduce);
      tReduce.end(s);
      if (atomicFree) {
        pc::GatherLaunch ga{};
        ga.slots = dSlots.get();
        ga.slices = dSlices.get();
        ga.dose = dDose.get();
        for (int a = 0; a < 3; ++a) ga.dims[a] = g.dims[a];
        ga.nVoxels = (long long)n;
        ga.directions = int(gathers.size());
        ga.first = !doseWritten;
        tGather.begin(s);
        pc::launchGather(ga, s, stGather);
        tGather.end(s);
        doseWritten = true;
        stGather.bytes += 8.0 * double(n);  // dose in and out (+ the slots, below)
      }
      directionLaunches += 1;
      job.checkCancel();
      job.report(f0 + fb * (0.1 + 0.9 * double(next) / double(order.size())),
                 stage + ": collapsed cones");
    }
  }
  if (!doseWritten) PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dDose.get(), 0, n * sizeof(float), s));
  result.dose = hostDose.get();
  tDownload.begin(s);
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(result.dose.data.data(), dDose.get(), n * sizeof(float),
                                      cudaMemcpyDeviceToHost, s));
  tDownload.end(s);
  std::vector<pc::Partial> stats(static_cast<std::size_t>(statsUsed));
  if (statsUsed)
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(
        stats.data(), dStats.get(), stats.size() * sizeof(pc::Partial), cudaMemcpyDeviceToHost, s));
  PENUMBRA_CUDA_CHECK(cudaEventRecord(tStop.e, s));
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(s));
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
  stTransport.bytes = 12.0 * double(segments);
  if (atomicFree) stGather.bytes += fillBytes;  // every slot entry is read once
  if (req.params.keepTerma) {
    result.terma = Volume<float>(g);
    for (std::size_t v = 0; v < n; ++v) result.terma.data[v] = float(termaSum[v]);
  }

  result.device = deviceName();
  const std::string& device = result.device;
  const std::string dda = toString(variant);
  const std::string deposit = atomicFree ? "atomic-free" : "atomic";
  if (tTerma.launches())
    result.profiles.push_back(
        makeProfile("terma_dda", dda, stTerma, tTerma.totalMs(), tTerma.launches(), device));
  if (tTransport.launches())
    result.profiles.push_back(makeProfile("cccs_transport", dda + " " + deposit, stTransport,
                                          tTransport.totalMs(), tTransport.launches(), device));
  if (tGather.launches())
    result.profiles.push_back(makeProfile("cccs_slot_gather", "fixed-order", stGather,
                                          tGather.totalMs(), tGather.launches(), device));
  for (const auto* t : {&tUpload, &tDownload}) {
    pc::KernelStats copy;
    copy.bytes = 4.0 * double(n);
    result.profiles.push_back(makeProfile(t == &tUpload ? "density_upload" : "dose_download",
                                          "pageable memcpy", copy, t->totalMs(), 1, device));
  }
  if (tFill.launches()) {
    pc::KernelStats fill;
    fill.bytes = fillBytes;
    result.profiles.push_back(makeProfile("slot_zero_fill", "cudaMemsetAsync", fill,
                                          tFill.totalMs(), tFill.launches(), device));
  }
  if (tReduce.launches())
    result.profiles.push_back(makeProfile("partial_sums", "fixed-order", stReduce,
                                          tReduce.totalMs(), tReduce.launches(), device));
  {
    float ms = 0;
    PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&ms, tStart.e, tStop.e));
    pc::KernelStats none;
    KernelProfile p =
        makeProfile("cccs_device_total", dda + " " + deposit, none, double(ms), 1, device);
    p.bytes = 8.0 * double(n);  // density up, dose down
    result.profiles.push_back(p);
  }
  if (atomicFree)
    result.messages.push_back("GPU atomic-free deposit: " + std::to_string(directionLaunches) +
                              " transport launch(es), slot buffers up to " +
                              formatBytes(slotBytesMax));
  result.backend = Backend::Cuda;
  job.report(1.0, "photon dose: done");
}

}  // namespace penumbra::photon::detail
