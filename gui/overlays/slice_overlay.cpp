#include "gui/overlays/slice_overlay.hpp"

#include <vtkRenderWindow.h>
#include <vtkRenderer.h>

namespace penumbra::gui {

SliceOverlay::SliceOverlay(vtkRenderer* renderer, const ViewState* state,
                           SliceOrientation orientation, QObject* parent)
    : QObject(parent), renderer_(renderer), state_(state), orientation_(orientation) {}

SliceOverlay::~SliceOverlay() = default;

void removeViewProp(vtkRenderer* renderer, vtkProp* prop) {
  if (!renderer || !prop) return;
  if (vtkRenderWindow* window = renderer->GetRenderWindow()) window->MakeCurrent();
  renderer->RemoveViewProp(prop);
}

std::array<int, 2> SliceOverlay::planeAxes() const {
  switch (orientation_) {
    case SliceOrientation::Axial: return {0, 1};
    case SliceOrientation::Coronal: return {0, 2};
    case SliceOrientation::Sagittal: return {1, 2};
  }
  return {0, 1};
}

std::array<double, 3> SliceOverlay::planePoint(double u, double v, int layer) const {
  const auto& scene = state_->scene();
  const int n = normalAxis(orientation_);
  const auto [ua, va] = planeAxes();
  Vec3 ijk;
  ijk[ua] = u;
  ijk[va] = v;
  ijk[n] = state_->sliceIndex(orientation_);
  std::array<double, 3> p = scene ? scene->displayPoint(ijk) : std::array<double, 3>{};
  const auto dop = cameraAxes(orientation_).directionOfProjection;
  for (int a = 0; a < 3; ++a) p[a] -= dop[a] * layer * kLayerStepMm;
  return p;
}

}  // namespace penumbra::gui
