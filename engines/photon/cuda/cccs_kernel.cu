// Collapsed-cone transport on the GPU: one thread per transport line, all lines of a launch's
// directions in one grid (a block holds 32 x 4 neighbouring lines of one direction, so a warp is
// 32 lines that are translates along L0 and steps through the same voxel pattern in lockstep:
// the DDA never diverges inside a warp, whichever variant runs).
//
// Per line: the 3D-DDA of transport_lattice.hpp's LatticeWalker (the CPU's walkLine steps with
// it too), in float, from line (0,0)'s start state (set up once on the host by lineStart<float>,
// identical for every line), with three exits that change no deposited bit: a line that has not
// met TERMA > 0 does no memory access (the reads begin inside the TERMA box), stops once it has
// passed the box along the dominant axis, and the recursion starts at its first voxel with
// TERMA > 0 (before it R = 0 and every deposit is exactly 0). The two exponential components
// of the cone run side by side:
//   x = mu rho ds, e = exp(-x), g = (1 - e)/x,
//   deposit = R (1 - e) + q (1 - g),  R <- R e + q g,  q = T rho ds amp
// with the (1 - e), g and 1 - g of small x from their series (x < 0.05: 1 - g = x/2 - ...
// loses no bits to cancellation) and __expf above.
//
// Deposits. Atomic: atomicAdd(float) into the dose in Gy (all directions in one launch; the
// order of the float adds varies from run to run). AtomicFree: no atomics. Every direction has
// its own zero-filled slot storage over its shadow box, one entry per (pattern index n, lateral
// voxel); a voxel of dominant slice a is crossed by the 1-3 pattern segments of that slice, each
// by exactly one line of the lattice (transport_lattice.hpp: the sliceSlot argument), so every
// entry has one writer and the transport stores plainly. The gather kernel then adds, per voxel,
// its slice's entries of every direction in a fixed order (directions in ConeSet order, then
// slots 0, 1, 2; entries no line wrote hold the zero fill): repeated runs give the same bits,
// whatever the number of directions per launch.
//
// Compiled with --fmad=false (engines/CMakeLists.txt): both variants then run the same IEEE
// operations on the same segments, and classic and DDA-nc doses are bitwise identical.
#include "core/cuda/cuda_check.cuh"
#include "photon/cuda/partial_sum.cuh"
#include "photon/cuda/photon_cuda.cuh"
#include "photon/transport_lattice.hpp"

