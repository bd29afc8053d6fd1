#include "gui/overlays/comparison_wash_display.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

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
#include "gui/model/dose_set_store.hpp"
#include "gui/overlays/colour_bar.hpp"
#include "gui/overlays/slice_image.hpp"
#include "gui/overlays/compare_colours.hpp"
#include "gui/overlays/overlay_text.hpp"
#include "gui/overlays/slice_layout.hpp"

namespace penumbra::gui {

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr int kTableSize = 512;

/// Half-width (Gy) of the difference colour scale: the largest |A - B| where it was evaluated,
/// but at least 1 % of the normalisation dose, so that two equal doses show white, not noise.
double differenceRange(const compare::CompareResult& r) {
  const auto& d = r.differenceStats;
  return std::max({std::abs(d.minGy), std::abs(d.maxGy), 0.01 * r.normalisationGy, 1e-6});
}

/// Gamma to the scalar the lookup table maps: pass values stay below 1 and fail values at or
/// above it, so that the table's step at 1 (entry kTableSize / 2) is exactly the engine's
/// verdict (gamma_hat <= 1 exactly when gamma <= 1).
float gammaScalar(float g) { return g <= 1.0f ? std::min(g, 0.99999f) : std::max(g, 1.0f); }

}  // namespace

ComparisonWashDisplay::ComparisonWashDisplay(vtkRenderer* renderer, const ViewState* state,
                                             SliceOrientation orientation, const ComparisonModel* model,
                                             QObject* parent)
    : SliceOverlay(renderer, state, orientation, parent),
      model_(model),
      image_(vtkSmartPointer<vtkImageData>::New()),
      lut_(vtkSmartPointer<vtkLookupTable>::New()),
      colors_(vtkSmartPointer<vtkImageMapToColors>::New()),
      actor_(vtkSmartPointer<vtkImageActor>::New()),
      bar_(vtkSmartPointer<vtkPolyData>::New()),
      barTop_(makeOverlayText(slice_layout::kFontSize - 1, TextAnchor::MiddleRight)),
      barMiddle_(makeOverlayText(slice_layout::kFontSize - 1, TextAnchor::MiddleRight)),
      barBottom_(makeOverlayText(slice_layout::kFontSize - 1, TextAnchor::MiddleRight)),
      title_(makeOverlayText(slice_layout::kFontSize, TextAnchor::TopLeft)) {
  barActor_ = makeColourBarActor(bar_);
  for (vtkProp* p : {static_cast<vtkProp*>(barActor_.Get()), static_cast<vtkProp*>(barTop_.Get()),
                     static_cast<vtkProp*>(barMiddle_.Get()), static_cast<vtkProp*>(barBottom_.Get()),
                     static_cast<vtkProp*>(title_.Get())}) {
    p->SetVisibility(false);
    renderer->AddActor2D(p);
  }
  lut_->SetNumberOfTableValues(kTableSize);
  lut_->SetNanColor(0, 0, 0, 0);  // not evaluated: the CT shows through
  colors_->SetLookupTable(lut_);
  colors_->SetOutputFormatToRGBA();
  colors_->SetInputData(image_);
  actor_->GetMapper()->SetInputConnection(colors_->GetOutputPort());
  actor_->InterpolateOff();
  actor_->PickableOff();
  actor_->GetProperty()->SetOpacity(kOpacity);
  connect(state, &ViewState::sceneChanged, this, &ComparisonWashDisplay::rebuild);
  connect(state, &ViewState::crosshairChanged, this, [this] {
    if (this->state()->sliceIndex(this->orientation()) != shownSlice_) rebuild();
  });
  connect(model, &ComparisonModel::comparisonChanged, this, &ComparisonWashDisplay::rebuild);
  connect(model, &ComparisonModel::viewModeChanged, this, &ComparisonWashDisplay::rebuild);
}

ComparisonWashDisplay::~ComparisonWashDisplay() {
  if (inRenderer_) removeViewProp(renderer(), actor_);
  for (vtkProp* p : {static_cast<vtkProp*>(barActor_.Get()), static_cast<vtkProp*>(barTop_.Get()),
                     static_cast<vtkProp*>(barMiddle_.Get()), static_cast<vtkProp*>(barBottom_.Get()),
                     static_cast<vtkProp*>(title_.Get())})
    removeViewProp(renderer(), p);
}

