#pragma once
/// A 2D slice view (axial, sagittal or coronal) of the shared ViewState, with Qt-side
/// interaction (no VTK interactor):
///   left click           set the crosshair (all views follow)
///   shift + left drag    move the crosshair continuously
///   left drag            window (horizontal) / level (vertical)
///   wheel, PageUp/Down, Up/Down   previous / next slice
///   ctrl + wheel, right drag      zoom;  middle drag  pan;  R  reset the view
///   left drag with the Profile tool on (ProfileModel::toolActive)   draw a line profile
///   left drag on an overlay's handle (the swipe divider)             move the handle
#include <memory>
#include <vector>

#include <QPoint>

#include "gui/model/slice_orientation.hpp"
#include "gui/model/view_state.hpp"
#include "gui/overlays/slice_overlay.hpp"
#include "gui/views/vtk_view.hpp"

namespace penumbra::gui {

class ProfileModel;

class SliceView : public VtkView {
  Q_OBJECT
public:
  SliceView(SliceOrientation orientation, ViewState* state, QWidget* parent = nullptr);
  ~SliceView() override;

  SliceOrientation orientation() const { return orientation_; }
  ViewState* viewState() const { return state_; }

  /// Adds an overlay display (the view takes ownership and renders when it asks).
  void addOverlay(SliceOverlay* overlay);
  /// Where a left drag with the Profile tool on puts its line (null: no profile tool).
  void setProfileModel(ProfileModel* profile) { profile_ = profile; }

  /// Continuous display-grid index (PatientScene::grid()) under a widget position, on the
  /// current slice; false when no patient is shown.
  bool indexAt(QPoint widgetPos, Vec3& ijk) const;

  /// One-line description of what is under `widgetPos`: LPS position (mm) and HU.
  QString describePosition(QPoint widgetPos) const;

  /// Takes `other`'s camera (focal point, zoom, pan) when both show the same orientation:
  /// the side-by-side comparison views move as one. Emits nothing (no echo between views).
  void matchCamera(const SliceView& other);

public slots:
  /// Fits the slice into the view (camera reset).
  void resetCamera();

signals:
  /// Text for the status bar when the mouse moves over the view.
  void cursorInfoChanged(const QString& text);
  /// The display-grid index (continuous, on the current slice) under the mouse, emitted with
  /// cursorInfoChanged; overlays' read-outs (dose under the cursor) follow it.
  void cursorIndexChanged(double i, double j, double k);
  /// The user zoomed, panned or reset the view (or it was refitted on resize).
  void cameraChanged();

protected:
  void beforeRender() override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;

private:
  enum class Drag { None, Pending, WindowLevel, Crosshair, Pan, Zoom, Profile, Handle };
  bool worldAt(QPoint widgetPos, double world[3]) const;
  void zoomBy(double factor);
  void setCrosshairAt(QPoint widgetPos);
  void reportCursor(QPoint widgetPos);
  /// The overlay whose handle is under `widgetPos` (null: none).
  SliceOverlay* handleAt(QPoint widgetPos) const;
  /// Display pixel (origin at the bottom left) of a widget position.
  QPointF displayPixelOf(QPoint widgetPos) const;

  SliceOrientation orientation_;
  ViewState* state_;
  std::vector<SliceOverlay*> overlays_;  // owned as QObject children
  ProfileModel* profile_ = nullptr;
  SliceOverlay* handle_ = nullptr;  // the overlay whose handle is being dragged
  Vec3 profileStart_{0, 0, 0};
  Drag drag_ = Drag::None;
  QPoint pressPos_, lastPos_;
  int wheelAccumulator_ = 0;
  bool userCamera_ = false;  // zoomed or panned: keep the camera on resize
};

/// Creates a slice view with the standard overlays (CT, contours, crosshair, annotation).
SliceView* createStandardSliceView(SliceOrientation orientation, ViewState* state,
                                   QWidget* parent);

}  // namespace penumbra::gui
