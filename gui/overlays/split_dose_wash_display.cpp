#include "gui/overlays/split_dose_wash_display.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <vtkActor2D.h>
#include <vtkCellArray.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkRenderer.h>
#include <vtkTextActor.h>

#include "gui/model/dose_set_store.hpp"
#include "gui/overlays/overlay_text.hpp"
#include "gui/overlays/slice_layout.hpp"

namespace penumbra::gui {

namespace {
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
/// How close to the divider [display px] a press takes it.
constexpr double kGrabPx = 6;
}  // namespace

SplitDoseWashDisplay::SplitDoseWashDisplay(vtkRenderer* renderer, const ViewState* state,
                                           SliceOrientation orientation, const DoseSetStore* store,
                                           const DoseDisplaySettings* settings, const PlanModel* plan,
                                           ComparisonModel* model, QObject* parent)
    : DoseWashDisplay(renderer, state, orientation, store, settings, plan, parent),
      model_(model),
      divider_(vtkSmartPointer<vtkPolyData>::New()),
      labelA_(makeOverlayText(slice_layout::kFontSize, TextAnchor::TopRight)),
      labelB_(makeOverlayText(slice_layout::kFontSize, TextAnchor::TopLeft)),
      dividerX_(kNan) {
  const double white[3] = {1, 1, 1};
  dividerActor_ = makeOverlayLines(divider_, white, 2.0f);
  labelA_->SetInput("dose A");
  labelB_->SetInput("dose B");
  for (vtkProp* p : {static_cast<vtkProp*>(dividerActor_.Get()), static_cast<vtkProp*>(labelA_.Get()),
                     static_cast<vtkProp*>(labelB_.Get())}) {
    p->SetVisibility(false);
    renderer->AddActor2D(p);
  }
  connect(model, &ComparisonModel::compareLayoutChanged, this, &SplitDoseWashDisplay::rebuild);
  connect(model, &ComparisonModel::splitChanged, this, &SplitDoseWashDisplay::rebuild);
  reserveLegendRoom(false);  // no isodose lines here
  pinToComparison(model, ComparisonSide::Reference);  // A: the scale, and washed only with a comparison
}

SplitDoseWashDisplay::~SplitDoseWashDisplay() {
  for (vtkProp* p : {static_cast<vtkProp*>(dividerActor_.Get()), static_cast<vtkProp*>(labelA_.Get()),
                     static_cast<vtkProp*>(labelB_.Get())})
    removeViewProp(renderer(), p);
}

CompareLayout SplitDoseWashDisplay::shownLayout() const {
  return model_->compareLayout() == CompareLayout::Checkerboard ? CompareLayout::Checkerboard : CompareLayout::Swipe;
}

int SplitDoseWashDisplay::uToScreenRight() const {
  // The camera's right is its direction of projection x view-up; u is the display grid's
  // planeAxes()[0], whose spacing is positive.
  const auto c = cameraAxes(orientation());
  const auto& f = c.directionOfProjection;
  const auto& up = c.viewUp;
  const double right[3] = {f[1] * up[2] - f[2] * up[1], f[2] * up[0] - f[0] * up[2], f[0] * up[1] - f[1] * up[0]};
  return right[planeAxes()[0]] < 0 ? -1 : 1;
}

double SplitDoseWashDisplay::dividerIndex() const {
  const auto& scene = state()->scene();
  if (!scene) return kNan;
  const int n = scene->grid().dims[planeAxes()[0]];
  const double fromLeft = std::round(model_->swipeFraction() * n);
  return uToScreenRight() > 0 ? fromLeft - 0.5 : n - fromLeft - 0.5;
}

bool SplitDoseWashDisplay::showsA(int u, int v) const {
  if (shownLayout() == CompareLayout::Swipe) {
    const double d = dividerIndex();
    return uToScreenRight() > 0 ? u < d : u > d;
  }
  const auto& scene = state()->scene();
  if (!scene) return true;
  const auto axes = planeAxes();
  const double size = model_->checkerSizeMm();
  // Sample centres measured from the grid's corner (half a voxel before sample 0).
  const auto qu = std::int64_t(std::floor((u + 0.5) * scene->grid().spacing[axes[0]] / size));
  const auto qv = std::int64_t(std::floor((v + 0.5) * scene->grid().spacing[axes[1]] / size));
  return ((qu + qv) & 1) == 0;
}

DoseSlice SplitDoseWashDisplay::sampleShown(const PatientScene& scene, int slice, const Mask* clip) const {
  const auto a = model_->doseSet(ComparisonSide::Reference), b = model_->doseSet(ComparisonSide::Evaluated);
  const DoseSlice sa = a ? sampleDoseSlice(a->dose.dose, scene, orientation(), slice, clip) : DoseSlice{};
  const DoseSlice sb = b ? sampleDoseSlice(b->dose.dose, scene, orientation(), slice, clip) : DoseSlice{};
  if (sa.empty() && sb.empty()) return {};
  // The union of the two footprints; where the side shown has no sample, nothing is washed
  // (kClippedGy is below every threshold), as in that dose's own wash.
  int u0 = std::numeric_limits<int>::max(), v0 = u0, u1 = std::numeric_limits<int>::min(), v1 = u1;
  for (const DoseSlice* s : {&sa, &sb})
    if (!s->empty()) {
      u0 = std::min(u0, s->u0), v0 = std::min(v0, s->v0);
      u1 = std::max(u1, s->u0 + s->nu - 1), v1 = std::max(v1, s->v0 + s->nv - 1);
    }
  DoseSlice out;
  out.u0 = u0, out.v0 = v0, out.nu = u1 - u0 + 1, out.nv = v1 - v0 + 1;
  out.gy.assign(std::size_t(out.nu) * std::size_t(out.nv), kClippedGy);
  for (int v = v0; v <= v1; ++v)
    for (int u = u0; u <= u1; ++u) {
      const DoseSlice& s = showsA(u, v) ? sa : sb;
      if (s.empty() || u < s.u0 || v < s.v0 || u >= s.u0 + s.nu || v >= s.v0 + s.nv) continue;
      out.gy[std::size_t(v - v0) * std::size_t(out.nu) + std::size_t(u - u0)] = s.at(u - s.u0, v - s.v0);
    }
  return out;
}

std::string SplitDoseWashDisplay::shownName() const {
  // The layout is in the view's title; here the two names, as the side-by-side views give them.
  const auto a = model_->doseSet(ComparisonSide::Reference), b = model_->doseSet(ComparisonSide::Evaluated);
  return "A: " + (a ? a->name.toStdString() : std::string("-")) + " | B: " + (b ? b->name.toStdString() : std::string("-"));
}

void SplitDoseWashDisplay::layout(int w, int h) {
  using namespace slice_layout;
  DoseWashDisplay::layout(w, h);
  dividerX_ = kNan;
  const double d = dividerIndex();
  if (isShowing() && shownLayout() == CompareLayout::Swipe && std::isfinite(d)) {
    const auto p = planePoint(d, 0, kLayerDoseWash);
    renderer()->SetWorldPoint(p[0], p[1], p[2], 1.0);
    renderer()->WorldToDisplay();
    double display[3];
    renderer()->GetDisplayPoint(display);
    if (display[0] >= 0 && display[0] <= w - 1) dividerX_ = display[0];
  }
  const bool shown = std::isfinite(dividerX_);
  for (vtkProp* p : {static_cast<vtkProp*>(dividerActor_.Get()), static_cast<vtkProp*>(labelA_.Get()),
                     static_cast<vtkProp*>(labelB_.Get())})
    p->SetVisibility(shown);
  if (!shown) return;
  // From the bottom band to under the top letter: the line never crosses the orientation
  // letters, the W/L or the scale bar, wherever the divider stands.
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->InsertNextPoint(dividerX_, kBottomBand, 0);
  points->InsertNextPoint(dividerX_, h - kMargin - 2 * kLetterHalfHeight, 0);
  auto lines = vtkSmartPointer<vtkCellArray>::New();
  const vtkIdType line[2] = {0, 1};
  lines->InsertNextCell(2, line);
  divider_->SetPoints(points);
  divider_->SetLines(lines);
  divider_->Modified();
  // Which side is which, on either side under the title block (its fourth line; "dose A",
  // since a lone "A" would read as the anterior letter at the top).
  const int x = int(std::lround(dividerX_)), y = titleLineTop(h, 3) - 2;
  placeText(labelA_, x - 5, y);
  placeText(labelB_, x + 5, y);
}

bool SplitDoseWashDisplay::handleAt(double x, double) const {
  return std::isfinite(dividerX_) && std::abs(x - dividerX_) <= kGrabPx;
}

void SplitDoseWashDisplay::dragHandleTo(double x, double y) {
  const auto& scene = state()->scene();
  if (!scene) return;
  renderer()->SetDisplayPoint(x, y, 0);
  renderer()->DisplayToWorld();
  double w[4];
  renderer()->GetWorldPoint(w);
  if (w[3] == 0) return;
  const double p[3] = {w[0] / w[3], w[1] / w[3], w[2] / w[3]};
  const double u = scene->indexOfDisplayPoint(p)[planeAxes()[0]];
  const int n = scene->grid().dims[planeAxes()[0]];
  // The edge of the display grid's sample nearest the mouse, as a fraction from the left.
  const double fromLeft = uToScreenRight() > 0 ? u + 0.5 : n - 0.5 - u;
  model_->setSwipeFraction(fromLeft / n);
}

}  // namespace penumbra::gui
