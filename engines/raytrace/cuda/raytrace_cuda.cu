// CUDA backend of the ray tracer: one thread per ray, double-precision setup and float stepping
// from the same header (dda_traversal.hpp) as the CPU's DdaPrecision::Float path.
//
// This file is compiled with --fmad=false (engines/CMakeLists.txt): without it nvcc fuses the
// setup's products and sums (and the density accumulation) into FMAs, which the host compiler
// (ISO C++ mode, -ffp-contract=off) does not, and CPU-float and GPU results would differ in the
// last bits. With it, both run the same IEEE operations and agree bit for bit; the stepping loop
// itself has no a*b+c pattern whose result FMA would change (T += 1 * DeltaT is exact either way).
// Measured on an H200 (raytrace_cuda_test): with --fmad=true the voxel lists still matched the
// CPU bit for bit, but radiological sums differed in the last bit or two on most rays (the fused
// `sum += len * density`); with --fmad=false all 240k test rays match exactly.
#include <algorithm>
#include <cmath>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/stream_event.cuh"
#include "core/device.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra {

namespace {

constexpr int kBlock = 256;

/// The grid of the current launch; constant for all threads and read through the constant cache.
__constant__ dda::Geometry c_geometry;

struct DeviceSegment {
  int i, j, k;
  float length;
};

struct DensityAccumulator {
  const float* __restrict__ density;
  std::size_t nx, nxy;
  float sum;
  __device__ void operator()(int i, int j, int k, float len) {
    sum += len * __ldg(&density[std::size_t(k) * nxy + std::size_t(j) * nx + std::size_t(i)]);
  }
};

struct SegmentWriter {
  DeviceSegment* __restrict__ out;
  int capacity;
  int count;
  __device__ void operator()(int i, int j, int k, float len) {
    if (count < capacity) out[count] = {i, j, k, len};
    ++count;  // counts past capacity so the host can report how many were needed
  }
};

template <DdaVariant V>
__global__ void __launch_bounds__(kBlock)
    radiologicalPathKernel(const float* __restrict__ density, const dda::RayData* __restrict__ rays,
                           int nRays, float* __restrict__ out) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nRays) return;
  dda::Start<float> s;
  DensityAccumulator acc{density, std::size_t(c_geometry.dims[0]),
                         std::size_t(c_geometry.dims[0]) * std::size_t(c_geometry.dims[1]), 0.0f};
  if (dda::setupRay(c_geometry, rays[r], s)) dda::traverse<V>(s, c_geometry.dims, acc);
  out[r] = acc.sum;
}

template <DdaVariant V>
__global__ void __launch_bounds__(kBlock)
    voxelListKernel(const dda::RayData* __restrict__ rays, int nRays, int capacity,
                    DeviceSegment* __restrict__ segments, int* __restrict__ counts) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nRays) return;
  dda::Start<float> s;
  SegmentWriter w{segments + std::size_t(r) * std::size_t(capacity), capacity, 0};
  if (dda::setupRay(c_geometry, rays[r], s)) dda::traverse<V>(s, c_geometry.dims, w);
  counts[r] = w.count;
}

void requireDevice() {
  std::string why;
  if (queryCudaDevices(&why).empty()) PENUMBRA_THROW(Unsupported, "no usable CUDA device: " + why);
}

std::vector<dda::RayData> toRayData(const std::vector<Ray>& rays) {
  std::vector<dda::RayData> rd;
  rd.reserve(rays.size());
  for (const Ray& r : rays) rd.push_back(makeDdaRay(r));
  return rd;
}

int gridFor(std::size_t n) {
  PENUMBRA_REQUIRE(n <= std::size_t(1) << 30, InvalidArgument, "too many rays in one batch");
  return int((n + kBlock - 1) / kBlock);
}

