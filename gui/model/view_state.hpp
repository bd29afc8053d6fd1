#pragma once
/// State shared by all views of one patient: the crosshair, the CT window/level and which
/// structures are shown. Views and panels observe it through signals; nothing here renders.
#include <memory>
#include <vector>

#include <QObject>

#include "core/vec3.hpp"
#include "gui/model/patient_scene.hpp"
#include "gui/model/window_level.hpp"

namespace penumbra::gui {

class ViewState : public QObject {
  Q_OBJECT
public:
  explicit ViewState(QObject* parent = nullptr);

  /// The scene shown (null when no patient is open).
  const std::shared_ptr<const PatientScene>& scene() const { return scene_; }
  void setScene(std::shared_ptr<const PatientScene> scene);

  /// Crosshair as a continuous display-grid index (PatientScene::grid(), voxel centres at
  /// integers; LPS through PatientScene::worldOf).
  Vec3 crosshair() const { return crosshair_; }
  /// Slice index (rounded, clamped) of the crosshair along an orientation's normal.
  int sliceIndex(SliceOrientation o) const;
  /// Moves the crosshair, clamped to the grid.
  void setCrosshair(Vec3 ijk);
  /// Moves the crosshair by whole slices along the normal of `o`.
  void stepSlice(SliceOrientation o, int delta);
  void setSliceIndex(SliceOrientation o, int slice);

  WindowLevel windowLevel() const { return windowLevel_; }
  void setWindowLevel(WindowLevel wl);

  bool isStructureVisible(int index) const;
  void setStructureVisible(int index, bool visible);

signals:
  void sceneChanged();
  void crosshairChanged();
  void windowLevelChanged();
  void structureVisibilityChanged(int index, bool visible);

private:
  Vec3 clamped(Vec3 ijk) const;

  std::shared_ptr<const PatientScene> scene_;
  Vec3 crosshair_{0, 0, 0};
  WindowLevel windowLevel_{400, 40};
  std::vector<bool> visible_;
};

}  // namespace penumbra::gui
