#include "plan_model.hpp"

#include <cmath>

namespace penumbra::gui {

PlanModel::PlanModel(QObject* parent) : QObject(parent) {}

std::vector<proton::ProtonBeam> PlanModel::engineBeams() const {
  std::vector<proton::ProtonBeam> out;
  for (const auto& b : beams_)
    if (b.beam.spotCount() > 0) out.push_back(b.beam);
  return out;
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
  beams_[std::size_t(index)].targetName = name;
  emit beamChanged(index);
  emit planChanged();
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

void PlanModel::setPrescriptionGy(double gy) {
  if (!(gy > 0) || std::abs(gy - prescriptionGy_) < 1e-12) return;
  prescriptionGy_ = gy;
  emit prescriptionChanged(gy);
}

}  // namespace penumbra::gui
