#pragma once
/// A | B | map side by side ("compareViews"; issue 13, item 3): three slice views of one
/// orientation (axial by default, "compareViewsOrientationCombo") on the shared ViewState, so
/// they have one crosshair and one slice; zoom and pan of any one is copied to the others
/// (SliceView::matchCamera). The first two wash dose sets A and B of the comparison with their
/// isodose lines, on one colour scale (the larger maximum); the third shows the gamma map, or
/// A - B when the Compare panel's view selector says Difference, under the isodose lines of
/// both (A dashed, B dotted, one legend). The main window shows this
/// widget instead of its four planning views while ComparisonModel::sideBySide() is on.
#include <array>

#include <QWidget>

#include "gui/model/slice_orientation.hpp"

class QComboBox;
class QHBoxLayout;
class QLabel;

namespace penumbra::gui {

class ComparisonModel;
class ComparisonWashDisplay;
class DoseDisplaySettings;
class DoseSetStore;
class DoseWashDisplay;
class PlanModel;
class ProfileModel;
class SliceView;
class ViewState;

class CompareViews : public QWidget {
  Q_OBJECT
public:
  CompareViews(ViewState* state, ComparisonModel* model, const DoseSetStore* store,
               const DoseDisplaySettings* settings, const PlanModel* plan, ProfileModel* profile,
               QWidget* parent = nullptr);

  SliceOrientation orientation() const { return orientation_; }
  void setOrientation(SliceOrientation o);
  /// 0: A ("compareViewA"), 1: B ("compareViewB"), 2: the map ("compareViewMap").
  SliceView* view(int i) const { return views_[std::size_t(i)]; }
  DoseWashDisplay* wash(int i) const { return washes_[std::size_t(i)]; }
  ComparisonWashDisplay* mapDisplay() const { return map_; }

private:
  void buildViews();
  void updateTitles();

  ViewState* state_;
  ComparisonModel* model_;
  const DoseSetStore* store_;
  const DoseDisplaySettings* settings_;
  const PlanModel* plan_;
  ProfileModel* profile_;
  SliceOrientation orientation_ = SliceOrientation::Axial;
  QComboBox* orientationCombo_ = nullptr;
  QHBoxLayout* row_ = nullptr;
  std::array<QLabel*, 3> titles_{};
  std::array<SliceView*, 3> views_{};
  std::array<DoseWashDisplay*, 2> washes_{};
  ComparisonWashDisplay* map_ = nullptr;
};

}  // namespace penumbra::gui
