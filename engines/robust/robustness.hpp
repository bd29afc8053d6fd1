#pragma once
/// Robustness evaluation of a proton plan (issue 16, item 2): the plan's dose under every error
/// scenario (scenario.hpp), each computed by the proton engine's nominal path on the request's
/// backend (CUDA: the CT stays on the GPU between scenarios, the engine's cache across calls),
/// reduced as the scenarios come in so that no more than a few dose volumes are ever held:
///  - voxel-wise minimum, maximum and mean dose over the scenarios; from them the worst-case dose
///    (minimum inside any target, maximum elsewhere) and the spread (maximum - minimum);
///  - per structure, the DVH of every scenario on the structure's mask (mask-based: every voxel
///    of the mask at its dose, one common bin width, so scenario curves are comparable bin by
///    bin) and the band: at every dose bin the lowest and highest volume over the scenarios;
///  - the robustness table: nominal, worst and best value of D98, D95 and Dmean of each target
///    and of D2, Dmax and Dmean of each organ at risk, with the scenario that gave the worst,
///    flagged when the worst value breaks the structure's limit.
/// Check, then run: validate() and workspaceBytes() first; evaluateRobustness() refuses what
/// does not fit with OutOfMemory before it allocates. Cancel is checked between scenarios
/// (CancelledError); progress reports scenario k of n.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/dose_volume.hpp"
#include "core/kernel_profile.hpp"
#include "core/progress.hpp"
#include "core/structure.hpp"
#include "proton/proton_dose.hpp"
#include "robust/scenario.hpp"

namespace penumbra::robust {

/// A structure as the evaluation sees it: its mask on the dose grid and the limits its table
/// rows are flagged against (NaN: no limit). Targets: the worst D98 / D95 must be >= minGy;
/// organs at risk: the worst D2 / Dmax must be <= maxGy and the worst Dmean <= meanGy.
struct RobustStructure {
  std::string name;
  StructureKind kind = StructureKind::Other;  ///< Target, OrganAtRisk, External, Other
  std::shared_ptr<const Mask> mask;           ///< on the request's dose grid (same dims)
  double minGy = std::numeric_limits<double>::quiet_NaN();
  double maxGy = std::numeric_limits<double>::quiet_NaN();
  double meanGy = std::numeric_limits<double>::quiet_NaN();
};

struct RobustnessRequest {
  proton::ProtonDoseRequest plan;   ///< the nominal plan; its backend is the evaluation's
  std::vector<Scenario> scenarios;  ///< empty: makeScenarios(); the nominal is added when missing
  std::vector<RobustStructure> structures;
  double binWidthGy = 0;            ///< DVH bins; <= 0: 1/500 of the nominal maximum dose
  /// Multiplies every dose (e.g. the number of fractions, to show course doses); 1: as computed.
  double doseScale = 1;
};

/// DVH of one structure in one scenario (cumulative, % of the structure's voxels at the bin
/// edges k * binWidthGy) and its statistics.
struct ScenarioDvh {
  std::vector<double> volumePercent;
  double d98Gy = 0, d95Gy = 0, d50Gy = 0, d2Gy = 0, minGy = 0, maxGy = 0, meanGy = 0;
};

struct StructureRobustness {
  std::string name;
  StructureKind kind = StructureKind::Other;
  std::int64_t voxels = 0;
  double binWidthGy = 0;
  std::vector<ScenarioDvh> scenarios;  ///< one per scenario, in the result's scenario order
  std::vector<double> bandLowPercent, bandHighPercent;  ///< per bin: min / max over the scenarios
};

/// One row of the robustness table.
struct RobustnessRow {
  std::string structure;
  std::string metric;  ///< "D98", "D95", "Dmean" (targets); "D2", "Dmax", "Dmean" (others)
  double nominalGy = 0, worstGy = 0, bestGy = 0;
  int worstScenario = 0;  ///< index into RobustnessResult::scenarios
  double limitGy = std::numeric_limits<double>::quiet_NaN();
  bool violated = false;  ///< the worst value breaks limitGy
};

struct RobustnessResult {
  std::vector<Scenario> scenarios;  ///< as evaluated, the nominal first
  DoseVolume nominal, worstCase, spread, minimum, maximum, mean;
  std::vector<StructureRobustness> structures;
  std::vector<RobustnessRow> table;
  Backend backend = Backend::Cpu;
  std::string device;
  double elapsedMs = 0;             ///< whole evaluation, DVH bands included
  std::vector<double> scenarioMs;   ///< per scenario: its dose and its reductions
  std::vector<KernelProfile> profiles;
  std::vector<std::string> messages;
};

struct RobustnessEstimate {
  std::size_t deviceBytes = 0, hostBytes = 0;
  std::string breakdown;
};

/// Throws InvalidArgument naming the problem (no beams, a mask not on the dose grid, a
/// duplicate scenario name, non-finite scale...).
void validate(const RobustnessRequest& request);
RobustnessEstimate workspaceBytes(const RobustnessRequest& request);
RobustnessResult evaluateRobustness(const RobustnessRequest& request, const JobControl& job = {});

}  // namespace penumbra::robust
