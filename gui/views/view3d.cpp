#include "gui/views/view3d.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <QKeyEvent>
#include <QMouseEvent>
#include <QWheelEvent>
#include <QtConcurrent/QtConcurrentRun>
#include <vtkActor.h>
#include <vtkAnnotatedCubeActor.h>
#include <vtkCamera.h>
#include <vtkImageActor.h>
#include <vtkImageProperty.h>
#include <vtkImageSliceMapper.h>
#include <vtkLookupTable.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkProperty.h>
#include <vtkRenderer.h>

#include "gui/overlays/ct_slice_display.hpp"
#include "gui/overlays/structure_surface_builder.hpp"

namespace penumbra::gui {

View3D::View3D(ViewState* state, QWidget* parent)
    : VtkView(parent), state_(state), lut_(vtkSmartPointer<vtkLookupTable>::New()) {
  setObjectName("view3D");
  renderer()->SetBackground(0.10, 0.11, 0.14);
  renderer()->SetBackground2(0.28, 0.30, 0.36);
  renderer()->GradientBackgroundOn();
  for (auto& p : planes_) {
    p = vtkSmartPointer<vtkImageActor>::New();
    p->InterpolateOn();
    p->PickableOff();
    p->GetProperty()->SetLookupTable(lut_);
    p->GetProperty()->UseLookupTableScalarRangeOn();
  }
  // Patient directions on the cube's faces (LPS: +x left, +y posterior, +z superior).
  auto cube = vtkSmartPointer<vtkAnnotatedCubeActor>::New();
  cube->SetXPlusFaceText("L");
  cube->SetXMinusFaceText("R");
  cube->SetYPlusFaceText("P");
  cube->SetYMinusFaceText("A");
  cube->SetZPlusFaceText("S");
  cube->SetZMinusFaceText("I");
  cube->SetFaceTextScale(0.6);
  cube->GetCubeProperty()->SetColor(0.35, 0.38, 0.45);
  cube->GetTextEdgesProperty()->SetColor(0.9, 0.9, 0.9);
  cube->PickableOff();
  markerRenderer_ = vtkSmartPointer<vtkRenderer>::New();
  markerRenderer_->SetLayer(1);
  markerRenderer_->SetViewport(0.0, 0.0, 0.2, 0.28);
  markerRenderer_->InteractiveOff();
  markerRenderer_->AddActor(cube);
  renderWindow()->SetNumberOfLayers(2);
  renderWindow()->AddRenderer(markerRenderer_);
  connect(state, &ViewState::sceneChanged, this, &View3D::onSceneChanged);
  connect(state, &ViewState::crosshairChanged, this, &View3D::updatePlanes);
  connect(state, &ViewState::windowLevelChanged, this, &View3D::applyWindowLevel);
  connect(state, &ViewState::structureVisibilityChanged, this, [this](int index, bool visible) {
    if (index >= 0 && index < int(surfaceActors_.size())) {
      surfaceActors_[index]->SetVisibility(visible);
      requestRender();
    }
  });
  connect(&watcher_, &QFutureWatcher<SurfaceResult>::finished, this, &View3D::onSurfacesFinished);
  applyWindowLevel();
}

View3D::~View3D() { watcher_.waitForFinished(); }

void View3D::removeSurfaces() {
  for (auto& a : surfaceActors_) renderer()->RemoveActor(a);
  surfaceActors_.clear();
}

void View3D::onSceneChanged() {
  removeSurfaces();
  const auto scene = state_->scene();
  // Image actors join the renderer only with a CT (without input they print errors).
  for (auto& p : planes_) {
    p->GetMapper()->SetInputData(scene ? scene->ctImage() : nullptr);
    if (scene && !renderer()->HasViewProp(p)) renderer()->AddViewProp(p);
    if (!scene) renderer()->RemoveViewProp(p);
  }
  if (!scene) {
    surfacesReady_ = true;
    return requestRender();
  }
  updatePlanes();
  resetCamera();
  surfacesReady_ = false;
  // A build still running for an older scene is not cancelled; onSurfacesFinished() drops
  // its result and starts one for the newest scene.
  if (!watcher_.isRunning()) startSurfaceBuild(scene);
}

void View3D::startSurfaceBuild(std::shared_ptr<const PatientScene> scene) {
  // The filters use only their own data objects, so they may run on a worker thread.
  runningFor_ = scene;
  auto patient = scene->sharedDisplayPatient();  // masks on the display grid
  watcher_.setFuture(QtConcurrent::run([patient] {
    SurfaceResult r;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      r.surfaces = buildStructureSurfaces(*patient);
    } catch (const std::exception& e) {
      r.error = QString::fromUtf8(e.what());
    }
    r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }));
}

