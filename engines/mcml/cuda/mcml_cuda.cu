// CUDA MCML kernel: one packet per thread, persistent threads fed from a packet pool (a warp
// takes 32 packet indices at a time from one global counter; a lane whose packet dies takes the
// next one at once), float physics on the shared step of mcml_transport.hpp with the FastMath
// policy, the layer table copied into shared memory, and the tally method chosen at run time
// among compile-time variants of one kernel.
//
// Why these choices (measured on one H200, skin model, 10^8 packets; docs/benchmarks.md):
//  - the pool instead of a static stride: with packets dealt out in advance each thread runs a
//    fixed ~60 packets per 10^7, their total length varies by several per cent, and the launch
//    waits for the longest thread at ever lower occupancy; with the pool all threads stay busy
//    until the last ~32 packets of a warp (transport 257 -> 203 ms);
//  - the layer table in shared memory rather than constant memory: lanes of a warp sit in
//    different layers, and constant-memory reads at different addresses are serialised, shared-
//    memory ones are not (305 -> 257 ms);
//  - FastMath: 349 -> 305 ms (ReferenceMath's IEEE division and square root cost a range check
//    and a slow-path call each).
#include <algorithm>

#include "core/cuda/cuda_check.cuh"
#include "mcml/cuda/mcml_kernel.cuh"

namespace penumbra::mcml::cuda {

namespace {

__constant__ TransportSetup<float> c_setup;
__constant__ GpuLayer c_layers[kMaxLayers + 2];

constexpr int kBlock = 256;
constexpr unsigned kWarpChunk = 32;  ///< packets a warp takes from the pool at a time

/// Bytes of the layer table at the start of the dynamic shared memory (16-byte aligned end).
__host__ __device__ constexpr int layerTableBytes(int numLayers) {
  return ((numLayers + 2) * int(sizeof(GpuLayer)) + 15) / 16 * 16;
}

template <TallyMethod M>
__global__ void __launch_bounds__(kBlock) mcmlPersistentKernel(std::uint64_t first, std::uint64_t count,
                                                               TallyPtrs t, unsigned long long* nextPacket) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int numLayers = c_setup.numLayers;
  GpuLayer* layers = reinterpret_cast<GpuLayer*>(smem);
  void* sh = smem + layerTableBytes(numLayers);
  const int tableWords = (numLayers + 2) * int(sizeof(GpuLayer) / 4);
  for (int i = threadIdx.x; i < tableWords; i += blockDim.x)
    reinterpret_cast<int*>(smem)[i] = reinterpret_cast<const int*>(c_layers)[i];
  if constexpr (usesShared<M>()) {
    const int words = t.sharedNr * t.sharedNz * sharedBinBytes<M>() / 4;
    for (int i = threadIdx.x; i < words; i += blockDim.x) static_cast<unsigned*>(sh)[i] = 0u;
  }
  __syncthreads();
  const int nz = c_setup.nz;
  const int lane = threadIdx.x & 31;
  Photon<float> p;
  p.alive = false;
  bool drained = false;             // this lane found the pool empty
  std::uint64_t next = 0, end = 0;  // the warp's chunk of packet indices (same in every lane)
  double gain = 0.0;
  RegisterCache rc;
  // Every lane runs the loop until the whole warp is out of packets, so the tally below is
  // reached by all 32 lanes together (needed by the warp-aggregated method's vote/shuffles).
  for (;;) {
    unsigned need = __ballot_sync(kFullMask, !p.alive && !drained);
    while (need) {  // lanes without a packet take the next ones of the chunk, in lane order
      if (next >= end) {
        std::uint64_t base = 0;
        if (lane == 0) base = atomicAdd(nextPacket, static_cast<unsigned long long>(kWarpChunk));
        base = __shfl_sync(kFullMask, base, 0);
        if (base >= count) {
          drained = drained || !p.alive;
          break;
        }
        next = base;
        end = std::min<std::uint64_t>(base + kWarpChunk, count);
      }
      const unsigned rank = __popc(need & ((1u << lane) - 1u));
      if (((need >> lane) & 1u) && next + rank < end) launchPhoton(c_setup, first + next + rank, p);
      next = std::min<std::uint64_t>(next + __popc(need), end);
      need = __ballot_sync(kFullMask, !p.alive && !drained);
    }
    if (!__any_sync(kFullMask, p.alive)) break;
    StepEvent<float> ev{EventKind::None, 0, 0.0f, 0.0, 0, 0};
    if (p.alive) ev = mcmlStep<FastMath>(c_setup, static_cast<const GpuLayer*>(layers), p);
    gain += ev.rouletteGain;
    __syncwarp();
    tallyAbsorb<M>(t, sh, nz, ev.kind == EventKind::Absorb, ev.ir, ev.ib, ev.weight, rc);
    if (ev.kind == EventKind::Reflect) atomicAddBin<M>(t.rd, ev.index, ev.weight);
    else if (ev.kind == EventKind::Transmit) atomicAddBin<M>(t.tt, ev.index, ev.weight);
  }
  if constexpr (usesRegisterCache<M>()) {
    if (rc.ir >= 0) fixedAddArz<M>(t, sh, nz, rc.ir, rc.iz, rc.amount);
  }
  if constexpr (usesShared<M>()) {
    __syncthreads();
    flushShared<M>(t, sh, nz);
  }
  for (int off = 16; off > 0; off >>= 1) gain += __shfl_down_sync(kFullMask, gain, off);
  if (lane == 0 && gain != 0.0) atomicAdd(t.rouletteGain, gain);
}

template <TallyMethod M>
LaunchShape launchAs(const LaunchInput& in, TallyPtrs t, cudaStream_t stream) {
  const auto kernel = mcmlPersistentKernel<M>;
  LaunchShape s;
  s.block = kBlock;
  int dev = 0, sms = 0, maxThreads = 0, perSm = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));
  PENUMBRA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  PENUMBRA_CUDA_CHECK(cudaDeviceGetAttribute(&maxThreads, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  const int tableBytes = layerTableBytes(in.numLayers);
  PENUMBRA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, kBlock, std::size_t(tableBytes)));
  perSm = std::max(perSm, 1);
  int bytes = tableBytes;
  t.sharedNr = t.sharedNz = 0;
  if constexpr (sharedBinBytes<M>() > 0) {
    // The buffer gets the shared memory that the blocks the registers allow per SM leave
    // (an estimate, then one row less until that many blocks fit: allocation is granular).
    int perSmBytes = 0, optin = 0, reserved = 0;
    PENUMBRA_CUDA_CHECK(cudaDeviceGetAttribute(&perSmBytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    PENUMBRA_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    PENUMBRA_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
    const int budget = std::min(perSmBytes / perSm - reserved, optin) - tableBytes;
    const int rowBytes = sharedBinBytes<M>() * std::max(1, std::min(in.nz, in.usedNz));
    for (int rows = std::min(in.nr, std::max(0, budget) / rowBytes); rows > 0; --rows) {
      const int b = tableBytes + rows * rowBytes;
      int fit = 0;
      PENUMBRA_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, b));
      PENUMBRA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, kBlock, std::size_t(b)));
      if (fit >= perSm || rows == 1) {
        t.sharedNr = rows;
        t.sharedNz = rowBytes / sharedBinBytes<M>();
        bytes = b;
        perSm = std::max(fit, 1);
        break;
      }
    }
  }
  cudaFuncAttributes attr{};
  PENUMBRA_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  s.registers = attr.numRegs;
  s.sharedBytes = bytes;
  s.sharedNr = t.sharedNr;
  s.sharedNz = t.sharedNz;
  s.occupancy = double(perSm * kBlock) / maxThreads;
  // Persistent threads: exactly as many blocks as fit at once, fewer for tiny runs.
  const std::uint64_t need = (in.count + kBlock - 1) / kBlock;
  s.grid = int(std::min<std::uint64_t>(std::uint64_t(perSm) * sms, std::max<std::uint64_t>(need, 1)));
  kernel<<<s.grid, kBlock, std::size_t(bytes), stream>>>(in.first, in.count, t, in.nextPacket);
  PENUMBRA_CUDA_CHECK_LAUNCH("mcmlPersistentKernel");
  return s;
}

}  // namespace