namespace penumbra::photon::cuda {

namespace {

__constant__ LineDirection c_lines[kMaxDirectionsPerLaunch];
__constant__ GatherDirection c_gather[kMaxDirectionsPerLaunch];

/// e = exp(-x), ome = 1 - e, g = (1 - e)/x, omg = 1 - g for x >= 0.
__device__ __forceinline__ void expTerms(float x, float& e, float& ome, float& g, float& omg) {
  if (x < 0.05f) {
    // (1 - e^-x)/x = 1 - x/2 (1 - x/3 (1 - x/4 (1 - x/5))) + O(x^5): relative error < 1e-9.
    const float p4 = 1.f - 0.25f * x * (1.f - 0.2f * x);
    const float p3 = 1.f - (1.f / 3.f) * x * p4;
    omg = 0.5f * x * p3;
    g = 1.f - omg;
    ome = x * g;
    e = 1.f - ome;
  } else {
    e = __expf(-x);
    ome = 1.f - e;
    g = __fdividef(ome, x);
    omg = 1.f - g;
  }
}

/// The direction of block b: the last one whose blockBegin <= b (block-uniform binary search
/// in constant memory).
__device__ __forceinline__ int directionOfBlock(int b, int count) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (c_lines[mid].blockBegin <= b)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

template <DdaVariant V, bool kAtomicFree>
__global__ void __launch_bounds__(kLineBlock)
    transportKernel(const float* __restrict__ density, const float* __restrict__ terma,
                    float* __restrict__ dose, float* __restrict__ slots,
                    Partial* __restrict__ partials, const std::uint8_t* __restrict__ bricks,
                    int directions) {
  const int d = directionOfBlock(blockIdx.x, directions);
  const LineDirection& D = c_lines[d];
  const int tile = blockIdx.x - D.blockBegin;
  const int i0 = (tile % D.tiles0) * kLinesX + (threadIdx.x & (kLinesX - 1));
  const int i1 = (tile / D.tiles0) * kLinesY + (threadIdx.x / kLinesX);
  float released = 0.f, deposited = 0.f, escaped = 0.f;
  unsigned segments = 0;
  const bool hasLine = i0 < D.rectW0 && i1 < D.rectW1;
  const unsigned lanes = __ballot_sync(0xffffffffu, hasLine);
  if (hasLine) {
    const int o0 = D.rect0Lo + i0, o1 = D.rect1Lo + i1;
    // Virtual axes: x = A (= the real dominant index), y = L0, z = L1.
    LatticeWalker<V, float> w(D.voxel, D.step, D.tNext, D.tDelta, D.length, o0, o1);
    float R0 = 0.f, R1 = 0.f;
    bool started = false;
    auto onSegment = [&](float len) {
      const bool inBox = w.vx >= D.boxALo && w.vx <= D.boxAHi && w.r0 >= D.box0Lo &&
                         w.r0 <= D.box0Hi && w.r1 >= D.box1Lo && w.r1 <= D.box1Hi;
      const int lin = w.vx * D.strideA + w.r0 * D.stride0 + w.r1 * D.stride1;
      const float T = inBox ? __ldg(&terma[lin]) : 0.f;
      started = started || T > 0.f;
      if (!started) return;
      const float rho = __ldg(&density[lin]);
      const float rl = rho * len;  // water-equivalent mm
      const float q = T * rl;
      const float q0 = q * D.amp0, q1 = q * D.amp1;
      float e0, ome0, g0, omg0, e1, ome1, g1, omg1;
      expTerms(D.mu0 * rl, e0, ome0, g0, omg0);
      expTerms(D.mu1 * rl, e1, ome1, g1, omg1);
      const float dep = (R0 * ome0 + q0 * omg0) + (R1 * ome1 + q1 * omg1);
      R0 = R0 * e0 + q0 * g0;
      R1 = R1 * e1 + q1 * g1;
      released += q0 + q1;
      deposited += dep;
      ++segments;
      const float value = __fdividef(dep * D.doseScale, rho);
      if constexpr (kAtomicFree) {
        slots[D.slotBase + (long long)(w.n - D.nBase) * D.area + (w.r0 - D.lat0Lo) +
              (w.r1 - D.lat1Lo) * D.ext0] = value;
      } else {
        atomicAdd(&dose[lin], value);
      }
    };
    // Past the TERMA box along A without meeting TERMA > 0: nothing to carry. (Written with
    // ifs: as one && expression its bool stayed materialised in the loop, and the kernels
    // compiled to other code than the former hand-written loop; this form compiles the same.)
    auto pastBox = [&]() -> bool {
      if (started) return false;
      if (w.sx > 0) return w.vx > D.boxAHi;
      return w.vx < D.boxALo;
    };
    // Until some line of the warp meets the TERMA box, every segment has T = 0 and changes
    // nothing: the warp steps the DDA alone (skipStep: ~1/3 of walk()'s instructions per turn;
    // ncu, H100: 57 % of the transport's loop turns came before a line's first TERMA > 0;
    // transport 4.89 -> 4.56 ms, water 256^3 x 96, classic, same H100). The tests are warp-
    // uniform (the lines of a warp are translates along L0, in lockstep: vx, r1 and the DDA state
    // agree, only r0 differs), so the lines stay in lockstep and walk() takes over at the same
    // state it would have reached itself. A warp whose lines all miss the box laterally ends.
    // A voxel may have TERMA > 0 only inside the box and inside a brick that holds some (the
    // bricks follow the beam's slanted field, which an oblique beam's box does not: 8.6 ms of
    // transport for the interactive bench's edited beams against 4.6 ms at gantry 0).
    auto inBoxNow = [&]() {
      if (!(w.vx >= D.boxALo && w.vx <= D.boxAHi && w.r0 >= D.box0Lo && w.r0 <= D.box0Hi &&
            w.r1 >= D.box1Lo && w.r1 <= D.box1Hi))
        return false;
      return __ldg(&bricks[(w.vx >> kBrickShift) * D.brickA + (w.r0 >> kBrickShift) * D.brick0 +
                           (w.r1 >> kBrickShift) * D.brick1]) != 0;
    };
    auto missesBox = [&]() {  // monotone walk: outside the box laterally and moving away
      return (w.sy >= 0 && w.r0 > D.box0Hi) || (w.sy <= 0 && w.r0 < D.box0Lo) ||
             (w.sz >= 0 && w.r1 > D.box1Hi) || (w.sz <= 0 && w.r1 < D.box1Lo);
    };
    // Atomic deposit only: in the atomic-free kernel (n and slot counted too) the same loop
    // made the transport 5 % slower on the H100 (4.70 -> 4.94 ms, water 256^3 x 96).
    bool live = true;
    while (!kAtomicFree && !__any_sync(lanes, inBoxNow())) {
      if (__all_sync(lanes, missesBox()) || !w.skipStep(D.bounds) || pastBox()) {
        live = false;
        break;
      }
    }
    if (live) w.walk(D.bounds, onSegment, pastBox);
    escaped = R0 + R1;
  }
  Partial mine = emptyPartial();
  const double cross = double(D.crossCm2);
  mine.sum[0] = double(released) * cross;
  mine.sum[1] = double(deposited) * cross;
  mine.sum[2] = double(escaped) * cross;
  mine.count = segments;
  writeBlockPartial<kLineBlock>(mine, partials + blockIdx.x);
}

/// Per voxel: dose += the slots of every direction of the launch that a line wrote, in
/// direction order then slot order. The loads of kGatherBatch directions are issued before
/// their adds (each direction's chain is slice entry -> slot entries; one direction at a time
/// left the kernel latency-bound at 5.2 ms for 256^3 x 96 on the H200). Absent entries add
/// +0.0f, which leaves the (non-negative) sum's bits unchanged, so the result is the fixed-order
/// sum of the entries that exist.
__global__ void __launch_bounds__(kGatherBlock)
    gatherKernel(const float* __restrict__ slots, const SliceEntry* __restrict__ slices,
                 float* __restrict__ dose, int nx, int ny, long long nVoxels, int directions,
                 bool first) {
  const long long v = blockIdx.x * (long long)kGatherBlock + threadIdx.x;
  if (v >= nVoxels) return;
  const int idx[3] = {int(v % nx), int((v / nx) % ny), int(v / ((long long)nx * ny))};
  // Selects instead of idx[runtime axis]: a dynamically indexed array would live in local memory.
  auto along = [&](int axis) { return axis == 0 ? idx[0] : (axis == 1 ? idx[1] : idx[2]); };
  float acc = first ? 0.f : dose[v];
  for (int d0 = 0; d0 < directions; d0 += kGatherBatch) {
    float val[kGatherBatch][kMaxSliceSlots];
#pragma unroll
    for (int u = 0; u < kGatherBatch; ++u) {
#pragma unroll
      for (int s = 0; s < kMaxSliceSlots; ++s) val[u][s] = 0.f;
      const int d = d0 + u;
      if (d >= directions) continue;
      const GatherDirection& G = c_gather[d];
      if (idx[0] < G.lo[0] || idx[0] > G.hi[0] || idx[1] < G.lo[1] || idx[1] > G.hi[1] ||
          idx[2] < G.lo[2] || idx[2] > G.hi[2])
        continue;
      const SliceEntry e = __ldg(&slices[G.sliceBase + along(G.A)]);
      // The slice's 1-3 entries of this voxel; never-written ones hold the zero fill.
      const long long base = G.slotBase + (long long)(e.x - G.nBase) * G.area +
                             (along(G.L0) - G.lo[G.L0]) + (along(G.L1) - G.lo[G.L1]) * G.ext0;
      const int count = e.w & 3;
#pragma unroll
      for (int s = 0; s < kMaxSliceSlots; ++s)
        if (s < count) val[u][s] = __ldg(&slots[base + (long long)s * G.area]);
    }
#pragma unroll
    for (int u = 0; u < kGatherBatch; ++u)
#pragma unroll
      for (int s = 0; s < kMaxSliceSlots; ++s) acc += val[u][s];
  }
  dose[v] = acc;
}

/// One warp per 8^3 brick: its lanes read the brick's voxels (rows of 8 floats), any > 0 sets it.
constexpr int kBricksPerBlock = 8;
__global__ void __launch_bounds__(kBricksPerBlock * 32)
    termaBricksKernel(const float* __restrict__ terma, std::uint8_t* __restrict__ bricks, int nx,
                      int ny, int nz, int bx, int by, long long count) {
  const long long b = (long long)blockIdx.x * kBricksPerBlock + threadIdx.x / 32;
  if (b >= count) return;  // whole warps: b is warp-uniform
  const int lane = threadIdx.x & 31;
  const int i0 = int(b % bx) << kBrickShift, j0 = int((b / bx) % by) << kBrickShift,
            k0 = int(b / ((long long)bx * by)) << kBrickShift;
  bool any = false;
  for (int e = lane; e < 512; e += 32) {
    const int i = i0 + (e & 7), j = j0 + ((e >> 3) & 7), k = k0 + (e >> 6);
    if (i < nx && j < ny && k < nz) any = any || __ldg(&terma[((long long)k * ny + j) * nx + i]) > 0.f;
  }
  any = __any_sync(0xffffffffu, any);
  if (lane == 0) bricks[b] = any ? 1 : 0;
}

__global__ void __launch_bounds__(kReduceBlock)
    reducePartialsKernel(const Partial* __restrict__ partials, int count,
                         Partial* __restrict__ out) {
  Partial mine = emptyPartial();
  for (int i = threadIdx.x; i < count; i += kReduceBlock) combine(mine, partials[i]);
  writeBlockPartial<kReduceBlock>(mine, out);
}

}  // namespace

void uploadLineDirections(const LineDirection* d, int count, cudaStream_t stream) {
  PENUMBRA_REQUIRE(count >= 1 && count <= kMaxDirectionsPerLaunch, Internal,
                   "photon CUDA: bad direction count per launch");
  PENUMBRA_CUDA_CHECK(cudaMemcpyToSymbolAsync(
      c_lines, d, sizeof(LineDirection) * std::size_t(count), 0, cudaMemcpyHostToDevice, stream));
}

void uploadGatherDirections(const GatherDirection* d, int count, cudaStream_t stream) {
  PENUMBRA_REQUIRE(count >= 1 && count <= kMaxDirectionsPerLaunch, Internal,
                   "photon CUDA: bad direction count per launch");
  PENUMBRA_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_gather, d,
                                              sizeof(GatherDirection) * std::size_t(count), 0,
                                              cudaMemcpyHostToDevice, stream));
}