void launchRadiological(DdaVariant v, const float* density, const dda::RayData* rays, int n,
                        float* out, cudaStream_t stream) {
  if (v == DdaVariant::Classic) {
    radiologicalPathKernel<DdaVariant::Classic>
        <<<gridFor(n), kBlock, 0, stream>>>(density, rays, n, out);
    PENUMBRA_CUDA_CHECK_LAUNCH("radiologicalPathKernel<Classic>");
  } else {
    radiologicalPathKernel<DdaVariant::BranchFree>
        <<<gridFor(n), kBlock, 0, stream>>>(density, rays, n, out);
    PENUMBRA_CUDA_CHECK_LAUNCH("radiologicalPathKernel<BranchFree>");
  }
}

/// Uploads the grid, density and rays; what every radiological-path call starts with.
struct RadiologicalInputs {
  cuda::DeviceBuffer<float> density;
  cuda::DeviceBuffer<dda::RayData> rays;
  cuda::DeviceBuffer<float> out;

  RadiologicalInputs(const Volume<float>& vol, const std::vector<Ray>& hostRays) {
    vol.validate();
    const dda::Geometry g = makeDdaGeometry(vol.grid);
    const std::vector<dda::RayData> rd = toRayData(hostRays);
    PENUMBRA_CUDA_CHECK(cudaMemcpyToSymbol(c_geometry, &g, sizeof g));
    density.upload(vol.data);
    rays.upload(rd);
    out.allocate(hostRays.size());
    out.fillBytes(0xFF);  // poison: NaN, so an unwritten result cannot pass for a path length
  }
};

}  // namespace

void traceRadiologicalPathsCuda(const Volume<float>& density, const std::vector<Ray>& rays,
                                DdaVariant variant, std::vector<float>& out, float* kernelMs) {
  requireDevice();
  out.clear();
  if (rays.empty()) {
    if (kernelMs) *kernelMs = 0;
    return;
  }
  RadiologicalInputs in(density, rays);
  const cudaStream_t stream = cudaStreamPerThread;
  cuda::Event start, stop;
  PENUMBRA_CUDA_CHECK(cudaEventRecord(start.e, stream));
  launchRadiological(variant, in.density.get(), in.rays.get(), int(rays.size()), in.out.get(),
                     stream);
  PENUMBRA_CUDA_CHECK(cudaEventRecord(stop.e, stream));
  PENUMBRA_CUDA_CHECK(cudaEventSynchronize(stop.e));
  if (kernelMs) PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(kernelMs, start.e, stop.e));
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream));
  out = in.out.download();
}

std::vector<std::vector<VoxelSegment>> traceRaysCuda(const Grid& grid, const std::vector<Ray>& rays,
                                                     DdaVariant variant, int maxSegmentsPerRay) {
  requireDevice();
  const dda::Geometry g = makeDdaGeometry(grid);
  const std::vector<dda::RayData> rd = toRayData(rays);
  std::vector<std::vector<VoxelSegment>> result(rays.size());
  if (rays.empty()) return result;
  const int capacity =
      maxSegmentsPerRay > 0 ? maxSegmentsPerRay : std::max(1, g.dims[0] + g.dims[1] + g.dims[2]);
  PENUMBRA_CUDA_CHECK(cudaMemcpyToSymbol(c_geometry, &g, sizeof g));
  cuda::DeviceBuffer<dda::RayData> dRays;
  dRays.upload(rd);
  cuda::DeviceBuffer<DeviceSegment> dSegs(rays.size() * std::size_t(capacity));
  cuda::DeviceBuffer<int> dCounts(rays.size());
  dSegs.fillBytes(0xFF);  // poison: indices -1, lengths NaN
  dCounts.fillBytes(0xFF);
  const cudaStream_t stream = cudaStreamPerThread;
  const int n = int(rays.size());
  if (variant == DdaVariant::Classic) {
    voxelListKernel<DdaVariant::Classic><<<gridFor(rays.size()), kBlock, 0, stream>>>(
        dRays.get(), n, capacity, dSegs.get(), dCounts.get());
    PENUMBRA_CUDA_CHECK_LAUNCH("voxelListKernel<Classic>");
  } else {
    voxelListKernel<DdaVariant::BranchFree><<<gridFor(rays.size()), kBlock, 0, stream>>>(
        dRays.get(), n, capacity, dSegs.get(), dCounts.get());
    PENUMBRA_CUDA_CHECK_LAUNCH("voxelListKernel<BranchFree>");
  }
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream));
  const std::vector<int> counts = dCounts.download();
  const std::vector<DeviceSegment> segs = dSegs.download();
  for (std::size_t r = 0; r < rays.size(); ++r) {
    PENUMBRA_REQUIRE(counts[r] >= 0, Internal, "voxel-list kernel left a ray count unwritten");
    if (counts[r] > capacity)
      PENUMBRA_THROW(InvalidArgument, "ray " + std::to_string(r) + " crosses " +
                                          std::to_string(counts[r]) + " voxels, more than the " +
                                          std::to_string(capacity) + " allowed per ray");
    result[r].reserve(std::size_t(counts[r]));
    for (int s = 0; s < counts[r]; ++s) {
      const DeviceSegment& d = segs[r * std::size_t(capacity) + std::size_t(s)];
      result[r].push_back({d.i, d.j, d.k, double(d.length)});
    }
  }
  return result;
}

