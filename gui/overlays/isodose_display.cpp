#include "gui/overlays/isodose_display.hpp"

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
#include "gui/overlays/dose_slice.hpp"

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
  renderer()->RemoveActor(actor_);
  for (auto& t : legend_) renderer()->RemoveActor2D(t);
}

vtkPolyData* IsodoseDisplay::lines() const { return lines_; }

bool IsodoseDisplay::legendVisible() const {
  return !legend_.empty() && legend_.front()->GetVisibility();
}

void IsodoseDisplay::rebuild() {
  const auto& scene = state()->scene();
  const auto set = store_->current();
  shownSlice_ = state()->sliceIndex(orientation());
  auto points = vtkSmartPointer<vtkPoints>::New();
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  auto colors = vtkSmartPointer<vtkUnsignedCharArray>::New();
  colors->SetNumberOfComponents(3);
  colors->SetName("isodose colour");
  const auto& levels = settings_->isodoseLevels();
  perLevel_.assign(levels.size(), 0);
  if (scene && set && settings_->isodosesVisible()) {
    const DoseSlice s = sampleDoseSlice(set->dose.dose, *scene, orientation(), shownSlice_,
                                        doseClipMask(*scene, settings_->clipToExternal()));
    const double rx = plan_->prescriptionGy();
    for (std::size_t l = 0; l < levels.size(); ++l) {
      const auto segs = doseIsoLines(s, float(levels[l].percent / 100.0 * rx));
      perLevel_[l] = int(segs.size());
      const unsigned char rgb[3] = {(unsigned char)levels[l].color.red(),
                                    (unsigned char)levels[l].color.green(),
                                    (unsigned char)levels[l].color.blue()};
      for (const Segment2& seg : segs) {
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
  rebuildLegend();
  requestRender();
}

void IsodoseDisplay::rebuildLegend() {
  for (auto& t : legend_) renderer()->RemoveActor2D(t);
  legend_.clear();
  const bool show = state()->scene() && store_->current() && settings_->isodosesVisible();
  if (!show) return;
  const double rx = plan_->prescriptionGy();
  const auto& levels = settings_->isodoseLevels();
  for (std::size_t l = 0; l < levels.size(); ++l) {
    char text[64];
    std::snprintf(text, sizeof text, "%g %%  %.2f Gy", levels[l].percent, levels[l].percent / 100.0 * rx);
    auto t = vtkSmartPointer<vtkTextActor>::New();
    t->SetInput(text);
    vtkTextProperty* p = t->GetTextProperty();
    p->SetFontSize(12);
    p->SetJustificationToRight();
    p->SetVerticalJustificationToTop();
    p->SetColor(levels[l].color.redF(), levels[l].color.greenF(), levels[l].color.blueF());
    p->SetBold(true);
    t->GetPositionCoordinate()->SetCoordinateSystemToNormalizedViewport();
    t->SetPosition(0.985, 0.975 - 0.045 * double(l));
    t->PickableOff();
    renderer()->AddActor2D(t);
    legend_.push_back(t);
  }
}

}  // namespace penumbra::gui
