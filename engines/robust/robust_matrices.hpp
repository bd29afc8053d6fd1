#pragma once
/// Per-scenario dose-deposition matrices for robust optimisation (issue 16, item 3): for a plan
/// and a scenario list, D_s of every scenario s, built by the proton engine on the plan's
/// backend (computeProtonDose with computeDoseMatrix on applyScenario(plan, s): the nominal
/// engine path, so D_s w is the scenario's dose), each handed to its own SpMV engine (GPU when
/// asked for and there is one) for optimise::optimiseRobust.
///
/// Memory rule (check, then run, twice). S matrices are S times one matrix, which is the
/// largest thing a plan ever holds (hn-2field at 1 mm: ~9 GB each, ~190 GB for 21 scenarios),
/// so before anything is built the whole set is estimated from the nominal plan:
///   host   = S x (D and D^T in CSR: 6 B per entry and 8 B per row each) + the robust
///            optimiser's vectors (8 dose vectors per scenario) + one build's working memory;
///   device = S x spmv::estimateDeviceBytes(D and D^T) + one GPU build's working memory
///            (only when the SpMV engines go to the GPU);
/// entries from proton::workspaceBytes' estimate (times 0.6: its cylinder model counts 1.45 to
/// 2 times the entries the cut-off keeps), plus 5 % for range scenarios that reach deeper. Past a
/// limit (host: 90 % of the installed memory, device: 95 % of the free memory; both can be lowered
/// in the options) buildScenarioMatrices refuses with OutOfMemory naming the sizes and what would
/// fit ("21 scenario matrices need 187 GiB of host memory, 94 GiB available: use at most 10
/// scenarios or a dose grid of >= 1.5 mm"). After the first matrix its true entry count replaces
/// the estimate and the check runs again, before the others are built. Under Backend::Auto SpMV
/// engines that do not fit the GPU go to the CPU (a message says so) instead of being refused.
///
/// Cancel is checked between scenarios and inside each build (CancelledError); progress
/// reports "scenario matrix k of S".
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/progress.hpp"
#include "proton/proton_dose.hpp"
#include "robust/scenario.hpp"
#include "spmv/spmv.hpp"

namespace penumbra::robust {

struct ScenarioMatrixOptions {
  /// Where the products run (the matrices are built on plan.backend). Auto: the GPU when the
  /// set fits there, else the CPU.
  spmv::SpmvOptions spmv;
  /// Limits of the memory check [bytes]; 0: the machine's (90 % of the installed host memory,
  /// 95 % of the GPU's free memory). Tests lower them to see the refusal.
  double hostLimitBytes = 0;
  double deviceLimitBytes = 0;
  /// Keep every D_s in host memory too (ScenarioMatrices::spmv's matrix(p) then has entries).
  /// Off (the default), a set whose matrices are built and multiplied on the GPU stays there:
  /// each D_s goes from the proton engine's GPU build to its SpMV engine without crossing the
  /// bus (spmv/device_half_csr.hpp; 2.6 s per hn-2field 2 mm matrix through the host).
  bool keepHostMatrices = false;
};

/// What a scenario set will hold (the numbers of the memory rule above).
struct ScenarioMatrixEstimate {
  std::size_t scenarios = 0;
  std::int64_t rows = 0, cols = 0;  ///< dose voxels, spots
  double entriesPerScenario = 0;    ///< estimated (or, after the first build, measured)
  bool measured = false;            ///< entriesPerScenario comes from the first matrix
  double doseSpacingMm = 0;         ///< the dose grid's largest spacing
  double hostBytes = 0, hostLimitBytes = 0;
  bool onDevice = false;  ///< the SpMV engines go to the GPU
  /// The matrices are built on the GPU and stay there (no host copies): hostBytes then counts
  /// vectors and one build's host side only.
  bool deviceResident = false;
  /// Backend::Auto only: why the products go to the CPU although there is a GPU (the set does
  /// not fit it); empty otherwise. buildScenarioMatrices does what the estimate says.
  std::string fallback;
  double deviceBytes = 0, deviceLimitBytes = 0;
  std::string device;           ///< the GPU's name when onDevice
  double buildHostBytes = 0;    ///< one build's working memory (proton::workspaceBytes)
  double buildDeviceBytes = 0;  ///< one GPU build's working arrays and CSR
  /// "21 scenario matrices (1.2e9 entries each): host 187 GiB (D+D^T 8.4 GiB each, ...)".
  std::string describe() const;
};

/// Sizes only: nothing is built. `scenarios` is the number of matrices.
ScenarioMatrixEstimate estimateScenarioMatrices(const proton::ProtonDoseRequest& plan,
                                                std::size_t scenarios,
                                                const ScenarioMatrixOptions& options = {});
/// Throws OutOfMemory when the estimate passes a limit, naming both sizes and the largest
/// scenario count and the finest dose grid that would fit.
void refuseIfTooBig(const ScenarioMatrixEstimate& estimate);

/// The scenario set, ready for optimise::optimiseRobust(set.engines(), ...).
struct ScenarioMatrices {
  std::vector<Scenario> scenarios;
  std::vector<std::unique_ptr<spmv::SpmvEngine>> spmv;  ///< one per scenario, same order
  std::vector<const spmv::SpmvEngine*> engines() const;

  Backend buildBackend = Backend::Cpu;  ///< where the proton engine built the matrices
  Backend spmvBackend = Backend::Cpu;   ///< where the products run
  bool deviceResident = false;          ///< the matrices never left the GPU (no host copies)
  std::string device;
  ScenarioMatrixEstimate estimate;    ///< the check before the first build
  std::vector<std::int64_t> entries;  ///< per scenario
  std::vector<double> buildMs;        ///< per scenario: the matrix, D^T and the upload
  double elapsedMs = 0;
  std::vector<std::string> messages;  ///< fallbacks, notes of the engines
};

/// Builds D_s for every scenario (see the file comment). Throws InvalidArgument for an invalid
/// plan or an empty scenario list, OutOfMemory when the set does not fit, CancelledError.
ScenarioMatrices buildScenarioMatrices(const proton::ProtonDoseRequest& plan,
                                       const std::vector<Scenario>& scenarios,
                                       const ScenarioMatrixOptions& options = {},
                                       const JobControl& job = {});

}  // namespace penumbra::robust
