#pragma once
/// The compare views ("compareViews"; issue 13, item 3): slice views of one orientation
/// (axial by default, "compareViewsOrientationCombo") on the shared ViewState, so they have
/// one crosshair and one slice; zoom and pan of any one is copied to the others
/// (SliceView::matchCamera). What they show follows ComparisonModel::compareLayout():
///  - A | B | map: A ("compareViewA") and B ("compareViewB") wash dose sets A and B of the
///    comparison with their isodose lines, on one colour scale (the larger maximum); the map
///    ("compareViewMap") shows the gamma map, or A - B when the Compare panel's view selector
///    says Difference, under the isodose lines of both (A dashed, B dotted, one legend);
///  - Swipe A/B and Checkerboard A/B: one view ("compareViewSplit") washes A and B together
///    on that scale (SplitDoseWashDisplay: A left of a divider the user drags and B right of
///    it, or squares of A and B), beside the map.
/// The main window shows this widget instead of its four planning views while
/// ComparisonModel::sideBySide() is on.
#include <array>

#include <QWidget>

#include "gui/model/slice_orientation.hpp"

class QComboBox;
class QLabel;
class QVBoxLayout;

namespace penumbra::gui {

class ComparisonModel;
class ComparisonWashDisplay;
class DoseDisplaySettings;
class DoseSetStore;
class DoseWashDisplay;
class PlanModel;
class ProfileModel;
class SliceView;
class SplitDoseWashDisplay;
class ViewState;

class CompareViews : public QWidget {
  Q_OBJECT
public:
  /// The views, by index: A, B, the map and the split view (Swipe and Checkerboard).
  enum ViewIndex { kViewA = 0, kViewB = 1, kViewMap = 2, kViewSplit = 3, kViewCount = 4 };

  CompareViews(ViewState* state, ComparisonModel* model, const DoseSetStore* store,
               const DoseDisplaySettings* settings, const PlanModel* plan, ProfileModel* profile,
               QWidget* parent = nullptr);

  SliceOrientation orientation() const { return orientation_; }
  void setOrientation(SliceOrientation o);
  /// kViewA ("compareViewA"), kViewB ("compareViewB"), kViewMap ("compareViewMap"),
  /// kViewSplit ("compareViewSplit"); those of the other layout are hidden.
  SliceView* view(int i) const { return views_[std::size_t(i)]; }
  DoseWashDisplay* wash(int i) const { return washes_[std::size_t(i)]; }
  ComparisonWashDisplay* mapDisplay() const { return map_; }
  SplitDoseWashDisplay* splitDisplay() const { return split_; }

private:
  void buildViews();
  void updateTitles();
  /// Shows the views of the model's layout.
  void showLayout();

  ViewState* state_;
  ComparisonModel* model_;
  const DoseSetStore* store_;
  const DoseDisplaySettings* settings_;
  const PlanModel* plan_;
  ProfileModel* profile_;
  SliceOrientation orientation_ = SliceOrientation::Axial;
  QComboBox* orientationCombo_ = nullptr;
  QLabel* intro_ = nullptr;
  std::array<QWidget*, kViewCount> cells_{};  ///< a title over a view
  std::array<QVBoxLayout*, kViewCount> cellLayouts_{};
  std::array<QLabel*, kViewCount> titles_{};
  std::array<SliceView*, kViewCount> views_{};
  std::array<DoseWashDisplay*, 2> washes_{};
  ComparisonWashDisplay* map_ = nullptr;
  SplitDoseWashDisplay* split_ = nullptr;
};

}  // namespace penumbra::gui
