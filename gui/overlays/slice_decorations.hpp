#pragma once
/// Decorations of a slice view: the crosshair (the traces of the other two slice planes, in
/// their plane colours) and the annotation (view and slice number, position, orientation
/// letters, window/level and a scale bar), laid out by slice_layout.hpp.
#include <array>

#include <vtkSmartPointer.h>

#include "gui/overlays/slice_overlay.hpp"

class vtkActor;
class vtkActor2D;
class vtkPolyData;
class vtkTextActor;

namespace penumbra::gui {

/// Colour of each slice plane (Slicer convention): axial red, sagittal yellow, coronal green.
std::array<double, 3> planeColor(SliceOrientation o);

class CrosshairDisplay : public SliceOverlay {
public:
  CrosshairDisplay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
                   QObject* parent = nullptr);
  ~CrosshairDisplay() override;

private:
  void rebuild();

  // lines_[0]: the line of constant u (trace of the plane normal to the u axis), lines_[1]: v.
  std::array<vtkSmartPointer<vtkPolyData>, 2> lines_;
  std::array<vtkSmartPointer<vtkActor>, 2> actors_;
};

class SliceAnnotationDisplay : public SliceOverlay {
  Q_OBJECT
public:
  SliceAnnotationDisplay(vtkRenderer* renderer, const ViewState* state,
                         SliceOrientation orientation, QObject* parent = nullptr);
  ~SliceAnnotationDisplay() override;

  void layout(int widthPx, int heightPx) override;
  /// Length of the scale bar in mm (0 when hidden) and its text ("20 mm"). For tests.
  double scaleBarMm() const { return scaleBarMm_; }

private:
  void updateText();

  vtkSmartPointer<vtkTextActor> title_, position_, windowLevel_;
  std::array<vtkSmartPointer<vtkTextActor>, 4> letters_;  // left, right, top, bottom
  vtkSmartPointer<vtkPolyData> scaleBar_;
  vtkSmartPointer<vtkActor2D> scaleBarActor_;
  vtkSmartPointer<vtkTextActor> scaleLabel_;
  double scaleBarMm_ = 0;
};

}  // namespace penumbra::gui
