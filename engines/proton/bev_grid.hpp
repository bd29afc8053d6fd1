#pragma once
/// Host-side preparation of one beam for the dose engine: its IEC frame, the BEV grid that covers
/// the dose grid and the spots' reach, the per-layer tables, and the spot lists per BEV tile.
///
/// Two steps, because the memory estimate must come before anything expensive:
///  - layoutBeam(): geometry and sizes only (cheap: a few sigma_MCS quadratures per layer);
///  - prepareBeam(): adds the tables (cached in the ProtonMachine) and the tile lists.
///
/// Tile lists ("skip empty tiles"): for every 16 x 16-ray BEV tile and energy layer, the spots
/// whose Gaussian can reach the tile. A spot reaches at most c sigma_max(E) at the iso plane
/// scaled by SAD/d0 (d0 = nearest plane, where the iso-plane footprint is widest), so the lists
/// are conservative for every depth. Tiles with an empty list are skipped by both backends.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/grid.hpp"
#include "proton/beam_geometry.hpp"
#include "proton/pencil_beam_math.hpp"
#include "proton/proton_plan.hpp"
#include "proton/proton_tables.hpp"

namespace penumbra::proton {

/// Sampling of the BEV grid; 0 means "the dose grid's smallest spacing".
struct BevSampling {
  double lateralSpacingMm = 0;  ///< ray spacing at the isocentre plane [mm]
  double depthStepMm = 0;       ///< plane spacing along the beam axis [mm]
  double cutoffSigmas = 3;      ///< kernel cut-off c [sigma]
};

/// Geometry and sizes of one beam's BEV grid.
struct BeamLayout {
  BeamFrame frame;
  pb::BevGeometry bev{};
  bool empty = true;                   ///< beam misses the dose grid (or has no spots)
  std::vector<double> cullRadiusIsoMm; ///< per layer: iso-plane reach of its spots [mm]
  int tilesA = 0, tilesB = 0;
  /// Upper bound of the tile lists' entries (per layer: spots x the most tiles a spot's ray box
  /// can span, proton/tile_hits.hpp), for the memory estimate and the GPU build's allocation.
  std::size_t tileListBound = 0;

  std::size_t bevSamples() const {
    return empty ? 0 : std::size_t(bev.nA) * std::size_t(bev.nB) * std::size_t(bev.nD);
  }
  std::size_t tileCount() const { return std::size_t(tilesA) * std::size_t(tilesB); }
};

/// One layer of a prepared beam.
struct PreparedLayer {
  std::shared_ptr<const LayerTable> table;
  int spotBegin = 0, spotEnd = 0;  ///< spot index range within the beam
};

/// Everything both backends need about one beam.
struct PreparedBeam {
  BeamLayout layout;
  std::vector<PreparedLayer> layers;
  std::vector<double> spotA, spotB, spotW;  ///< iso-plane mm, weight; beam order
  /// CSR over (tile * nLayers + layer): spots (beam indices, ascending) reaching that tile.
  std::vector<int> tileLayerBegin;
  std::vector<int> tileSpots;
  /// True when tileLayerBegin / tileSpots hold the lists; false when they were left to the
  /// GPU (TileLists::OnDevice: the CUDA backend builds them from layout, layers and spots).
  bool tileListsOnHost = false;
  /// Unique to one prepareBeam() (0: made otherwise); copies keep it. The lists are a function
  /// of the layout and the spot positions, which a prepared beam's copies share, so equal ids
  /// mean equal lists: the CUDA backend uploads or rebuilds them only when the id changes,
  /// without comparing or keeping a copy of megabytes of lists.
  std::uint64_t tileListsId = 0;
  std::size_t firstGlobalSpot = 0;  ///< column of this beam's first spot in the dose matrix
};

/// Throws InvalidArgument when the dose grid reaches the virtual source (a sample at axial
/// distance <= 1 % of SAD from it) or a spot weight is negative or not finite.
BeamLayout layoutBeam(const ProtonBeam& beam, const Grid& doseGrid, const ProtonMachine& machine,
                      const BevSampling& sampling);

/// Where a prepared beam's tile lists are built.
enum class TileLists {
  OnHost,    ///< by prepareBeam() (the CPU backend and both dose-matrix builds read them)
  OnDevice,  ///< left to the CUDA dose backend (a geometry edit then costs no host pass)
};

/// Tables are taken from (and built into) the machine's cache.
PreparedBeam prepareBeam(const ProtonBeam& beam, const Grid& doseGrid,
                         const ProtonMachine& machine, const BevSampling& sampling,
                         std::size_t firstGlobalSpot, TileLists lists = TileLists::OnHost);
/// The same on a layout that layoutBeam() made for this beam, dose grid, machine and sampling
/// (computeProtonDose() has it from the memory estimate; proton/prepare_cache.hpp keeps it).
PreparedBeam prepareBeam(const ProtonBeam& beam, BeamLayout layout, const ProtonMachine& machine,
                         std::size_t firstGlobalSpot, TileLists lists = TileLists::OnHost);

/// K / (2 pi (1 - exp(-c^2/2))) with K = protons per weight x Gy per MeV/g x 100 mm^2/cm^2:
/// the normalisation of DepthTerms::amp.
double gaussianNormalisation(double cutoffSigmas);

}  // namespace penumbra::proton