void launchTransport(DdaVariant variant, bool atomicFree, const TransportLaunch& a,
                     cudaStream_t stream, KernelStats& st) {
#define PENUMBRA_PHOTON_LAUNCH(V, F)                                                               \
  do {                                                                                             \
    transportKernel<V, F><<<a.blocks, kLineBlock, 0, stream>>>(                                    \
        a.density, a.terma, a.dose, a.slots, a.partials, a.bricks, a.directions);                  \
    PENUMBRA_CUDA_CHECK_LAUNCH("transportKernel<" #V ", " #F ">");                                 \
    st.fn = (const void*)transportKernel<V, F>;                                                    \
  } while (0)
  if (variant == DdaVariant::Classic) {
    if (atomicFree)
      PENUMBRA_PHOTON_LAUNCH(DdaVariant::Classic, true);
    else
      PENUMBRA_PHOTON_LAUNCH(DdaVariant::Classic, false);
  } else {
    if (atomicFree)
      PENUMBRA_PHOTON_LAUNCH(DdaVariant::BranchFree, true);
    else
      PENUMBRA_PHOTON_LAUNCH(DdaVariant::BranchFree, false);
  }
#undef PENUMBRA_PHOTON_LAUNCH
  st.grid = a.blocks;
  st.block = kLineBlock;
}

void launchTermaBricks(const float* terma, std::uint8_t* bricks, const int dims[3],
                       cudaStream_t stream, KernelStats& st) {
  int nb[3];
  brickDims(dims, nb);
  const long long count = (long long)nb[0] * nb[1] * nb[2];
  const unsigned blocks = unsigned((count + kBricksPerBlock - 1) / kBricksPerBlock);
  termaBricksKernel<<<blocks, kBricksPerBlock * 32, 0, stream>>>(terma, bricks, dims[0], dims[1],
                                                                 dims[2], nb[0], nb[1], count);
  PENUMBRA_CUDA_CHECK_LAUNCH("termaBricksKernel");
  st.fn = (const void*)termaBricksKernel;
  st.grid = int(blocks);
  st.block = kBricksPerBlock * 32;
  st.bytes += 4.0 * double(dims[0]) * dims[1] * dims[2] + double(count);
}

void launchGather(const GatherLaunch& a, cudaStream_t stream, KernelStats& st) {
  const long long blocks = (a.nVoxels + kGatherBlock - 1) / kGatherBlock;
  gatherKernel<<<unsigned(blocks), kGatherBlock, 0, stream>>>(
      a.slots, a.slices, a.dose, a.dims[0], a.dims[1], a.nVoxels, a.directions, a.first);
  PENUMBRA_CUDA_CHECK_LAUNCH("gatherKernel");
  st.fn = (const void*)gatherKernel;
  st.grid = int(blocks);
  st.block = kGatherBlock;
}

void launchReducePartials(const Partial* partials, int count, Partial* out, cudaStream_t stream,
                          KernelStats& st) {
  reducePartialsKernel<<<1, kReduceBlock, 0, stream>>>(partials, count, out);
  PENUMBRA_CUDA_CHECK_LAUNCH("reducePartialsKernel");
  st.fn = (const void*)reducePartialsKernel;
  st.grid = 1;
  st.block = kReduceBlock;
  st.bytes += double(count) * sizeof(Partial);
}

}  // namespace penumbra::photon::cuda
