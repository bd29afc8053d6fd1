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
// whose spot hits gives the count (first launch) and, after a one-block exclusive scan of the
// counts (second launch), each hit's position in the list (third launch): ballot order is lane
// order, which is spot order, so the lists come out sorted without a sort. A cell's layer has
// ~110 spots for hn-2field (4 ballots); 2 450 cells a beam.
#include "core/cuda/cuda_check.cuh"
#include "proton/cuda/proton_cuda.cuh"
#include "proton/tile_hits.hpp"

namespace penumbra::proton::cuda {

namespace {

constexpr int kWarp = 32;
constexpr int kCellBlock = 256;  // 8 warps, 8 cells a block
constexpr int kScanBlock = 1024;

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

/// begin[cell] = the cell's hits (the scan turns counts into offsets).
__global__ void __launch_bounds__(kCellBlock) countKernel(TileListArgs A, int cells) {
  const int cell = blockIdx.x * (kCellBlock / kWarp) + threadIdx.x / kWarp;
  if (cell >= cells) return;  // warp-uniform
  const int lane = threadIdx.x % kWarp;
  const int tile = cell / A.nLayers, l = cell % A.nLayers;
  const int ta = tile % A.tilesA, tb = tile / A.tilesA;
  const TileListLayer L = A.layers[l];
  int count = 0;
  for (int s0 = L.spotBegin; s0 < L.spotEnd; s0 += kWarp)
    count += __popc(hitBallot(A, L, s0 + lane, ta, tb));
  if (lane == 0) A.begin[cell] = count;
}

/// Exclusive scan of begin[0, n) in place, begin[n] = the total; one block, each thread a
/// contiguous chunk (integer sums: any order gives the same offsets).
__global__ void __launch_bounds__(kScanBlock) scanKernel(int* begin, int n) {
  __shared__ int sPartial[kScanBlock];
  const int t = threadIdx.x;
  const int per = (n + kScanBlock - 1) / kScanBlock;
  const int lo = min(n, t * per), hi = min(n, lo + per);
  int sum = 0;
  for (int i = lo; i < hi; ++i) sum += begin[i];
  sPartial[t] = sum;
  __syncthreads();
  // Hillis-Steele inclusive scan of the partial sums (1024 values, 10 steps).
  for (int d = 1; d < kScanBlock; d *= 2) {
    const int v = t >= d ? sPartial[t - d] : 0;
    __syncthreads();
    sPartial[t] += v;
    __syncthreads();
  }
  int run = sPartial[t] - sum;  // exclusive
  for (int i = lo; i < hi; ++i) {
    const int c = begin[i];
    begin[i] = run;
    run += c;
  }
  if (t == kScanBlock - 1) begin[n] = sPartial[t];
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
  scanKernel<<<1, kScanBlock, 0, stream>>>(a.begin, n);
  PENUMBRA_CUDA_CHECK_LAUNCH("tile list scan");
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
