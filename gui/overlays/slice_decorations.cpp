#include "gui/overlays/slice_decorations.hpp"

#include <cstdio>

#include <vtkActor.h>
#include <vtkCellArray.h>
#include <vtkActor2D.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkTextActor.h>
#include <vtkTextProperty.h>

#include "gui/overlays/overlay_text.hpp"
#include "gui/overlays/slice_layout.hpp"

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
      title_(makeOverlayText(slice_layout::kFontSize, TextAnchor::TopLeft)),
      position_(makeOverlayText(slice_layout::kFontSize, TextAnchor::TopLeft)),
      windowLevel_(makeOverlayText(slice_layout::kFontSize, TextAnchor::BottomLeft)),
      scaleBar_(vtkSmartPointer<vtkPolyData>::New()),
      scaleLabel_(makeOverlayText(slice_layout::kFontSize - 1, TextAnchor::BottomRight)) {
  // Orientation letters on the edges (radiological convention, see slice_orientation.hpp).
  const char* left = orientation == SliceOrientation::Sagittal ? "A" : "R";
  const char* right = orientation == SliceOrientation::Sagittal ? "P" : "L";
  const char* top = orientation == SliceOrientation::Axial ? "A" : "S";
  const char* bottom = orientation == SliceOrientation::Axial ? "P" : "I";
  const char* names[4] = {left, right, top, bottom};
  const TextAnchor anchors[4] = {TextAnchor::MiddleLeft, TextAnchor::MiddleRight,
                                 TextAnchor::TopCentre, TextAnchor::BottomCentre};
  for (int e = 0; e < 4; ++e) {
    letters_[std::size_t(e)] = makeOverlayText(slice_layout::kLetterFontSize, anchors[e]);
    letters_[std::size_t(e)]->SetInput(names[e]);
    letters_[std::size_t(e)]->GetTextProperty()->SetBold(true);
    // Nearly opaque: the crosshair runs through the middle of every edge, under the letter.
    letters_[std::size_t(e)]->GetTextProperty()->SetBackgroundOpacity(0.85);
  }
  const double white[3] = {0.88, 0.88, 0.88};
  scaleBarActor_ = makeOverlayLines(scaleBar_, white, 2.0f);
  for (vtkTextActor* t : {title_.Get(), position_.Get(), windowLevel_.Get(), scaleLabel_.Get()})
    renderer->AddActor2D(t);
  for (auto& t : letters_) renderer->AddActor2D(t);
  renderer->AddActor2D(scaleBarActor_);
  connect(state, &ViewState::sceneChanged, this, &SliceAnnotationDisplay::updateText);
  connect(state, &ViewState::crosshairChanged, this, &SliceAnnotationDisplay::updateText);
  connect(state, &ViewState::windowLevelChanged, this, &SliceAnnotationDisplay::updateText);
  updateText();
}

SliceAnnotationDisplay::~SliceAnnotationDisplay() = default;

void SliceAnnotationDisplay::updateText() {
  const auto& scene = state()->scene();
  char upper[96], pos[64], lower[96];
  pos[0] = 0;
  if (scene) {
    const int axis = normalAxis(orientation());
    const int slice = state()->sliceIndex(orientation());
    Vec3 ijk = state()->crosshair();
    ijk[axis] = slice;
    const Vec3 p = scene->worldOf(ijk);
    std::snprintf(upper, sizeof upper, "%s %d/%d", displayName(orientation()), slice + 1,
                  scene->sliceCount(orientation()));
    std::snprintf(pos, sizeof pos, "%c = %.1f mm", "xyz"[axis], p[axis]);
  } else {
    std::snprintf(upper, sizeof upper, "%s", displayName(orientation()));
  }
  const WindowLevel wl = state()->windowLevel();
  std::snprintf(lower, sizeof lower, "W %.0f  L %.0f", wl.window, wl.level);
  title_->SetInput(upper);
  position_->SetInput(pos);
  position_->SetVisibility(scene != nullptr);
  windowLevel_->SetInput(lower);
  windowLevel_->SetVisibility(scene != nullptr);
  for (auto& t : letters_) t->SetVisibility(scene != nullptr);
  requestRender();
}

void SliceAnnotationDisplay::layout(int w, int h) {
  using namespace slice_layout;
  placeText(title_, kMargin, titleLineTop(h, 0));
  placeText(position_, kMargin, titleLineTop(h, 1));
  placeText(windowLevel_, kMargin, kMargin);
  placeText(letters_[0], kMargin, h / 2);
  placeText(letters_[1], w - kMargin, h / 2);
  placeText(letters_[2], w / 2, h - kMargin);
  placeText(letters_[3], w / 2, kMargin);
  // Scale bar: the longest round length that fits the bottom band's right part.
  const double pxPerMm = pixelsPerMm(renderer());
  scaleBarMm_ = 0;
  if (state()->scene() && pxPerMm > 0) {
    for (double mm : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0})
      if (mm * pxPerMm <= maxScaleBarPx(w)) scaleBarMm_ = mm;
  }
  const bool show = scaleBarMm_ > 0;
  scaleBarActor_->SetVisibility(show);
  scaleLabel_->SetVisibility(show);
  if (!show) return;
  const double x1 = w - kMargin, x0 = x1 - scaleBarMm_ * pxPerMm, y = kMargin + 2;
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->InsertNextPoint(x0, y, 0);
  points->InsertNextPoint(x1, y, 0);
  points->InsertNextPoint(x0, y + 5, 0);  // end ticks
  points->InsertNextPoint(x1, y + 5, 0);
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  const vtkIdType bar[2] = {0, 1}, tick0[2] = {0, 2}, tick1[2] = {1, 3};
  cells->InsertNextCell(2, bar);
  cells->InsertNextCell(2, tick0);
  cells->InsertNextCell(2, tick1);
  scaleBar_->SetPoints(points);
  scaleBar_->SetLines(cells);
  scaleBar_->Modified();
  char label[32];
  std::snprintf(label, sizeof label, "%g mm", scaleBarMm_);
  scaleLabel_->SetInput(label);
  placeText(scaleLabel_, w - kMargin, int(y) + 7);
}

}  // namespace penumbra::gui
