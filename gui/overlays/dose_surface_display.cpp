#include "gui/overlays/dose_surface_display.hpp"

#include <algorithm>

#include <QtConcurrent/QtConcurrentRun>
#include <vtkActor.h>
#include <vtkFlyingEdges3D.h>
#include <vtkFloatArray.h>
#include <vtkImageData.h>
#include <vtkMatrix4x4.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>

#include "gui/model/dose_display_settings.hpp"
#include "gui/model/dose_set_store.hpp"
#include "gui/model/plan_model.hpp"
#include "gui/model/view_state.hpp"
#include "gui/overlays/dose_clip.hpp"
#include "gui/overlays/slice_overlay.hpp"  // removeViewProp

namespace penumbra::gui {

DoseSurfaceDisplay::DoseSurfaceDisplay(vtkRenderer* renderer, const ViewState* state,
                                       const DoseSetStore* store, const DoseDisplaySettings* settings,
                                       const PlanModel* plan, QObject* parent)
    : QObject(parent), renderer_(renderer), state_(state), store_(store), settings_(settings), plan_(plan) {
  connect(&watcher_, &QFutureWatcher<Result>::finished, this, &DoseSurfaceDisplay::onFinished);
  connect(state, &ViewState::sceneChanged, this, &DoseSurfaceDisplay::schedule);
  connect(store, &DoseSetStore::currentDoseSetChanged, this, &DoseSurfaceDisplay::schedule);
  connect(settings, &DoseDisplaySettings::surfacesChanged, this, &DoseSurfaceDisplay::schedule);
  connect(settings, &DoseDisplaySettings::clipChanged, this, &DoseSurfaceDisplay::schedule);
  connect(plan, &PlanModel::prescriptionChanged, this, &DoseSurfaceDisplay::schedule);
}

DoseSurfaceDisplay::~DoseSurfaceDisplay() {
  watcher_.waitForFinished();
  clearActors();
}

long long DoseSurfaceDisplay::triangleCount() const {
  long long n = 0;
  for (const auto& a : actors_)
    if (auto* pd = vtkPolyData::SafeDownCast(a->GetMapper()->GetInput())) n += pd->GetNumberOfPolys();
  return n;
}

bool DoseSurfaceDisplay::surfaceBounds(double bounds[6]) const {
  bool any = false;
  for (const auto& a : actors_) {
    const double* b = a->GetBounds();  // with the user matrix: display frame
    if (!b) continue;
    for (int i = 0; i < 6; i += 2) {
      bounds[i] = any ? std::min(bounds[i], b[i]) : b[i];
      bounds[i + 1] = any ? std::max(bounds[i + 1], b[i + 1]) : b[i + 1];
    }
    any = true;
  }
  return any;
}

void DoseSurfaceDisplay::clearActors() {
  for (auto& a : actors_) removeViewProp(renderer_, a);
  actors_.clear();
}

void DoseSurfaceDisplay::schedule() {
  if (watcher_.isRunning()) {
    pending_ = true;
    return;
  }
  start();
}

void DoseSurfaceDisplay::start() {
  pending_ = false;
  const auto set = store_->current();
  std::vector<Level> levels;
  if (set && state_->scene() && settings_->surfacesVisible())
    for (const auto& l : settings_->isodoseLevels())
      if (l.surface) levels.push_back({l.percent / 100.0 * plan_->prescriptionGy(), l.color});
  if (levels.empty()) {
    clearActors();
    emit renderRequested();
    emit surfacesUpdated();
    return;
  }
  // The clip mask on the dose grid: from the cache when it was made from the same display mask
  // onto the same grid, else resampled on the worker (the scene, captured, keeps it alive).
  std::shared_ptr<const PatientScene> scene = state_->scene();
  const Mask* clip = doseClipMask(*scene, settings_->clipToExternal());
  std::shared_ptr<const Mask> cached;
  if (clip && clipCache_.onDoseGrid && clipCache_.source == clip &&
      clipCache_.scene.lock() == scene && clipCache_.onDoseGrid->grid.sameGeometry(set->dose.grid()))
    cached = clipCache_.onDoseGrid;
  if (clipCache_.scene.lock() != scene) clipCache_ = {};  // a closed patient's mask goes now
  watcher_.setFuture(QtConcurrent::run([set, levels, scene, clip, cached] {
    Result r;
    r.levels = levels;
    r.scene = scene;
    r.clipSource = clip;
    const Grid& g = set->dose.grid();
    const VoxelVector<float>& dose = set->dose.dose.data;
    std::vector<float> clipped;  // dose with 0 outside the clip mask; outlives the filters
    if (clip) {
      r.clipOnDoseGrid = cached ? cached : std::make_shared<const Mask>(maskOnGrid(*clip, g));
      const VoxelVector<std::uint8_t>& inside = r.clipOnDoseGrid->data;
      if (inside.size() == dose.size()) {
        clipped.resize(dose.size());
        for (std::size_t n = 0; n < dose.size(); ++n) clipped[n] = inside[n] ? dose[n] : 0.0f;
      }
    }
    // The image in the dose grid's index frame scaled by spacing; the actor's user matrix adds
    // the direction and origin (LPS = origin + direction * (index * spacing)).
    auto image = vtkSmartPointer<vtkImageData>::New();
    image->SetDimensions(g.dims[0], g.dims[1], g.dims[2]);
    image->SetSpacing(g.spacing.x, g.spacing.y, g.spacing.z);
    image->SetOrigin(0, 0, 0);
    auto scalars = vtkSmartPointer<vtkFloatArray>::New();
    // save = 1: the DoseSet (captured, immutable) or `clipped` owns the voxels and outlives
    // the filters (their outputs do not refer to the input scalars).
    float* voxels = clipped.empty() ? const_cast<float*>(dose.data()) : clipped.data();
    scalars->SetArray(voxels, vtkIdType(dose.size()), 1);
    image->GetPointData()->SetScalars(scalars);
    for (const Level& l : levels) {
      auto fe = vtkSmartPointer<vtkFlyingEdges3D>::New();
      fe->SetInputData(image);
      fe->SetValue(0, l.gy);
      fe->ComputeNormalsOn();
      fe->ComputeScalarsOff();
      fe->Update();
      auto out = vtkSmartPointer<vtkPolyData>::New();
      out->ShallowCopy(fe->GetOutput());
      r.surfaces.push_back(out);
    }
    return r;
  }));
}

void DoseSurfaceDisplay::onFinished() {
  Result r = watcher_.result();
  if (r.clipOnDoseGrid && state_->scene() && r.scene.lock() == state_->scene())
    clipCache_ = {r.scene, r.clipSource, r.clipOnDoseGrid};
  clearActors();
  if (pending_) return start();  // settings moved on while we built: build again
  const auto set = store_->current();
  const auto& scene = state_->scene();
  if (set && scene) {
    // Dose index frame -> LPS -> display frame (identity for LPS display grids).
    const Grid& g = set->dose.grid();
    const Grid& d = scene->grid();
    auto m = vtkSmartPointer<vtkMatrix4x4>::New();
    const Vec3 o = d.worldToIndex(g.origin);
    const auto od = scene->displayPoint(o);
    for (int row = 0; row < 3; ++row) {
      for (int col = 0; col < 3; ++col) {
        // Display axis `row` of a unit step along dose axis `col` (mm): through the display
        // grid's direction, which is the identity for LPS display grids.
        const Vec3 step = d.direction.transposed() * g.direction.column(col);
        m->SetElement(row, col, step[row]);
      }
      m->SetElement(row, 3, od[std::size_t(row)]);
    }
    for (std::size_t n = 0; n < r.surfaces.size(); ++n) {
      if (r.surfaces[n]->GetNumberOfPolys() == 0) continue;
      auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
      mapper->SetInputData(r.surfaces[n]);
      mapper->ScalarVisibilityOff();
      auto actor = vtkSmartPointer<vtkActor>::New();
      actor->SetMapper(mapper);
      actor->SetUserMatrix(m);
      const QColor& c = r.levels[n].color;
      actor->GetProperty()->SetColor(c.redF(), c.greenF(), c.blueF());
      actor->GetProperty()->SetOpacity(n == 0 ? 0.55 : 0.3);
      actor->PickableOff();
      renderer_->AddActor(actor);
      actors_.push_back(actor);
    }
  }
  emit renderRequested();
  emit surfacesUpdated();
}

}  // namespace penumbra::gui