bool ComparisonWashDisplay::isShowing() const { return inRenderer_ && actor_->GetVisibility(); }

bool ComparisonWashDisplay::colourBarShowing() const { return barActor_->GetVisibility(); }

void ComparisonWashDisplay::setAlwaysShown(bool on) {
  alwaysShown_ = on;
  rebuild();
}

CompareViewMode ComparisonWashDisplay::shownMode() const {
  const CompareViewMode mode = model_->effectiveViewMode();
  return mode == CompareViewMode::Dose && alwaysShown_ && model_->current() ? CompareViewMode::Gamma : mode;
}

std::vector<std::string> ComparisonWashDisplay::colourBarLabels() const {
  if (!colourBarShowing()) return {};
  return {barTop_->GetInput(), barMiddle_->GetInput(), barBottom_->GetInput()};
}

void ComparisonWashDisplay::rebuild() {
  const auto& scene = state()->scene();
  const CompareViewMode mode = shownMode();
  const auto comparison = model_->current();
  shownSlice_ = state()->sliceIndex(orientation());
  slice_ = {};
  if (scene && comparison && comparison->result && mode != CompareViewMode::Dose) {
    const compare::CompareResult& r = *comparison->result;
    const bool gamma = mode == CompareViewMode::Gamma;
    const Volume<float>& values = gamma ? r.gamma : r.difference;
    const Volume<float>& a = comparison->reference->dose.dose;  // on the same grid as `values`
    const float cutoffGy = float(comparison->criteria.cutoffPercent / 100.0 * r.normalisationGy);
    const Grid& rg = values.grid;
    const Grid& sg = scene->grid();
    const int n = normalAxis(orientation());
    const auto axes = planeAxes();
    // The reference grid's footprint (its 8 corners, half a voxel out) in display indices.
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (int c = 0; c < 8; ++c) {
      const Vec3 corner{(c & 1) ? rg.dims[0] - 0.5 : -0.5, (c & 2) ? rg.dims[1] - 0.5 : -0.5,
                        (c & 4) ? rg.dims[2] - 0.5 : -0.5};
      const Vec3 idx = sg.worldToIndex(rg.indexToWorld(corner));
      for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], idx[k]), hi[k] = std::max(hi[k], idx[k]);
    }
    const int u0 = std::max(0, int(std::floor(lo[axes[0]])));
    const int u1 = std::min(sg.dims[axes[0]] - 1, int(std::ceil(hi[axes[0]])));
    const int v0 = std::max(0, int(std::floor(lo[axes[1]])));
    const int v1 = std::min(sg.dims[axes[1]] - 1, int(std::ceil(hi[axes[1]])));
    if (!values.empty() && shownSlice_ >= std::floor(lo[n]) && shownSlice_ <= std::ceil(hi[n]) && u1 >= u0 && v1 >= v0) {
      slice_.u0 = u0, slice_.v0 = v0, slice_.nu = u1 - u0 + 1, slice_.nv = v1 - v0 + 1;
      slice_.gy.assign(std::size_t(slice_.nu) * std::size_t(slice_.nv), kNan);
      Vec3 ijk;
      ijk[n] = shownSlice_;
      for (int iv = 0; iv < slice_.nv; ++iv) {
        ijk[axes[1]] = v0 + iv;
        for (int iu = 0; iu < slice_.nu; ++iu) {
          ijk[axes[0]] = u0 + iu;
          std::array<int, 3> c;
          if (!rg.worldToNearestIndex(sg.indexToWorld(ijk), c)) continue;
          const std::size_t at = rg.linearIndex(c[0], c[1], c[2]);
          float v = values.data[at];
          // B = A - (A - B): the difference is drawn where either dose reaches the cut-off.
          if (!gamma && !(std::max(a.data[at], a.data[at] - v) >= cutoffGy)) v = kNan;
          slice_.gy[std::size_t(iv) * std::size_t(slice_.nu) + std::size_t(iu)] = gamma ? gammaScalar(v) : v;
        }
      }
    }
    // A slice with nothing to draw (all below the cut-off or outside B) is no slice: no image
    // and no colour bar. (An image actor first drawn fully transparent was also seen to stay
    // invisible once filled, with VTK 9.1 on the brain case.)
    if (std::none_of(slice_.gy.begin(), slice_.gy.end(), [](float v) { return std::isfinite(v); })) slice_ = {};
    // Lookup table and colour-bar labels.
    if (gamma) {
      const double cap = std::max(comparison->criteria.gammaCap, 1.0 + 1e-3);
      lut_->SetTableRange(0, cap);
      for (int i = 0; i < kTableSize; ++i) {
        const Rgb c = gammaColour((i + 0.5) * cap / kTableSize, cap);
        lut_->SetTableValue(i, c[0], c[1], c[2], 1);
      }
      barMiddleFraction_ = 1.0 / cap;
      char text[48];
      std::snprintf(text, sizeof text, "gamma %.3g (cap)", cap);
      barTop_->SetInput(text);
      barMiddle_->SetInput("1  pass | fail");
      barBottom_->SetInput("0");
    } else {
      const double range = differenceRange(r);
      lut_->SetTableRange(-range, range);
      for (int i = 0; i < kTableSize; ++i) {
        const Rgb c = differenceColour(-range + (i + 0.5) * 2 * range / kTableSize, range);
        lut_->SetTableValue(i, c[0], c[1], c[2], 1);
      }
      barMiddleFraction_ = 0.5;
      const double pct = r.normalisationGy > 0 ? 100 * range / r.normalisationGy : 0;
      char text[64];
      std::snprintf(text, sizeof text, "+%.2f Gy (+%.1f %%)", range, pct);
      barTop_->SetInput(text);
      barMiddle_->SetInput("A - B  0 Gy");
      std::snprintf(text, sizeof text, "-%.2f Gy (-%.1f %%)", range, pct);
      barBottom_->SetInput(text);
    }
    lut_->Build();
  }
  if (slice_.empty()) {
    if (inRenderer_) {
      removeViewProp(renderer(), actor_);
      inRenderer_ = false;
    }
    requestRender();
    return;
  }
  placeSliceImage(image_, actor_, slice_, *scene, orientation(), planeAxes(), shownSlice_,
                  shownMode() == CompareViewMode::Gamma ? "gamma" : "difference");
  colors_->Modified();
  if (!inRenderer_) {
    renderer()->AddViewProp(actor_);
    inRenderer_ = true;
  }
  actor_->SetVisibility(true);
  requestRender();
}

