#include "gui/model/plan_model.hpp"

#include <algorithm>
#include <cmath>

namespace penumbra::gui {

PlanModel::PlanModel(QObject* parent) : QObject(parent) {}

photon::PhotonBeam photonEngineBeam(const PlannedBeam& p) {
  photon::PhotonBeam b = p.photon.beam;
  b.name = p.beam.name;
  b.gantryDeg = p.beam.gantryDeg;
  b.couchDeg = p.beam.couchDeg;
  b.isocenter = p.beam.isocenter;
  return b;
}

proton::BeamFrame beamFrame(const PlannedBeam& p) {
  if (!p.isPhoton()) return proton::makeBeamFrame(p.beam);
  proton::BeamFrame f =
      proton::makeBeamFrame(p.beam.gantryDeg, p.beam.couchDeg, p.beam.isocenter, p.photon.beam.sadMm);
  const double c = p.photon.beam.collimatorDeg * M_PI / 180.0;
  const Vec3 u = f.u, v = f.v;
  f.u = std::cos(c) * u + std::sin(c) * v;
  f.v = -std::sin(c) * u + std::cos(c) * v;
  return f;
}

std::vector<proton::ProtonBeam> PlanModel::engineBeams() const {
  std::vector<proton::ProtonBeam> out;
  for (const auto& b : beams_)
    if (!b.isPhoton() && b.beam.spotCount() > 0) out.push_back(b.beam);
  return out;
}

std::vector<photon::PhotonBeam> PlanModel::photonEngineBeams() const {
  std::vector<photon::PhotonBeam> out;
  for (const auto& b : beams_)
    if (b.isPhoton()) out.push_back(photonEngineBeam(b));
  return out;
}

int PlanModel::photonBeamCount() const {
  return int(std::count_if(beams_.begin(), beams_.end(), [](const PlannedBeam& b) { return b.isPhoton(); }));
}

std::size_t PlanModel::totalSpots() const {
  std::size_t n = 0;
  for (const auto& b : beams_) n += b.beam.spotCount();
  return n;
}

void PlanModel::setCurrentBeam(int index) {
  if (!valid(index)) index = -1;
  if (index == current_) return;
  current_ = index;
  emit currentBeamChanged(index);
}

QString PlanModel::uniqueName(const QString& wanted) const {
  auto taken = [this](const QString& n) {
    for (const auto& b : beams_)
      if (QString::fromStdString(b.beam.name) == n) return true;
    return false;
  };
  if (!wanted.isEmpty() && !taken(wanted)) return wanted;
  const QString base = wanted.isEmpty() ? QStringLiteral("Beam") : wanted;
  for (int n = 1;; ++n) {
    const QString candidate = QString("%1 %2").arg(base).arg(n);
    if (!taken(candidate)) return candidate;
  }
}

int PlanModel::addBeam(proton::ProtonBeam beam, const QString& targetName) {
  beam.name = uniqueName(QString::fromStdString(beam.name)).toStdString();
  PlannedBeam p;
  p.beam = std::move(beam);
  p.targetName = targetName;
  beams_.push_back(std::move(p));
  const int index = beamCount() - 1;
  emit beamAdded(index);
  emit planChanged();
  setCurrentBeam(index);
  return index;
}

int PlanModel::addPhotonBeam(PhotonField field, const QString& targetName) {
  PlannedBeam p;
  p.modality = BeamModality::Photon;
  p.beam.name = uniqueName(QString::fromStdString(field.beam.name)).toStdString();
  p.beam.gantryDeg = field.beam.gantryDeg;
  p.beam.couchDeg = field.beam.couchDeg;
  p.beam.isocenter = field.beam.isocenter;
  p.beam.virtualSourceDistanceMm = field.beam.sadMm;
  p.targetName = targetName;
  p.photon = std::move(field);
  // The shapes need the controller (structure masks): stale until it has made them, unless
  // they came with the beam (a restored case).
  p.photon.shapesStale = !targetName.isEmpty() && p.photon.targetOutline.empty();
  beams_.push_back(std::move(p));
  const int index = beamCount() - 1;
  emit beamAdded(index);
  emit planChanged();
  setCurrentBeam(index);
  if (beams_[std::size_t(index)].photon.shapesStale) emit photonShapesStale(index);
  return index;
}

void PlanModel::removeBeam(int index) {
  if (!valid(index)) return;
  beams_.erase(beams_.begin() + index);
  const int next = std::min(current_, beamCount() - 1);
  // No current beam while observers handle the removal: the old index may be past the end
  // (reading it threw std::out_of_range when a new patient cleared a plan).
  current_ = -1;
  emit beamRemoved(index);
  emit planChanged();
  current_ = -2;  // force the signal: the beam at the current index is another one now
  setCurrentBeam(next);
}

void PlanModel::clear() {
  while (beamCount() > 0) removeBeam(beamCount() - 1);
}

void PlanModel::setGeometry(int index, double gantryDeg, double couchDeg, Vec3 isocenter) {
  if (!valid(index)) return;
  PlannedBeam& p = beams_[std::size_t(index)];
  auto same = [](double a, double b) { return std::abs(a - b) < 1e-9; };
  const bool moved = !same(p.beam.gantryDeg, gantryDeg) || !same(p.beam.couchDeg, couchDeg) ||
                     !same(p.beam.isocenter.x, isocenter.x) ||
                     !same(p.beam.isocenter.y, isocenter.y) || !same(p.beam.isocenter.z, isocenter.z);
  if (!moved) return;
  p.beam.gantryDeg = gantryDeg;
  p.beam.couchDeg = couchDeg;
  p.beam.isocenter = isocenter;
  if (p.isPhoton()) {
    p.photon.shapesStale = true;
    emit beamChanged(index);
    emit planChanged();
    emit photonShapesStale(index);
    return;
  }
  const bool hadSpots = !p.beam.layers.empty();
  p.beam.layers.clear();
  p.projection.reset();
  p.layerRangesMm.clear();
  emit beamChanged(index);
  if (hadSpots) emit spotsChanged(index);
  emit planChanged();
}

void PlanModel::setTargetName(int index, const QString& name) {
  if (!valid(index) || beams_[std::size_t(index)].targetName == name) return;
  PlannedBeam& p = beams_[std::size_t(index)];
  p.targetName = name;
  if (p.isPhoton()) p.photon.shapesStale = true;
  emit beamChanged(index);
  emit planChanged();
  if (p.isPhoton()) emit photonShapesStale(index);
}

void PlanModel::setPhotonSettings(int index, double collimatorDeg, double sadMm, std::array<double, 4> jawsMm,
                                  double monitorUnits) {
  if (!valid(index) || !beams_[std::size_t(index)].isPhoton()) return;
  PlannedBeam& p = beams_[std::size_t(index)];
  photon::PhotonBeam& b = p.photon.beam;
  auto same = [](double a, double c) { return std::abs(a - c) < 1e-9; };
  const bool reshaped = !same(b.collimatorDeg, collimatorDeg) || !same(b.sadMm, sadMm);
  if (!reshaped && same(b.x1Mm, jawsMm[0]) && same(b.x2Mm, jawsMm[1]) && same(b.y1Mm, jawsMm[2]) &&
      same(b.y2Mm, jawsMm[3]) && same(b.monitorUnits, monitorUnits))
    return;
  b.collimatorDeg = collimatorDeg;
  b.sadMm = sadMm;
  p.beam.virtualSourceDistanceMm = sadMm;
  b.x1Mm = jawsMm[0], b.x2Mm = jawsMm[1], b.y1Mm = jawsMm[2], b.y2Mm = jawsMm[3];
  b.monitorUnits = monitorUnits;
  if (reshaped) p.photon.shapesStale = true;
  emit beamChanged(index);
  emit planChanged();
  if (reshaped) emit photonShapesStale(index);
}

void PlanModel::setPhotonShapes(int index, const QString& apertureTarget, double marginMm, BevPolygons aperture,
                                BevPolygons targetOutline) {
  if (!valid(index) || !beams_[std::size_t(index)].isPhoton()) return;
  PhotonField& f = beams_[std::size_t(index)].photon;
  f.apertureTarget = apertureTarget;
  f.apertureMarginMm = marginMm;
  f.beam.aperture = std::move(aperture);
  f.targetOutline = std::move(targetOutline);
  f.shapesStale = false;
  emit beamChanged(index);
  emit planChanged();
}

void PlanModel::scaleMonitorUnits(double factor) {
  if (!(factor > 0) || !std::isfinite(factor)) return;
  bool any = false;
  for (int i = 0; i < beamCount(); ++i) {
    if (!beams_[std::size_t(i)].isPhoton()) continue;
    beams_[std::size_t(i)].photon.beam.monitorUnits *= factor;
    any = true;
    emit beamChanged(i);
  }
  if (any) emit planChanged();
}

void PlanModel::setSpots(int index, proton::SpotGenerationResult result,
                         const proton::SpotGenerationOptions& options, const QString& targetName) {
  if (!valid(index)) return;
  PlannedBeam& p = beams_[std::size_t(index)];
  const std::string name = p.beam.name;
  p.beam = std::move(result.beam);
  p.beam.name = name;
  p.projection = std::move(result.projection);
  p.layerRangesMm = std::move(result.layerRangesMm);
  p.layerSpacingMm = result.layerSpacingUsedMm;
  p.options = options;
  p.targetName = targetName;
  emit spotsChanged(index);
  emit planChanged();
}

void PlanModel::removeLayer(int index, int layer) {
  if (!valid(index)) return;
  PlannedBeam& p = beams_[std::size_t(index)];
  if (layer < 0 || layer >= int(p.beam.layers.size())) return;
  proton::removeLayer(p.beam, std::size_t(layer));
  if (layer < int(p.layerRangesMm.size())) p.layerRangesMm.erase(p.layerRangesMm.begin() + layer);
  emit spotsChanged(index);
  emit planChanged();
}

void PlanModel::removeSpot(int index, int layer, int spot) {
  if (!valid(index)) return;
  PlannedBeam& p = beams_[std::size_t(index)];
  if (layer < 0 || layer >= int(p.beam.layers.size())) return;
  const bool lastSpot = p.beam.layers[std::size_t(layer)].spots.size() == 1;
  if (spot < 0 || spot >= int(p.beam.layers[std::size_t(layer)].spots.size())) return;
  proton::removeSpot(p.beam, std::size_t(layer), std::size_t(spot));
  if (lastSpot && layer < int(p.layerRangesMm.size()))
    p.layerRangesMm.erase(p.layerRangesMm.begin() + layer);  // the layer went with it
  emit spotsChanged(index);
  emit planChanged();
}

void PlanModel::scaleWeights(double factor) {
  if (!(factor > 0) || !std::isfinite(factor)) return;
  for (int i = 0; i < beamCount(); ++i) {
    for (auto& l : beams_[std::size_t(i)].beam.layers)
      for (auto& s : l.spots) s.weight *= factor;
    emit spotsChanged(i);
  }
  emit planChanged();
}

bool PlanModel::setEngineWeights(const std::vector<double>& weights) {
  if (weights.size() != totalSpots()) return false;
  std::size_t n = 0;
  for (int i = 0; i < beamCount(); ++i) {
    if (beams_[std::size_t(i)].beam.spotCount() == 0) continue;
    for (auto& l : beams_[std::size_t(i)].beam.layers)
      for (auto& s : l.spots) s.weight = weights[n++];
    emit spotsChanged(i);
  }
  emit planChanged();
  return true;
}

void PlanModel::setPrescriptionGy(double gy) { setPrescription(gy, {}); }

void PlanModel::setPrescription(double gy, const QString& source) {
  if (!(gy > 0)) return;
  const bool sameDose = std::abs(gy - prescriptionGy_) < 1e-12;
  if (sameDose && source == prescriptionSource_) return;
  prescriptionGy_ = gy;
  prescriptionSource_ = source;
  emit prescriptionChanged(gy);
}

}  // namespace penumbra::gui