void View3D::onSurfacesFinished() {
  SurfaceResult r = watcher_.result();
  const auto builtFor = std::move(runningFor_);
  runningFor_.reset();
  const auto scene = state_->scene();
  if (!scene) {
    surfacesReady_ = true;
    return;
  }
  if (builtFor != scene) return startSurfaceBuild(scene);
  const auto& list = scene->displayPatient().structures.structures;
  if (r.surfaces.size() != list.size() && r.error.isEmpty())
    r.error = tr("structure surfaces do not match the structure list");
  if (r.error.isEmpty()) {
    for (std::size_t n = 0; n < list.size(); ++n) {
      auto mapper = vtkSmartPointer<vtkPolyDataMapper>::New();
      mapper->SetInputData(r.surfaces[n]);
      mapper->ScalarVisibilityOff();
      auto actor = vtkSmartPointer<vtkActor>::New();
      actor->SetMapper(mapper);
      const auto& c = list[n].color;
      actor->GetProperty()->SetColor(c[0] / 255.0, c[1] / 255.0, c[2] / 255.0);
      // The external contour would hide everything inside it.
      actor->GetProperty()->SetOpacity(list[n].kind == StructureKind::External ? 0.25 : 1.0);
      actor->GetProperty()->SetSpecular(0.2);
      actor->GetProperty()->SetSpecularPower(20);
      actor->SetVisibility(state_->isStructureVisible(int(n)));
      renderer()->AddActor(actor);
      surfaceActors_.push_back(actor);
    }
  }
  lastBuildMs_ = r.ms;
  surfacesReady_ = true;
  if (!userCamera_) resetCamera();
  requestRender();
  emit surfacesBuilt(r.error.isEmpty(),
                     r.error.isEmpty()
                         ? tr("%1 structure surfaces built in %2 ms").arg(list.size()).arg(r.ms, 0, 'f', 0)
                         : tr("Structure surfaces failed: %1").arg(r.error));
}

void View3D::updatePlanes() {
  const auto& scene = state_->scene();
  if (!scene) return;
  showCtSlice(planes_[0], *scene, 0, state_->sliceIndex(SliceOrientation::Sagittal));
  showCtSlice(planes_[1], *scene, 1, state_->sliceIndex(SliceOrientation::Coronal));
  showCtSlice(planes_[2], *scene, 2, state_->sliceIndex(SliceOrientation::Axial));
  requestRender();
}

void View3D::applyWindowLevel() {
  // Grey ramp of the window/level over the CT's HU range, with air (below kAirHu) fully
  // transparent so the planes show the patient and not black squares around it.
  constexpr double kLoHu = -1024, kHiHu = 3071, kAirHu = -900;
  constexpr int kEntries = 4096;
  const WindowLevel wl = state_->windowLevel();
  lut_->SetNumberOfTableValues(kEntries);
  lut_->SetTableRange(kLoHu, kHiHu);
  for (int n = 0; n < kEntries; ++n) {
    const double hu = kLoHu + (kHiHu - kLoHu) * n / (kEntries - 1);
    const double g = std::clamp((hu - (wl.level - wl.window / 2)) / wl.window, 0.0, 1.0);
    lut_->SetTableValue(n, g, g, g, hu < kAirHu ? 0.0 : 1.0);
  }
  lut_->Modified();
  requestRender();
}

