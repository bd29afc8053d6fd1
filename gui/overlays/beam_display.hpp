#pragma once
/// Beams of the PlanModel drawn from their IEC 61217 frames (beamFrame(): proton beams, and
/// photon beams with their collimator rotation):
///  - BeamSliceDisplay: on a slice view, the orthogonal projection onto the slice plane of the
///    central axis, the divergent field edges (spot extent, or a photon beam's open field, at
///    the isocentre plane) and the isocentre cross, in the beam's colour (the current beam
///    drawn thicker);
///  - BeamDisplay3D: in the 3D view, the central axis from the source, the field pyramid from
///    the source to the isocentre plane, the spots and a photon beam's conformal aperture at
///    the isocentre plane.
#include <array>
#include <vector>

#include <QObject>
#include <vtkRenderer.h>
#include <vtkSmartPointer.h>

#include "gui/model/plan_model.hpp"
#include "gui/overlays/slice_overlay.hpp"

class vtkActor;
class vtkPolyData;

namespace penumbra::gui {

/// Colour of beam `index` (a fixed palette, cycled).
std::array<double, 3> beamColor(int index);

/// Lateral extent of a beam's field at the isocentre plane [mm]. Proton beams: the spots'
/// bounding box, else the target projection's, else +-20 mm. Photon beams: the jaws, narrowed
/// to the aperture's bounding box when there is one.
struct FieldExtent {
  double aMin = -20, aMax = 20, bMin = -20, bMax = 20;
};
FieldExtent fieldExtent(const PlannedBeam& beam);

class BeamSliceDisplay : public SliceOverlay {
  Q_OBJECT
public:
  BeamSliceDisplay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
                   const PlanModel* plan, QObject* parent = nullptr);
  ~BeamSliceDisplay() override;

  /// Line segments drawn (all beams), for tests.
  vtkPolyData* lines() const;

private:
  void rebuild();

  const PlanModel* plan_;
  vtkSmartPointer<vtkPolyData> lines_, current_;
  vtkSmartPointer<vtkActor> actor_, currentActor_;
  int shownSlice_ = -1;
};

class BeamDisplay3D : public QObject {
  Q_OBJECT
public:
  BeamDisplay3D(vtkRenderer* renderer, const ViewState* state, const PlanModel* plan,
                QObject* parent = nullptr);
  ~BeamDisplay3D() override;

  vtkPolyData* geometry() const;

signals:
  void renderRequested();

private:
  void rebuild();

  vtkSmartPointer<vtkRenderer> renderer_;  // kept alive: the view may go first
  const ViewState* state_;
  const PlanModel* plan_;
  vtkSmartPointer<vtkPolyData> lines_, spots_;
  vtkSmartPointer<vtkActor> actor_, spotActor_;
};

}  // namespace penumbra::gui
