// csr_spmv_sliced_offset8: y = A x on a SlicedOffset8 (sliced_offset8.hpp). The warp algorithm is
// sliced_offset8_warp.hpp (shared with the CPU emulation in the tests); this file gives it the
// warp intrinsics and the streaming loads, and launches it.
//
// Grid: blocks of 8 or 2 warps (SlicedOffset8Options::warpsPerBlock), one warp per task, then one
// warp per run of empty rows; a second launch adds the pieces of rows cut between tasks (only
// when there are such rows). __launch_bounds__ for 32 or 40 warps an SM: 4 or 5 blocks of 8
// warps, 16 or 20 of 2 (SlicedOffset8Options::minBlocksPerSm counts blocks of 8). ptxas, sm_90
// (2026-11-27, the same for 8- and 2-warp blocks): 64 registers and 8 B of spills at 32 warps
// (50 % occupancy; the spill is in the variant with segmented slices), 48 registers and 320 B of
// spills at 40; the kernel for 16-bit offsets (a kernel of its own, as the one for 12-bit) 64
// registers and no spills, 48 and 168 B. At 32 warps the kernel was ahead in every case
// measured against 40 (H200: eleventh session, liver-1 D w 1.55 against 2.18 ms; eighteenth,
// 26-73 % in every bench product); docs/spmv-notes.md, "Eleventh session" and "Thirteenth
// session". The kernels with the row buffer (2-warp blocks, 32 warps an SM; 8 slots of 33
// doubles a warp, 4224 B of shared memory a block): 64 registers, 4 B of spills at 8 bits, 12 /
// 56 B at 12 and 4 / 4 B at 16 (2026-11-28).
// Task i of the grid is taskOrder[i] when the layout has an order (transposes: a block's warps
// on neighbouring rows at the same columns).
#include <cuda_fp16.h>

#include "core/cuda/cuda_check.cuh"
#include "core/error.hpp"
#include "spmv/cuda/spmv_kernels.cuh"
#include "spmv/sliced_offset8_warp.hpp"

namespace penumbra::spmv::cuda {

namespace {

namespace so = sliced_offset8;
constexpr int kBlock = 256;  // the split-row pass
constexpr unsigned kFull = 0xFFFFFFFFu;

/// The warp policy of sliced_offset8_warp.hpp on the device. The matrix streams are read once:
/// they bypass L1 (ld.global.nc.L1::no_allocate), which keeps x, gathered through __ldg.
struct DeviceWarp {
  int laneId;
  double* rows;  ///< the warp's row buffer in shared memory (kernels with one), else null

  __device__ int lane() const { return laneId; }
  __device__ double* rowBuffer() const { return rows; }
  __device__ void syncwarp() const { __syncwarp(); }
  __device__ std::uint32_t shfl(std::uint32_t v, int src) const {
    return __shfl_sync(kFull, v, src);
  }
  __device__ double shflXor(double v, int m) const { return __shfl_xor_sync(kFull, v, m); }
  __device__ std::uint32_t ballot(bool p) const { return __ballot_sync(kFull, p); }
  __device__ void loadStream(const std::uint16_t* p, std::uint32_t (&w)[4]) const {
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3])
        : "l"(p));
  }
  __device__ void loadStream(const std::uint8_t* p, std::uint32_t (&w)[2]) const {
    asm("ld.global.nc.L1::no_allocate.v2.u32 {%0, %1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "l"(p));
  }
  __device__ std::uint32_t loadStream(const std::uint32_t* p) const {
    std::uint32_t w;
    asm("ld.global.nc.L1::no_allocate.u32 %0, [%1];" : "=r"(w) : "l"(p));
    return w;
  }
  __device__ double gatherX(const double* x, std::uint32_t col) const { return __ldg(x + col); }
  /// Both fp16 halves of w (low first): the halves are register halves in PTX, so ptxas can
  /// convert from .H0 / .H1 without shifting them out first.
  __device__ static void halvesToDouble(std::uint32_t w, double& lo, double& hi) {
    asm("{.reg .f16 a, b; mov.b32 {a, b}, %2; cvt.f64.f16 %0, a; cvt.f64.f16 %1, b;}"
        : "=d"(lo), "=d"(hi)
        : "r"(w));
  }
  __device__ static double halfToDouble(std::uint16_t h) {
    double d;
    asm("{.reg .f16 t; mov.b16 t, %1; cvt.f64.f16 %0, t;}" : "=d"(d) : "h"(h));
    return d;
  }
};