void uploadSetup(const TransportSetup<float>& s, const std::vector<GpuLayer>& layers) {
  PENUMBRA_REQUIRE(int(layers.size()) == s.numLayers + 2 && int(layers.size()) <= kMaxLayers + 2,
                   Internal, "MCML layer table does not match the setup");
  PENUMBRA_CUDA_CHECK(cudaMemcpyToSymbol(c_setup, &s, sizeof s));
  PENUMBRA_CUDA_CHECK(cudaMemcpyToSymbol(c_layers, layers.data(), layers.size() * sizeof(GpuLayer)));
}

LaunchShape launchMcmlKernel(TallyMethod m, const LaunchInput& in, TallyPtrs t, cudaStream_t stream) {
  switch (m) {
    case TallyMethod::FloatAtomic: return launchAs<TallyMethod::FloatAtomic>(in, t, stream);
    case TallyMethod::DoubleAtomic: return launchAs<TallyMethod::DoubleAtomic>(in, t, stream);
    case TallyMethod::WarpAggregatedDouble: return launchAs<TallyMethod::WarpAggregatedDouble>(in, t, stream);
    case TallyMethod::KahanFloatPair: return launchAs<TallyMethod::KahanFloatPair>(in, t, stream);
    case TallyMethod::FixedPoint64: return launchAs<TallyMethod::FixedPoint64>(in, t, stream);
    case TallyMethod::SharedBuffer: return launchAs<TallyMethod::SharedBuffer>(in, t, stream);
    case TallyMethod::RegisterCache: return launchAs<TallyMethod::RegisterCache>(in, t, stream);
    case TallyMethod::SharedRegister: return launchAs<TallyMethod::SharedRegister>(in, t, stream);
  }
  PENUMBRA_THROW(Internal, "unknown tally method");
}

}  // namespace penumbra::mcml::cuda
