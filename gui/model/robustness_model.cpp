#include "gui/model/robustness_model.hpp"

namespace penumbra::gui {

RobustnessModel::RobustnessModel(QObject* parent) : QObject(parent) {}

void RobustnessModel::setSettings(const RobustnessSettings& settings) {
  const auto& a = settings.scenarios;
  const auto& b = settings_.scenarios;
  if (a.rangePercent == b.rangePercent && a.setupMm == b.setupMm &&
      a.sphereDirections == b.sphereDirections && a.combine == b.combine &&
      settings.doseGridMm == settings_.doseGridMm)
    return;
  settings_ = settings;
  emit settingsChanged();
}

void RobustnessModel::setCurrent(std::shared_ptr<const RobustnessEvaluation> evaluation) {
  const bool wasStale = isStale();
  current_ = std::move(evaluation);
  emit evaluationChanged();
  emit bandsChanged();
  if (wasStale != isStale()) emit staleChanged(isStale());
}

void RobustnessModel::clear() {
  if (!current_) return;
  current_.reset();
  emit evaluationChanged();
  emit bandsChanged();
  emit staleChanged(false);
}

void RobustnessModel::planEdited() {
  const bool wasStale = isStale();
  const bool hadBands = bands() != nullptr;
  ++planRevision_;
  if (hadBands) emit bandsChanged();
  if (wasStale != isStale()) emit staleChanged(isStale());
}

std::shared_ptr<const robust::RobustnessResult> RobustnessModel::bands() const {
  if (!current_ || isStale()) return nullptr;
  return current_->result;
}

void RobustnessModel::setBandsVisible(bool on) {
  if (on == bandsVisible_) return;
  bandsVisible_ = on;
  emit bandsChanged();
}

}  // namespace penumbra::gui
