#pragma once
/// Proton pencil-beam dose engine (da Silva, Ansorge and Jena, "Fast kernel superposition for
/// proton therapy"): water-equivalent depth by 3D-DDA ray tracing through stopping-power ratios
/// on a beam-aligned divergent grid, then Gaussian kernel superposition of every spot, then
/// trilinear resampling onto the patient dose grid, summed over beams. CPU reference in double
/// precision (std::thread), CUDA backend in float with every intermediate kept on the GPU.
///
/// Check, then run (CUTLASS style): validate() says whether a request is consistent,
/// workspaceBytes() what it will allocate; computeProtonDose() does both first and refuses a
/// plan that does not fit (ErrorCode::OutOfMemory, sizes in the message) before allocating.
///
/// GPU cache across calls (issue 15: an interactive session recomputes one patient's dose after
/// every edit). The CUDA backend keeps, per process: the SPR on the GPU; the depth-dose and
/// sigma tables of every energy used; per beam of the last run its WEPL, its BEV dose and the
/// inputs of its superposition (layers, spots, tile lists); the patient dose buffer; and
/// page-locked host memory for the next results. What is reused, and its key:
///  - the SPR: the same input volume - the same shared_ptr owner (compared as owners, so a new
///    volume at a freed one's address does not match), data pointer, size and grid - and, for a
///    CT, the same HU -> SPR table;
///  - a beam's WEPL: the same SPR (as above), BEV grid (gantry, couch, isocentre, source
///    distance and the grid's extent all enter it) and DDA variant: no ray tracing;
///  - a beam's BEV dose: its WEPL reused and the same cut-off, layers, tables, spots (positions
///    and weights) and tile lists: no superposition. An edit of one beam's weights runs one
///    superposition; the resampling of every beam onto the dose grid always runs.
/// Invalidation rule: a volume is immutable once it is shared as const with the engine; a
/// caller that changes voxels in place must pass a new shared_ptr (or call
/// releaseProtonGpuCache()), or it gets the dose of the old voxels. Cached and uncached runs give
/// the same dose bit for bit (the same kernels on the same inputs). Thread-safe: a call that
/// finds the cache in use by another thread runs with buffers of its own; a cancelled or failed
/// GPU run frees the cache. The host keeps the beams' layouts and tile lists too (both backends;
/// proton/prepare_cache.hpp), keyed by everything but the spot weights. The CUDA backend builds
/// its tile lists on the GPU (bit for bit the host's lists) unless the call also builds a dose
/// matrix: after a geometry edit the host then only lays the beams out.
///
/// Units: patient coordinates LPS mm; spot weights in units of 1e9 protons
/// (kProtonsPerWeightUnit); dose in Gy for the weights given, i.e. Gy per 1e9 protons for a
/// weight of 1. Water-equivalent depths in mm.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/calibration.hpp"
#include "core/device.hpp"
#include "core/kernel_profile.hpp"
#include "core/progress.hpp"
#include "core/volume.hpp"
#include "proton/bev_grid.hpp"
#include "proton/proton_plan.hpp"
#include "proton/proton_tables.hpp"
#include "raytrace/dda_traversal.hpp"
#include "spmv/device_half_csr.hpp"
#include "spmv/half_csr.hpp"

