#pragma once
/// Base of every display drawn in a slice view (CT slice, structure contours, crosshair,
/// annotations; later dose colour wash and isodose lines). A display owns its VTK actors,
/// observes the state it shows and asks its view for a render; the view coalesces requests.
///
/// To add an overlay (e.g. a dose wash): derive, add actors to renderer() in the
/// constructor, rebuild them when your state or the slice changes, call requestRender().
#include <array>

#include <QObject>

#include "gui/model/slice_orientation.hpp"
#include "gui/model/view_state.hpp"

class vtkProp;
class vtkRenderer;

namespace penumbra::gui {

class SliceOverlay : public QObject {
  Q_OBJECT
public:
  SliceOverlay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
               QObject* parent = nullptr);
  ~SliceOverlay() override;

  SliceOrientation orientation() const { return orientation_; }

  /// Called by the view right before each render with its size in display pixels: overlays
  /// with 2D annotations place them here (slice_layout.hpp), and overlays drawn at a fixed
  /// size on screen (dashes) follow the zoom. Must not request a render.
  virtual void layout(int widthPx, int heightPx) {}

  /// A handle the user drags with the left button (the swipe divider): true when display
  /// pixel (x, y) (origin at the bottom left) is on it. The view then sends the drag to
  /// dragHandleTo() instead of setting the crosshair or window/level.
  virtual bool handleAt(double x, double y) const { return false; }
  /// Moves the handle to display pixel (x, y) during such a drag.
  virtual void dragHandleTo(double x, double y) {}

signals:
  /// Emitted when the overlay changed what it draws.
  void renderRequested();

protected:
  vtkRenderer* renderer() const { return renderer_; }
  const ViewState* state() const { return state_; }
  void requestRender() { emit renderRequested(); }

  /// Display-frame point of (u, v) in-plane continuous indices on the current slice, lifted
  /// `layer` steps towards the camera so that overlays stack in a fixed order above the CT.
  std::array<double, 3> planePoint(double u, double v, int layer) const;
  /// In-plane grid axes (u, v) for this orientation: axial (i, j), coronal (i, k),
  /// sagittal (j, k).
  std::array<int, 2> planeAxes() const;

private:
  vtkRenderer* renderer_;
  const ViewState* state_;
  SliceOrientation orientation_;
};

/// Removes `prop` from `renderer` with the renderer's GL context current (VtkView answers the
/// render window's MakeCurrent): VTK frees the prop's vertex arrays and textures on removal,
/// and in another view's context that frees the other view's objects of the same ids.
void removeViewProp(vtkRenderer* renderer, vtkProp* prop);

/// Layers (towards the camera, in units of kLayerStepMm).
inline constexpr int kLayerDoseWash = 1;
inline constexpr int kLayerIsolines = 2;
inline constexpr int kLayerContours = 3;
inline constexpr int kLayerCrosshair = 4;
inline constexpr double kLayerStepMm = 0.05;

}  // namespace penumbra::gui
