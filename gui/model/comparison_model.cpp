#include "gui/model/comparison_model.hpp"

#include <algorithm>

#include "gui/model/dose_set_store.hpp"

namespace penumbra::gui {

ComparisonModel::ComparisonModel(QObject* parent) : QObject(parent) {}

void ComparisonModel::setCurrent(std::shared_ptr<const Comparison> comparison) {
  const CompareViewMode before = effectiveViewMode();
  current_ = std::move(comparison);
  emit comparisonChanged();
  if (effectiveViewMode() != before) emit viewModeChanged(effectiveViewMode());
}

std::shared_ptr<const DoseSet> ComparisonModel::doseSet(ComparisonSide side) const {
  if (!current_) return nullptr;
  return side == ComparisonSide::Reference ? current_->reference : current_->evaluated;
}

double ComparisonModel::sharedMaxGy() const {
  if (!current_) return 0;
  return std::max(current_->reference->maxGy, current_->evaluated->maxGy);
}

void ComparisonModel::clear() {
  if (!current_) return;
  setCurrent(nullptr);
}

void ComparisonModel::setViewMode(CompareViewMode mode) {
  if (mode == mode_) return;
  mode_ = mode;
  emit viewModeChanged(effectiveViewMode());
}

void ComparisonModel::setSideBySide(bool on) {
  if (on == sideBySide_) return;
  sideBySide_ = on;
  emit sideBySideChanged(on);
}

void ComparisonModel::setCompareLayout(CompareLayout layout) {
  if (layout == layout_) return;
  layout_ = layout;
  emit compareLayoutChanged(layout);
}

void ComparisonModel::setSwipeFraction(double fraction) {
  fraction = std::clamp(fraction, 0.0, 1.0);
  if (fraction == swipeFraction_) return;
  swipeFraction_ = fraction;
  emit splitChanged();
}

void ComparisonModel::setCheckerSizeMm(double mm) {
  mm = std::clamp(mm, 1.0, 200.0);
  if (mm == checkerSizeMm_) return;
  checkerSizeMm_ = mm;
  emit splitChanged();
}

QString ComparisonModel::criteriaText(const compare::GammaCriteria& c) {
  QString text = tr("Gamma %1 %/%2 mm %3")
                     .arg(c.dosePercent, 0, 'g', 3)
                     .arg(c.distanceMm, 0, 'g', 3)
                     .arg(c.local ? tr("local") : tr("global"));
  // Local gamma's DD is a % of each point's dose: the normalisation only sets the cut-off.
  if (c.normalisation == compare::Normalisation::Prescription)
    text += tr(" (of Rx %1 Gy)").arg(c.normalisationGy, 0, 'f', 2);
  else if (c.normalisation == compare::Normalisation::Value)
    text += tr(" (of %1 Gy)").arg(c.normalisationGy, 0, 'f', 2);
  return text;
}

const char* toString(CompareViewMode mode) {
  switch (mode) {
    case CompareViewMode::Dose: return "Dose";
    case CompareViewMode::Gamma: return "Gamma";
    case CompareViewMode::Difference: return "Difference (A - B)";
  }
  return "?";
}

const char* toString(CompareLayout layout) {
  switch (layout) {
    case CompareLayout::SideBySide: return "A | B | map";
    case CompareLayout::Swipe: return "Swipe A/B";
    case CompareLayout::Checkerboard: return "Checkerboard A/B";
  }
  return "?";
}

}  // namespace penumbra::gui
