#include "gui/overlays/profile_line_display.hpp"

#include <cmath>

#include <vtkActor.h>
#include <vtkCellArray.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>

#include "gui/model/profile_model.hpp"

namespace penumbra::gui {

namespace {
vtkSmartPointer<vtkActor> makeActor(vtkPolyData* data) {
  auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
  mapper->SetInputData(data);
  auto actor = vtkSmartPointer<vtkActor>::New();
  actor->SetMapper(mapper);
  actor->GetProperty()->SetColor(1, 1, 1);
  actor->GetProperty()->LightingOff();
  actor->PickableOff();
  actor->VisibilityOff();
  return actor;
}
}  // namespace

ProfileLineDisplay::ProfileLineDisplay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
                                       const ProfileModel* profile, QObject* parent)
    : SliceOverlay(renderer, state, orientation, parent),
      profile_(profile),
      line_(vtkSmartPointer<vtkPolyData>::New()),
      dot_(vtkSmartPointer<vtkPolyData>::New()) {
  lineActor_ = makeActor(line_);
  lineActor_->GetProperty()->SetLineWidth(2.0);
  dotActor_ = makeActor(dot_);
  dotActor_->GetProperty()->SetPointSize(7.0);
  renderer->AddActor(lineActor_);
  renderer->AddActor(dotActor_);
  connect(state, &ViewState::sceneChanged, this, &ProfileLineDisplay::rebuild);
  connect(state, &ViewState::crosshairChanged, this, &ProfileLineDisplay::rebuild);
  connect(profile, &ProfileModel::lineChanged, this, &ProfileLineDisplay::rebuild);
}

ProfileLineDisplay::~ProfileLineDisplay() {
  removeViewProp(renderer(), lineActor_);
  removeViewProp(renderer(), dotActor_);
}

bool ProfileLineDisplay::isShowing() const { return lineActor_->GetVisibility(); }

void ProfileLineDisplay::rebuild() {
  const int n = normalAxis(orientation());
  const bool show = state()->scene() && profile_->hasLine() && profile_->orientation() == orientation() &&
                    std::lround(profile_->start()[n]) == state()->sliceIndex(orientation());
  const bool was = isShowing();
  lineActor_->SetVisibility(show);
  dotActor_->SetVisibility(show);
  if (!show) {
    if (was) requestRender();
    return;
  }
  const auto [ua, va] = planeAxes();
  // Above the crosshair: the line is what the user just drew.
  const auto a = planePoint(profile_->start()[ua], profile_->start()[va], kLayerCrosshair + 1);
  const auto b = planePoint(profile_->end()[ua], profile_->end()[va], kLayerCrosshair + 1);
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->InsertNextPoint(a.data());
  points->InsertNextPoint(b.data());
  auto lines = vtkSmartPointer<vtkCellArray>::New();
  const vtkIdType ids[2] = {0, 1};
  lines->InsertNextCell(2, ids);
  line_->SetPoints(points);
  line_->SetLines(lines);
  line_->Modified();
  auto dotPoints = vtkSmartPointer<vtkPoints>::New();
  dotPoints->InsertNextPoint(a.data());
  auto verts = vtkSmartPointer<vtkCellArray>::New();
  const vtkIdType id = 0;
  verts->InsertNextCell(1, &id);
  dot_->SetPoints(dotPoints);
  dot_->SetVerts(verts);
  dot_->Modified();
  requestRender();
}

}  // namespace penumbra::gui
