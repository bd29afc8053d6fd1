#pragma once
/// Spot generation on a target: energy layers that cover the target's water-equivalent depth
/// range with margins, and per layer a lateral spot grid at the isocentre plane restricted to the
/// part of the target that layer's Bragg peaks reach (the "layer-wise target slice" in the
/// beam's-eye view, BEV).
///
/// Method (the way matRad and most planning systems do it, on Penumbra's own ray tracer):
///  1. Rays from the virtual source through a fine BEV grid at the isocentre plane covering the
///     target's projection are traced through the stopping-power ratio (3D-DDA); along each ray
///     the water-equivalent depths (WEPL) where it enters and leaves target voxels are recorded
///     (several intervals for a concave target). This is BevTargetProjection.
///  2. Energy layers: ranges R evenly spaced (spacing <= layerSpacingMm) from
///     max WEPL + distal margin down to min WEPL - proximal margin; energy = energyForRange(R),
///     since the engine's R80 matches the PSTAR CSDA range within 1 mm (tests/proton).
///  3. Spots: a square or hexagonal grid centred on the isocentre's BEV position. A spot is kept
///     in a layer when, within lateralMarginMm of it, some ray crosses target voxels whose WEPL
///     interval (widened by the proximal/distal margins) overlaps the layer's slab
///     [R - s/2, R + s/2] (s = actual layer spacing): the target slice that layer treats.
///  4. Weights: uniform 1, or depth-weighted w = (R / R_max)^k, so distal layers, which must
///     carry the plateau of no deeper layer, start heavier (a crude SOBP start for optimisation;
///     with k = 3 the proximal layer of a 5-cm SOBP ending at 15 cm gets (10/15)^3 = 0.3 of the
///     distal weight; optimisation refines it).
///
/// Units: mm (positions, WEPL, ranges), MeV, degrees; weights in units of 1e9 protons
/// (kProtonsPerWeightUnit).
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/calibration.hpp"
#include "core/progress.hpp"
#include "core/volume.hpp"
#include "core/beam_geometry.hpp"
#include "proton/proton_plan.hpp"

namespace penumbra::proton {

class ProtonMachine;

enum class SpotGridPattern {
  Square,     ///< rows and columns spotSpacingMm apart
  Hexagonal,  ///< rows spotSpacingMm * sqrt(3)/2 apart, every other row shifted by half a spacing
};
enum class SpotWeighting {
  Uniform,        ///< every spot weight 1
  DepthWeighted,  ///< w = (R_layer / R_max)^depthWeightExponent
};
const char* toString(SpotGridPattern p);  ///< "square" / "hexagonal"
const char* toString(SpotWeighting w);    ///< "uniform" / "depth"

/// What the user chooses. Margins and spacings in mm; WEPL margins are water-equivalent mm.
struct SpotGenerationOptions {
  double spotSpacingMm = 5.0;      ///< lateral spot spacing at the isocentre plane [mm]
  double lateralMarginMm = 5.0;    ///< spots up to this far outside the layer's target slice [mm]
  /// Range spacing between energy layers [water-equivalent mm]; 0: derived per plan as twice the
  /// range spread sigma at the deepest layer (straggling 0.012 R^0.935 cm, Bortfeld 1997, plus the
  /// machine's energy spread), clamped to [1, 10] mm: Gaussian peaks 2 sigma apart sum with a
  /// ripple of ~1 % (2 exp(-pi^2 / 2) by Poisson summation); real peaks, sharper distally, a
  /// little more.
  double layerSpacingMm = 3.0;
  double proximalMarginMm = 3.0;   ///< layers start this far before the target [WE mm]
  double distalMarginMm = 3.0;     ///< and end this far beyond it [WE mm]
  SpotGridPattern pattern = SpotGridPattern::Hexagonal;
  SpotWeighting weighting = SpotWeighting::Uniform;
  double depthWeightExponent = 3.0;  ///< k of the depth weighting
  /// BEV ray spacing of the target projection at the isocentre plane [mm]; 0: half the smallest
  /// CT voxel spacing (every target voxel is hit by several rays).
  double raySpacingMm = 0.0;
};

/// A beam to place: the frame of the spots. Isocentre in patient LPS mm.
struct BeamPlacement {
  std::string name;
  double gantryDeg = 0;
  double couchDeg = 0;
  Vec3 isocenter;                         ///< LPS mm; see targetCentroid()
  double virtualSourceDistanceMm = 2000;  ///< [mm]
};

/// One BEV ray's passage through the target: water-equivalent depths from the source [mm].
struct WeplInterval {
  double entryMm = 0, exitMm = 0;
};

/// The target seen from the source: a regular ray grid at the isocentre plane, rays
/// (a0 + ia * spacing, b0 + ib * spacing), ia < nA fastest; per ray the WEPL intervals inside the
/// target (empty: the ray misses it). For the BEV panel's outline and for spot selection.
struct BevTargetProjection {
  BeamFrame frame;
  double a0 = 0, b0 = 0;  ///< BEV position of ray (0, 0) at the isocentre plane [mm]
  double spacingMm = 1;   ///< ray spacing at the isocentre plane [mm]
  int nA = 0, nB = 0;
  std::vector<std::vector<WeplInterval>> rays;  ///< nA * nB
  double minWeplMm = 0, maxWeplMm = 0;  ///< proximal and distal target edge over all rays [mm]
  std::size_t hitRays = 0;               ///< rays that cross the target

