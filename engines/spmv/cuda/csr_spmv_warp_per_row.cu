// The baseline: Liu et al.'s "Half/Double" CSR kernel (Listing 1 of the paper, after Bell and
// Garland's vector CSR): one warp per row through a cooperative-groups tile, lanes stride the
// row 32 entries apart, a cg::reduce at the end, fp16 values widened to double, 512 threads per
// block (the paper's best on liver beam 1) and 32 x rows threads in all. Kept for comparison.
// Two changes from the listing, both needed for correctness here: 64-bit row offsets, and empty
// rows write 0 (the listing skips them and relies on a zeroed output).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_fp16.h>

#include "core/cuda/cuda_check.cuh"
#include "spmv/cuda/spmv_kernels.cuh"

namespace penumbra::spmv::cuda {

namespace cg = cooperative_groups;

namespace {
constexpr int kBlock = 512;

__global__ void __launch_bounds__(kBlock)
    csr_spmv_warp_per_row(const __half* __restrict__ data, const std::int32_t* __restrict__ colInds,
                          const std::int64_t* __restrict__ rowPtr, const double* __restrict__ x,
                          double* __restrict__ y, std::int64_t rows, double scale) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  const std::int64_t warp = std::int64_t(block.group_index().x) * tile.meta_group_size() +
                            tile.meta_group_rank();
  const std::int64_t numWarps = std::int64_t(gridDim.x) * blockDim.x / 32;
  const int lane = int(tile.thread_rank());
  for (std::int64_t i = warp; i < rows; i += numWarps) {
    const std::int64_t start = rowPtr[i], end = rowPtr[i + 1];
    if (start == end) {
      if (lane == 0) y[i] = 0.0;
      continue;
    }
    double val = 0.0;
    for (std::int64_t j = start + lane; j < end; j += tile.size())
      val += double(__half2float(data[j])) * x[colInds[j]];
    const double sum = cg::reduce(tile, val, cg::plus<double>());
    if (lane == 0) y[i] = sum * scale;
  }
}
}  // namespace

LaunchShape warpPerRowShape(std::int64_t rows) {
  const std::int64_t blocks = (rows * 32 + kBlock - 1) / kBlock;
  return {int(std::min<std::int64_t>(std::max<std::int64_t>(blocks, 1), INT32_MAX)), kBlock,
          reinterpret_cast<const void*>(&csr_spmv_warp_per_row)};
}

void launchWarpPerRow(const std::uint16_t* values, const std::int32_t* colIdx,
                      const std::int64_t* rowPtr, std::int64_t rows, double scale,
                      const double* x, double* y, cudaStream_t stream) {
  if (rows == 0) return;
  const LaunchShape s = warpPerRowShape(rows);
  csr_spmv_warp_per_row<<<s.grid, s.block, 0, stream>>>(reinterpret_cast<const __half*>(values),
                                                        colIdx, rowPtr, x, y, rows, scale);
  PENUMBRA_CUDA_CHECK_LAUNCH("csr_spmv_warp_per_row");
}

}  // namespace penumbra::spmv::cuda