KernelProfile timeRadiologicalPathsCuda(const Volume<float>& density, const std::vector<Ray>& rays,
                                        DdaVariant variant, int reps) {
  requireDevice();
  PENUMBRA_REQUIRE(!rays.empty() && reps > 0, InvalidArgument, "nothing to time");
  RadiologicalInputs in(density, rays);
  const cudaStream_t stream = cudaStreamPerThread;
  cuda::Event start, stop;
  std::vector<double> ms;
  for (int r = -3; r < reps; ++r) {  // three warm-ups
    PENUMBRA_CUDA_CHECK(cudaEventRecord(start.e, stream));
    launchRadiological(variant, in.density.get(), in.rays.get(), int(rays.size()), in.out.get(),
                       stream);
    PENUMBRA_CUDA_CHECK(cudaEventRecord(stop.e, stream));
    PENUMBRA_CUDA_CHECK(cudaEventSynchronize(stop.e));
    float t = 0;
    PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&t, start.e, stop.e));
    if (r >= 0) ms.push_back(t);
  }

  KernelProfile p;
  p.kernel = "radiological_path_dda_float";
  p.variant = toString(variant);
  p.backend = "cuda";
  int dev = 0;
  PENUMBRA_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  PENUMBRA_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  p.device = prop.name;
  p.gridX = gridFor(rays.size());
  p.blockX = kBlock;
  cudaFuncAttributes attr{};
  const void* fn = variant == DdaVariant::Classic
                       ? (const void*)radiologicalPathKernel<DdaVariant::Classic>
                       : (const void*)radiologicalPathKernel<DdaVariant::BranchFree>;
  PENUMBRA_CUDA_CHECK(cudaFuncGetAttributes(&attr, fn));
  p.registersPerThread = attr.numRegs;
  p.sharedBytesPerBlock = int(attr.sharedSizeBytes);
  int blocksPerSm = 0;
  PENUMBRA_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocksPerSm, fn, kBlock, 0));
  p.theoreticalOccupancy = double(blocksPerSm * kBlock) / prop.maxThreadsPerMultiProcessor;
  p.repetitions = reps;
  p.medianMs = medianOf(ms);
  p.minMs = *std::min_element(ms.begin(), ms.end());
  // Traffic model: one 4-byte density read per visited voxel (counted on the host with the same
  // float traversal), the ray in (7 doubles), the result out (4 bytes).
  const double voxels =
      double(countVoxelSegments(density.grid, rays, variant, DdaPrecision::Float));
  p.bytes = 4.0 * voxels + double(rays.size()) * (7 * 8 + 4);
  return p;
}

}  // namespace penumbra