/// The warps' work: tasks, then runs of empty rows. high: the offsets' bits beyond the low bytes
/// (kBits 12 or 16; so::runTaskOf). kRowBuffer: short rows summed through a buffer in shared
/// memory (so::flushRows), 2 KB a warp.
template <int kBits, int kWarps, bool kRowBuffer>
__device__ __forceinline__ void runWarp(const Offset8KernelView& v, const double* __restrict__ x,
                                        double* __restrict__ y, const void* high) {
  // Every block has started: the split-row launch may be scheduled now (it waits for this grid's
  // end and memory before it reads anything), so its launch overlaps this grid's last wave.
  asm volatile("griddepcontrol.launch_dependents;");
  const int warp = threadIdx.x >> 5;
  const std::uint64_t taskBlocks = (std::uint64_t(v.nTasks) + kWarps - 1) / kWarps;
  DeviceWarp w{int(threadIdx.x & 31), nullptr};
  if constexpr (kRowBuffer) {
    constexpr std::uint32_t kWarpDoubles = so::kRowSlots * so::kRowStride;
    __shared__ double rowBuffers[kWarps * kWarpDoubles];
    w.rows = rowBuffers + warp * kWarpDoubles;
  }
  if (blockIdx.x < taskBlocks) {
    const std::uint64_t i = std::uint64_t(blockIdx.x) * kWarps + warp;
    if (i < v.nTasks)
      so::runTaskOf<kBits, kRowBuffer>(w, v, v.taskOrder ? v.taskOrder[i] : std::uint32_t(i), x,
                                       y, high);
    return;
  }
  const std::uint64_t i = (blockIdx.x - taskBlocks) * kWarps + warp;
  if (i < v.nEmpty) so::writeEmptyRun(w, v, std::uint32_t(i), y);
}

/// 8-bit offsets.
template <int kWarps, int kMinBlocks, bool kRowBuffer>
__global__ void __launch_bounds__(32 * kWarps, kMinBlocks)
    csr_spmv_sliced_offset8(const Offset8KernelView v, const double* __restrict__ x,
                            double* __restrict__ y) {
  runWarp<8, kWarps, kRowBuffer>(v, x, y, nullptr);
}

/// 12- or 16-bit offsets, their high parts at `high` (a kernel of its own: see runTaskOf).
template <int kBits, int kWarps, int kMinBlocks, bool kRowBuffer>
__global__ void __launch_bounds__(32 * kWarps, kMinBlocks)
    csr_spmv_sliced_offset8_wide(const Offset8KernelView v, const double* __restrict__ x,
                                 double* __restrict__ y, const void* __restrict__ high) {
  runWarp<kBits, kWarps, kRowBuffer>(v, x, y, high);
}

__global__ void __launch_bounds__(kBlock)
    csr_spmv_sliced_offset8_split_rows(const Offset8KernelView v, double* __restrict__ y) {
  // Launched as a programmatic dependent of the task kernel: its partials are complete and
  // visible only after this wait.
  asm volatile("griddepcontrol.wait;" ::: "memory");
  const std::uint64_t i = std::uint64_t(blockIdx.x) * kBlock + threadIdx.x;
  if (i < v.nSplit) so::finishSplitRow(v, std::uint32_t(i), y);
}

using KernelFn = void (*)(const Offset8KernelView, const double*, double*);
using WideKernelFn = void (*)(const Offset8KernelView, const double*, double*, const void*);

void checkLaunch(const Offset8KernelView& v, int offsetBits, bool rowBuffer) {
  PENUMBRA_REQUIRE(offsetBits == 8 || offsetBits == 12 || offsetBits == 16, InvalidArgument,
                   "csr_spmv_sliced_offset8: compiled for offsets of 8, 12 or 16 bits, not " +
                       std::to_string(offsetBits));
  PENUMBRA_REQUIRE(v.minBlocksPerSm == 4 || v.minBlocksPerSm == 5, InvalidArgument,
                   "csr_spmv_sliced_offset8: compiled for 4 or 5 blocks per SM, not " +
                       std::to_string(v.minBlocksPerSm));
  PENUMBRA_REQUIRE(v.warpsPerBlock == 2 || v.warpsPerBlock == 8, InvalidArgument,
                   "csr_spmv_sliced_offset8: compiled for 2 or 8 warps per block, not " +
                       std::to_string(v.warpsPerBlock));
  PENUMBRA_REQUIRE(!rowBuffer || (v.warpsPerBlock == 2 && v.minBlocksPerSm == 4),
                   InvalidArgument,
                   "csr_spmv_sliced_offset8: the row buffer is compiled for blocks of 2 warps, 32 "
                   "warps an SM");
}

