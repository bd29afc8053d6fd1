#pragma once
/// The CT slice of a slice view: a vtkImageActor showing one slice of the shared CT image,
/// grey-mapped with the shared window/level.
#include <vtkSmartPointer.h>

#include "gui/overlays/slice_overlay.hpp"

class vtkImageActor;

namespace penumbra::gui {

class CtSliceDisplay : public SliceOverlay {
public:
  CtSliceDisplay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
                 QObject* parent = nullptr);
  ~CtSliceDisplay() override;

private:
  void onSceneChanged();
  void onCrosshairChanged();
  void applyWindowLevel();

  vtkSmartPointer<vtkImageActor> actor_;
  int shownSlice_ = -1;
};

/// Sets `actor` to show slice `slice` of `scene`'s CT normal to grid axis `axis`.
void showCtSlice(vtkImageActor* actor, const PatientScene& scene, int axis, int slice);

}  // namespace penumbra::gui
