#pragma once
/// Dose comparison engine: dose difference and the gamma index (Low, Harms, Mutic and Purdy,
/// Med. Phys. 25 (1998) 656) of an evaluated dose against a reference dose, on any two grids.
///
/// Both doses live in patient LPS mm on their own grids (spacing, origin, extent and direction
/// may differ). Every reference voxel centre is a point of the comparison; the evaluated dose is
/// the continuous trilinear function through its voxel centres, defined on the box of those
/// centres. Gamma at a reference point is the minimum over that function, not over a set of
/// voxel centres or sub-steps: gamma_search.hpp finds it by a bounded branch-and-bound search
/// whose result gamma_hat satisfies gamma <= gamma_hat <= gamma + tolerance, and decides
/// pass/fail (gamma <= 1) exactly (see there for the method and the one stated exception).
/// Tools that search a grid of sub-steps (pymedphys: interp_fraction) can only overestimate
/// gamma: their minimum is taken over a subset of the points considered here.
///
/// Check, then run (as the other engines): validate() says whether a request is consistent,
/// workspaceBytes() what it allocates, compareDoses() does both and refuses what cannot fit.
/// CPU reference in double precision on all threads; CUDA backend in float for the search
/// (positions in double), the same algorithm (one header shared by both; the GPU finishes its
/// longest points with groups of lanes, see CudaGammaTuning).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/kernel_profile.hpp"
#include "core/progress.hpp"
#include "core/volume.hpp"

