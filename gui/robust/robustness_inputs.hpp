#pragma once
/// What a robustness run is made of (issue 16, item 4), in two steps so that the GUI thread
/// only copies and the worker does the slow part:
///  - makeRobustnessInput() (GUI thread): the open patient, the plan's proton beams, the dose
///    grid, the backend, the scenario set and each structure's limits, all by value or as
///    shared_ptr<const>;
///  - makeRobustnessRequest() (worker): each structure's mask resampled onto the dose grid and
///    the engine's request (robust::RobustnessRequest).
///
/// Limits (the table's flags) come from the plan's objectives, as the Optimise panel lists
/// them: a target must keep its worst D98 / D95 at or above its highest min-dose level (95 %
/// of the prescription when it has none); an organ at risk (or other structure) must keep its
/// worst D2 / Dmax at or below its lowest max-dose level (no limit when it has none). The
/// external contour gets no limit: its objective holds outside the targets only, its rows
/// cover the targets too.
#include <QString>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/patient.hpp"
#include "gui/optimise/optimise_controller.hpp"
#include "robust/robustness.hpp"

namespace penumbra::gui {

struct RobustnessSettings;

struct StructureLimits {
  double minGy = std::numeric_limits<double>::quiet_NaN();
  double maxGy = std::numeric_limits<double>::quiet_NaN();
  double meanGy = std::numeric_limits<double>::quiet_NaN();
};

/// Limits by structure name for every structure of `patient` with a mask (see above).
std::map<std::string, StructureLimits> limitsFromObjectives(
    const Patient& patient, const std::vector<ObjectiveRow>& objectives, double prescriptionGy);

struct RobustnessInput {
  std::shared_ptr<const Patient> patient;
  proton::ProtonDoseRequest plan;  ///< ct, beams, doseGrid (always set), backend, variant
  std::vector<robust::Scenario> scenarios;
  std::map<std::string, StructureLimits> limits;
};

/// The run of `settings` for `plan`'s beams: the dose grid is a covering grid of
/// settings.doseGridMm, else of `planGridMm` (the Plan dock's), else the CT grid. Throws
/// InvalidArgument (the scenario model's words) for settings it refuses.
RobustnessInput makeRobustnessInput(std::shared_ptr<const Patient> patient,
                                    std::vector<proton::ProtonBeam> beams,
                                    const RobustnessSettings& settings, double planGridMm,
                                    Backend backend, DdaVariant variant, int cpuThreads,
                                    const std::vector<ObjectiveRow>& objectives,
                                    double prescriptionGy);

/// Worker side: masks on the dose grid (structures without a voxel on it are left out), then
/// the engine's request. Checks `jc` for cancel between structures.
robust::RobustnessRequest makeRobustnessRequest(const RobustnessInput& input, const JobControl& jc);

/// A scenario's engine name ("range +3.5% shift -3 mm L"), or "#k" when the index is out of
/// range.
QString scenarioLabel(const robust::RobustnessResult& result, int index);
/// The same, short enough for a narrow table column: "-3.5% L-3mm", "S+3mm", "+3.5%",
/// "3mm dir 5/26", "nominal".
QString compactScenarioLabel(const robust::RobustnessResult& result, int index);

}  // namespace penumbra::gui