namespace penumbra::proton {

struct ProtonDoseParameters {
  BevSampling sampling;  ///< BEV ray spacing, depth step, cut-off (3 sigma)
  /// Also build the dose-deposition matrix, on the request's backend: the CUDA build gives the
  /// CPU's matrix (same structure; values equal but for rare last-bit exp() differences).
  bool computeDoseMatrix = false;
  /// CUDA backend: leave the matrix on the GPU (ProtonDoseResult::deviceMatrix, for a
  /// spmv::SpmvEngine built from it) instead of downloading it into `matrix`. The CPU backend
  /// ignores it and fills `matrix`.
  bool doseMatrixOnDevice = false;
  /// Matrix entries below this fraction of their column's maximum are dropped.
  double doseMatrixRelativeCutoff = 1e-4;
  int cpuThreads = 0;  ///< 0: all hardware threads
};

/// The request. Either `spr` (relative stopping power, preferred when given) or `ct` (HU,
/// converted through `hlut`) must be set.
struct ProtonDoseRequest {
  std::shared_ptr<const CtVolume> ct;        ///< HU
  std::shared_ptr<const Volume<float>> spr;  ///< stopping-power ratio to water
  CalibrationCurve hlut;  ///< HU -> SPR; empty: resources/calibration/hu_to_spr_matrad_default.csv
  std::vector<ProtonBeam> beams;
  Grid doseGrid;  ///< patient LPS; empty: the CT (or SPR) grid
  Backend backend = Backend::Auto;
  DdaVariant variant = DdaVariant::BranchFree;
  ProtonDoseParameters params;
  std::shared_ptr<const ProtonMachine> machine;  ///< null: ProtonMachine::generic()
};

/// Dose-deposition matrix: rows = dose voxels (linear index of the dose grid), columns = spots
/// (beam, layer, spot order: see totalSpotCount()). Entry value = scale * half(values[e]) in Gy
/// per unit weight, so dose = scale * D_half * w. The storage is the SpMV engine's matrix
/// (spmv::HalfCsr: rowPtr, colIdx ascending within a row, fp16 values, scale), so it goes to
/// spmv::SpmvEngine without a copy; this type adds where it came from.
struct DoseMatrixCsr : spmv::HalfCsr {
  double relativeCutoff = 0;
  std::int64_t droppedEntries = 0;   ///< entries below the cut-off
  /// D * w in double (w: one weight per column).
  std::vector<double> multiply(const std::vector<double>& w) const;
};

struct ProtonDoseResult {
  Volume<float> dose;  ///< Gy for the plan's weights, on the dose grid
  Backend backend = Backend::Cpu;
  std::string device;  ///< GPU name, or "cpu (N threads)"
  std::optional<DoseMatrixCsr> matrix;
  /// The matrix on the GPU (doseMatrixOnDevice with the CUDA backend; `matrix` is then empty).
  /// Hand it on with SpmvEngine(std::move(*deviceMatrix)).
  std::shared_ptr<spmv::DeviceHalfCsr> deviceMatrix;
  std::vector<KernelProfile> profiles;  ///< one per kernel / CPU stage of this run
  std::vector<std::string> messages;    ///< user-facing notes (fallbacks, skipped beams)
  std::uint64_t gaussianContributions = 0;  ///< spot-sample pairs inside the cut-off (CPU only)
  double elapsedMs = 0;  ///< wall time of computeProtonDose, tables included
  /// CUDA: what the GPU cache served ("GPU cache across calls" above).
  bool sprCached = false;     ///< the SPR was on the GPU (no upload, no conversion)
  int weplCachedBeams = 0;    ///< beams whose WEPL was not traced again
  int bevDoseCachedBeams = 0; ///< beams whose superposition did not run again
};

/// What a request will allocate.
struct WorkspaceEstimate {
  std::size_t deviceBytes = 0;  ///< for the CUDA backend
  std::size_t hostBytes = 0;    ///< output, CPU working arrays, matrix
  std::string breakdown;        ///< human-readable itemisation
  std::size_t matrixEntries = 0;  ///< rough estimate of the matrix's entries (0 without one)
};

/// Throws InvalidArgument (with the reason) for an inconsistent request.
void validate(const ProtonDoseRequest& request);
/// Sizes only; no allocation, no table building. `backend` Cuda counts device bytes.
WorkspaceEstimate workspaceBytes(const ProtonDoseRequest& request);
/// Validates, estimates, refuses what does not fit, then runs on the chosen backend.
/// Checks `job` for cancel between beams and work batches (throws CancelledError).
ProtonDoseResult computeProtonDose(const ProtonDoseRequest& request, const JobControl& job = {});

/// Frees the CUDA backend's cache (device buffers, SPR, WEPL and BEV doses, page-locked host
/// buffers); the next GPU call uploads again. Call it after changing a volume in place, or to
/// give the GPU memory back to other work. A no-op without CUDA or without a cache.
void releaseProtonGpuCache();

}  // namespace penumbra::proton
