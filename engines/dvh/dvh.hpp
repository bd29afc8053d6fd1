#pragma once
/// Dose-volume histograms (DVH) and dose statistics of structures.
///
/// Two methods:
/// - contour-based (the accurate one, used whenever a structure has planar contours). The
///   structure between two neighbouring contour planes a and b is reconstructed by
///   SHAPE-BASED INTERPOLATION (Raya & Udupa 1990; `ContourInterpolation::ShapeBased`):
///   * each plane's 2D signed distance d (negative inside; even-odd, so holes work) is
///     computed once on the in-plane sample lattice; the cross-section at the fraction t of
///     the way from a to b is {p : (1 - s) da(p) + s db(p) < 0};
///   * ray correspondence: in a cell inside one plane's region only, that plane's distance is
///     replaced by the distance to its boundary along the ray from the other plane's nearest
///     boundary point through the cell. For concentric shapes this is the plain distance; it
///     keeps flat faces that cross the planes (the base of a cone or the end of a cylinder
///     lying across the planes: a straight edge both contours share) interpolated instead of
///     cut back to the shorter contour's edge, the known failure of the plain distance morph;
///   * morph fraction s(t): the planes' linear size is their inradius r (largest inscribed
///     circle, which the morph moves linearly with s for nested shapes); r^2 along the normal
///     is interpolated by the quadratics through three neighbouring planes, blended
///     (1 - t) Q(a-1, a, b) + t Q(a, b, b+1) (one quadratic next to an end plane), and s is
///     the fraction of the way from r_a to r_b that r has reached. This is exact for quadratic
///     r^2: spheres and ellipsoids, cylinders along or across the planes, cones, and it gives
///     round ends (r ~ sqrt(distance), like a sphere's pole or a lying cylinder's side, where
///     the end contour is degenerate) and apices (r ~ distance) their right profile without
///     any rule on the kind of end. Identical contours give the prism exactly;
///   * end caps: beyond the first and last plane (and on both sides of a gap wider than
///     1.5 x the median spacing) the end contour is extruded by half the median spacing, the
///     convention of Nelms et al. (Med Phys 42:4435, 2015) whose analytical DVHs include them
///     (they add ~0 for a degenerate end contour and a half slice for a flat end).
///   `ContourInterpolation::Slab` keeps the classic model for comparison: each plane extruded
///   over a slab reaching half way to its neighbours (plus the same end caps); it misses round
///   ends (-2.5 % on a cylinder lying across 2 mm planes, -4.6 % at 3 mm).
///   Sampling: a lattice in the plane with rows every <= 0.25 mm (adaptive: coarser for very
///   large structures, finer for small ones; aligned with dose voxel faces and centres when
///   the contours are parallel to the dose slices, so voxel-edge contours give exact volumes),
///   exact even-odd crossings along each row in the slab / cap model, and in an interpolated
///   interval the crossings of the morph boundary by linear interpolation between lattice
///   cells; layers of <= the lattice step through each interval and cap (summing exactly to
///   the plane spacing). Dose comes from trilinear interpolation of the dose grid, which may
///   have any geometry; Dmin / Dmax also look at every contour vertex and every row end;
/// - mask-based (fast, for structures without contours): every voxel of the structure's mask
///   counts with its full volume at the dose interpolated at its centre.
///
/// Dose outside the dose grid (beyond the outer faces of its boundary voxels): by default the
/// volume is kept and counted at 0 Gy, so that the structure volume and the % axis never
/// depend on the dose grid; `OutsideDosePolicy::Exclude` leaves it out instead. Either way
/// the result reports the volume outside as a warning.
#include <cstddef>
#include <string>
#include <vector>

#include "core/dose_volume.hpp"
#include "core/progress.hpp"
#include "core/structure.hpp"

namespace penumbra::dvh {

enum class OutsideDosePolicy {
  ZeroDose,  ///< keep the volume outside the dose grid, at 0 Gy (default)
  Exclude    ///< leave it out of the histogram and of the structure volume
};

enum class DvhMethod { Contours, Mask };

/// How the structure is reconstructed between two joined contour planes (contour method).
enum class ContourInterpolation {
  /// Shape-based interpolation (default; see the header comment): signed-distance morph.
  ShapeBased,
  /// Each plane's contours extruded over a slab reaching half way to its neighbours: the
  /// classic stack-of-slabs model, kept for comparison (it misses round ends: -2.5 % on a
  /// cylinder lying across 2 mm planes, -4.6 % at 3 mm).
  Slab
};

struct DvhOptions {
  double binWidthGy = 0.01;     ///< histogram bin (Gy); widened if it would need > 200k bins
  double prescriptionGy = 0;    ///< for V95 % / V107 %; <= 0: those statistics are NaN
  OutsideDosePolicy outside = OutsideDosePolicy::ZeroDose;
  ContourInterpolation interpolation = ContourInterpolation::ShapeBased;