  const std::vector<WeplInterval>& at(int ia, int ib) const {
    return rays[std::size_t(ib) * std::size_t(nA) + std::size_t(ia)];
  }
};

struct SpotGenerationResult {
  ProtonBeam beam;                  ///< layers distal first (highest energy first)
  BevTargetProjection projection;
  double layerSpacingUsedMm = 0;    ///< actual range spacing between layers [WE mm]
  std::vector<double> layerRangesMm;  ///< per layer, the range R the energy was chosen for [mm]
  std::vector<std::string> messages;  ///< user-facing notes (energies clamped, empty layers)
};

/// Centroid of the mask's voxels in patient LPS mm (the default isocentre). Throws
/// InvalidArgument for an empty mask.
Vec3 targetCentroid(const Mask& mask);

/// Traces the BEV rays of `placement` through `spr` and records their target intervals.
/// The mask must share the SPR grid (structures are rasterised on the CT grid). Throws
/// InvalidArgument for an empty target, a grid mismatch, or a target no ray reaches;
/// CancelledError when `job` is cancelled (checked between rows of rays).
BevTargetProjection projectTarget(const Volume<float>& spr, const Mask& target,
                                  const BeamPlacement& placement, double raySpacingMm = 0.0,
                                  const JobControl& job = {});

/// Layers and spots of one beam on the target (see the file comment). `machine` (null: the
/// generic machine) bounds the energies; ranges outside its energy window are clamped with a
/// message. Throws InvalidArgument for non-positive spacings or negative margins. Cost: one ray
/// per (raySpacing)^2 of the target's projection (~10-30 ms for a 6-cm target on 3-mm CT voxels).
SpotGenerationResult generateSpots(const Volume<float>& spr, const Mask& target,
                                   const BeamPlacement& placement,
                                   const SpotGenerationOptions& options = {},
                                   const ProtonMachine* machine = nullptr,
                                   const JobControl& job = {});
/// Same from a CT in HU through an HU -> SPR curve (empty: the default matRad curve).
SpotGenerationResult generateSpots(const CtVolume& ct, const CalibrationCurve& hlut,
                                   const Mask& target, const BeamPlacement& placement,
                                   const SpotGenerationOptions& options = {},
                                   const ProtonMachine* machine = nullptr,
                                   const JobControl& job = {});

/// SPR volume of a CT through `hlut` (empty: resources/calibration/hu_to_spr_matrad_default.csv).
Volume<float> stoppingPowerRatio(const CtVolume& ct, const CalibrationCurve& hlut = {});

/// Re-applies a weighting to an existing beam (after layers were deleted, say): uniform 1 or
/// (R/R_max)^k with R = CSDA range of each layer's energy.
void applyWeighting(ProtonBeam& beam, SpotWeighting weighting, double exponent = 3.0);

/// Deletes layer `layerIndex`; throws InvalidArgument when out of range.
void removeLayer(ProtonBeam& beam, std::size_t layerIndex);
/// Deletes one spot; a layer left without spots is deleted too (the engine and DICOM RT Ion
/// Plan have no use for empty layers). Throws InvalidArgument when out of range.
void removeSpot(ProtonBeam& beam, std::size_t layerIndex, std::size_t spotIndex);

}  // namespace penumbra::proton
