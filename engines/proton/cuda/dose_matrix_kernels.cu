// Kernels of the GPU dose-matrix build. Built with --fmad=false (engines/CMakeLists.txt): every
// double operation of a row is the CPU's (proton/dose_matrix_row.hpp), so the entries agree bit
// for bit but where CUDA's exp() and glibc's differ in the last bit.
//
// Rows: one thread per dose voxel, one warp per 4 x 4 x 2 brick of voxels. The loops over beams
// and layers are warp-uniform (every lane has the same beams and layers), so a layer's corner
// terms (8 table look-ups, 3 divisions each) are computed by the warp together; only the spot
// lists differ between lanes (a lane's tile). Within a layer, each lane first scans its list for
// the next spot inside the cut-off of one of its corners (compares only), then the warp
// evaluates the found entries together (8 double exps each): 62 % of the listed spots are
// outside the cut-off (hn-2field at 1 mm: 4.3e9 listed, 1.7e9 inside, on 3.1e6 rows in a beam;
// the lists are conservative for a whole tile and every depth), and evaluating in lockstep
// would run the exps of the warp at the rate of its lanes' lists instead of its entries. A
// lane's entries come out in (beam, layer, spot) order, the CPU's, so a row needs no sort.
//
// Three passes evaluate every entry the same way: column maxima, kept counts, kept entries;
// recomputing costs two extra evaluations but no memory beyond the CSR itself (an entry list
// for one pass would need 8 bytes per entry more than the 6 of the result).
#include <algorithm>
#include <cub/device/device_scan.cuh>

#include "core/cuda/cuda_check.cuh"
#include "proton/bev_wepl.hpp"
#include "proton/cuda/dose_matrix_cuda.cuh"
#include "proton/dose_matrix_row.hpp"

