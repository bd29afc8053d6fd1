#include "gui/overlays/dose_wash_display.hpp"

#include <algorithm>

#include <vtkFloatArray.h>
#include <vtkImageActor.h>
#include <vtkImageData.h>
#include <vtkImageMapToColors.h>
#include <vtkImageMapper3D.h>
#include <vtkImageProperty.h>
#include <vtkLookupTable.h>
#include <vtkPointData.h>
#include <vtkRenderer.h>

#include "gui/model/dose_display_settings.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/overlays/dose_clip.hpp"

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
      actor_(vtkSmartPointer<vtkImageActor>::New()) {
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
  if (inRenderer_) renderer()->RemoveViewProp(actor_);
}

bool DoseWashDisplay::isShowing() const { return inRenderer_ && actor_->GetVisibility(); }

void DoseWashDisplay::rebuild() {
  const auto& scene = state()->scene();
  const auto set = store_->current();
  shownSlice_ = state()->sliceIndex(orientation());
  slice_ = {};
  if (scene && set && settings_->washVisible())
    slice_ = sampleDoseSlice(set->dose.dose, *scene, orientation(), shownSlice_,
                             doseClipMask(*scene, settings_->clipToExternal()));
  const DoseSlice& s = slice_;
  if (s.empty()) {
    if (inRenderer_) {
      renderer()->RemoveViewProp(actor_);
      inRenderer_ = false;
      requestRender();
    }
    return;
  }
  // A one-voxel-thick image in the display frame on the current slice.
  const int n = normalAxis(orientation());
  const auto axes = planeAxes();
  int dims[3] = {1, 1, 1};
  dims[axes[0]] = s.nu;
  dims[axes[1]] = s.nv;
  Vec3 first;
  first[axes[0]] = s.u0;
  first[axes[1]] = s.v0;
  first[n] = state()->sliceIndex(orientation());
  const auto origin = scene->displayPoint(first);
  const Grid& g = scene->grid();
  image_->SetDimensions(dims);
  image_->SetSpacing(g.spacing.x, g.spacing.y, g.spacing.z);
  image_->SetOrigin(origin.data());
  auto scalars = vtkSmartPointer<vtkFloatArray>::New();
  scalars->SetName("dose");
  scalars->SetNumberOfTuples(vtkIdType(s.gy.size()));
  std::copy(s.gy.begin(), s.gy.end(), scalars->GetPointer(0));
  image_->GetPointData()->SetScalars(scalars);
  image_->Modified();
  // Lift towards the camera above the CT, as the other overlays are (slice_overlay.hpp).
  const auto dop = cameraAxes(orientation()).directionOfProjection;
  actor_->SetPosition(-dop[0] * kLayerDoseWash * kLayerStepMm, -dop[1] * kLayerDoseWash * kLayerStepMm,
                      -dop[2] * kLayerDoseWash * kLayerStepMm);
  applyColors();
  if (!inRenderer_) {
    renderer()->AddViewProp(actor_);
    inRenderer_ = true;
  }
  actor_->SetVisibility(true);
  requestRender();
}

void DoseWashDisplay::applyColors() {
  const auto set = store_->current();
  const double rx = plan_->prescriptionGy();
  const double lo = settings_->washThresholdPercent() / 100.0 * rx;
  const double hi = std::max(set ? set->maxGy : rx, lo + 1e-6);
  fillDoseLookupTable(lut_, settings_->colorMap(), lo, hi);
  actor_->GetProperty()->SetOpacity(settings_->washOpacity());
  colors_->Modified();
}

}  // namespace penumbra::gui
