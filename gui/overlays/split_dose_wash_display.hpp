#pragma once
/// Doses A and B of the comparison washed together on one slice view (issue 13: swipe and
/// checkerboard), in the ComparisonModel's layout: Swipe, A left of a vertical divider and B
/// right of it, the divider dragged with the left button (SliceOverlay::handleAt); or
/// Checkerboard, squares of ComparisonModel::checkerSizeMm() alternating A (the square at the
/// display grid's corner) and B. Both go through the one colour scale of the side-by-side
/// washes (DoseWashDisplay pinned to the comparison: the threshold, colour map and opacity of
/// the dose display, up to the larger maximum of A and B), so the wash runs on unbroken where
/// A and B agree and steps at the divider or at a square's edge where they do not.
///
/// Each display-grid sample shows A or B whole, chosen by its centre: the divider stands on a
/// sample edge, and a square's edge follows the samples. No isodose lines: lines of A and B
/// crossing the whole view would not say which side they belong to.
#include <vtkSmartPointer.h>

#include "gui/overlays/dose_wash_display.hpp"

class vtkActor2D;
class vtkPolyData;
class vtkTextActor;

namespace penumbra::gui {

class SplitDoseWashDisplay : public DoseWashDisplay {
  Q_OBJECT
public:
  SplitDoseWashDisplay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
                       const DoseSetStore* store, const DoseDisplaySettings* settings, const PlanModel* plan,
                       ComparisonModel* model, QObject* parent = nullptr);
  ~SplitDoseWashDisplay() override;

  /// Swipe or Checkerboard: the model's layout (Swipe while that is SideBySide).
  CompareLayout shownLayout() const;
  /// Swipe: the divider's display-grid index along the screen's horizontal axis (a sample
  /// edge, n - 0.5); NaN without a patient.
  double dividerIndex() const;
  /// True when the sample at display-grid in-plane index (u, v) shows A (planeAxes()).
  bool showsA(int u, int v) const;
  /// The divider's x in display pixels as last drawn; NaN when it is not drawn. For tests.
  double dividerDisplayX() const { return dividerX_; }

  void layout(int widthPx, int heightPx) override;
  bool handleAt(double x, double y) const override;
  void dragHandleTo(double x, double y) override;

protected:
  DoseSlice sampleShown(const PatientScene& scene, int slice, const Mask* clip) const override;
  std::string shownName() const override;

private:
  /// +1 when the display grid's u index grows to the right of the screen, -1 to the left.
  int uToScreenRight() const;

  ComparisonModel* model_;
  vtkSmartPointer<vtkPolyData> divider_;
  vtkSmartPointer<vtkActor2D> dividerActor_;
  vtkSmartPointer<vtkTextActor> labelA_, labelB_;
  double dividerX_;
};

}  // namespace penumbra::gui
