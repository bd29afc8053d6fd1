// csr_spmv_segmented_steps: y = A x on a StepCsr (step_csr.hpp). The warp algorithm is
// segmented_steps_warp.hpp (shared with the CPU emulation in the tests); this file gives it the
// warp intrinsics and cp.async, and launches it.
//
// Grid: 256-thread blocks, one warp per task, then one warp per run of empty rows; a second
// launch adds the pieces of rows cut between tasks (only when there are such rows). Registers are
// capped at 64 (4 blocks = 32 warps per SM): the stages in shared memory, not occupancy, keep the
// bytes in flight (32 warps x 3 blocks ahead x ~0.7 KB = 67 KB per SM, against the ~20 KB that
// Little's law asks for at 27 GB/s per SM and ~1 us of latency under load).
#include <cuda_fp16.h>

#include "core/cuda/cuda_check.cuh"
#include "core/error.hpp"
#include "spmv/cuda/spmv_kernels.cuh"
#include "spmv/segmented_steps_warp.hpp"

namespace penumbra::spmv::cuda {

namespace {

namespace ss = segmented_steps;
constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;
constexpr unsigned kFull = 0xFFFFFFFFu;

/// The warp policy of segmented_steps_warp.hpp on the device.
struct DeviceWarp {
  unsigned char* stages;  // this warp's kStages x kStageBytes of shared memory
  int laneId;

  __device__ int lane() const { return laneId; }
  __device__ std::uint32_t shfl(std::uint32_t v, int src) const {
    return __shfl_sync(kFull, v, src);
  }
  __device__ std::int32_t shfl(std::int32_t v, int src) const { return __shfl_sync(kFull, v, src); }
  __device__ double shflUp(double v, int d) const { return __shfl_up_sync(kFull, v, unsigned(d)); }
  __device__ std::uint32_t shflUp(std::uint32_t v, int d) const {
    return __shfl_up_sync(kFull, v, unsigned(d));
  }
  __device__ double shflXor(double v, int m) const { return __shfl_xor_sync(kFull, v, m); }
  __device__ std::uint32_t ballot(bool p) const { return __ballot_sync(kFull, p); }
  __device__ bool any(bool p) const { return __any_sync(kFull, p) != 0; }
  __device__ std::uint32_t reduceOr(std::uint32_t v) const { return __reduce_or_sync(kFull, v); }
  __device__ void syncwarp() const { __syncwarp(); }