void View3D::resetCamera() {
  const auto& scene = state_->scene();
  if (!scene) return;
  const auto c = scene->displayPoint(scene->centreIndex());
  vtkCamera* cam = renderer()->GetActiveCamera();
  // Anterior view, head up (LPS: anterior is -y, superior +z), then turned to an oblique.
  cam->SetFocalPoint(c.data());
  cam->SetPosition(c[0], c[1] - 1000, c[2]);
  cam->SetViewUp(0, 0, 1);
  cam->Azimuth(35);
  cam->Elevation(20);
  cam->OrthogonalizeViewUp();
  // Fit the external contour when there is one (the CT planes span the whole scan, mostly
  // air); otherwise everything, CT planes included.
  double bounds[6] = {1, -1, 1, -1, 1, -1};
  const auto& list = scene->displayPatient().structures.structures;
  for (std::size_t n = 0; n < surfaceActors_.size() && n < list.size(); ++n) {
    const auto& a = surfaceActors_[n];
    if (list[n].kind != StructureKind::External || !a->GetVisibility()) continue;
    const double* b = a->GetBounds();
    if (!b || b[0] > b[1]) continue;
    for (int i = 0; i < 3; ++i) {
      bounds[2 * i] = bounds[0] > bounds[1] ? b[2 * i] : std::min(bounds[2 * i], b[2 * i]);
      bounds[2 * i + 1] = bounds[0] > bounds[1] ? b[2 * i + 1] : std::max(bounds[2 * i + 1], b[2 * i + 1]);
    }
  }
  if (bounds[0] <= bounds[1])
    renderer()->ResetCamera(bounds);
  else
    renderer()->ResetCamera();
  cam->Dolly(1.2);
  userCamera_ = false;
  requestRender();
}

void View3D::beforeRender() {
  renderer()->ResetCameraClippingRange();
  // The marker looks at the cube from the main camera's direction with its view-up.
  vtkCamera* main = renderer()->GetActiveCamera();
  vtkCamera* cam = markerRenderer_->GetActiveCamera();
  double dop[3], up[3];
  main->GetDirectionOfProjection(dop);
  main->GetViewUp(up);
  cam->SetFocalPoint(0, 0, 0);
  cam->SetPosition(-4.5 * dop[0], -4.5 * dop[1], -4.5 * dop[2]);
  cam->SetViewUp(up);
  cam->ParallelProjectionOff();
  cam->SetViewAngle(30);
  markerRenderer_->ResetCameraClippingRange();
}

void View3D::mousePressEvent(QMouseEvent* e) {
  dragButton_ = e->button();
  lastPos_ = e->position().toPoint();
}

void View3D::mouseMoveEvent(QMouseEvent* e) {
  const QPoint pos = e->position().toPoint();
  const QPoint d = pos - lastPos_;
  lastPos_ = pos;
  vtkCamera* cam = renderer()->GetActiveCamera();
  if (dragButton_ != Qt::NoButton) userCamera_ = true;
  if (dragButton_ == Qt::LeftButton) {
    cam->Azimuth(-0.4 * d.x());
    cam->Elevation(0.4 * d.y());
    cam->OrthogonalizeViewUp();
  } else if (dragButton_ == Qt::RightButton) {
    cam->Dolly(std::pow(1.01, -d.y()));
  } else if (dragButton_ == Qt::MiddleButton) {
    // Pan in the view plane by the distance the mouse moved at the focal depth.
    double f[3], p[3], up[3], dop[3];
    cam->GetFocalPoint(f);
    cam->GetPosition(p);
    cam->GetViewUp(up);
    cam->GetDirectionOfProjection(dop);
    const double right[3] = {dop[1] * up[2] - dop[2] * up[1], dop[2] * up[0] - dop[0] * up[2],
                             dop[0] * up[1] - dop[1] * up[0]};
    const double dist = cam->GetDistance();
    const double mmPerPx =
        2.0 * dist * std::tan(cam->GetViewAngle() * M_PI / 360.0) / std::max(height(), 1);
    for (int i = 0; i < 3; ++i) {
      const double shift = (-d.x() * right[i] + d.y() * up[i]) * mmPerPx;
      f[i] += shift;
      p[i] += shift;
    }
    cam->SetFocalPoint(f);
    cam->SetPosition(p);
  } else {
    return;
  }
  requestRender();
}

void View3D::mouseReleaseEvent(QMouseEvent*) { dragButton_ = Qt::NoButton; }

void View3D::wheelEvent(QWheelEvent* e) {
  renderer()->GetActiveCamera()->Dolly(std::pow(1.1, e->angleDelta().y() / 120.0));
  userCamera_ = true;
  requestRender();
  e->accept();
}

void View3D::keyPressEvent(QKeyEvent* e) {
  if (e->key() == Qt::Key_R) return resetCamera();
  VtkView::keyPressEvent(e);
}

}  // namespace penumbra::gui
