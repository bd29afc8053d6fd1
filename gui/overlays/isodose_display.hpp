#pragma once
/// Isodose lines on a slice view: for every level of DoseDisplaySettings (% of the plan's
/// prescription) the iso-line of the current dose set on the slice (marching squares on the
/// DoseSlice the wash uses too, clipped to the patient outline like the wash), in the level's
/// colour, dashed so that no line can be taken for a structure contour (those are solid), with
/// a legend in the upper right corner under the header "Isodose (dashed)" ("100 %  2.00 Gy").
/// The dashes keep their length on screen (about 6 px on, 4 px off) whatever the zoom.
#include <memory>
#include <string>
#include <vector>

#include <vtkSmartPointer.h>

#include "gui/model/comparison_model.hpp"

#include "gui/overlays/marching_squares.hpp"
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
  /// The legend's lines, header first (empty when hidden). For tests.
  std::vector<std::string> legendText() const;

  void layout(int widthPx, int heightPx) override;

  /// Side-by-side views: the lines of dose set A or B of `model`'s comparison (none without
  /// one), as the pinned wash under them (DoseWashDisplay::pinToComparison).
  void pinToComparison(const ComparisonModel* model, ComparisonSide side);
  /// Dash and gap on screen [px] (default 6 and 4) and the legend's header (default
  /// "Isodose (dashed)"; empty: no legend). Two displays on one view, A dashed and B dotted
  /// with one legend, show both doses' lines over the comparison map.
  void setLineStyle(double dashPx, double gapPx, const std::string& legendHeader);

private:
  std::shared_ptr<const DoseSet> shownSet() const;
  void rebuild();
  void rebuildLines();
  void rebuildLegend();

  const DoseSetStore* store_;
  const DoseDisplaySettings* settings_;
  const PlanModel* plan_;
  const ComparisonModel* comparison_ = nullptr;  ///< set when pinned
  double dashPx_ = 6.0, gapPx_ = 4.0;  ///< on screen, whatever the zoom
  std::string legendHeader_ = "Isodose (dashed)";
  ComparisonSide side_ = ComparisonSide::Reference;
  vtkSmartPointer<vtkPolyData> lines_;
  vtkSmartPointer<vtkActor> actor_;
  std::vector<vtkSmartPointer<vtkTextActor>> legend_;
  std::vector<int> perLevel_;
  std::vector<std::vector<Segment2>> levelSegments_;  // undashed, per level
  double dashPxPerMm_ = 0;  // the zoom the dashes were cut for
  int shownSlice_ = -1;
};

}  // namespace penumbra::gui
