#include "gui/overlays/slice_decorations.hpp"

#include <cstdio>

#include <vtkActor.h>
#include <vtkCellArray.h>
#include <vtkCornerAnnotation.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkTextProperty.h>

namespace penumbra::gui {

std::array<double, 3> planeColor(SliceOrientation o) {
  switch (o) {
    case SliceOrientation::Axial: return {0.95, 0.35, 0.35};
    case SliceOrientation::Sagittal: return {0.95, 0.85, 0.30};
    case SliceOrientation::Coronal: return {0.40, 0.85, 0.40};
  }
  return {1, 1, 1};
}

namespace {
SliceOrientation orientationNormalTo(int axis) {
  return axis == 0 ? SliceOrientation::Sagittal
                   : (axis == 1 ? SliceOrientation::Coronal : SliceOrientation::Axial);
}
}  // namespace

CrosshairDisplay::CrosshairDisplay(vtkRenderer* renderer, const ViewState* state,
                                   SliceOrientation orientation, QObject* parent)
    : SliceOverlay(renderer, state, orientation, parent) {
  const auto axes = planeAxes();
  for (int n = 0; n < 2; ++n) {
    lines_[n] = vtkSmartPointer<vtkPolyData>::New();
    auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
    mapper->SetInputData(lines_[n]);
    actors_[n] = vtkSmartPointer<vtkActor>::New();
    actors_[n]->SetMapper(mapper);
    const auto c = planeColor(orientationNormalTo(axes[n]));
    actors_[n]->GetProperty()->SetColor(c[0], c[1], c[2]);
    actors_[n]->GetProperty()->SetOpacity(0.7);
    actors_[n]->GetProperty()->SetLineWidth(1.0);
    actors_[n]->GetProperty()->LightingOff();
    actors_[n]->PickableOff();
    actors_[n]->VisibilityOff();
    renderer->AddActor(actors_[n]);
  }
  connect(state, &ViewState::sceneChanged, this, &CrosshairDisplay::rebuild);
  connect(state, &ViewState::crosshairChanged, this, &CrosshairDisplay::rebuild);
}

CrosshairDisplay::~CrosshairDisplay() = default;

void CrosshairDisplay::rebuild() {
  const auto& scene = state()->scene();
  for (auto& a : actors_) a->SetVisibility(scene != nullptr);
  if (!scene) return requestRender();
  const auto [ua, va] = planeAxes();
  const auto& d = scene->grid().dims;
  const Vec3 c = state()->crosshair();
  const double uLo = -0.5, uHi = d[ua] - 0.5, vLo = -0.5, vHi = d[va] - 0.5;
  const std::array<std::array<double, 4>, 2> uv{{{c[ua], vLo, c[ua], vHi},
                                                 {uLo, c[va], uHi, c[va]}}};
  for (int n = 0; n < 2; ++n) {
    auto points = vtkSmartPointer<vtkPoints>::New();
    const auto a = planePoint(uv[n][0], uv[n][1], kLayerCrosshair);
    const auto b = planePoint(uv[n][2], uv[n][3], kLayerCrosshair);
    points->InsertNextPoint(a.data());
    points->InsertNextPoint(b.data());
    auto cells = vtkSmartPointer<vtkCellArray>::New();
    const vtkIdType ids[2] = {0, 1};
    cells->InsertNextCell(2, ids);
    lines_[n]->SetPoints(points);
    lines_[n]->SetLines(cells);
    lines_[n]->Modified();
  }
  requestRender();
}

SliceAnnotationDisplay::SliceAnnotationDisplay(vtkRenderer* renderer, const ViewState* state,
                                               SliceOrientation orientation, QObject* parent)
    : SliceOverlay(renderer, state, orientation, parent),
      annotation_(vtkSmartPointer<vtkCornerAnnotation>::New()) {
  annotation_->SetMaximumFontSize(15);
  annotation_->SetLinearFontScaleFactor(2);
  annotation_->SetNonlinearFontScaleFactor(1);
  annotation_->GetTextProperty()->SetColor(0.85, 0.85, 0.85);
  annotation_->PickableOff();
  // Orientation letters on the edges (radiological convention, see slice_orientation.hpp).
  const char* left = orientation == SliceOrientation::Sagittal ? "A" : "R";
  const char* right = orientation == SliceOrientation::Sagittal ? "P" : "L";
  const char* top = orientation == SliceOrientation::Axial ? "A" : "S";
  const char* bottom = orientation == SliceOrientation::Axial ? "P" : "I";
  annotation_->SetText(vtkCornerAnnotation::LeftEdge, left);
  annotation_->SetText(vtkCornerAnnotation::RightEdge, right);
  annotation_->SetText(vtkCornerAnnotation::UpperEdge, top);
  annotation_->SetText(vtkCornerAnnotation::LowerEdge, bottom);
  renderer->AddViewProp(annotation_);
  connect(state, &ViewState::sceneChanged, this, &SliceAnnotationDisplay::updateText);
  connect(state, &ViewState::crosshairChanged, this, &SliceAnnotationDisplay::updateText);
  connect(state, &ViewState::windowLevelChanged, this, &SliceAnnotationDisplay::updateText);
  updateText();
}

SliceAnnotationDisplay::~SliceAnnotationDisplay() = default;

void SliceAnnotationDisplay::updateText() {
  const auto& scene = state()->scene();
  char upper[96], lower[96];
  if (scene) {
    const int axis = normalAxis(orientation());
    const int slice = state()->sliceIndex(orientation());
    Vec3 ijk = state()->crosshair();
    ijk[axis] = slice;
    const Vec3 p = scene->worldOf(ijk);
    std::snprintf(upper, sizeof upper, "%s  %d/%d  (%c = %.1f mm)", displayName(orientation()),
                  slice + 1, scene->sliceCount(orientation()), "xyz"[axis], p[axis]);
  } else {
    std::snprintf(upper, sizeof upper, "%s", displayName(orientation()));
  }
  const WindowLevel wl = state()->windowLevel();
  std::snprintf(lower, sizeof lower, "W %.0f  L %.0f", wl.window, wl.level);
  annotation_->SetText(vtkCornerAnnotation::UpperLeft, upper);
  annotation_->SetText(vtkCornerAnnotation::LowerLeft, scene ? lower : "");
  annotation_->SetVisibility(true);
  requestRender();
}

}  // namespace penumbra::gui
