#pragma once
/// The dose comparison on a slice view (issue 13, item 3): in the ComparisonModel's Gamma mode
/// the gamma index, in Difference mode A - B, each through its own colour map
/// (compare_colours.hpp) with its own colour bar where the dose wash's goes (the dose wash
/// steps aside in those modes, DoseWashDisplay), and the comparison's name on the title's third
/// line. Values come from the result volumes on A's grid by nearest voxel (gamma is a value per
/// reference point: interpolating it would blur pass into fail); NaN (not evaluated, outside
/// B) is transparent, and the difference is drawn only where A or B reaches the cut-off, so the
/// zero-dose box does not wash the slice white.
#include <vtkSmartPointer.h>

#include "gui/model/comparison_model.hpp"
#include "gui/overlays/dose_slice.hpp"
#include "gui/overlays/slice_overlay.hpp"

class vtkActor2D;
class vtkImageActor;
class vtkImageData;
class vtkImageMapToColors;
class vtkLookupTable;
class vtkPolyData;
class vtkTextActor;

namespace penumbra::gui {

class ComparisonWashDisplay : public SliceOverlay {
  Q_OBJECT
public:
  ComparisonWashDisplay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
                        const ComparisonModel* model, QObject* parent = nullptr);
  ~ComparisonWashDisplay() override;

  bool isShowing() const;
  bool colourBarShowing() const;
  /// The colour bar's labels, top to bottom (empty when hidden). For tests.
  std::vector<std::string> colourBarLabels() const;
  /// The values shown (display-grid samples; NaN where transparent). For tests.
  const DoseSlice& shownSlice() const { return slice_; }

  void layout(int widthPx, int heightPx) override;

  /// The side-by-side map view: the gamma map also while the model's mode is Dose (the views
  /// that follow the mode would then show the dose).
  void setAlwaysShown(bool on);
  /// What this display draws now: Dose (nothing), Gamma or Difference.
  CompareViewMode shownMode() const;

  /// Opacity of the comparison maps over the CT: higher than the dose wash's, since the map's
  /// colours carry the verdict (pass/fail) and must not mix with the CT's grey.
  static constexpr double kOpacity = 0.85;

private:
  void rebuild();

  const ComparisonModel* model_;
  vtkSmartPointer<vtkImageData> image_;
  vtkSmartPointer<vtkLookupTable> lut_;
  vtkSmartPointer<vtkImageMapToColors> colors_;
  vtkSmartPointer<vtkImageActor> actor_;
  vtkSmartPointer<vtkPolyData> bar_;
  vtkSmartPointer<vtkActor2D> barActor_;
  vtkSmartPointer<vtkTextActor> barTop_, barMiddle_, barBottom_, title_;
  DoseSlice slice_;
  double barMiddleFraction_ = 0.5;  ///< where the middle label sits on the bar (gamma: 1 / cap)
  bool inRenderer_ = false;
  bool alwaysShown_ = false;
  int shownSlice_ = -1;
};

}  // namespace penumbra::gui