namespace penumbra::compare {

/// What the dose criterion of a global gamma (and the difference in %) is a percentage of.
enum class Normalisation {
  ReferenceMax,  ///< the reference dose's maximum (the usual "global" gamma)
  Prescription,  ///< a prescription dose given in Gy
  Value,         ///< any dose given in Gy
};
const char* toString(Normalisation n);

struct GammaCriteria {
  double dosePercent = 3;     ///< dose criterion DD, % of the normalisation (local: of the point's dose)
  double distanceMm = 3;      ///< distance-to-agreement criterion DTA, mm
  bool local = false;         ///< DD relative to the reference dose at each point
  Normalisation normalisation = Normalisation::ReferenceMax;
  double normalisationGy = 0; ///< for Prescription and Value
  /// Reference points below this % of the normalisation dose are not evaluated.
  double cutoffPercent = 10;
  /// Points of the evaluated dose farther than this are not considered; 0: cap x DTA (every
  /// point that could give a gamma below the cap).
  double maxSearchMm = 0;
  double gammaCap = 2;        ///< gamma values above the cap are reported as the cap (> 1)
  double tolerance = 1e-3;    ///< largest overestimate of any gamma value (in gamma units)
};

/// A structure's mask on the reference grid, for per-structure pass rates.
struct StructureMask {
  std::string name;
  std::shared_ptr<const Mask> mask;
};

/// How the CUDA backend schedules the gamma search (the result satisfies the same bounds either
/// way). Each lane of a warp searches its own point, box after box; the search time is then set
/// by the longest points (up to ~1200 boxes on box4-256 where the mean is 16), not by the total
/// work. A point still searching after `stepBudget` steps is handed, with the bound it found, to
/// a group of `laneGroup` lanes (8, 16 or 32), which share its boxes through a stack of
/// `stackItems` entries in shared memory (a lane that finds the stack full searches its box's
/// subtree alone). stepBudget 0: every point is searched by one lane to the end. In a step a
/// lane also passes over up to `skipLimit` boxes that the corner-range bound rules out
/// (gamma_point_search.hpp: skipRuledOut); 0: one box a step, whatever it is. The defaults were
/// measured together (box4-256, 2 %/2 mm, search span, one H100, 2026-11-27): skip 2 with budget
/// 16 1.60-1.64 ms; skip 0 / budget 32 (the earlier defaults) 1.69-1.74 ms; skip 1, 2 or 4 with
/// budget 32 1.71-1.86 ms; skip 2 with budget 12, 24 or 64 1.80, 1.69-1.71 and 2.05-2.08 ms;
/// skip 1 with budget 16 1.85 ms. Swept again on one H200 after the refill became 16 lanes
/// (compare_cuda.cu): the same choice (docs/benchmarks.md, 2026-11-27).
struct CudaGammaTuning {
  int stepBudget = 16;
  int skipLimit = 2;
  int laneGroup = 16;
  int stackItems = 512;
  /// Points a slab holds, as a power of two (compare_cuda.cu: slabs are classified, then searched
  /// one after the other, and each slab's gamma downloads while the next is searched, so the
  /// last slab's download is what follows the search).
  int slabPointsLog2 = 23;
  /// Adds a "timeline" profile row per copy and launch (its start after the call's first GPU
  /// work, and its length): where the GPU time of a call goes, for tuning (bench
  /// PENUMBRA_GAMMA_TIMELINE=1).
  bool timeline = false;
};

struct CompareRequest {
  std::shared_ptr<const Volume<float>> reference;  ///< dose A, Gy
  std::shared_ptr<const Volume<float>> evaluated;  ///< dose B, Gy
  /// DICOM FrameOfReferenceUIDs of the two doses where known: both set and different is refused.
  std::string referenceFrame, evaluatedFrame;
  GammaCriteria criteria;
  bool computeGamma = true;
  /// Optional: only reference points inside this mask (reference grid) are evaluated.
  std::shared_ptr<const Mask> mask;
  std::vector<StructureMask> structures;  ///< pass rate per structure (reference grid)
  Backend backend = Backend::Auto;
  int cpuThreads = 0;  ///< 0: all hardware threads
  CudaGammaTuning cudaTuning;
};

/// Fine histogram of the evaluated gamma values: kFineBins bins over [0, cap]; the last bin
/// holds the points at the cap.
inline constexpr int kGammaHistogramBins = 2000;

struct GammaStatistics {
  std::int64_t evaluatedPoints = 0;  ///< reference points that got a gamma value
  std::int64_t passedPoints = 0;     ///< gamma <= 1
  double passRatePercent = 0;
  double mean = 0, max = 0;
  /// Percentiles 50, 90, 95 and 99, read off the fine histogram (within one bin, cap / 2000).
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
  double binWidth = 0;                 ///< of the histogram
  std::vector<std::int64_t> histogram; ///< kGammaHistogramBins counts over [0, cap]
  /// Points whose search stopped at the depth limit before meeting the tolerance (steep
  /// gradients far below the tolerance's scale); their gamma is an upper bound.
  std::int64_t depthLimitedPoints = 0;
};

struct DifferenceStatistics {
  std::int64_t points = 0;  ///< the evaluated points (above the cut-off, inside mask and overlap)
  double meanGy = 0, sdGy = 0, minGy = 0, maxGy = 0, meanAbsGy = 0;
  double meanPercent = 0, minPercent = 0, maxPercent = 0;  ///< of the normalisation dose
  double withinDosePercent = 0;  ///< % of points with |A - B| <= DD (global DD in Gy)
};

struct StructurePassRate {
  std::string name;
  std::int64_t evaluatedPoints = 0, passedPoints = 0;
  double passRatePercent = 0;  ///< NaN when no point of the structure was evaluated
  double meanGamma = 0;
};

struct CompareResult {
  /// On the reference grid. gamma: NaN where not evaluated (below the cut-off, outside the mask
  /// or outside the evaluated dose's box). difference: A - B in Gy, NaN outside the evaluated box.
  Volume<float> gamma;
  Volume<float> difference;
  double normalisationGy = 0;  ///< the dose DD and the cut-off are percentages of
  double referenceMaxGy = 0, evaluatedMaxGy = 0;
  std::int64_t referencePoints = 0;  ///< all reference voxels
  std::int64_t belowCutoff = 0, outsideMask = 0, outsideEvaluated = 0;
  GammaStatistics gammaStats;
  DifferenceStatistics differenceStats;
  std::vector<StructurePassRate> structures;
  Backend backend = Backend::Cpu;
  std::string device;
  std::vector<KernelProfile> profiles;
  std::vector<std::string> messages;  ///< user-facing notes (fallback, partial overlap)
  double elapsedMs = 0;
};

struct WorkspaceEstimate {
  std::size_t deviceBytes = 0, hostBytes = 0;
  std::string breakdown;
};

/// Throws InvalidArgument naming what is wrong: empty or non-orthonormal grids, NaN or Inf
/// voxels (count and first voxel), doses that do not overlap, different frames of reference,
/// criteria out of range (DD, DTA, cut-off, cap, tolerance, search distance), a mask on another
/// grid or an empty mask, a zero reference dose.
void validate(const CompareRequest& request);
WorkspaceEstimate workspaceBytes(const CompareRequest& request, Backend backend);
/// Validates, then compares on the chosen backend (CUDA when usable for Auto). Reports progress
/// and honours cancel between slices (CPU) and batches (CUDA).
CompareResult compareDoses(const CompareRequest& request, const JobControl& job = {});

/// The CUDA backend keeps both doses on the GPU between calls (keyed by the volumes' identity:
/// a dose must not change while it is shared) and the host memory of the next result. Frees
/// it all (e.g. when the patient closes); the next call uploads again.
void releaseCompareGpuCache();

}  // namespace penumbra::compare
