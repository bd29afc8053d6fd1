#pragma once
/// Isodose surfaces in the 3D view: for every isodose level marked "3D" in the settings, the
/// iso-surface of the current dose set (flying edges on the dose grid), translucent, in the
/// level's colour. Surfaces are extracted on a worker thread (the filters touch only their
/// own data objects); actors are created and added on the GUI thread. With clipping on
/// (DoseDisplaySettings::clipToExternal) the dose is set to 0 outside the patient outline
/// before extraction, so surfaces close at the skin; the outline's mask resampled onto the dose
/// grid is kept for the next build (settings changes, normalised versions of the same grid).
#include <memory>
#include <vector>

#include <QFutureWatcher>
#include <QObject>
#include <QColor>
#include <vtkRenderer.h>
#include <vtkSmartPointer.h>

#include "core/volume.hpp"

class vtkActor;
class vtkPolyData;

namespace penumbra::gui {

class DoseDisplaySettings;
class DoseSetStore;
struct DoseSet;
class PatientScene;
class PlanModel;
class ViewState;

class DoseSurfaceDisplay : public QObject {
  Q_OBJECT
public:
  DoseSurfaceDisplay(vtkRenderer* renderer, const ViewState* state, const DoseSetStore* store,
                     const DoseDisplaySettings* settings, const PlanModel* plan,
                     QObject* parent = nullptr);
  ~DoseSurfaceDisplay() override;

  /// Surfaces shown now (one per "3D" level that the dose reaches).
  int surfaceCount() const { return int(actors_.size()); }
  /// Total triangles shown.
  long long triangleCount() const;
  bool isBuilding() const { return watcher_.isRunning(); }
  /// Display-frame bounds (mm: xmin, xmax, ymin, ymax, zmin, zmax) of all surfaces shown;
  /// false when none is shown. For tests.
  bool surfaceBounds(double bounds[6]) const;

signals:
  void renderRequested();
  /// The surfaces of the current settings and dose set are in the renderer.
  void surfacesUpdated();

private:
  struct Level {
    double gy;
    QColor color;
  };
  struct Result {
    std::vector<vtkSmartPointer<vtkPolyData>> surfaces;
    std::vector<Level> levels;
    std::weak_ptr<const PatientScene> scene;    ///< the scene the clip mask came from
    const Mask* clipSource = nullptr;           ///< display-grid mask clipped to (null: none)
    std::shared_ptr<const Mask> clipOnDoseGrid;  ///< it, resampled onto the dose grid
  };
  /// The last clip mask resampled onto a dose grid (maskOnGrid: one pass over the dose grid).
  struct ClipCache {
    std::weak_ptr<const PatientScene> scene;
    const Mask* source = nullptr;
    std::shared_ptr<const Mask> onDoseGrid;
  };
  void schedule();
  void start();
  void onFinished();
  void clearActors();

  vtkSmartPointer<vtkRenderer> renderer_;  // kept alive: the view may go first
  const ViewState* state_;
  const DoseSetStore* store_;
  const DoseDisplaySettings* settings_;
  const PlanModel* plan_;
  std::vector<vtkSmartPointer<vtkActor>> actors_;
  ClipCache clipCache_;
  QFutureWatcher<Result> watcher_;
  bool pending_ = false;  // settings changed while a build ran
};

}  // namespace penumbra::gui
