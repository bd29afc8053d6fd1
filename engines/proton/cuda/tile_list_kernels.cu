// A beam's tile lists built on the GPU (bev_grid.hpp "tile lists"): for every (tile, layer)
// cell, the layer's spots that reach the tile, in ascending spot order - the lists
// prepareBeam() builds on the host, bit for bit (the same tests, proton/tile_hits.hpp, in
// double without FMA contraction: this file compiles with --fmad=false).
//
// Why on the GPU: after a geometry edit (an isocentre drag) the host pass cost ~0.3 ms a beam
// for hn-2field on the development machine and 0.55 ms on the GPU machine's host, before any
// GPU work could start; here it is three short launches queued behind the previous work.
//
// Method: one warp per cell walks the cell's layer's spots 32 at a time; a ballot of the lanes
// whose spot hits gives the count (first launch) and, after an exclusive scan of the counts
// (cub::DeviceScan, in place), each hit's position in the list (last launch): ballot order is
// lane order, which is spot order, so the lists come out sorted without a sort. A cell's layer
// has ~110 spots for hn-2field (4 ballots); 2 450 cells a beam.
#include <cub/device/device_scan.cuh>

#include "core/cuda/cuda_check.cuh"
#include "proton/cuda/proton_cuda.cuh"
#include "proton/tile_hits.hpp"

namespace penumbra::proton::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kCellBlock = 256;  // 8 warps, 8 cells a block

/// Lanes whose spot of this round reaches the cell's tile.
__device__ unsigned hitBallot(const TileListArgs& A, const TileListLayer& L, int s, int ta,
                              int tb) {
  bool hit = false;
  if (s < L.spotEnd) {
    const double2 p = A.spots[s];
    const pb::SpotRays box = pb::spotRays(p.x, p.y, L.radius, A.g);
    hit = pb::boxHasTile(box, ta, tb) && pb::discMeetsTile(p.x, p.y, L.radius * L.radius, A.g, ta, tb);
  }
  return __ballot_sync(0xffffffffu, hit);
}

/// begin[cell] = the cell's hits and begin[cells] = 0 (the scan turns counts into offsets and
/// the last entry into the total).
__global__ void __launch_bounds__(kCellBlock) countKernel(TileListArgs A, int cells) {
  const int cell = blockIdx.x * (kCellBlock / kWarp) + threadIdx.x / kWarp;
  if (cell >= cells) return;  // warp-uniform
  const int lane = threadIdx.x % kWarp;
  if (cell == 0 && lane == 0) A.begin[cells] = 0;
  const int tile = cell / A.nLayers, l = cell % A.nLayers;
  const int ta = tile % A.tilesA, tb = tile / A.tilesA;
  const TileListLayer L = A.layers[l];
  int count = 0;
  for (int s0 = L.spotBegin; s0 < L.spotEnd; s0 += kWarp)
    count += __popc(hitBallot(A, L, s0 + lane, ta, tb));
  if (lane == 0) A.begin[cell] = count;
}

/// Every cell's hits at begin[cell] onwards, in spot order.
__global__ void __launch_bounds__(kCellBlock) fillKernel(TileListArgs A, int cells) {
  const int cell = blockIdx.x * (kCellBlock / kWarp) + threadIdx.x / kWarp;
  if (cell >= cells) return;
  const int lane = threadIdx.x % kWarp;
  const int tile = cell / A.nLayers, l = cell % A.nLayers;
  const int ta = tile % A.tilesA, tb = tile / A.tilesA;
  const TileListLayer L = A.layers[l];
  const unsigned below = (1u << lane) - 1u;
  long long at = A.begin[cell];
  for (int s0 = L.spotBegin; s0 < L.spotEnd; s0 += kWarp) {
    const unsigned hits = hitBallot(A, L, s0 + lane, ta, tb);
    const long long pos = at + __popc(hits & below);
    // The capacity is the lists' bound, which the hits cannot exceed (tile_hits.hpp): the
    // guard only keeps a broken bound from writing out of the buffer.
    if ((hits >> lane) & 1u && pos < A.capacity) A.tileSpots[pos] = s0 + lane;
    at += __popc(hits);
  }
}

}  // namespace

std::size_t tileListScanBytes(long long cells) {
  std::size_t bytes = 0;
  PENUMBRA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<int*>(nullptr),
                                                    static_cast<int*>(nullptr), int(cells + 1)));
  return bytes;
}

void launchTileLists(const TileListArgs& a, cudaStream_t stream, KernelStats& st) {
  const long long cells = (long long)a.tilesA * a.tilesB * a.nLayers;
  PENUMBRA_REQUIRE(cells < (1LL << 31), InvalidArgument, "tile lists: too many (tile, layer) cells");
  const int n = int(cells);
  if (n == 0) {
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(a.begin, 0, sizeof(int), stream));
    return;
  }
  const unsigned blocks = unsigned((cells + kCellBlock / kWarp - 1) / (kCellBlock / kWarp));
  countKernel<<<blocks, kCellBlock, 0, stream>>>(a, n);
  PENUMBRA_CUDA_CHECK_LAUNCH("tile list count");
  std::size_t bytes = a.scanTempBytes;
  PENUMBRA_REQUIRE(bytes >= tileListScanBytes(cells), InvalidArgument,
                   "tile lists: scan scratch too small");
  PENUMBRA_CUDA_CHECK(
      cub::DeviceScan::ExclusiveSum(a.scanTemp, bytes, a.begin, a.begin, n + 1, stream));
  fillKernel<<<blocks, kCellBlock, 0, stream>>>(a, n);
  PENUMBRA_CUDA_CHECK_LAUNCH("tile list fill");
  st.fn = (const void*)fillKernel;
  st.grid = int(blocks);
  st.block = kCellBlock;
  // Counts written, scanned (read and written) and read: the lists' own length is known only
  // on the GPU, and the spots (16 B, read by every cell of their layer) come from the cache.
  st.bytes += 16.0 * double(cells);
}

}  // namespace penumbra::proton::cuda
