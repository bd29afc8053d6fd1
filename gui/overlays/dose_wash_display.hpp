#pragma once
/// Dose colour wash on a slice view: the current dose set cut by the slice plane (DoseSlice,
/// on the display grid), mapped through the chosen colour map from the lower threshold (% of
/// the prescription) to the set's maximum, blended over the CT with the chosen opacity. With
/// clipping on (DoseDisplaySettings::clipToExternal) it is transparent outside the patient
/// outline. It also draws the wash's continuous colour bar (threshold to maximum, in Gy) and
/// the shown dose set's name (slice_layout.hpp), so each view says what it shows. While a
/// ComparisonModel (setComparisonModel) shows gamma or A - B, the wash steps aside for
/// ComparisonWashDisplay: two washes and two colour bars in one place would be unreadable.
#include <memory>
#include <string>

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

class DoseDisplaySettings;
class DoseSetStore;
class PlanModel;

class DoseWashDisplay : public SliceOverlay {
  Q_OBJECT
public:
  DoseWashDisplay(vtkRenderer* renderer, const ViewState* state, SliceOrientation orientation,
                  const DoseSetStore* store, const DoseDisplaySettings* settings,
                  const PlanModel* plan, QObject* parent = nullptr);
  ~DoseWashDisplay() override;

  /// True when the wash actor is in the renderer and visible (a dose set crosses this slice).
  bool isShowing() const;
  /// The dose slice shown (empty when none): clipped samples are kClippedGy. For tests.
  const DoseSlice& shownSlice() const { return slice_; }
  /// True when the colour bar is drawn (a dose set is shown and the view is tall enough).
  bool colourBarShowing() const;

  void layout(int widthPx, int heightPx) override;

  /// Hides the wash while `model` shows a comparison map (null: never).
  void setComparisonModel(const ComparisonModel* model);
  /// Side-by-side views: the wash shows dose set A or B of `model`'s comparison (nothing
  /// without one), on the scale of the larger maximum of the two, and never steps aside.
  void pinToComparison(const ComparisonModel* model, ComparisonSide side);

protected:
  /// The dose set washed: the store's current one, or the pinned side of the comparison.
  std::shared_ptr<const DoseSet> shownSet() const;
  /// The samples washed on slice `slice` (`clip`: the clip mask or null): shownSet()'s dose
  /// here; SplitDoseWashDisplay puts A and B together.
  virtual DoseSlice sampleShown(const PatientScene& scene, int slice, const Mask* clip) const;
  /// The title's third line: the dose set's name ("A: " or "B: " first when pinned).
  virtual std::string shownName() const;
  void rebuild();
  /// Whether the name line leaves room for an isodose legend on its right (while isodose
  /// lines are shown); a view without isodose lines gives it the whole width.
  void reserveLegendRoom(bool on) { legendRoom_ = on; }

private:
  /// A dose set is washed: a patient, a current set, the wash on and no comparison map shown.
  bool washWanted() const;
  void applyColors();

  const DoseSetStore* store_;
  const DoseDisplaySettings* settings_;
  const PlanModel* plan_;
  const ComparisonModel* comparison_ = nullptr;
  bool pinned_ = false;
  bool legendRoom_ = true;
  ComparisonSide side_ = ComparisonSide::Reference;
  vtkSmartPointer<vtkImageData> image_;
  vtkSmartPointer<vtkLookupTable> lut_;
  vtkSmartPointer<vtkImageMapToColors> colors_;
  vtkSmartPointer<vtkImageActor> actor_;
  vtkSmartPointer<vtkPolyData> bar_;
  vtkSmartPointer<vtkActor2D> barActor_;
  vtkSmartPointer<vtkTextActor> barTop_, barBottom_, setName_;
  DoseSlice slice_;
  bool inRenderer_ = false;
  int shownSlice_ = -1;
};

}  // namespace penumbra::gui
