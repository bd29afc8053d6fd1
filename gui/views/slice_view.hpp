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
///   left drag on the current beam's isocentre cross   move the isocentre in the slice plane
///   left drag on its central axis (axial view)        turn the gantry: the source follows the mouse
#include <memory>
#include <vector>

#include <QPoint>
#include <QPointF>

#include "gui/model/slice_orientation.hpp"
#include "gui/model/view_state.hpp"
#include "gui/overlays/slice_overlay.hpp"
#include "gui/views/vtk_view.hpp"

namespace penumbra::gui {

class PlanModel;
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
  /// The plan whose current beam the handles move (null: no handles). Each drag step is a
  /// PlanModel::setGeometry, so the beam displays, the editor and the live dose follow it.
  void setPlanModel(PlanModel* plan) { plan_ = plan; }

  /// Widget position (logical pixels) where the patient point `lps` [mm] is drawn, projected
  /// onto the current slice; false without a patient.
  bool widgetPosOf(const Vec3& lps, QPointF& pos) const;
  /// The gantry angle [deg, 0-360) that puts the source of a beam with `couchDeg` towards
  /// `towardsSource` (LPS, the component along the axial normal ignored); false when the
  /// couch turns the beam out of the axial plane too far to steer it there (|cos couch| < 0.1).
  static bool gantryTowards(const Vec3& towardsSource, double couchDeg, double& gantryDeg);

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
  /// A drag of a beam handle ended (the mouse let go): the live dose refines now.
  void beamDragFinished();

protected:
  void beforeRender() override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void resizeEvent(QResizeEvent* e) override;

private:
  enum class Drag { None, Pending, WindowLevel, Crosshair, Pan, Zoom, Profile, Handle, Isocentre, BeamAxis };
  /// The beam handle under `pos` (Drag::None when none); for the axis, which side of the
  /// isocentre (+1 source side, -1 exit side).
  Drag beamHandleAt(QPoint pos, double& side) const;
  void dragBeam(QPoint pos);
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
  PlanModel* plan_ = nullptr;
  double axisSide_ = 1;
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
