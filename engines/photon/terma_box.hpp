#pragma once
/// The index box that holds every voxel whose TERMA can be > 0 for a beam, computed on the host
/// from the beam's geometry: the GPU TERMA kernel runs its threads over this box only (the
/// voxels outside it are exactly 0), so that its blocks hold voxels that trace rays instead of
/// mostly voxels that exit at once and wait at the block's barrier for the few that trace
/// (ncu, H100, water 256^3 with a 10 x 10 cm^2 field: 61 % of the warps' cycles were such waits).
///
/// The bound is the kernel's own quick-reject test (terma_kernel.cu, voxelOpen): a voxel can
/// have TERMA > 0 only if it lies in front of the source (d = rel.w > 0) and
///     x + ex >= openLo_u,  x - ex <= openHi_u  (and the same along v),
/// with x = (rel.u sad/d - mapU0)/pitch and ex = |footU| sad/(3 d pitch) + 2. Multiplied by
/// d pitch/sad > 0 each condition is linear in the voxel index, so the voxels that pass lie in a
/// convex polytope: the grid's box cut by five half-spaces. Its bounding box is that of its
/// vertices (every triple of the eleven planes, kept when it satisfies all of them), widened by
/// one voxel for rounding.
#include "raytrace/dda_traversal.hpp"

namespace penumbra::photon {

/// The beam's geometry as the TERMA kernel sees it (the base of its constants, TermaConst in
/// cuda/photon_cuda.cuh; no default member values, so that it may live in __constant__ memory).
struct TermaBoxInput {
  dda::Geometry geo;  ///< the dose grid
  double source[3], u[3], v[3], w[3];
  double sad, footU, footV;  ///< mm; the voxel's lateral footprint along u and v
  double mapU0, mapV0, mapPitch;
  /// Pixel box of the map's open pixels (value > 0), inclusive (lo > hi: none): a voxel whose
  /// footprint samples all lie more than a pixel outside it has open fraction 0.
  int openLo[2], openHi[2];
};

/// lo/hi (inclusive, inside the grid) of every voxel the quick-reject test lets through;
/// false (lo > hi) when no voxel can have TERMA > 0.
bool termaIndexBox(const TermaBoxInput& in, int lo[3], int hi[3]);

}  // namespace penumbra::photon
