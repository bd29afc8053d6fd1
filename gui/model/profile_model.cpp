#include "gui/model/profile_model.hpp"

namespace penumbra::gui {

ProfileModel::ProfileModel(QObject* parent) : QObject(parent) {}

void ProfileModel::setToolActive(bool on) {
  if (on == toolActive_) return;
  toolActive_ = on;
  emit toolActiveChanged(on);
}

void ProfileModel::setLine(SliceOrientation orientation, Vec3 startIjk, Vec3 endIjk) {
  hasLine_ = true;
  orientation_ = orientation;
  start_ = startIjk;
  end_ = endIjk;
  emit lineChanged();
}

void ProfileModel::clear() {
  if (!hasLine_) return;
  hasLine_ = false;
  emit lineChanged();
}

}  // namespace penumbra::gui
