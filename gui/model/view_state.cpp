#include "gui/model/view_state.hpp"

#include <algorithm>
#include <cmath>

namespace penumbra::gui {

ViewState::ViewState(QObject* parent) : QObject(parent) {}

void ViewState::setScene(std::shared_ptr<const PatientScene> scene) {
  scene_ = std::move(scene);
  visible_.assign(scene_ ? scene_->patient().structures.structures.size() : 0, true);
  crosshair_ = scene_ ? scene_->centreIndex() : Vec3{};
  emit sceneChanged();
  emit crosshairChanged();
}

Vec3 ViewState::clamped(Vec3 ijk) const {
  if (!scene_) return ijk;
  const auto& d = scene_->grid().dims;
  for (int a = 0; a < 3; ++a) ijk[a] = std::clamp(ijk[a], 0.0, double(std::max(d[a] - 1, 0)));
  return ijk;
}

int ViewState::sliceIndex(SliceOrientation o) const {
  const int axis = normalAxis(o);
  const int n = scene_ ? scene_->grid().dims[axis] : 1;
  return std::clamp(int(std::lround(crosshair_[axis])), 0, std::max(n - 1, 0));
}

void ViewState::setCrosshair(Vec3 ijk) {
  const Vec3 c = clamped(ijk);
  if (c.x == crosshair_.x && c.y == crosshair_.y && c.z == crosshair_.z) return;
  crosshair_ = c;
  emit crosshairChanged();
}

void ViewState::setSliceIndex(SliceOrientation o, int slice) {
  Vec3 c = crosshair_;
  c[normalAxis(o)] = slice;
  setCrosshair(c);
}

void ViewState::stepSlice(SliceOrientation o, int delta) { setSliceIndex(o, sliceIndex(o) + delta); }

void ViewState::setWindowLevel(WindowLevel wl) {
  wl.window = std::max(wl.window, kMinWindow);
  if (wl == windowLevel_) return;
  windowLevel_ = wl;
  emit windowLevelChanged();
}

bool ViewState::isStructureVisible(int index) const {
  return index >= 0 && index < int(visible_.size()) && visible_[index];
}

void ViewState::setStructureVisible(int index, bool visible) {
  if (index < 0 || index >= int(visible_.size()) || visible_[index] == visible) return;
  visible_[index] = visible;
  emit structureVisibilityChanged(index, visible);
}

}  // namespace penumbra::gui
