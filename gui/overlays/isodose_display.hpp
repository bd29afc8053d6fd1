#pragma once
/// Isodose lines on a slice view: for every level of DoseDisplaySettings (% of the plan's
/// prescription) the iso-line of the current dose set on the slice (marching squares on the
/// DoseSlice the wash uses too, clipped to the patient outline like the wash), in the level's
/// colour, with a legend in the upper right corner ("100 %  2.00 Gy").
#include <vector>

#include <vtkSmartPointer.h>

#include "gui/overlays/slice_overlay.hpp"

class vtkActor;
class vtkPolyData;
class vtkTextActor;

namespace penumbra::gui {

class DoseDisplaySettings;
class DoseSetStore;
class PlanModel;

class IsodoseDisplay : public SliceOverlay {
  Q_OBJECT
public:
  IsodoseDisplay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
                 const DoseSetStore* store, const DoseDisplaySettings* settings,
                 const PlanModel* plan, QObject* parent = nullptr);
  ~IsodoseDisplay() override;

  /// The lines drawn (all levels; cell colours = level colours). For tests and export.
  vtkPolyData* lines() const;
  /// Segments drawn per level, in the settings' level order.
  const std::vector<int>& segmentsPerLevel() const { return perLevel_; }
  bool legendVisible() const;

private:
  void rebuild();
  void rebuildLegend();

  const DoseSetStore* store_;
  const DoseDisplaySettings* settings_;
  const PlanModel* plan_;
  vtkSmartPointer<vtkPolyData> lines_;
  vtkSmartPointer<vtkActor> actor_;
  std::vector<vtkSmartPointer<vtkTextActor>> legend_;
  std::vector<int> perLevel_;
  int shownSlice_ = -1;
};

}  // namespace penumbra::gui
