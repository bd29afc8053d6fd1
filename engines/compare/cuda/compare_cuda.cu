// CUDA backend of the dose comparison: one thread per reference point runs comparePoint() (the
// same code as the CPU reference; the search in float, positions in double), in launches of a
// few slices so that progress and cancel are honoured. Statistics are computed on the host from
// the volumes (compare_stats.cpp), as for the CPU.
#include <cuda_runtime.h>

#include <cmath>
#include <limits>

#include "compare/compare_internal.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_attributes.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/launch_profile.cuh"
#include "core/cuda/stream_event.cuh"

namespace penumbra::compare::detail {

namespace {

constexpr int kBlock = 128;

__global__ void __launch_bounds__(kBlock)
    compareKernel(PointSetup<float> s, const float* __restrict__ ref,
                  const std::uint8_t* __restrict__ mask, float* __restrict__ gamma,
                  float* __restrict__ diff, int firstSlice, int lastSlice,
                  unsigned long long* depthLimited) {
  const long long slice = (long long)s.refDims[0] * s.refDims[1];
  const long long at = (long long)firstSlice * slice + (long long)blockIdx.x * kBlock + threadIdx.x;
  if (at >= (long long)lastSlice * slice) return;
  const int i = int(at % s.refDims[0]);
  const int j = int(at / s.refDims[0] % s.refDims[1]);
  const int k = int(at / slice);
  const float nan = __int_as_float(0x7fc00000);
  const PointOutcome o = comparePoint(s, i, j, k, __ldg(ref + at), mask ? __ldg(mask + at) != 0 : true);
  diff[at] = o.cls == kOutsideEvaluated ? nan : o.difference;
  gamma[at] = o.cls == kEvaluated && s.gamma ? o.gamma : nan;
  if (o.depthLimited) atomicAdd(depthLimited, 1ull);
}

}  // namespace

std::int64_t runCompareCuda(const CompareRequest& r, const PointSetup<double>& setup,
                            CompareResult& out, const JobControl& job) {
  penumbra::cuda::requireCudaDevice();
  out.device = penumbra::cuda::currentDeviceName();
  const std::size_t nRef = r.reference->data.size();
  const std::size_t nEval = r.evaluated->data.size();
  penumbra::cuda::Stream stream;
  penumbra::cuda::DeviceBuffer<float> dRef(nRef), dEval(nEval), dGamma(nRef), dDiff(nRef);
  penumbra::cuda::DeviceBuffer<std::uint8_t> dMask(r.mask ? nRef : 0);
  penumbra::cuda::DeviceBuffer<unsigned long long> dLimited(1);
  penumbra::cuda::LaunchTimes upload, kernel, download;
  upload.begin(stream.s);
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(dRef.get(), r.reference->data.data(), nRef * 4,
                                      cudaMemcpyHostToDevice, stream.s));
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(dEval.get(), r.evaluated->data.data(), nEval * 4,
                                      cudaMemcpyHostToDevice, stream.s));
  if (r.mask)
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(dMask.get(), r.mask->data.data(), nRef,
                                        cudaMemcpyHostToDevice, stream.s));
  PENUMBRA_CUDA_CHECK(cudaMemsetAsync(dLimited.get(), 0, sizeof(unsigned long long), stream.s));
  upload.end(stream.s);

  PointSetup<float> s = toFloat(setup);
  s.field.dose = dEval.get();
  const Grid& g = r.reference->grid;
  const long long slice = (long long)g.dims[0] * g.dims[1];
  // About 2^21 points a launch: a cancel is noticed within a few milliseconds.
  const int slicesPerLaunch = int(std::max<long long>(1, (1ll << 21) / std::max(1ll, slice)));
  penumbra::cuda::KernelStats stats;
  stats.fn = (const void*)compareKernel;
  stats.block = kBlock;
  for (int k0 = 0; k0 < g.dims[2]; k0 += slicesPerLaunch) {
    job.checkCancel();
    const int k1 = std::min(g.dims[2], k0 + slicesPerLaunch);
    const long long points = (long long)(k1 - k0) * slice;
    const int blocks = int((points + kBlock - 1) / kBlock);
    stats.grid = blocks;
    kernel.begin(stream.s);
    compareKernel<<<blocks, kBlock, 0, stream.s>>>(s, dRef.get(), r.mask ? dMask.get() : nullptr,
                                                   dGamma.get(), dDiff.get(), k0, k1,
                                                   dLimited.get());
    PENUMBRA_CUDA_CHECK_LAUNCH("compareKernel");
    kernel.end(stream.s);
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream.s));
    job.report(double(k1) / g.dims[2], "gamma (CUDA)");
  }
  download.begin(stream.s);
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(out.gamma.data.data(), dGamma.get(), nRef * 4,
                                      cudaMemcpyDeviceToHost, stream.s));
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(out.difference.data.data(), dDiff.get(), nRef * 4,
                                      cudaMemcpyDeviceToHost, stream.s));
  unsigned long long limited = 0;
  PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(&limited, dLimited.get(), sizeof limited,
                                      cudaMemcpyDeviceToHost, stream.s));
  download.end(stream.s);
  PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream.s));

  // Traffic model: each point reads its reference dose (and mask) and writes two floats; the
  // evaluated dose is read through the cache (at least once).
  stats.bytes = double(nRef) * (4 + 8 + (r.mask ? 1 : 0)) + double(nEval) * 4;
  const std::string variant = r.criteria.local ? "local" : "global";
  out.profiles.push_back(penumbra::cuda::launchProfile("gamma_search", variant, stats,
                                                       kernel.totalMs(), kernel.launches(),
                                                       out.device));
  penumbra::cuda::KernelStats copyIn;
  copyIn.bytes = double(nRef + nEval) * 4 + (r.mask ? double(nRef) : 0);
  out.profiles.push_back(penumbra::cuda::launchProfile("upload doses", "copy", copyIn,
                                                       upload.totalMs(), 1, out.device));
  penumbra::cuda::KernelStats copyOut;
  copyOut.bytes = double(nRef) * 8;
  out.profiles.push_back(penumbra::cuda::launchProfile("download gamma + difference", "copy",
                                                       copyOut, download.totalMs(), 1, out.device));
  return std::int64_t(limited);
}

}  // namespace penumbra::compare::detail