// Blocks of 2 warps: 4 (5) times as many blocks an SM, for the same 32 (40) warps and registers.
KernelFn pick(const Offset8KernelView& v, bool rowBuffer) {
  checkLaunch(v, 8, rowBuffer);
  if (rowBuffer) return &csr_spmv_sliced_offset8<2, 16, true>;
  if (v.warpsPerBlock == 2)
    return v.minBlocksPerSm == 4 ? &csr_spmv_sliced_offset8<2, 16, false>
                                 : &csr_spmv_sliced_offset8<2, 20, false>;
  return v.minBlocksPerSm == 4 ? &csr_spmv_sliced_offset8<8, 4, false>
                               : &csr_spmv_sliced_offset8<8, 5, false>;
}

template <int kBits>
WideKernelFn pickWideOf(const Offset8KernelView& v, bool rowBuffer) {
  if (rowBuffer) return &csr_spmv_sliced_offset8_wide<kBits, 2, 16, true>;
  if (v.warpsPerBlock == 2)
    return v.minBlocksPerSm == 4 ? &csr_spmv_sliced_offset8_wide<kBits, 2, 16, false>
                                 : &csr_spmv_sliced_offset8_wide<kBits, 2, 20, false>;
  return v.minBlocksPerSm == 4 ? &csr_spmv_sliced_offset8_wide<kBits, 8, 4, false>
                               : &csr_spmv_sliced_offset8_wide<kBits, 8, 5, false>;
}

WideKernelFn pickWide(const Offset8KernelView& v, int offsetBits, bool rowBuffer) {
  checkLaunch(v, offsetBits, rowBuffer);
  return offsetBits == 12 ? pickWideOf<12>(v, rowBuffer) : pickWideOf<16>(v, rowBuffer);
}

std::uint64_t gridOf(const Offset8KernelView& v) {
  const std::uint64_t w = v.warpsPerBlock;
  return (std::uint64_t(v.nTasks) + w - 1) / w + (std::uint64_t(v.nEmpty) + w - 1) / w;
}

}  // namespace

LaunchShape slicedOffset8Shape(const Offset8KernelView& v, int offsetBits, bool rowBuffer) {
  return {int(std::min<std::uint64_t>(gridOf(v), INT32_MAX)), 32 * int(v.warpsPerBlock),
          offsetBits != 8 ? reinterpret_cast<const void*>(pickWide(v, offsetBits, rowBuffer))
                          : reinterpret_cast<const void*>(pick(v, rowBuffer))};
}

void launchSlicedOffset8(const Offset8KernelView& v, int offsetBits, bool rowBuffer,
                         const void* high, const double* x, double* y, cudaStream_t stream) {
  const std::uint64_t grid = gridOf(v);
  PENUMBRA_REQUIRE(grid <= INT32_MAX, Unsupported, "csr_spmv_sliced_offset8: too many tasks");
  if (grid == 0) return;
  const int block = 32 * int(v.warpsPerBlock);
  if (offsetBits != 8) {
    PENUMBRA_REQUIRE(high || v.nChunks == 0, InvalidArgument,
                     "csr_spmv_sliced_offset8: " + std::to_string(offsetBits) +
                         "-bit offsets without their high parts");
    pickWide(v, offsetBits, rowBuffer)<<<unsigned(grid), block, 0, stream>>>(v, x, y, high);
  } else {
    pick(v, rowBuffer)<<<unsigned(grid), block, 0, stream>>>(v, x, y);
  }
  PENUMBRA_CUDA_CHECK_LAUNCH("csr_spmv_sliced_offset8");
  if (v.nSplit == 0) return;
  // Programmatic dependent launch (sm_90): the second kernel is launched while the first one's
  // last blocks run instead of after it drains.
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(unsigned((v.nSplit + kBlock - 1) / kBlock));
  cfg.blockDim = dim3(kBlock);
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  PENUMBRA_CUDA_CHECK(cudaLaunchKernelEx(&cfg, csr_spmv_sliced_offset8_split_rows, v, y));
  PENUMBRA_CUDA_CHECK_LAUNCH("csr_spmv_sliced_offset8_split_rows");
}

}  // namespace penumbra::spmv::cuda
