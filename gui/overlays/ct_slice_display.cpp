#include "gui/overlays/ct_slice_display.hpp"

#include <vtkImageActor.h>
#include <vtkImageData.h>
#include <vtkImageProperty.h>
#include <vtkImageSliceMapper.h>
#include <vtkRenderer.h>

namespace penumbra::gui {

void showCtSlice(vtkImageActor* actor, const PatientScene& scene, int axis, int slice) {
  const auto& d = scene.grid().dims;
  int ext[6] = {0, d[0] - 1, 0, d[1] - 1, 0, d[2] - 1};
  ext[2 * axis] = ext[2 * axis + 1] = slice;
  actor->SetDisplayExtent(ext);
}

CtSliceDisplay::CtSliceDisplay(vtkRenderer* renderer, const ViewState* state,
                               SliceOrientation orientation, QObject* parent)
    : SliceOverlay(renderer, state, orientation, parent),
      actor_(vtkSmartPointer<vtkImageActor>::New()) {
  actor_->InterpolateOn();
  actor_->GetProperty()->SetInterpolationTypeToLinear();
  // Added to the renderer only while it has a CT: an image actor without input makes
  // the pipeline print errors at every render.
  connect(state, &ViewState::sceneChanged, this, &CtSliceDisplay::onSceneChanged);
  connect(state, &ViewState::crosshairChanged, this, &CtSliceDisplay::onCrosshairChanged);
  connect(state, &ViewState::windowLevelChanged, this, &CtSliceDisplay::applyWindowLevel);
  applyWindowLevel();
}

CtSliceDisplay::~CtSliceDisplay() = default;

void CtSliceDisplay::onSceneChanged() {
  const auto& scene = state()->scene();
  shownSlice_ = -1;
  if (!scene) {
    removeViewProp(renderer(), actor_);
    actor_->GetMapper()->SetInputData(nullptr);
  } else {
    actor_->GetMapper()->SetInputData(scene->ctImage());
    if (!renderer()->HasViewProp(actor_)) renderer()->AddViewProp(actor_);
    onCrosshairChanged();
  }
  requestRender();
}

void CtSliceDisplay::onCrosshairChanged() {
  const auto& scene = state()->scene();
  if (!scene) return;
  const int slice = state()->sliceIndex(orientation());
  if (slice == shownSlice_) return;
  shownSlice_ = slice;
  showCtSlice(actor_, *scene, normalAxis(orientation()), slice);
  requestRender();
}

void CtSliceDisplay::applyWindowLevel() {
  const WindowLevel wl = state()->windowLevel();
  actor_->GetProperty()->SetColorWindow(wl.window);
  actor_->GetProperty()->SetColorLevel(wl.level);
  requestRender();
}

}  // namespace penumbra::gui
