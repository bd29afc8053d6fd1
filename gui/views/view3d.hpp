#pragma once
/// The 3D view: smooth structure surfaces (built on a worker thread) and the CT as three
/// orthogonal planes through the crosshair. Qt-side camera interaction:
///   left drag rotate, middle drag pan, right drag / wheel zoom, R reset.
#include <array>
#include <vector>

#include <QFutureWatcher>
#include <QPoint>
#include <vtkRenderer.h>
#include <vtkSmartPointer.h>

#include "gui/model/view_state.hpp"
#include "gui/views/vtk_view.hpp"

class vtkActor;
class vtkImageActor;
class vtkLookupTable;
class vtkPolyData;
class vtkRenderer;

namespace penumbra::gui {

class View3D : public VtkView {
  Q_OBJECT
public:
  /// The renderer of the orientation marker (layer 1, lower left corner). For tests.
  vtkRenderer* orientationMarkerRenderer() const { return markerRenderer_; }
  explicit View3D(ViewState* state, QWidget* parent = nullptr);
  ~View3D() override;

  /// True when the surfaces of the current scene are shown (or there is no scene).
  bool surfacesReady() const { return surfacesReady_; }
  /// Wall time of the last surface build on the worker (ms).
  double lastSurfaceBuildMs() const { return lastBuildMs_; }

public slots:
  void resetCamera();

signals:
  /// The surfaces of the current scene have been built and added (or failed: see message).
  void surfacesBuilt(bool ok, const QString& message);

protected:
  void beforeRender() override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;

private:
  struct SurfaceResult {
    std::vector<vtkSmartPointer<vtkPolyData>> surfaces;
    double ms = 0;
    QString error;
  };

  void onSceneChanged();
  void onSurfacesFinished();
  void startSurfaceBuild(std::shared_ptr<const PatientScene> scene);
  void updatePlanes();
  void applyWindowLevel();
  void removeSurfaces();

  ViewState* state_;
  vtkSmartPointer<vtkLookupTable> lut_;  // CT planes: window/level grey, air transparent
  std::array<vtkSmartPointer<vtkImageActor>, 3> planes_;
  std::vector<vtkSmartPointer<vtkActor>> surfaceActors_;
  // Orientation marker: a cube labelled L/R, A/P, S/I in the lower left corner, drawn by a
  // second renderer on layer 1 whose camera turns with the main one (beforeRender).
  vtkSmartPointer<vtkRenderer> markerRenderer_;
  QFutureWatcher<SurfaceResult> watcher_;
  std::shared_ptr<const PatientScene> runningFor_;  // scene of the build in flight
  bool surfacesReady_ = true;
  double lastBuildMs_ = 0;
  Qt::MouseButton dragButton_ = Qt::NoButton;
  bool userCamera_ = false;  // rotated or zoomed: keep the camera when surfaces arrive
  QPoint lastPos_;
};

}  // namespace penumbra::gui