  // Contour sampling (mm). The in-plane step aims at `sampleTarget` samples per structure,
  // clamped to [minStepMm, maxStepMm] and then shrunk so that it divides the dose voxel
  // (sample lattice aligned with dose voxel faces: voxel-edge contours give exact volumes).
  double minStepMm = 0.1;
  double maxStepMm = 0.25;      ///< used unless that needs more than `sampleBudget` samples
  double sampleTarget = 2e6;    ///< samples aimed at (small structures get finer steps)
  double sampleBudget = 2.5e7;  ///< hard cap: beyond it the step grows (very large ROIs)
  /// Slab thickness (mm) of a structure with a single contour plane; 0: the dose grid's
  /// spacing along the plane normal. Callers that know the CT slice thickness pass it.
  double singlePlaneThicknessMm = 0;
  int threads = 0;              ///< 0: std::thread::hardware_concurrency()
};

/// Cumulative DVH sampled at the bin edges dose[k] = k * binWidthGy.
struct DvhCurve {
  double binWidthGy = 0.01;
  std::vector<double> doseGy;         ///< bin edges, Gy
  std::vector<double> volumeCc;       ///< volume receiving >= doseGy[k], cm^3
  std::vector<double> volumePercent;  ///< same in % of the structure volume
};

struct DvhStatistics {
  double volumeCc = 0;  ///< structure volume (cm^3) the histogram was normalised to
  double minGy = 0, meanGy = 0, maxGy = 0;
  double d99Gy = 0, d98Gy = 0, d95Gy = 0, d50Gy = 0, d5Gy = 0, d2Gy = 0, d1Gy = 0;
  double d0_03ccGy = 0;  ///< dose to the hottest 0.03 cm^3 (Dmin when the ROI is smaller)
  double prescriptionGy = 0;
  double v95Percent = 0;   ///< % of the volume receiving >= 95 % of the prescription (NaN: none)
  double v107Percent = 0;  ///< % receiving >= 107 % of the prescription (NaN: none)
};

struct DvhResult {
  std::string structureName;
  DvhMethod method = DvhMethod::Contours;
  DvhCurve curve;
  DvhStatistics stats;
  double outsideDoseGridCc = 0;     ///< structure volume beyond the dose grid, cm^3
  double outsideDoseGridFraction = 0;
  double stepMm[3] = {0, 0, 0};     ///< sample lattice: in-plane u, v and through-slab w (mm)
  std::size_t samples = 0;          ///< dose evaluations made
  int contourPlanes = 0;
  double seconds = 0;               ///< wall time of the computation
  std::vector<std::string> warnings;  ///< for the user (outside the dose grid, skipped contours)
};

/// DVH of `structure` from its planar contours (or its mask when it has no contours).
/// Throws penumbra::Error(InvalidArgument) for an empty dose or a structure without contours
/// and mask, CancelledError when `job` is cancelled. Runs on options.threads threads.
DvhResult computeDvh(const Structure& structure, const DoseVolume& dose,
                     const DvhOptions& options = {}, const JobControl& job = {});

/// Contour-based DVH (see the header comment). Throws InvalidArgument without contours.
DvhResult computeContourDvh(const Structure& structure, const DoseVolume& dose,
                            const DvhOptions& options = {}, const JobControl& job = {});

/// Mask-based DVH: each non-zero voxel of `mask` (any grid) counts with the mask grid's voxel
/// volume at the dose trilinearly interpolated at its centre (exact voxel dose when the mask
/// is on the dose grid).
DvhResult computeMaskDvh(const Mask& mask, const DoseVolume& dose, const DvhOptions& options = {},
                         const JobControl& job = {}, const std::string& name = {});

/// DVHs of every structure that has contours or a mask (point ROIs are skipped).
std::vector<DvhResult> computeDvhs(const StructureSet& set, const DoseVolume& dose,
                                   const DvhOptions& options = {}, const JobControl& job = {});

// ---- reading a cumulative curve (linear interpolation between bin edges) -----------------

/// Dose (Gy) that `volumeCc` of the structure receives at least: D_V on the cumulative curve.
double doseAtVolumeCc(const DvhCurve& curve, double volumeCc);
/// Dose (Gy) received by at least `percent` % of the structure (D98 = doseAtVolumePercent(98)).
double doseAtVolumePercent(const DvhCurve& curve, double percent);
/// Volume (cm^3) receiving at least `doseGy`.
double volumeAtDoseCc(const DvhCurve& curve, double doseGy);

}  // namespace penumbra::dvh
