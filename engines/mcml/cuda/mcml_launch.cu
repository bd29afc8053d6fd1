// Multi-GPU driver of the CUDA MCML engine: the packets of a batch are split into contiguous
// ranges, one per device; every packet keeps its own Philox stream (seed, packet index), so the
// result does not depend on how many GPUs ran it (bit for bit with the fixed-point tallies).
// Each device gets its own constants, tallies and stream; all launch before any is waited on,
// and the tallies are summed on the host in device order.
#include <algorithm>
#include <cmath>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_buffer.cuh"
#include "mcml/cuda/mcml_kernel.cuh"
#include "mcml/mcml_setup.hpp"

namespace penumbra::mcml {

namespace {

struct DeviceRun {
  int device = 0;
  std::uint64_t first = 0, count = 0;
  penumbra::cuda::DeviceBuffer<unsigned char> arz, rd, tt;
  penumbra::cuda::DeviceBuffer<double> gain;
  penumbra::cuda::DeviceBuffer<unsigned long long> nextPacket;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  cuda::LaunchShape shape;
  ~DeviceRun() {
    if (stream) {
      cudaSetDevice(device);
      cudaStreamDestroy(stream);
      cudaEventDestroy(start);
      cudaEventDestroy(stop);
    }
  }
};

void addConverted(TallyMethod m, const std::vector<unsigned char>& raw, std::vector<double>& dst) {
  const std::size_t n = dst.size();
  if (m == TallyMethod::FloatAtomic) {
    const float* f = reinterpret_cast<const float*>(raw.data());
    for (std::size_t i = 0; i < n; ++i) dst[i] += f[i];
  } else if (m == TallyMethod::DoubleAtomic || m == TallyMethod::WarpAggregatedDouble) {
    const double* d = reinterpret_cast<const double*>(raw.data());
    for (std::size_t i = 0; i < n; ++i) dst[i] += d[i];
  } else if (m == TallyMethod::KahanFloatPair) {
    const float* f = reinterpret_cast<const float*>(raw.data());  // (sum, compensation) pairs
    for (std::size_t i = 0; i < n; ++i) dst[i] += double(f[2 * i]) - double(f[2 * i + 1]);
  } else {
    const unsigned long long* u = reinterpret_cast<const unsigned long long*>(raw.data());
    for (std::size_t i = 0; i < n; ++i) dst[i] += double(u[i]) * cuda::kFixedInv;
  }
}

}  // namespace

double runBatchCuda(const LayeredMedium& m, const McmlConfig& c, std::uint64_t first,
                    std::uint64_t count, McmlTally& out, std::string* deviceName,
                    int* devicesUsed, std::vector<KernelProfile>* profiles) {
  std::string why;
  const std::vector<DeviceInfo> devices = queryCudaDevices(&why);
  if (devices.empty()) PENUMBRA_THROW(Unsupported, "no usable GPU for MCML: " + why);
  std::size_t nDev = devices.size();
  if (c.maxDevices > 0) nDev = std::min(nDev, std::size_t(c.maxDevices));
  nDev = std::size_t(std::max<std::uint64_t>(1, std::min<std::uint64_t>(nDev, count)));
  const TransportSetup<float> setup = makeSetup<float>(m, c);
  const std::vector<cuda::GpuLayer> layers = cuda::makeGpuLayers(setup, m);
  double depth = 0;
  for (const Layer& l : m.layers) depth += l.d;
  // Depth bins a deposit can reach (one spare for rounding); deeper bins stay empty.
  const int usedNz = int(std::min<double>(c.nz, std::floor(depth / c.dz) + 2));
  const std::size_t elem = cuda::tallyElementBytes(c.tally);
  const std::size_t nrz = std::size_t(c.nr) * c.nz, nra = std::size_t(c.nr) * c.na;
  out.resize(c);

  std::vector<DeviceRun> runs(nDev);
  for (std::size_t d = 0; d < nDev; ++d) {
    DeviceRun& r = runs[d];
    r.device = devices[d].index;
    r.first = first + count * d / nDev;
    r.count = first + count * (d + 1) / nDev - r.first;
    PENUMBRA_CUDA_CHECK(cudaSetDevice(r.device));
    PENUMBRA_CUDA_CHECK(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
    PENUMBRA_CUDA_CHECK(cudaEventCreate(&r.start));
    PENUMBRA_CUDA_CHECK(cudaEventCreate(&r.stop));
    cuda::uploadSetup(setup, layers);
    r.arz.allocate(nrz * elem);
    r.rd.allocate(nra * elem);
    r.tt.allocate(nra * elem);
    r.gain.allocate(1);
    r.nextPacket.allocate(1);
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(r.arz.get(), 0, nrz * elem, r.stream));
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(r.rd.get(), 0, nra * elem, r.stream));
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(r.tt.get(), 0, nra * elem, r.stream));
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(r.gain.get(), 0, sizeof(double), r.stream));
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(r.nextPacket.get(), 0, sizeof(unsigned long long), r.stream));
    const cuda::TallyPtrs t{r.arz.get(), r.rd.get(), r.tt.get(), r.gain.get(), 0, 0};
    cuda::LaunchInput in;
    in.first = r.first;
    in.count = r.count;
    in.nextPacket = r.nextPacket.get();
    in.numLayers = setup.numLayers;
    in.nr = c.nr;
    in.nz = c.nz;
    in.usedNz = usedNz;
    PENUMBRA_CUDA_CHECK(cudaEventRecord(r.start, r.stream));
    r.shape = cuda::launchMcmlKernel(c.tally, in, t, r.stream);
    PENUMBRA_CUDA_CHECK(cudaEventRecord(r.stop, r.stream));
  }
  double slowestMs = 0;
  std::vector<unsigned char> raw;
  for (DeviceRun& r : runs) {
    PENUMBRA_CUDA_CHECK(cudaSetDevice(r.device));
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(r.stream));
    float ms = 0;
    PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));
    slowestMs = std::max(slowestMs, double(ms));
    raw.resize(nrz * elem);
    r.arz.download(raw.data(), raw.size());
    addConverted(c.tally, raw, out.A_rz);
    raw.resize(nra * elem);
    r.rd.download(raw.data(), raw.size());
    addConverted(c.tally, raw, out.Rd_ra);
    r.tt.download(raw.data(), raw.size());
    addConverted(c.tally, raw, out.Tt_ra);
    double g = 0;
    r.gain.download(&g, 1);
    out.rouletteGain += g;
    if (profiles) {
      KernelProfile p;
      p.kernel = "mcml_persistent";
      p.variant = toString(c.tally);
      p.backend = "cuda";
      p.device = devices[std::size_t(&r - runs.data())].name;
      p.gridX = r.shape.grid;
      p.blockX = r.shape.block;
      p.registersPerThread = r.shape.registers;
      p.sharedBytesPerBlock = r.shape.sharedBytes;
      p.theoreticalOccupancy = r.shape.occupancy;
      p.repetitions = 1;
      p.medianMs = p.minMs = ms;
      profiles->push_back(p);
    }
  }
  if (deviceName) *deviceName = devices[0].name;
  if (devicesUsed) *devicesUsed = int(nDev);
  return slowestMs;
}

}  // namespace penumbra::mcml
