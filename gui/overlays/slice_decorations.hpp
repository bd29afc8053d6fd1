#pragma once
/// Decorations of a slice view: the crosshair (the traces of the other two slice planes, in
/// their plane colours) and the corner annotation (orientation letters, slice number,
/// window/level).
#include <array>

#include <vtkSmartPointer.h>

#include "gui/overlays/slice_overlay.hpp"

class vtkActor;
class vtkCornerAnnotation;
class vtkPolyData;

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
public:
  SliceAnnotationDisplay(vtkRenderer* renderer, const ViewState* state,
                         SliceOrientation orientation, QObject* parent = nullptr);
  ~SliceAnnotationDisplay() override;

private:
  void updateText();

  vtkSmartPointer<vtkCornerAnnotation> annotation_;
};

}  // namespace penumbra::gui
