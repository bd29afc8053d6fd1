#pragma once
// Device-side data of the photon CCCS engine and the launchers of its kernels (terma_kernel.cu:
// TERMA by 3D-DDA; cccs_kernel.cu: lattice transport, slot gather, partial-sum reduction;
// orchestrated by photon_dose_cuda.cu). Per-beam and per-direction constants live in
// __constant__ memory of the file whose kernels read them; the upload functions below copy
// them on the stream, so they are ordered with the launches.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>

#include "core/cuda/launch_profile.cuh"
#include "photon/terma_box.hpp"
#include "photon/transport_lattice.hpp"
#include "raytrace/dda_traversal.hpp"

namespace penumbra::photon::cuda {

inline constexpr int kTermaBlock = 256;  ///< one thread per voxel
inline constexpr int kLinesX = 32;       ///< transport block: 32 lines along o0 (one warp) ...
inline constexpr int kLinesY = 4;        ///< ... x 4 along o1
inline constexpr int kLineBlock = kLinesX * kLinesY;
inline constexpr int kGatherBlock = 256;   ///< one thread per voxel
inline constexpr int kGatherBatch = 8;     ///< directions whose loads the gather issues together
inline constexpr int kReduceBlock = 1024;  ///< the single block that sums partials
/// TERMA bricks: 8^3 voxels, one byte each (1: some voxel has TERMA > 0), for the transport's
/// skip of segments that change nothing.
inline constexpr int kBrickShift = 3;
inline constexpr int kMaxSpectrum = 32;    ///< energy bins of the beam model
/// Directions per transport launch: their constants must fit in constant memory (64 KiB).
inline constexpr int kMaxDirectionsPerLaunch = 192;

/// Per-block partial sums, summed by one block in a fixed order (no atomics anywhere).
struct Partial {
  double sum[3];             ///< TERMA: {energy, 0, 0}; transport: {released, deposited, escaped}
  unsigned long long count;  ///< TERMA: DDA segments of the rays; transport: segments transported
  int lo[3], hi[3];          ///< TERMA: index box of TERMA > 0 (lo > hi: empty)
};

/// One beam for the TERMA kernel (constant memory): its geometry (terma_box.hpp, from which the
/// host bounds the voxels the kernel runs over), map size, spectrum and softening.
struct TermaConst : TermaBoxInput {
  int mapNu, mapNv;
  int nE;
  float released[kMaxSpectrum];  ///< f_E E mu/rho_E
  float muMm[kMaxSpectrum];      ///< mu/rho_E / 10: per water-equivalent mm
  double softeningPerDeg;
  double voxelCm3;
};

/// One cone direction for the transport kernel (constant memory). The stepping state is line
/// (0,0)'s, set up on the host by lineStart<float> (transport_lattice.hpp): every line runs it.
struct LineDirection {
  float tNext[3], tDelta[3], length;
  int voxel[3], step[3];
  LatticeBounds bounds;  ///< virtual x = the real dominant index
  int strideA, stride0, stride1;
  int rect0Lo, rect1Lo, rectW0, rectW1;  ///< culled line offsets: o0 in [rect0Lo, +rectW0) ...
  int tiles0;                            ///< blocks along o0
  int blockBegin;                        ///< first block of this direction in its launch
  /// AtomicFree slot storage of the direction, zero-filled before the launch: one entry per
  /// (pattern index n, lateral voxel) of its shadow box (every voxel its lines can reach after
  /// their first TERMA > 0), at slots[slotBase + (n - nBase) area + (r0 - lat0Lo) + (r1 -
  /// lat1Lo) ext0]. A voxel's entries are those of the 1-3 pattern indices of its slice: one
  /// writer each (the line is fixed by the voxel and the slot). Lateral-fastest: a warp of
  /// lines (translates along L0) writes neighbouring entries. (An n-fastest layout for the
  /// directions along i, tried on the H200, slowed the transport from 4.7 to 6.0 ms and did
  /// not speed up the gather.)
  long long slotBase;
  int nBase, area, lat0Lo, lat1Lo, ext0;
  int boxALo, boxAHi, box0Lo, box0Hi, box1Lo, box1Hi;  ///< TERMA > 0 box along A, L0, L1
  int brickA, brick0, brick1;  ///< strides of the brick array along A, L0, L1
  float amp0, mu0, amp1, mu1;  ///< amp = A_c x cone weight / 10 [per mm]; mu = a_c / 10 [1/mm]
  float doseScale;             ///< gy per raw dose / slice chord [cm]
  float crossCm2;              ///< tube cross-section of one line
};

/// One direction for the slot gather (constant memory).
struct GatherDirection {
  int A, L0, L1;
  int lo[3], hi[3];       ///< shadow box (i, j, k): every voxel this direction can write
  int sliceBase;          ///< into the slice table
  int nBase, area, ext0;  ///< as LineDirection (lateral origin lo[L0], lo[L1])
  long long slotBase;
};

/// Slice table entry of one direction's line (0,0): the 1-3 segments of a dominant slice.
/// x: pattern index n of slot 0; y, z: virtual lateral (L0, L1) of slot 0; w: count (bits 0-1)
/// and the lateral moves of slots 1 and 2 from slot 0 (+1 each, 2 bits: bits 2-3, 4-5, 6-7, 8-9).
using SliceEntry = int4;

/// Attributes of one kernel kind, summed over launches (core/cuda/launch_profile.cuh).
using penumbra::cuda::KernelStats;

/// The voxels the TERMA kernel computes (terma_box.hpp); the caller zero-fills the others.
struct TermaBox {
  int lo[3], dims[3];
  int voxels;  ///< dims[0] dims[1] dims[2]
};
struct TermaLaunch {
  const float* density;
  const float* map;
  float* terma;
  Partial* partials;  ///< one per block
  TermaBox box;
  int blocks;
};
void uploadTermaConst(const TermaConst& c, cudaStream_t stream);
void launchTerma(DdaVariant variant, const TermaLaunch& a, cudaStream_t stream, KernelStats& st);

struct TransportLaunch {
  const float* density;
  const float* terma;
  float* dose;        ///< Atomic: atomicAdd target (Gy)
  float* slots;       ///< AtomicFree: per direction, see LineDirection (zero-filled)
  Partial* partials;  ///< one per block
  const std::uint8_t* bricks;  ///< launchTermaBricks()'s, of the beam's TERMA
  int directions;     ///< in this launch (constants uploaded by uploadLineDirections)
  int blocks;
};
void uploadLineDirections(const LineDirection* d, int count, cudaStream_t stream);
/// Brick counts per axis of a grid: ceil(dims / 8).
inline void brickDims(const int dims[3], int out[3]) {
  for (int a = 0; a < 3; ++a) out[a] = (dims[a] + (1 << kBrickShift) - 1) >> kBrickShift;
}
/// bricks[brick] = 1 where some voxel of the 8^3 brick has TERMA > 0, else 0 (every brick written).
void launchTermaBricks(const float* terma, std::uint8_t* bricks, const int dims[3],
                       cudaStream_t stream, KernelStats& st);
void launchTransport(DdaVariant variant, bool atomicFree, const TransportLaunch& a,
                     cudaStream_t stream, KernelStats& st);

struct GatherLaunch {
  const float* slots;
  const SliceEntry* slices;
  float* dose;
  int dims[3];
  long long nVoxels;
  int directions;
  bool first;  ///< dose holds no earlier contribution (it may hold poison): start from 0
};
void uploadGatherDirections(const GatherDirection* d, int count, cudaStream_t stream);
void launchGather(const GatherLaunch& a, cudaStream_t stream, KernelStats& st);

/// out = the sum of partials[0..count) in a fixed order (one block).
void launchReducePartials(const Partial* partials, int count, Partial* out, cudaStream_t stream,
                          KernelStats& st);

}  // namespace penumbra::photon::cuda
