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
#include "spmv/half_csr.hpp"

namespace penumbra::proton {

struct ProtonDoseParameters {
  BevSampling sampling;  ///< BEV ray spacing, depth step, cut-off (3 sigma)
  /// Also build the dose-deposition matrix, on the request's backend: the CUDA build gives the
  /// CPU's matrix (same structure; values equal but for rare last-bit exp() differences).
  bool computeDoseMatrix = false;
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
  std::vector<KernelProfile> profiles;  ///< one per kernel / CPU stage of this run
  std::vector<std::string> messages;    ///< user-facing notes (fallbacks, skipped beams)
  std::uint64_t gaussianContributions = 0;  ///< spot-sample pairs inside the cut-off (CPU only)
  double elapsedMs = 0;  ///< wall time of computeProtonDose, tables included
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

}  // namespace penumbra::proton
