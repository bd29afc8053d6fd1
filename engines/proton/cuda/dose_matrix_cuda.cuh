#pragma once
// The dose-deposition matrix on the GPU: device-side data, the kernels' launchers
// (dose_matrix_kernels.cu, built with --fmad=false) and the device-resident result
// (dose_matrix_cuda.cu). The row arithmetic is proton/dose_matrix_row.hpp, shared with the CPU.
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "core/cuda/device_buffer.cuh"
#include "core/cuda/launch_profile.cuh"
#include "proton/pencil_beam_math.hpp"
#include "proton/proton_backend.hpp"
#include "raytrace/dda_traversal.hpp"

namespace penumbra::proton::cuda {

/// Threads of the row kernels' blocks: 4 warps, each one brick of 4 x 4 x 2 dose voxels (a
/// compact brick keeps a warp's voxels in one BEV tile and a few depth planes for any beam
/// direction, so its lanes walk the same spot lists and layer ranges).
inline constexpr int kMatrixBlock = 128;
inline constexpr int kBrickX = 4, kBrickY = 4, kBrickZ = 2;
static_assert(kBrickX * kBrickY * kBrickZ == 32, "a brick is one warp");

/// One energy layer: its tables (double, as the CPU reads them) and 1 / table step.
struct MatrixLayer {
  const double* idd;
  const double* sigma;
  int n;
  double invDz;  ///< [1/mm], the CPU's 1.0 / dzMm
};

/// One beam on the device.
struct MatrixBeam {
  pb::BevGeometry g;
  int empty;                   ///< misses the dose grid: no entries
  int tilesA, nLayers, firstLayer;  ///< this beam's layers are layers[firstLayer + l]
  const double* wepl;          ///< [nD][nB][nA] mm, traced in double
  const int* tileLayerBegin;   ///< CSR over tile * nLayers + layer (as PreparedBeam)
  const double2* tileSpotAB;   ///< per tile-list entry: the spot's iso-plane (a, b) [mm]
  const int* tileSpotCol;      ///< per tile-list entry: the spot's matrix column
};

/// The three passes over the rows; each evaluates every entry the same way.
enum class MatrixPass {
  ColumnMax,  ///< column maxima of float(v) (atomicMax on the bits) and the count of v > 0
  CountKept,  ///< per row: entries kept by the relative cut-off
  WriteKept,  ///< per row: column and fp16 value of the kept entries, at rowPtr[row]
};

struct MatrixArgs {
  int dims[3];          ///< dose grid
  double origin[3];     ///< first voxel centre [mm]
  double dir[3][3];     ///< direction cosines (Grid::direction.m)
  double spacing[3];    ///< [mm]
  long long bricks[3];  ///< bricks along each axis
  const MatrixBeam* beams;
  int nBeams;
  const MatrixLayer* layers;
  double cut2, normK;       ///< c^2, gaussianNormalisation(c)
  double relativeCutoff;    ///< drop float(v) < relativeCutoff x column maximum
  double invScale;          ///< 1 / the matrix scale
  unsigned* colMaxBits;     ///< [cols] float bits of the column maxima
  unsigned long long* counters;  ///< [0] entries with v > 0, [1] rows written wrongly
  long long* rowCounts;     ///< [rows] kept entries per row (CountKept)
  const long long* rowPtr;  ///< [rows + 1] (WriteKept)
  int* colIdx;              ///< [nnz] (WriteKept)
  std::uint16_t* values;    ///< [nnz] fp16 bits (WriteKept)
};

using penumbra::cuda::KernelStats;

/// WEPL [mm] of every sample of one beam's BEV grid, traced in double exactly as
/// traceBevWeplCpu (same DDA, no FMA contraction).
void launchBevWeplF64(DdaVariant variant, const dda::Geometry& geo, const float* spr,
                      const pb::BevGeometry& g, double* wepl, cudaStream_t stream, KernelStats& st);
/// One pass over the bricks [brick0, brick1) (a launch; the caller splits a pass for cancel).
void launchMatrixRows(MatrixPass pass, const MatrixArgs& a, long long brick0, long long brick1,
                      cudaStream_t stream, KernelStats& st);
/// CUB exclusive sum of n int64 values (in-place allowed); temp = null asks for the scratch size.
void exclusiveScanInt64(void* temp, std::size_t& tempBytes, const long long* in, long long* out,
                        long long n, cudaStream_t stream);

}  // namespace penumbra::proton::cuda

namespace penumbra::proton::detail {

/// The matrix as it stands on the GPU after the build: CSR with int64 row offsets, int32
/// columns and fp16 values, the layout of spmv::HalfCsr, so that the SpMV engine takes it
/// without a round trip through the host (buildDoseMatrixCudaOnDevice moves the buffers into a
/// spmv::DeviceHalfCsr).
struct DeviceDoseMatrix {
  std::int64_t rows = 0, cols = 0, nnz = 0;
  double scale = 1, relativeCutoff = 0;
  std::int64_t droppedEntries = 0;
  penumbra::cuda::DeviceBuffer<std::int64_t> rowPtr;
  penumbra::cuda::DeviceBuffer<int> colIdx;
  penumbra::cuda::DeviceBuffer<std::uint16_t> values;
};

/// Builds D on the GPU. `onCounted(rows, nnz)` runs on the calling thread once the entries are
/// counted and the device allocation is accepted, before they are written (the host download
/// uses it to prepare its memory meanwhile); it may throw to refuse.
DeviceDoseMatrix buildDoseMatrixOnDevice(
    const ResolvedRequest& r, const JobControl& job, std::vector<KernelProfile>& profiles,
    const std::function<void(std::int64_t rows, std::int64_t nnz)>& onCounted = {});

}  // namespace penumbra::proton::detail