namespace penumbra::proton::cuda {

namespace {

constexpr unsigned kFull = 0xFFFFFFFFu;
constexpr int kWarps = kMatrixBlock / 32;
// Registers (nvcc 13, sm_90, -Xptxas -v): 155 per thread unbounded (3 blocks = 12 warps per
// SM); bounded to 4 blocks, 128 with 4 bytes of spills (16 warps); 5 blocks would spill ~200
// bytes. The double pipeline needs warps in flight to hide its latency, so 4.
constexpr int kMinBlocksPerSm = 4;

template <DdaVariant V>
__global__ void __launch_bounds__(128)
    bevWeplF64Kernel(dda::Geometry geo, const float* __restrict__ spr, pb::BevGeometry g,
                     double* __restrict__ wepl) {
  const long long rays = (long long)g.nA * g.nB;
  const long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (r >= rays) return;
  pb::traceBevRay<V>(geo, spr, g, int(r % g.nA), int(r / g.nA), wepl + r, rays);
}

/// Patient position [mm] of voxel (i, j, k): Grid::indexToWorld's operations in its order.
__device__ __forceinline__ void voxelCentre(const MatrixArgs& A, int i, int j, int k, double p[3]) {
  const double x = double(i) * A.spacing[0], y = double(j) * A.spacing[1],
               z = double(k) * A.spacing[2];
#pragma unroll
  for (int r = 0; r < 3; ++r) p[r] = A.origin[r] + (A.dir[r][0] * x + A.dir[r][1] * y + A.dir[r][2] * z);
}

/// Corner terms of the current layer: the cut-offs in registers (read for every listed spot),
/// wa and expo in shared memory (read only for the entries found), [quantity][corner][thread]
/// so that a warp's reads are consecutive. The terms are computed one corner at a time into
/// shared memory: 8 corners unrolled (3 double divisions each) set the kernel's register peak.
struct SharedTerms {
  double cutv[8];
  double* s;  // this thread's column of a [24][kMatrixBlock] array: wa, expo, cut
  __device__ __forceinline__ double wa(int c) const { return s[c * kMatrixBlock]; }
  __device__ __forceinline__ double expo(int c) const { return s[(8 + c) * kMatrixBlock]; }
  __device__ __forceinline__ double cut(int c) const { return cutv[c]; }
};

template <MatrixPass P>
__global__ void __launch_bounds__(kMatrixBlock, kMinBlocksPerSm)
    doseMatrixRowsKernel(MatrixArgs A, long long brick0, long long brick1) {
  // Warp-uniform exit: the warp-synchronous loops below need all 32 lanes.
  const long long brick = brick0 + (long long)blockIdx.x * kWarps + threadIdx.x / 32;
  if (brick >= brick1) return;
  const int lane = threadIdx.x & 31;
  const int bx = int(brick % A.bricks[0]), by = int((brick / A.bricks[0]) % A.bricks[1]),
            bz = int(brick / (A.bricks[0] * A.bricks[1]));
  const int i = bx * kBrickX + (lane & 3), j = by * kBrickY + ((lane >> 2) & 3),
            k = bz * kBrickZ + (lane >> 4);
  const bool valid = i < A.dims[0] && j < A.dims[1] && k < A.dims[2];
  const long long row = ((long long)k * A.dims[1] + j) * A.dims[0] + i;
  double p[3];
  voxelCentre(A, i, j, k, p);
  const float* colMax = reinterpret_cast<const float*>(A.colMaxBits);
  const long long base = (P == MatrixPass::WriteKept && valid) ? A.rowPtr[row] : 0;
  long long n = 0;  // entries of this row so far (ColumnMax: with v > 0; else kept)
  __shared__ double sTerms[24 * kMatrixBlock];
  SharedTerms st;
  st.s = sTerms + threadIdx.x;

  for (int b = 0; b < A.nBeams; ++b) {
    const MatrixBeam& B = A.beams[b];
    pb::VoxelCorners vc;
    const bool in = valid && !B.empty && pb::voxelCorners(B.g, B.tilesA, p[0], p[1], p[2], vc);
    if (!__any_sync(kFull, in)) continue;
    for (int l = 0; l < B.nLayers; ++l) {
      int e = 0, e1 = 0;
      if (in) {
        e = B.tileLayerBegin[vc.tile * B.nLayers + l];
        e1 = B.tileLayerBegin[vc.tile * B.nLayers + l + 1];
        if (e < e1) {
          const MatrixLayer L = A.layers[B.firstLayer + l];
          bool any = false;
#pragma unroll 1
          for (int c = 0; c < 8; ++c)
            any |= pb::cornerTerm(L.idd, L.sigma, L.n, L.invDz, B.wepl, vc, c, A.cut2, A.normK,
                                  st.s[c * kMatrixBlock], st.s[(8 + c) * kMatrixBlock],
                                  st.s[(16 + c) * kMatrixBlock]);
          if (!any) e1 = e;
#pragma unroll
          for (int c = 0; c < 8; ++c) st.cutv[c] = st.s[(16 + c) * kMatrixBlock];
        }
      }
      while (__any_sync(kFull, e < e1)) {
        double r2[4];
        bool found = false;
        for (; e < e1; ++e) {  // compares only: find this lane's next entry
          const double2 s = B.tileSpotAB[e];
          pb::spotDistances(vc, s.x, s.y, r2);
          if (pb::spotReachesOf(st, r2)) {
            found = true;
            break;
          }
        }
        __syncwarp();  // evaluate the found entries of the warp together
        if (!found) continue;
        const double v = pb::spotValueOf(st, r2);
        const int col = B.tileSpotCol[e];
        ++e;
        if (!(v > 0)) continue;  // underflow: not an entry (as on the CPU)
        const float fv = float(v);
        if constexpr (P == MatrixPass::ColumnMax) {
          // Non-negative floats order as their bits. The L2 read skips the atomic once the
          // column's maximum has grown past this entry (nearly always after the first rows).
          const unsigned bits = __float_as_uint(fv);
          if (bits > __ldcg(A.colMaxBits + col)) atomicMax(A.colMaxBits + col, bits);
          ++n;
        } else {
          if (double(fv) < A.relativeCutoff * double(__ldg(colMax + col))) continue;
          if constexpr (P == MatrixPass::WriteKept) {
            A.colIdx[base + n] = col;
            A.values[base + n] = pb::entryHalf(fv, A.invScale);
          }
          ++n;
        }
      }
    }
  }

  if constexpr (P == MatrixPass::ColumnMax) {
    unsigned long long sum = valid ? (unsigned long long)n : 0ull;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_down_sync(kFull, sum, o);
    if (lane == 0 && sum) atomicAdd(A.counters, sum);
  } else if constexpr (P == MatrixPass::CountKept) {
    if (valid) A.rowCounts[row] = n;
  } else {
    // The counting pass and this one evaluate the same entries: a difference is a bug.
    if (valid && base + n != A.rowPtr[row + 1]) atomicAdd(A.counters + 1, 1ull);
  }
}

}  // namespace

void launchBevWeplF64(DdaVariant variant, const dda::Geometry& geo, const float* spr,
                      const pb::BevGeometry& g, double* wepl, cudaStream_t stream, KernelStats& st) {
  const long long rays = (long long)g.nA * g.nB;
  const int grid = int((rays + 127) / 128);
  if (variant == DdaVariant::Classic) {
    bevWeplF64Kernel<DdaVariant::Classic><<<grid, 128, 0, stream>>>(geo, spr, g, wepl);
    PENUMBRA_CUDA_CHECK_LAUNCH("bevWeplF64Kernel<Classic>");
    st.fn = (const void*)bevWeplF64Kernel<DdaVariant::Classic>;
  } else {
    bevWeplF64Kernel<DdaVariant::BranchFree><<<grid, 128, 0, stream>>>(geo, spr, g, wepl);
    PENUMBRA_CUDA_CHECK_LAUNCH("bevWeplF64Kernel<BranchFree>");
    st.fn = (const void*)bevWeplF64Kernel<DdaVariant::BranchFree>;
  }
  st.grid = grid;
  st.block = 128;
  st.bytes += 12.0 * double(rays) * g.nD;  // WEPL written (8 B), SPR read about once (4 B)
}

void launchMatrixRows(MatrixPass pass, const MatrixArgs& a, long long brick0, long long brick1,
                      cudaStream_t stream, KernelStats& st) {
  if (brick1 <= brick0) return;
  const long long blocks = (brick1 - brick0 + kWarps - 1) / kWarps;
  PENUMBRA_REQUIRE(blocks < (1ll << 31), InvalidArgument, "dose matrix: too many voxels per launch");
  const unsigned grid = unsigned(blocks);
  switch (pass) {
    case MatrixPass::ColumnMax:
      doseMatrixRowsKernel<MatrixPass::ColumnMax><<<grid, kMatrixBlock, 0, stream>>>(a, brick0, brick1);
      PENUMBRA_CUDA_CHECK_LAUNCH("doseMatrixRowsKernel<ColumnMax>");
      st.fn = (const void*)doseMatrixRowsKernel<MatrixPass::ColumnMax>;
      break;
    case MatrixPass::CountKept:
      doseMatrixRowsKernel<MatrixPass::CountKept><<<grid, kMatrixBlock, 0, stream>>>(a, brick0, brick1);
      PENUMBRA_CUDA_CHECK_LAUNCH("doseMatrixRowsKernel<CountKept>");
      st.fn = (const void*)doseMatrixRowsKernel<MatrixPass::CountKept>;
      break;
    case MatrixPass::WriteKept:
      doseMatrixRowsKernel<MatrixPass::WriteKept><<<grid, kMatrixBlock, 0, stream>>>(a, brick0, brick1);
      PENUMBRA_CUDA_CHECK_LAUNCH("doseMatrixRowsKernel<WriteKept>");
      st.fn = (const void*)doseMatrixRowsKernel<MatrixPass::WriteKept>;
      break;
  }
  st.grid = int(std::min<long long>(blocks, 1ll << 30));
  st.block = kMatrixBlock;
}

void exclusiveScanInt64(void* temp, std::size_t& tempBytes, const long long* in, long long* out,
                        long long n, cudaStream_t stream) {
  PENUMBRA_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, tempBytes, in, out, n, stream));
}

}  // namespace penumbra::proton::cuda
