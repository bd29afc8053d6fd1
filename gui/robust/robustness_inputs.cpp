#include "gui/robust/robustness_inputs.hpp"

#include <QRegularExpression>
#include <QWidget>  // plan_controller.hpp's QPointer<QWidget>
#include <algorithm>
#include <cmath>

#include "gui/model/robustness_model.hpp"
#include "gui/overlays/dose_clip.hpp"
#include "gui/plan/plan_controller.hpp"

namespace penumbra::gui {

std::map<std::string, StructureLimits> limitsFromObjectives(
    const Patient& patient, const std::vector<ObjectiveRow>& objectives, double prescriptionGy) {
  std::map<std::string, StructureLimits> out;
  for (const Structure& s : patient.structures.structures) {
    if (s.mask.empty()) continue;
    StructureLimits l;
    for (const ObjectiveRow& r : objectives) {
      if (r.structure.toStdString() != s.name || !(r.levelGy > 0)) continue;
      // A target is held to its highest floor, anything else to its lowest ceiling: the
      // strictest level the plan asks for.
      if (s.kind == StructureKind::Target && r.kind == optimise::TermType::MinDose)
        l.minGy = std::isnan(l.minGy) ? r.levelGy : std::max(l.minGy, r.levelGy);
      // The external contour's ceiling holds outside the targets only (the optimiser drops the
      // target voxels from it), while its table rows cover all of it: no limit to flag against.
      const bool ceiling = s.kind == StructureKind::OrganAtRisk || s.kind == StructureKind::Other;
      if (ceiling && r.kind == optimise::TermType::MaxDose)
        l.maxGy = std::isnan(l.maxGy) ? r.levelGy : std::min(l.maxGy, r.levelGy);
    }
    if (s.kind == StructureKind::Target && std::isnan(l.minGy) && prescriptionGy > 0)
      l.minGy = 0.95 * prescriptionGy;
    out[s.name] = l;
  }
  return out;
}

RobustnessInput makeRobustnessInput(std::shared_ptr<const Patient> patient,
                                    std::vector<proton::ProtonBeam> beams,
                                    const RobustnessSettings& settings, double planGridMm,
                                    Backend backend, DdaVariant variant, int cpuThreads,
                                    const std::vector<ObjectiveRow>& objectives,
                                    double prescriptionGy) {
  RobustnessInput in;
  in.scenarios = robust::makeScenarios(settings.scenarios);  // throws for settings it refuses
  in.limits = limitsFromObjectives(*patient, objectives, prescriptionGy);
  in.plan.ct = std::shared_ptr<const CtVolume>(patient, &patient->ct);  // aliasing: no copy
  in.plan.beams = std::move(beams);
  const double mm = settings.doseGridMm > 0 ? settings.doseGridMm : planGridMm;
  // The masks must be on the dose grid itself, so the grid is always spelled out.
  in.plan.doseGrid = mm > 0 ? coveringGrid(patient->ct.grid, mm) : patient->ct.grid;
  in.plan.backend = backend;
  in.plan.variant = variant;
  in.plan.params.cpuThreads = cpuThreads;
  in.patient = std::move(patient);
  return in;
}

robust::RobustnessRequest makeRobustnessRequest(const RobustnessInput& input,
                                                const JobControl& jc) {
  robust::RobustnessRequest request;
  request.plan = input.plan;
  request.scenarios = input.scenarios;
  const Grid& grid = input.plan.doseGrid;
  for (const Structure& s : input.patient->structures.structures) {
    jc.checkCancel();
    const auto limits = input.limits.find(s.name);
    if (s.mask.empty() || limits == input.limits.end()) continue;
    std::shared_ptr<const Mask> mask;
    if (s.mask.grid.dims == grid.dims && s.mask.grid.sameGeometry(grid))
      mask = std::shared_ptr<const Mask>(input.patient, &s.mask);  // aliasing: no copy
    else
      mask = std::make_shared<const Mask>(maskOnGrid(s.mask, grid));
    if (std::none_of(mask->data.begin(), mask->data.end(), [](std::uint8_t v) { return v != 0; }))
      continue;
    robust::RobustStructure rs;
    rs.name = s.name;
    rs.kind = s.kind;
    rs.mask = std::move(mask);
    rs.minGy = limits->second.minGy;
    rs.maxGy = limits->second.maxGy;
    rs.meanGy = limits->second.meanGy;
    request.structures.push_back(std::move(rs));
  }
  return request;
}

QString scenarioLabel(const robust::RobustnessResult& result, int index) {
  if (index < 0 || index >= int(result.scenarios.size())) return QStringLiteral("#%1").arg(index);
  return QString::fromStdString(result.scenarios[std::size_t(index)].name);
}

QString compactScenarioLabel(const robust::RobustnessResult& result, int index) {
  QString name = scenarioLabel(result, index);
  // The engine's names: "range R%", "shift S mm A" (A: L, P or S), "shift S mm dir k/N" and
  // "range R% shift ...". The short form keeps the numbers: "-3.5% L-3mm", "3mm dir 5/26".
  static const QRegularExpression axisShift(QStringLiteral("shift ([+-][0-9.]+) mm ([LPS])"));
  static const QRegularExpression sphereShift(QStringLiteral("shift ([0-9.]+) mm "));
  name.replace(axisShift, QStringLiteral("\\2\\1mm"));
  name.replace(sphereShift, QStringLiteral("\\1mm "));
  name.replace(QStringLiteral("range "), QString());
  return name;
}

}  // namespace penumbra::gui
