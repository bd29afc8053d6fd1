#include "gui/overlays/dose_wash_display.hpp"

#include <algorithm>
#include <cstdio>

#include <vtkActor2D.h>
#include <vtkFloatArray.h>
#include <vtkImageActor.h>
#include <vtkImageData.h>
#include <vtkImageMapToColors.h>
#include <vtkImageMapper3D.h>
#include <vtkImageProperty.h>
#include <vtkLookupTable.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkRenderer.h>
#include <vtkTextActor.h>

#include "gui/model/comparison_model.hpp"
#include "gui/model/dose_display_settings.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/overlays/colour_bar.hpp"
#include "gui/overlays/dose_clip.hpp"
#include "gui/overlays/overlay_text.hpp"
#include "gui/overlays/slice_image.hpp"
#include "gui/overlays/slice_layout.hpp"

namespace penumbra::gui {

DoseWashDisplay::DoseWashDisplay(vtkRenderer* renderer, const ViewState* state,
                                 SliceOrientation orientation, const DoseSetStore* store,
                                 const DoseDisplaySettings* settings, const PlanModel* plan,
                                 QObject* parent)
    : SliceOverlay(renderer, state, orientation, parent),
      store_(store),
      settings_(settings),
      plan_(plan),
      image_(vtkSmartPointer<vtkImageData>::New()),
      lut_(vtkSmartPointer<vtkLookupTable>::New()),
      colors_(vtkSmartPointer<vtkImageMapToColors>::New()),
      actor_(vtkSmartPointer<vtkImageActor>::New()),
      bar_(vtkSmartPointer<vtkPolyData>::New()),
      barTop_(makeOverlayText(slice_layout::kFontSize - 1, TextAnchor::MiddleRight)),
      barBottom_(makeOverlayText(slice_layout::kFontSize - 1, TextAnchor::MiddleRight)),
      setName_(makeOverlayText(slice_layout::kFontSize, TextAnchor::TopLeft)) {
  barActor_ = makeColourBarActor(bar_);
  for (vtkProp* p : {static_cast<vtkProp*>(barActor_.Get()), static_cast<vtkProp*>(barTop_.Get()),
                     static_cast<vtkProp*>(barBottom_.Get()), static_cast<vtkProp*>(setName_.Get())}) {
    p->SetVisibility(false);
    renderer->AddActor2D(p);
  }
  colors_->SetLookupTable(lut_);
  colors_->SetOutputFormatToRGBA();
  colors_->SetInputData(image_);
  actor_->GetMapper()->SetInputConnection(colors_->GetOutputPort());
  actor_->InterpolateOff();  // samples are at the CT's voxel centres: show them as CT voxels
  actor_->PickableOff();
  connect(state, &ViewState::sceneChanged, this, &DoseWashDisplay::rebuild);
  connect(state, &ViewState::crosshairChanged, this, [this] {
    if (this->state()->sliceIndex(this->orientation()) != shownSlice_) rebuild();
  });
  connect(store, &DoseSetStore::currentDoseSetChanged, this, &DoseWashDisplay::rebuild);
  connect(settings, &DoseDisplaySettings::washChanged, this, &DoseWashDisplay::rebuild);
  connect(settings, &DoseDisplaySettings::clipChanged, this, &DoseWashDisplay::rebuild);
  connect(plan, &PlanModel::prescriptionChanged, this, &DoseWashDisplay::rebuild);
}

DoseWashDisplay::~DoseWashDisplay() {
  if (inRenderer_) removeViewProp(renderer(), actor_);
  for (vtkProp* p : {static_cast<vtkProp*>(barActor_.Get()), static_cast<vtkProp*>(barTop_.Get()),
                     static_cast<vtkProp*>(barBottom_.Get()), static_cast<vtkProp*>(setName_.Get())})
    removeViewProp(renderer(), p);
}

bool DoseWashDisplay::isShowing() const { return inRenderer_ && actor_->GetVisibility(); }

bool DoseWashDisplay::colourBarShowing() const { return barActor_->GetVisibility(); }

void DoseWashDisplay::setComparisonModel(const ComparisonModel* model) {
  if (comparison_) disconnect(comparison_, nullptr, this, nullptr);
  comparison_ = model;
  if (model) connect(model, &ComparisonModel::viewModeChanged, this, &DoseWashDisplay::rebuild);
  rebuild();
}

void DoseWashDisplay::pinToComparison(const ComparisonModel* model, ComparisonSide side) {
  setComparisonModel(nullptr);
  comparison_ = model;
  pinned_ = true;
  side_ = side;
  connect(model, &ComparisonModel::comparisonChanged, this, &DoseWashDisplay::rebuild);
  rebuild();
}

std::shared_ptr<const DoseSet> DoseWashDisplay::shownSet() const {
  return pinned_ ? comparison_->doseSet(side_) : store_->current();
}

bool DoseWashDisplay::washWanted() const {
  return state()->scene() && shownSet() && settings_->washVisible() &&
         (pinned_ || !comparison_ || comparison_->effectiveViewMode() == CompareViewMode::Dose);
}

void DoseWashDisplay::layout(int w, int h) {
  using namespace slice_layout;
  const bool shown = washWanted();
  // The dose set's name under the position line, clear of the isodose legend on the right
  // when there is one (about 7 px per character at this size; the legend is up to 16
  // characters of 11 px).
  setName_->SetVisibility(shown);
  if (shown) {
    const bool legend = legendRoom_ && settings_->isodosesVisible();
    const int room = w - 2 * kMargin - (legend ? 16 * 7 + 12 : 0);
    setName_->SetInput(elideMiddle(shownName(), room / 7).c_str());
    placeText(setName_, kMargin, titleLineTop(h, 2));
  }
  const int y0 = colourBarBottom(), y1 = colourBarTop(h);
  const bool bar = shown && y1 - y0 >= 24;
  for (vtkProp* p : {static_cast<vtkProp*>(barActor_.Get()), static_cast<vtkProp*>(barTop_.Get()),
                     static_cast<vtkProp*>(barBottom_.Get())})
    p->SetVisibility(bar);
  if (!bar) return;
  // The wash's lookup table from its lower end (threshold) to its upper end (set maximum).
  const double* range = lut_->GetTableRange();
  const int x0 = fillColourBar(bar_, lut_, w, y0, y1);
  char text[32];
  std::snprintf(text, sizeof text, "%.2f Gy", range[1]);
  barTop_->SetInput(text);
  std::snprintf(text, sizeof text, "%.2f Gy", range[0]);
  barBottom_->SetInput(text);
  placeText(barTop_, x0 - 3, y1);
  placeText(barBottom_, x0 - 3, y0);
}

DoseSlice DoseWashDisplay::sampleShown(const PatientScene& scene, int slice, const Mask* clip) const {
  return sampleDoseSlice(shownSet()->dose.dose, scene, orientation(), slice, clip);
}

std::string DoseWashDisplay::shownName() const {
  const std::string side = !pinned_ ? std::string() : (side_ == ComparisonSide::Reference ? "A: " : "B: ");
  return side + shownSet()->name.toStdString();
}

void DoseWashDisplay::rebuild() {
  const auto& scene = state()->scene();
  shownSlice_ = state()->sliceIndex(orientation());
  slice_ = {};
  if (washWanted()) slice_ = sampleShown(*scene, shownSlice_, doseClipMask(*scene, settings_->clipToExternal()));
  const DoseSlice& s = slice_;
  if (s.empty()) {
    if (inRenderer_) {
      removeViewProp(renderer(), actor_);
      inRenderer_ = false;
      requestRender();
    }
    return;
  }
  placeSliceImage(image_, actor_, s, *scene, orientation(), planeAxes(),
                  state()->sliceIndex(orientation()), "dose");
  applyColors();
  if (!inRenderer_) {
    renderer()->AddViewProp(actor_);
    inRenderer_ = true;
  }
  actor_->SetVisibility(true);
  requestRender();
}

void DoseWashDisplay::applyColors() {
  const auto set = shownSet();
  const double rx = plan_->prescriptionGy();
  const double lo = settings_->washThresholdPercent() / 100.0 * rx;
  const double top = pinned_ ? comparison_->sharedMaxGy() : (set ? set->maxGy : rx);
  const double hi = std::max(top, lo + 1e-6);
  fillDoseLookupTable(lut_, settings_->colorMap(), lo, hi);
  actor_->GetProperty()->SetOpacity(settings_->washOpacity());
  colors_->Modified();
}

}  // namespace penumbra::gui
