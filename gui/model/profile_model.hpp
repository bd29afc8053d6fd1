#pragma once
/// A line profile (issue 13, item 3): a segment drawn on a slice view with the Profile tool,
/// in display-grid indices (PatientScene::grid(), continuous) on one slice of one orientation.
/// The slice views draw it (ProfileLineDisplay), the Profile panel plots the doses (and the
/// comparison's gamma) along it. Nothing here renders or samples.
#include <QObject>

#include "core/vec3.hpp"
#include "gui/model/slice_orientation.hpp"

namespace penumbra::gui {

class ProfileModel : public QObject {
  Q_OBJECT
public:
  explicit ProfileModel(QObject* parent = nullptr);

  /// While on, a left drag on a slice view draws the profile line instead of changing the
  /// window/level.
  bool toolActive() const { return toolActive_; }
  void setToolActive(bool on);

  bool hasLine() const { return hasLine_; }
  SliceOrientation orientation() const { return orientation_; }
  Vec3 start() const { return start_; }
  Vec3 end() const { return end_; }
  void setLine(SliceOrientation orientation, Vec3 startIjk, Vec3 endIjk);
  void clear();

signals:
  void toolActiveChanged(bool on);
  void lineChanged();

private:
  bool toolActive_ = false;
  bool hasLine_ = false;
  SliceOrientation orientation_ = SliceOrientation::Axial;
  Vec3 start_{0, 0, 0}, end_{0, 0, 0};
};

}  // namespace penumbra::gui