  __device__ unsigned char* stage(int s) const { return stages + s * ss::kStageBytes; }
  /// 16 bytes global -> shared, asynchronously, not kept in L1 (the streams are read once; L1
  /// holds x).
  __device__ void copyAsync16(unsigned char* dst, const void* src) const {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(src) : "memory");
  }
  __device__ void commit() const { asm volatile("cp.async.commit_group;" ::: "memory"); }
  __device__ void waitAllButNewest() const {
    asm volatile("cp.async.wait_group %0;" ::"n"(ss::kStages - 1) : "memory");
  }
  __device__ void readStage(const unsigned char* p, std::uint32_t (&w)[4]) const {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    w[0] = v.x;
    w[1] = v.y;
    w[2] = v.z;
    w[3] = v.w;
  }
  __device__ void readStage(const unsigned char* p, std::uint32_t (&w)[2]) const {
    const uint2 v = *reinterpret_cast<const uint2*>(p);
    w[0] = v.x;
    w[1] = v.y;
  }
  __device__ void readStage(const unsigned char* p, std::uint32_t& w) const {
    w = *reinterpret_cast<const std::uint32_t*>(p);
  }
  /// x through the read-only path, kept in L1: neighbouring rows gather the same x.
  __device__ double gatherX(const double* x, std::uint32_t col) const { return __ldg(x + col); }
  __device__ static double halfToDouble(std::uint16_t h) {
    double d;
    asm("{.reg .f16 t; mov.b16 t, %1; cvt.f64.f16 %0, t;}" : "=d"(d) : "h"(h));
    return d;
  }
};

template <int Bits, int LanesPerGroup>
__global__ void __launch_bounds__(kBlock, 4)
    csr_spmv_segmented_steps(const StepKernelView v, const double* __restrict__ x,
                             double* __restrict__ y) {
  __shared__ __align__(16) unsigned char stages[kWarps][ss::kStages * ss::kStageBytes];
  const int warp = threadIdx.x >> 5;
  const std::uint64_t taskBlocks = (std::uint64_t(v.nTasks) + kWarps - 1) / kWarps;
  DeviceWarp w{stages[warp], int(threadIdx.x & 31)};
  if (blockIdx.x < taskBlocks) {
    const std::uint64_t t = std::uint64_t(blockIdx.x) * kWarps + warp;
    if (t < v.nTasks) ss::runTask<Bits, LanesPerGroup>(w, v, std::uint32_t(t), x, y);
    return;
  }
  const std::uint64_t i = (blockIdx.x - taskBlocks) * kWarps + warp;
  if (i < v.nEmpty) ss::writeEmptyRun(w, v, std::uint32_t(i), y);
}

__global__ void __launch_bounds__(kBlock)
    csr_spmv_segmented_steps_split_rows(const StepKernelView v, double* __restrict__ y) {
  const std::uint64_t i = std::uint64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (i < v.nSplit) ss::finishSplitRow(v, std::uint32_t(i), y);
}

using MainFn = void (*)(const StepKernelView, const double*, double*);
MainFn pick(int bits, int lanesPerGroup) {
  if (bits == 4 && lanesPerGroup == 1) return &csr_spmv_segmented_steps<4, 1>;
  if (bits == 8 && lanesPerGroup == 1) return &csr_spmv_segmented_steps<8, 1>;
  if (bits == 4 && lanesPerGroup == 2) return &csr_spmv_segmented_steps<4, 2>;
  if (bits == 8 && lanesPerGroup == 2) return &csr_spmv_segmented_steps<8, 2>;
  PENUMBRA_THROW(InvalidArgument, "csr_spmv_segmented_steps: no variant for steps of " +
                                      std::to_string(bits) + " bits and " +
                                      std::to_string(lanesPerGroup) + " lanes per group");
}

std::uint64_t gridOf(const StepKernelView& v) {
  return (std::uint64_t(v.nTasks) + kWarps - 1) / kWarps +
         (std::uint64_t(v.nEmpty) + kWarps - 1) / kWarps;
}

}  // namespace

LaunchShape segmentedStepsShape(const StepKernelView& v, int stepBits, int lanesPerGroup) {
  return {int(std::min<std::uint64_t>(gridOf(v), INT32_MAX)), kBlock,
          reinterpret_cast<const void*>(pick(stepBits, lanesPerGroup))};
}

void launchSegmentedSteps(const StepKernelView& v, int stepBits, int lanesPerGroup, const double* x,
                          double* y, cudaStream_t stream) {
  const MainFn fn = pick(stepBits, lanesPerGroup);
  const std::uint64_t grid = gridOf(v);
  PENUMBRA_REQUIRE(grid <= INT32_MAX, Unsupported, "csr_spmv_segmented_steps: too many tasks");
  if (grid == 0) return;
  fn<<<unsigned(grid), kBlock, 0, stream>>>(v, x, y);
  PENUMBRA_CUDA_CHECK_LAUNCH("csr_spmv_segmented_steps");
  if (v.nSplit == 0) return;
  csr_spmv_segmented_steps_split_rows<<<unsigned((v.nSplit + kBlock - 1) / kBlock), kBlock, 0,
                                        stream>>>(v, y);
  PENUMBRA_CUDA_CHECK_LAUNCH("csr_spmv_segmented_steps_split_rows");
}

}  // namespace penumbra::spmv::cuda
