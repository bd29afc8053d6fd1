#include "gui/overlays/isodose_display.hpp"

#include <cmath>
#include <cstdio>

#include <vtkActor.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>
#include <vtkTextActor.h>
#include <vtkTextProperty.h>
#include <vtkUnsignedCharArray.h>

#include "gui/model/dose_display_settings.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/overlays/dose_clip.hpp"
#include "gui/overlays/dashed_lines.hpp"
#include "gui/overlays/dose_slice.hpp"
#include "gui/overlays/overlay_text.hpp"
#include "gui/overlays/slice_layout.hpp"

namespace penumbra::gui {

namespace {
constexpr float kIsodoseLineWidth = 2.0f;
}

IsodoseDisplay::IsodoseDisplay(vtkRenderer* renderer, const ViewState* state,
                               SliceOrientation orientation, const DoseSetStore* store,
                               const DoseDisplaySettings* settings, const PlanModel* plan,
                               QObject* parent)
    : SliceOverlay(renderer, state, orientation, parent),
      store_(store),
      settings_(settings),
      plan_(plan),
      lines_(vtkSmartPointer<vtkPolyData>::New()),
      actor_(vtkSmartPointer<vtkActor>::New()) {
  auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
  mapper->SetInputData(lines_);
  mapper->SetScalarModeToUseCellData();
  mapper->SetColorModeToDirectScalars();  // exact level colours (tests find them by RGB)
  actor_->SetMapper(mapper);
  actor_->GetProperty()->SetLineWidth(kIsodoseLineWidth);
  actor_->GetProperty()->LightingOff();
  actor_->PickableOff();
  renderer->AddActor(actor_);
  connect(state, &ViewState::sceneChanged, this, &IsodoseDisplay::rebuild);
  connect(state, &ViewState::crosshairChanged, this, [this] {
    if (this->state()->sliceIndex(this->orientation()) != shownSlice_) rebuild();
  });
  connect(store, &DoseSetStore::currentDoseSetChanged, this, &IsodoseDisplay::rebuild);
  connect(settings, &DoseDisplaySettings::isodosesChanged, this, &IsodoseDisplay::rebuild);
  connect(settings, &DoseDisplaySettings::clipChanged, this, &IsodoseDisplay::rebuild);
  connect(plan, &PlanModel::prescriptionChanged, this, &IsodoseDisplay::rebuild);
  rebuild();
}

IsodoseDisplay::~IsodoseDisplay() {
  removeViewProp(renderer(), actor_);
  for (auto& t : legend_) removeViewProp(renderer(), t);
}

vtkPolyData* IsodoseDisplay::lines() const { return lines_; }

void IsodoseDisplay::pinToComparison(const ComparisonModel* model, ComparisonSide side) {
  comparison_ = model;
  side_ = side;
  disconnect(store_, nullptr, this, nullptr);
  connect(model, &ComparisonModel::comparisonChanged, this, &IsodoseDisplay::rebuild);
  rebuild();
}

void IsodoseDisplay::setLineStyle(double dashPx, double gapPx, const std::string& legendHeader) {
  dashPx_ = dashPx;
  gapPx_ = gapPx;
  legendHeader_ = legendHeader;
  rebuild();
}

std::shared_ptr<const DoseSet> IsodoseDisplay::shownSet() const {
  return comparison_ ? comparison_->doseSet(side_) : store_->current();
}

bool IsodoseDisplay::legendVisible() const {
  return !legend_.empty() && legend_.front()->GetVisibility();
}

std::vector<std::string> IsodoseDisplay::legendText() const {
  std::vector<std::string> out;
  for (const auto& t : legend_)
    if (t->GetVisibility()) out.emplace_back(t->GetInput() ? t->GetInput() : "");
  return out;
}

void IsodoseDisplay::rebuild() {
  const auto& scene = state()->scene();
  const auto set = shownSet();
  shownSlice_ = state()->sliceIndex(orientation());
  const auto& levels = settings_->isodoseLevels();
  perLevel_.assign(levels.size(), 0);
  levelSegments_.assign(levels.size(), {});
  if (scene && set && settings_->isodosesVisible()) {
    const DoseSlice s = sampleDoseSlice(set->dose.dose, *scene, orientation(), shownSlice_,
                                        doseClipMask(*scene, settings_->clipToExternal()));
    const double rx = plan_->prescriptionGy();
    for (std::size_t l = 0; l < levels.size(); ++l) {
      levelSegments_[l] = doseIsoLines(s, float(levels[l].percent / 100.0 * rx));
      perLevel_[l] = int(levelSegments_[l].size());
    }
  }
  dashPxPerMm_ = pixelsPerMm(renderer());
  rebuildLines();
  rebuildLegend();
  requestRender();
}

void IsodoseDisplay::rebuildLines() {
  const auto& scene = state()->scene();
  auto points = vtkSmartPointer<vtkPoints>::New();
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  auto colors = vtkSmartPointer<vtkUnsignedCharArray>::New();
  colors->SetNumberOfComponents(3);
  colors->SetName("isodose colour");
  const auto& levels = settings_->isodoseLevels();
  if (scene && levelSegments_.size() == levels.size()) {
    const auto [ua, va] = planeAxes();
    const Grid& g = scene->grid();
    // Dash and gap in mm for the current zoom; before the first render (no size yet) a
    // pattern for about 1 px per mm.
    const double pxPerMm = dashPxPerMm_ > 0 ? dashPxPerMm_ : 1.0;
    for (std::size_t l = 0; l < levels.size(); ++l) {
      const auto dashes = dashSegments(levelSegments_[l], g.spacing[ua], g.spacing[va],
                                       dashPx_ / pxPerMm, gapPx_ / pxPerMm);
      const unsigned char rgb[3] = {(unsigned char)levels[l].color.red(),
                                    (unsigned char)levels[l].color.green(),
                                    (unsigned char)levels[l].color.blue()};
      for (const Segment2& seg : dashes) {
        const auto a = planePoint(seg.u0, seg.v0, kLayerIsolines);
        const auto b = planePoint(seg.u1, seg.v1, kLayerIsolines);
        const vtkIdType ids[2] = {points->InsertNextPoint(a.data()), points->InsertNextPoint(b.data())};
        cells->InsertNextCell(2, ids);
        colors->InsertNextTypedTuple(rgb);
      }
    }
  }
  lines_->SetPoints(points);
  lines_->SetLines(cells);
  lines_->GetCellData()->SetScalars(colors);
  lines_->Modified();
}

void IsodoseDisplay::layout(int w, int h) {
  using namespace slice_layout;
  // Re-cut the dashes when the zoom changed by more than 15 %.
  const double pxPerMm = pixelsPerMm(renderer());
  if (pxPerMm > 0 && (dashPxPerMm_ <= 0 || std::abs(pxPerMm / dashPxPerMm_ - 1) > 0.15)) {
    dashPxPerMm_ = pxPerMm;
    rebuildLines();
  }
  if (legend_.empty()) return;
  const int lineHeight = legendLineHeight(h, int(legend_.size()));
  for (std::size_t l = 0; l < legend_.size(); ++l) {
    legend_[l]->GetTextProperty()->SetFontSize(lineHeight - 3);
    placeText(legend_[l], w - kMargin, h - kMargin - int(l) * lineHeight);
  }
}

void IsodoseDisplay::rebuildLegend() {
  for (auto& t : legend_) removeViewProp(renderer(), t);
  legend_.clear();
  const bool show = state()->scene() && shownSet() && settings_->isodosesVisible() && !legendHeader_.empty();
  if (!show) return;
  const double rx = plan_->prescriptionGy();
  const auto& levels = settings_->isodoseLevels();
  auto header = makeOverlayText(11, TextAnchor::TopRight);
  header->SetInput(legendHeader_.c_str());
  renderer()->AddActor2D(header);
  legend_.push_back(header);
  for (std::size_t l = 0; l < levels.size(); ++l) {
    char text[64];
    std::snprintf(text, sizeof text, "%g %%  %.2f Gy", levels[l].percent, levels[l].percent / 100.0 * rx);
    auto t = makeOverlayText(11, TextAnchor::TopRight);
    t->SetInput(text);
    vtkTextProperty* p = t->GetTextProperty();
    p->SetColor(levels[l].color.redF(), levels[l].color.greenF(), levels[l].color.blueF());
    p->SetBold(true);
    renderer()->AddActor2D(t);
    legend_.push_back(t);
  }
  const int* size = renderer()->GetSize();
  if (size[0] > 0 && size[1] > 0) layout(size[0], size[1]);
}

}  // namespace penumbra::gui