void ComparisonWashDisplay::layout(int w, int h) {
  using namespace slice_layout;
  const auto comparison = model_->current();
  const CompareViewMode mode = shownMode();
  const bool shown = state()->scene() && comparison && mode != CompareViewMode::Dose;
  // What the view shows, on the title's third line (where the dose wash names its dose set).
  title_->SetVisibility(shown);
  if (shown) {
    const std::string what = mode == CompareViewMode::Gamma
                                 ? ComparisonModel::criteriaText(comparison->criteria).toStdString()
                                 : std::string("A - B");
    const std::string text = what + ": " + comparison->reference->name.toStdString() + " vs " +
                             comparison->evaluated->name.toStdString();
    // Short of room, the names go first (the dock and the A and B views give them): the
    // criteria say what the colours mean.
    const int chars = (w - 2 * kMargin - 16 * 7 - 12) / 7;
    title_->SetInput(elide(int(text.size()) <= chars ? text : what, chars).c_str());
    placeText(title_, kMargin, titleLineTop(h, 2));
  }
  const int y0 = colourBarBottom(), y1 = colourBarTop(h);
  // The middle label needs a line of its own between the end labels.
  const bool bar = shown && isShowing() && y1 - y0 >= 3 * kLineHeight;
  for (vtkProp* p : {static_cast<vtkProp*>(barActor_.Get()), static_cast<vtkProp*>(barTop_.Get()),
                     static_cast<vtkProp*>(barMiddle_.Get()), static_cast<vtkProp*>(barBottom_.Get())})
    p->SetVisibility(bar);
  if (!bar) return;
  const int x0 = fillColourBar(bar_, lut_, w, y0, y1);
  // The middle label at its value (gamma 1, difference 0), kept a line clear of the ends.
  const int ym = std::clamp(int(std::lround(y0 + (y1 - y0) * barMiddleFraction_)), y0 + kLineHeight, y1 - kLineHeight);
  placeText(barTop_, x0 - 3, y1);
  placeText(barMiddle_, x0 - 3, ym);
  placeText(barBottom_, x0 - 3, y0);
}

}  // namespace penumbra::gui
