#pragma once
// Device-side data of the proton dose engine and the launchers of its kernels (one .cu each:
// wepl_kernel.cu, superposition_kernel.cu, bev_to_patient.cu; orchestrated by
// proton_dose_cuda.cu). Per-launch constants travel as kernel parameters (they live in the
// constant bank, as __constant__ memory would, without a per-translation-unit symbol to copy).
#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/launch_profile.cuh"
#include "proton/pencil_beam_math.hpp"
#include "raytrace/dda_traversal.hpp"

namespace penumbra::proton::cuda {

inline constexpr int kWeplBlock = 128;     // one thread per BEV ray
inline constexpr int kDepthChunk = 8;      // depth planes per superposition thread
inline constexpr int kResampleBlock = 256;

/// One energy layer of a beam on the device.
struct DevLayer {
  int tableOffset;  ///< into the concatenated IDD / sigma tables
  int tableSize;
  float invDzMm;    ///< 1 / table step [1/mm]
  int pad;
};

/// Everything the superposition kernel reads, for one beam.
struct SuperpositionArgs {
  const float* wepl;            ///< [nD][nB][nA] mm
  float* bevDose;               ///< [nD][nB][nA] Gy
  const float* tableIdd;        ///< MeV cm^2/g, all layers concatenated
  const float* tableSigma;      ///< mm
  const DevLayer* layers;       ///< this beam's layers
  int nLayers;
  const float4* spots;          ///< (a, b, weight, 0) of this beam's spots, iso-plane mm
  const int* tileLayerBegin;    ///< CSR over tile * nLayers + layer
  const int* tileSpots;
  int tilesA;
  int nA, nB, nD;
  float a0, b0, da, db, d0, dd, invSad;
  float cut2;                   ///< cut-off^2 [sigma^2]
  float normK;                  ///< gaussianNormalisation(cut-off)
};

/// One layer as the tile-list build reads it.
struct TileListLayer {
  int spotBegin, spotEnd;  ///< the layer's spots in the beam
  double radius;           ///< BeamLayout::cullRadiusIsoMm [mm]
};

/// A beam's tile lists built on the GPU (tile_list_kernels.cu): the lists prepareBeam() makes
/// on the host (proton/tile_hits.hpp), bit for bit.
struct TileListArgs {
  pb::BevGeometry g;
  int tilesA, tilesB, nLayers;
  const double2* spots;         ///< iso-plane (a, b) of the beam's spots, double as on the host
  const TileListLayer* layers;
  int* begin;                   ///< tilesA * tilesB * nLayers + 1 offsets (out)
  int* tileSpots;               ///< capacity entries (out); BeamLayout::tileListBound suffices
  long long capacity;
  void* scanTemp;               ///< tileListScanBytes(cells) bytes of scratch for the scan
  std::size_t scanTempBytes;
};

/// Attributes of one kernel kind, summed over beams (core/cuda/launch_profile.cuh).
using penumbra::cuda::KernelStats;

void launchHuToSpr(const std::int16_t* ct, const float* lut, float* spr, std::size_t n,
                   cudaStream_t stream);
/// One thread per ray; WEPL [mm] of every sample of the beam's BEV grid.
void launchBevWepl(DdaVariant variant, const dda::Geometry& geo, const float* spr,
                   const pb::BevGeometry& g, float* wepl, cudaStream_t stream, KernelStats& st);
/// Three steps: count per (tile, layer) cell, exclusive scan (CUB), fill in ascending spot order.
void launchTileLists(const TileListArgs& a, cudaStream_t stream, KernelStats& st);
/// Scratch bytes the scan of `cells` + 1 counts needs (TileListArgs::scanTemp).
std::size_t tileListScanBytes(long long cells);
void launchSuperposition(const SuperpositionArgs& a, cudaStream_t stream, KernelStats& st);
/// dose[v] (=, or += when accumulate) trilinear BEV dose at dose-grid voxel v.
void launchBevToPatient(const pb::BevGeometry& g, const float* bevDose, const int dims[3],
                        const double origin[3], const double axes[3][3], float* dose,
                        bool accumulate, cudaStream_t stream, KernelStats& st);

}  // namespace penumbra::proton::cuda
