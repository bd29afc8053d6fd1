#include "dose_surface_display.hpp"

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

#include "dose_display_settings.hpp"
#include "dose_set_store.hpp"
#include "plan_model.hpp"
#include "view_state.hpp"

namespace penumbra::gui {

DoseSurfaceDisplay::DoseSurfaceDisplay(vtkRenderer* renderer, const ViewState* state,
                                       const DoseSetStore* store, const DoseDisplaySettings* settings,
                                       const PlanModel* plan, QObject* parent)
    : QObject(parent), renderer_(renderer), state_(state), store_(store), settings_(settings), plan_(plan) {
  connect(&watcher_, &QFutureWatcher<Result>::finished, this, &DoseSurfaceDisplay::onFinished);
  connect(state, &ViewState::sceneChanged, this, &DoseSurfaceDisplay::schedule);
  connect(store, &DoseSetStore::currentDoseSetChanged, this, &DoseSurfaceDisplay::schedule);
  connect(settings, &DoseDisplaySettings::surfacesChanged, this, &DoseSurfaceDisplay::schedule);
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

void DoseSurfaceDisplay::clearActors() {
  for (auto& a : actors_) renderer_->RemoveActor(a);
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
  watcher_.setFuture(QtConcurrent::run([set, levels] {
    Result r;
    r.levels = levels;
    const Grid& g = set->dose.grid();
    // The image in the dose grid's index frame scaled by spacing; the actor's user matrix adds
    // the direction and origin (LPS = origin + direction * (index * spacing)).
    auto image = vtkSmartPointer<vtkImageData>::New();
    image->SetDimensions(g.dims[0], g.dims[1], g.dims[2]);
    image->SetSpacing(g.spacing.x, g.spacing.y, g.spacing.z);
    image->SetOrigin(0, 0, 0);
    auto scalars = vtkSmartPointer<vtkFloatArray>::New();
    // save = 1: the DoseSet (captured, immutable) owns the voxels and outlives the filter.
    scalars->SetArray(const_cast<float*>(set->dose.dose.data.data()),
                      vtkIdType(set->dose.dose.data.size()), 1);
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
