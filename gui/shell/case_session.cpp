#include "gui/shell/case_session.hpp"

#include <algorithm>

#include <QJsonArray>
#include <QJsonDocument>

#include "gui/dose/dose_panel.hpp"
#include "gui/dose/dvh_panel.hpp"
#include "gui/model/dose_display_settings.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/robustness_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/optimise/optimise_panel.hpp"
#include "gui/plan/beam_editor_panel.hpp"
#include "gui/shell/planning_workspace.hpp"

namespace penumbra::gui {

namespace {

/// Stable names in the file (the display names of toString() may change).
constexpr std::pair<DoseColorMap, const char*> kColorMapKeys[] = {
    {DoseColorMap::Rainbow, "rainbow"}, {DoseColorMap::Dose, "dose"}, {DoseColorMap::Grayscale, "grayscale"}};

QJsonArray toArray(const QStringList& list) {
  QJsonArray a;
  for (const QString& s : list) a.append(s);
  return a;
}

QStringList toStringList(const QJsonValue& v) {
  QStringList out;
  for (const QJsonValue& e : v.toArray())
    if (e.isString()) out << e.toString();
  return out;
}

/// The case's objectives and options into the panel. Last in applyCaseToSession: the import's
/// new patient left the panel's defaults untouched, so setting the prescription recomputes them
/// (PlanModel::prescriptionChanged), which must not overwrite the case's rows. Once set, the
/// case's rows differ from the defaults and a later prescription change keeps them.
void applyOptimisation(const io::CaseOptimisation& o, OptimisePanel& panel, const ViewState& state,
                       QStringList& warnings) {
  OptimiseSettings s = panel.settings();
  if (o.options) {
    s.relativeCutoff = o.options->matrixCutoff;
    s.maxIterations = o.options->maxIterations;
  }
  // A case without a robust mode (saved before modes were, or nominal) optimises the nominal
  // plan: the previous case's mode must not carry over into this one.
  s.robust = o.options && o.options->robustMode;
  if (s.robust) s.robustMode = *o.options->robustMode;
  panel.setSettings(s);
  const OptimiseSettings shownSettings = panel.settings();
  if (o.options && (shownSettings.relativeCutoff != s.relativeCutoff || shownSettings.maxIterations != s.maxIterations))
    warnings << QObject::tr("optimiser options (cut-off %1, %2 iterations) shown as %3 and %4: the panel's limits")
                    .arg(s.relativeCutoff)
                    .arg(s.maxIterations)
                    .arg(shownSettings.relativeCutoff)
                    .arg(shownSettings.maxIterations);
  if (s.robust && !shownSettings.robust)
    warnings << QObject::tr("robust optimisation (%1) is not offered here: the plan is optimised nominally")
                    .arg(optimise::toString(s.robustMode));
  if (o.objectives.empty()) return;  // none saved: the defaults stay
  const std::vector<ObjectiveRow> rows = objectiveRows(o, state, warnings);
  if (rows.empty()) {
    warnings << QObject::tr("none of the case's objectives matches a structure: the default objectives are shown");
    return;
  }
  panel.setRows(rows);
  // The table's spin boxes round and clamp (levels to 3 decimals, weights to 2): say so rather
  // than run a different objective than the one saved.
  const std::vector<ObjectiveRow> shown = panel.rows();
  for (std::size_t i = 0; i < rows.size() && i < shown.size(); ++i)
    if (shown[i].levelGy != rows[i].levelGy || shown[i].weight != rows[i].weight)
      warnings << QObject::tr("objective of structure '%1' (%2) shown as level %3 Gy, weight %4 instead of %5 Gy, %6: "
                              "the panel's precision")
                      .arg(rows[i].structure, optimise::toString(rows[i].kind))
                      .arg(shown[i].levelGy)
                      .arg(shown[i].weight)
                      .arg(rows[i].levelGy)
                      .arg(rows[i].weight);
}

QString describe(const RobustnessSettings& r) {
  const robust::ScenarioOptions& o = r.scenarios;
  return QObject::tr("range %1 %, setup %2 mm, %3, %4, grid %5")
      .arg(o.rangePercent)
      .arg(o.setupMm)
      .arg(o.sphereDirections > 0 ? QObject::tr("%1 directions on a sphere").arg(o.sphereDirections)
                                  : QObject::tr("shifts along the axes"))
      .arg(o.combine ? QObject::tr("combined") : QObject::tr("separate"))
      .arg(r.doseGridMm > 0 ? QObject::tr("%1 mm").arg(r.doseGridMm) : QObject::tr("as plan"));
}

/// The case's scenario settings into the model (the Robustness panel shows them); a case
/// without them gets the defaults, not the previous case's. The panel's spin boxes clamp and
/// round (range and setup to 20 and one decimal): say so rather than evaluate other scenarios
/// than the ones saved.
void applyRobustness(const std::optional<io::CaseRobustness>& r, RobustnessModel& model,
                     QStringList& warnings) {
  RobustnessSettings s;
  if (r) {
    s.scenarios = r->scenarios;
    s.doseGridMm = r->doseGridSpacingMm;
  }
  model.setSettings(s);
  const RobustnessSettings& shown = model.settings();
  const robust::ScenarioOptions &a = s.scenarios, &b = shown.scenarios;
  if (a.rangePercent != b.rangePercent || a.setupMm != b.setupMm ||
      a.sphereDirections != b.sphereDirections || a.combine != b.combine || s.doseGridMm != shown.doseGridMm)
    warnings << QObject::tr("robustness settings (%1) shown as %2: the Robustness panel's limits and precision")
                    .arg(describe(s), describe(shown));
}

}  // namespace

std::vector<int> caseBeamOrder(const PlanModel& plan) {
  std::vector<int> order;
  for (int pass = 0; pass < 2; ++pass)
    for (int b = 0; b < plan.beamCount(); ++b)
      if (plan.beam(b).isPhoton() == (pass == 1)) order.push_back(b);
  return order;
}

QJsonObject displayStateToJson(const PlanningWorkspace& ws, const ViewState& state) {
  const DoseDisplaySettings& d = *ws.displaySettings();
  QJsonObject o;
  for (const auto& [map, key] : kColorMapKeys)
    if (map == d.colorMap()) o["colorMap"] = key;
  o["washOpacity"] = d.washOpacity();
  o["washThresholdPercent"] = d.washThresholdPercent();
  o["washVisible"] = d.washVisible();
  o["isodosesVisible"] = d.isodosesVisible();
  o["surfacesVisible"] = d.surfacesVisible();
  o["clipDoseToExternal"] = d.clipToExternal();
  QJsonArray levels;
  for (const IsodoseLevel& l : d.isodoseLevels())
    levels.append(QJsonObject{{"percent", l.percent}, {"color", l.color.name()}, {"surface", l.surface}});
  o["isodoseLevels"] = levels;
  o["window"] = state.windowLevel().window;
  o["level"] = state.windowLevel().level;
  QStringList visible;
  if (const auto& scene = state.scene()) {
    const auto& structures = scene->patient().structures.structures;
    for (int i = 0; i < int(structures.size()); ++i)
      if (state.isStructureVisible(i)) visible << QString::fromStdString(structures[std::size_t(i)].name);
  }
  o["visibleStructures"] = toArray(visible);
  if (ws.dvhPanel()) o["dvhHiddenStructures"] = toArray(ws.dvhPanel()->hiddenStructures());
  // In the case's beam order (proton beams, then photon beams: caseBeamOrder()).
  QStringList targets;
  const std::vector<int> order = caseBeamOrder(*ws.plan());
  int current = -1;
  for (std::size_t i = 0; i < order.size(); ++i) {
    targets << ws.plan()->beam(order[i]).targetName;
    if (order[i] == ws.plan()->currentBeam()) current = int(i);
  }
  o["beamTargets"] = toArray(targets);
  o["currentBeam"] = current;
  if (ws.robustness()) o["robustnessBandsVisible"] = ws.robustness()->bandsVisible();
  return o;
}

void applyDisplayState(const QJsonObject& o, PlanningWorkspace& ws, ViewState& state) {
  DoseDisplaySettings& d = *ws.displaySettings();
  if (o.contains("colorMap"))
    for (const auto& [map, key] : kColorMapKeys)
      if (o["colorMap"].toString() == key) d.setColorMap(map);
  if (o["washOpacity"].isDouble()) d.setWashOpacity(o["washOpacity"].toDouble());
  if (o["washThresholdPercent"].isDouble()) d.setWashThresholdPercent(o["washThresholdPercent"].toDouble());
  if (o["washVisible"].isBool()) d.setWashVisible(o["washVisible"].toBool());
  if (o["isodosesVisible"].isBool()) d.setIsodosesVisible(o["isodosesVisible"].toBool());
  if (o["surfacesVisible"].isBool()) d.setSurfacesVisible(o["surfacesVisible"].toBool());
  // Absent from cases saved before clipping existed: the current setting (on by default) stays.
  if (o["clipDoseToExternal"].isBool()) d.setClipToExternal(o["clipDoseToExternal"].toBool());
  // The DVH panel's robustness bands (absent before they were saved: the current setting stays).
  if (ws.robustness() && o["robustnessBandsVisible"].isBool())
    ws.robustness()->setBandsVisible(o["robustnessBandsVisible"].toBool());
  if (o["isodoseLevels"].isArray()) {
    std::vector<IsodoseLevel> levels;
    for (const QJsonValue& v : o["isodoseLevels"].toArray()) {
      const QJsonObject l = v.toObject();
      if (!l["percent"].isDouble()) continue;
      IsodoseLevel level;
      level.percent = l["percent"].toDouble();
      level.color = QColor(l["color"].toString());
      if (!level.color.isValid()) level.color = Qt::white;
      level.surface = l["surface"].toBool();
      levels.push_back(level);
    }
    d.setIsodoseLevels(std::move(levels));
  }
  if (o["window"].isDouble() && o["level"].isDouble() && o["window"].toDouble() > 0)
    state.setWindowLevel(WindowLevel{o["window"].toDouble(), o["level"].toDouble()});
  if (o["visibleStructures"].isArray()) {
    const QStringList visible = toStringList(o["visibleStructures"]);
    if (const auto& scene = state.scene()) {
      const auto& structures = scene->patient().structures.structures;
      for (int i = 0; i < int(structures.size()); ++i)
        state.setStructureVisible(i, visible.contains(QString::fromStdString(structures[std::size_t(i)].name)));
    }
  }
  if (o["dvhHiddenStructures"].isArray() && ws.dvhPanel())
    ws.dvhPanel()->setHiddenStructures(toStringList(o["dvhHiddenStructures"]));
  if (o["beamTargets"].isArray()) {
    const QStringList targets = toStringList(o["beamTargets"]);
    for (int b = 0; b < ws.plan()->beamCount() && b < targets.size(); ++b)
      ws.plan()->setTargetName(b, targets[b]);
  }
  if (o["currentBeam"].isDouble()) ws.plan()->setCurrentBeam(o["currentBeam"].toInt());
}

io::CaseOptimisation caseOptimisation(const std::vector<ObjectiveRow>& rows, const OptimiseSettings& settings) {
  io::CaseOptimisation o;
  for (const ObjectiveRow& r : rows) {
    const std::string name = r.structure.toStdString();
    auto it = std::find_if(o.objectives.begin(), o.objectives.end(),
                           [&](const io::CaseObjective& x) { return x.structure == name; });
    if (it == o.objectives.end()) it = o.objectives.insert(o.objectives.end(), {name, r.role, {}});
    it->terms.push_back({r.kind, r.levelGy, r.weight});
  }
  o.options = io::CaseOptimiserOptions{settings.relativeCutoff, settings.maxIterations, std::nullopt};
  if (settings.robust) o.options->robustMode = settings.robustMode;
  return o;
}

std::vector<ObjectiveRow> objectiveRows(const io::CaseOptimisation& o, const ViewState& state,
                                        QStringList& warnings) {
  std::vector<ObjectiveRow> rows;
  const auto& scene = state.scene();
  for (const io::CaseObjective& x : o.objectives) {
    const QString name = QString::fromStdString(x.structure);
    const Structure* s = scene ? scene->patient().structures.find(x.structure) : nullptr;
    // The optimiser needs the structure's voxels on the dose grid: without a mask it refuses
    // the whole run, so such an objective is dropped here, where the user is told why.
    if (!s || s->mask.empty()) {
      warnings << QObject::tr("objective of structure '%1' skipped: %2")
                      .arg(name, s ? QObject::tr("the structure has no contour on this CT")
                                   : QObject::tr("the structure set has no such structure"));
      continue;
    }
    for (const optimise::ObjectiveTerm& t : x.terms) rows.push_back({name, x.role, t.type, t.levelGy, t.weight});
  }
  return rows;
}

io::CaseFile caseFromSession(const PlanningWorkspace& ws, const ViewState& state, const QString& casePath,
                             const QString& dicomFolder, const QString& seriesKey, int fractions) {
  io::CaseFile c;
  c.data.dicomFolder = io::relativeToCase(casePath.toStdString(), dicomFolder.toStdString());
  c.data.seriesKey = seriesKey.toStdString();
  const PlanModel& plan = *ws.plan();
  QString target = ws.dosePanel() ? ws.dosePanel()->normalisationTarget() : QString();
  if (target.isEmpty() && plan.beamCount() > 0) target = plan.beam(0).targetName;
  if (!target.isEmpty()) {
    c.prescription.target = target.toStdString();
    c.prescription.dosePerFractionGy = plan.prescriptionGy();
    c.prescription.fractions = std::max(1, fractions);
  }
  for (const PlannedBeam& b : plan.beams()) {
    if (!b.isPhoton()) {
      c.beams.push_back(b.beam);
      continue;
    }
    io::CasePhotonBeam p;
    p.beam = photonEngineBeam(b);
    p.apertureTarget = b.photon.apertureTarget.toStdString();
    p.apertureMarginMm = b.photon.apertureMarginMm;
    c.photonBeams.push_back(std::move(p));
  }
  c.spotGeneration = ws.beamEditor()->spotOptions();
  const DoseRunOptions run = ws.beamEditor()->doseOptions();
  c.engine.backend = run.backend;
  c.engine.variant = run.variant;
  c.engine.doseGridSpacingMm = run.doseGridMm;
  c.engine.photon = {run.photon.polarCones, run.photon.azimuthalCones, run.photon.deposit};
  c.displayJson = QJsonDocument(displayStateToJson(ws, state)).toJson(QJsonDocument::Compact).toStdString();
  if (const OptimisePanel* panel = ws.optimisePanel()) c.optimisation = caseOptimisation(panel->rows(), panel->settings());
  if (const RobustnessModel* model = ws.robustness())
    c.robustness = io::CaseRobustness{model->settings().scenarios, model->settings().doseGridMm};
  return c;
}

int applyCaseToSession(const io::CaseFile& c, PlanningWorkspace& ws, ViewState& state, QStringList* warnings) {
  PlanModel& plan = *ws.plan();
  plan.clear();
  if (c.prescription.dosePerFractionGy > 0) plan.setPrescriptionGy(c.prescription.dosePerFractionGy);
  const QString target = QString::fromStdString(c.prescription.target);
  for (const auto& beam : c.beams) plan.addBeam(beam, target);  // names are unique already
  for (const auto& p : c.photonBeams) {
    PhotonField field;
    field.beam = p.beam;
    field.apertureTarget = QString::fromStdString(p.apertureTarget);
    field.apertureMarginMm = p.apertureMarginMm;
    plan.addPhotonBeam(std::move(field), target);
  }
  ws.beamEditor()->setSpotOptions(c.spotGeneration);
  DoseRunOptions run;
  run.backend = c.engine.backend;
  run.variant = c.engine.variant;
  run.doseGridMm = c.engine.doseGridSpacingMm;
  run.photon = {c.engine.photon.polarCones, c.engine.photon.azimuthalCones, c.engine.photon.deposit};
  ws.beamEditor()->setDoseOptions(run);
  const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(c.displayJson));
  if (doc.isObject()) applyDisplayState(doc.object(), ws, state);
  QStringList notes;
  // Before the optimisation: the Optimise panel's robust option describes these scenarios.
  if (RobustnessModel* model = ws.robustness()) applyRobustness(c.robustness, *model, notes);
  if (OptimisePanel* panel = ws.optimisePanel()) applyOptimisation(c.optimisation, *panel, state, notes);
  if (warnings) *warnings << notes;
  return plan.beamCount();
}

}  // namespace penumbra::gui
