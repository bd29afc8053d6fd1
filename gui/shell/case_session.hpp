#pragma once
/// Case files (io/case/case_file.hpp) from and to the GUI's session: the plan (prescription,
/// proton beams with layers and spots, photon beams with jaws, aperture and MU), the
/// spot-generation and engine settings (both engines) shown in the beam
/// editor, and the display settings, which go into the case's free-form "display" object:
///   { "colorMap": "rainbow", "washOpacity": 0.45, "washThresholdPercent": 10,
///     "washVisible": true, "isodosesVisible": true, "surfacesVisible": true,
///     "clipDoseToExternal": true,
///     "isodoseLevels": [ { "percent": 107, "color": "#ff00ff", "surface": false }, ... ],
///     "window": 400, "level": 40, "visibleStructures": [ "BODY", ... ],
///     "dvhHiddenStructures": [ ... ], "beamTargets": [ "PTV", ... ], "currentBeam": 0 }
/// The Optimise panel's objectives and options go into the case's "optimisation" section, one
/// entry per structure (its rows' terms, with the role of its first row, which is the role the
/// optimiser uses), and come back as the panel's rows when the case opens; its robust mode goes
/// with the optimiser options ("robustMode"). The Robustness panel's scenario settings (its
/// RobustnessModel) go into the case's "robustness" section.
/// Nothing here reads or writes files or touches the DICOM folder: PlanFileActions does.
#include <vector>

#include <QJsonObject>
#include <QString>
#include <QStringList>

#include "case/case_file.hpp"
#include "gui/optimise/optimise_controller.hpp"

namespace penumbra::gui {

class PlanModel;
class PlanningWorkspace;
class ViewState;

/// Plan indices in the order a case lists the beams: proton beams, then photon beams
/// (io::CaseFile keeps the two modalities in separate lists; "beamTargets" and "currentBeam"
/// of the display object follow this order).
std::vector<int> caseBeamOrder(const PlanModel& plan);

/// The display settings of the session as the case's "display" object.
QJsonObject displayStateToJson(const PlanningWorkspace& ws, const ViewState& state);
/// Applies a "display" object (unknown keys ignored; missing ones keep the current values).
/// Structure names not in the open patient are skipped.
void applyDisplayState(const QJsonObject& display, PlanningWorkspace& ws, ViewState& state);

/// The case of the session. `dicomFolder` and `seriesKey` are where the open patient came
/// from; the folder is written relative to `casePath` when they share a parent.
io::CaseFile caseFromSession(const PlanningWorkspace& ws, const ViewState& state, const QString& casePath,
                             const QString& dicomFolder, const QString& seriesKey, int fractions);

/// The panel's rows as the case's objectives: one entry per structure, in the order of first
/// appearance; `settings` as its options.
io::CaseOptimisation caseOptimisation(const std::vector<ObjectiveRow>& rows, const OptimiseSettings& settings);
/// The case's objectives as panel rows, for the structures of the open patient that have a mask;
/// the others are skipped with a line in `warnings` naming the structure.
std::vector<ObjectiveRow> objectiveRows(const io::CaseOptimisation& o, const ViewState& state,
                                        QStringList& warnings);

/// Restores prescription, beams (layers, spots, weights; photon fields), spot-generation and engine settings,
/// the display settings, the robustness scenarios and the optimisation objectives and options
/// into the session (the patient must already be open: it replaces the plan). A case without
/// objectives leaves the panel's defaults; one without robustness settings or robust mode gets
/// the defaults (the scenario model's; nominal optimisation); objectives of structures the
/// patient lacks are skipped, each with a line in `warnings` (when given), as are settings the
/// panels show otherwise (clamped or rounded). Returns the number of beams restored.
int applyCaseToSession(const io::CaseFile& c, PlanningWorkspace& ws, ViewState& state,
                       QStringList* warnings = nullptr);

}  // namespace penumbra::gui
