// CUDA MCML kernel: one packet per thread, persistent threads (a thread launches its next packet
// as soon as the current one dies; packets assigned by a static stride, so no global counter),
// float physics on the shared step of mcml_transport.hpp, layer properties in constant memory,
// and the tally method chosen at run time among compile-time variants of one kernel.
#include "core/cuda/cuda_check.cuh"
#include "mcml/cuda/mcml_kernel.cuh"

namespace penumbra::mcml::cuda {

namespace {

__constant__ TransportSetup<float> c_setup;

constexpr int kBlock = 256;

template <TallyMethod M>
__global__ void __launch_bounds__(kBlock) mcmlPersistentKernel(std::uint64_t first,
                                                               std::uint64_t count, TallyPtrs t) {
  extern __shared__ unsigned long long sh[];
  const int nz = c_setup.nz;
  if constexpr (usesShared<M>()) {
    for (int i = threadIdx.x; i < t.sharedNr * t.sharedNz; i += blockDim.x) sh[i] = 0ull;
    __syncthreads();
  }
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  std::uint64_t k = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  Photon<float> p;
  if (k < count) launchPhoton(c_setup, first + k, p);
  else p.alive = false;
  double gain = 0.0;
  RegisterCache rc;
  // Every lane runs the loop until the whole warp is out of packets, so the tally below is
  // reached by all 32 lanes together (needed by the warp-aggregated method's vote/shuffles).
  while (__any_sync(kFullMask, p.alive)) {
    StepEvent<float> ev{EventKind::None, 0, 0.0f, 0.0};
    if (p.alive) ev = mcmlStep(c_setup, p);
    gain += ev.rouletteGain;
    __syncwarp();
    tallyAbsorb<M>(t, sh, nz, ev.kind == EventKind::Absorb, ev.index, ev.weight, rc);
    if (ev.kind == EventKind::Reflect) atomicAddBin<M>(t.rd, ev.index, ev.weight);
    else if (ev.kind == EventKind::Transmit) atomicAddBin<M>(t.tt, ev.index, ev.weight);
    if (!p.alive) {
      k += stride;
      if (k < count) launchPhoton(c_setup, first + k, p);
    }
  }
  if constexpr (usesRegisterCache<M>()) {
    if (rc.index >= 0) fixedAddArz<M>(t, sh, nz, rc.index, rc.amount);
  }
  if constexpr (usesShared<M>()) {  // flush the block's buffer of the high-fluence region
    __syncthreads();
    for (int i = threadIdx.x; i < t.sharedNr * t.sharedNz; i += blockDim.x) {
      const unsigned long long v = sh[i];
      if (v) atomicAdd(static_cast<unsigned long long*>(t.arz) + (i / t.sharedNz) * nz + i % t.sharedNz, v);
    }
  }
  for (int off = 16; off > 0; off >>= 1) gain += __shfl_down_sync(kFullMask, gain, off);
  if ((threadIdx.x & 31) == 0 && gain != 0.0) atomicAdd(t.rouletteGain, gain);
}

template <TallyMethod M>
LaunchShape launchAs(std::uint64_t first, std::uint64_t count, const TallyPtrs& t,
                     cudaStream_t stream) {
  LaunchShape s;
  s.block = kBlock;
  s.sharedBytes = usesShared<M>() ? t.sharedNr * t.sharedNz * int(sizeof(unsigned long long)) : 0;
  int dev = 0, sms = 0, perSm = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));
  PENUMBRA_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  PENUMBRA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
      &perSm, mcmlPersistentKernel<M>, kBlock, std::size_t(s.sharedBytes)));
  cudaFuncAttributes attr{};
  PENUMBRA_CUDA_CHECK(cudaFuncGetAttributes(&attr, mcmlPersistentKernel<M>));
  int maxThreads = 0;
  PENUMBRA_CUDA_CHECK(cudaDeviceGetAttribute(&maxThreads, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
  s.registers = attr.numRegs;
  s.occupancy = double(perSm * kBlock) / maxThreads;
  // Persistent threads: exactly as many blocks as fit at once, fewer for tiny runs.
  const std::uint64_t need = (count + kBlock - 1) / kBlock;
  s.grid = int(std::min<std::uint64_t>(std::uint64_t(std::max(perSm, 1)) * sms, std::max<std::uint64_t>(need, 1)));
  mcmlPersistentKernel<M><<<s.grid, kBlock, std::size_t(s.sharedBytes), stream>>>(first, count, t);
  PENUMBRA_CUDA_CHECK_LAUNCH("mcmlPersistentKernel");
  return s;
}

}  // namespace

void uploadSetup(const TransportSetup<float>& s) {
  PENUMBRA_CUDA_CHECK(cudaMemcpyToSymbol(c_setup, &s, sizeof s));
}

LaunchShape launchMcmlKernel(TallyMethod m, std::uint64_t first, std::uint64_t count,
                             const TallyPtrs& t, cudaStream_t stream) {
  switch (m) {
    case TallyMethod::FloatAtomic: return launchAs<TallyMethod::FloatAtomic>(first, count, t, stream);
    case TallyMethod::DoubleAtomic: return launchAs<TallyMethod::DoubleAtomic>(first, count, t, stream);
    case TallyMethod::WarpAggregatedDouble:
      return launchAs<TallyMethod::WarpAggregatedDouble>(first, count, t, stream);
    case TallyMethod::KahanFloatPair: return launchAs<TallyMethod::KahanFloatPair>(first, count, t, stream);
    case TallyMethod::FixedPoint64: return launchAs<TallyMethod::FixedPoint64>(first, count, t, stream);
    case TallyMethod::SharedBuffer: return launchAs<TallyMethod::SharedBuffer>(first, count, t, stream);
    case TallyMethod::RegisterCache: return launchAs<TallyMethod::RegisterCache>(first, count, t, stream);
    case TallyMethod::SharedRegister: return launchAs<TallyMethod::SharedRegister>(first, count, t, stream);
  }
  PENUMBRA_THROW(Internal, "unknown tally method");
}

}  // namespace penumbra::mcml::cuda
