#pragma once
/// The dose comparison shown (issue 13, item 3): which two dose sets were compared (A the
/// reference, B the evaluated), with which gamma criteria, the engine's result (gamma and
/// difference volumes on A's grid, statistics, per-structure pass rates), what the slice
/// views show (the dose wash as usual, the gamma map or the difference map) and how the
/// compare views lay out A and B (side by side, swipe or checkerboard).
///
/// It lives in model/ because the slice overlays draw its volumes (overlays include only
/// model/), as they draw the dose sets of DoseSetStore; the compare panel (gui/compare) fills
/// it from a job's result on the GUI thread. Immutable results, shared: a worker never sees
/// this object.
#include <memory>

#include <QObject>
#include <QString>

#include "compare/compare.hpp"

namespace penumbra::gui {

struct DoseSet;

/// What the slice views wash: the current dose set (Dose), the gamma index or A - B.
enum class CompareViewMode { Dose, Gamma, Difference };
/// One of the two dose sets of a comparison (the side-by-side views pin their wash to one).
enum class ComparisonSide { Reference, Evaluated };
/// What the central area shows while sideBySide() is on: A | B | map in three views, or one
/// view that washes A and B on one slice beside the map: Swipe (A left of a divider the user
/// drags, B right of it) or Checkerboard (squares of A and B alternate), so that where the two
/// doses disagree the wash steps at the divider or the squares' edges.
enum class CompareLayout { SideBySide, Swipe, Checkerboard };

struct Comparison {
  std::shared_ptr<const DoseSet> reference;  ///< A
  std::shared_ptr<const DoseSet> evaluated;  ///< B
  compare::GammaCriteria criteria;
  std::shared_ptr<const compare::CompareResult> result;
  QString patientName;  ///< for the report
};

class ComparisonModel : public QObject {
  Q_OBJECT
public:
  explicit ComparisonModel(QObject* parent = nullptr);

  /// The last comparison computed (null before the first or after the patient changed).
  const std::shared_ptr<const Comparison>& current() const { return current_; }
  /// Dose set A or B of the current comparison (null without one).
  std::shared_ptr<const DoseSet> doseSet(ComparisonSide side) const;
  /// The larger maximum of A and B (0 without a comparison): side-by-side washes share it so
  /// that one colour is one dose in both.
  double sharedMaxGy() const;
  void setCurrent(std::shared_ptr<const Comparison> comparison);
  void clear();

  CompareViewMode viewMode() const { return mode_; }
  /// Gamma and Difference need a comparison; without one the views show the dose.
  CompareViewMode effectiveViewMode() const { return current_ ? mode_ : CompareViewMode::Dose; }
  void setViewMode(CompareViewMode mode);

  /// The central area shows A | B | map side by side (CompareViews) instead of the planning
  /// views: a layout choice the Compare panel makes and the main window follows.
  bool sideBySide() const { return sideBySide_; }
  void setSideBySide(bool on);
  /// The views shown while sideBySide() is on (CompareLayout).
  CompareLayout compareLayout() const { return layout_; }
  void setCompareLayout(CompareLayout layout);
  /// Swipe: where the divider stands, as a fraction (0..1) of the display grid's width on
  /// screen from its left edge; A is washed left of it, B right of it. 0.5 at first.
  double swipeFraction() const { return swipeFraction_; }
  void setSwipeFraction(double fraction);
  /// Checkerboard: the side of a square [mm], 1..200; squares start at the display grid's
  /// corner, and the one there shows A.
  double checkerSizeMm() const { return checkerSizeMm_; }
  void setCheckerSizeMm(double mm);

  /// "Gamma 3 %/3 mm global" (with the normalisation when it is not the reference maximum).
  static QString criteriaText(const compare::GammaCriteria& c);

signals:
  void comparisonChanged();
  void viewModeChanged(penumbra::gui::CompareViewMode mode);
  void sideBySideChanged(bool on);
  void compareLayoutChanged(penumbra::gui::CompareLayout layout);
  /// The swipe divider or the checkerboard's square size changed.
  void splitChanged();

private:
  std::shared_ptr<const Comparison> current_;
  CompareViewMode mode_ = CompareViewMode::Dose;
  bool sideBySide_ = false;
  CompareLayout layout_ = CompareLayout::SideBySide;
  double swipeFraction_ = 0.5;
  double checkerSizeMm_ = 10;
};

const char* toString(CompareViewMode mode);
/// "A | B | map", "Swipe A/B", "Checkerboard A/B".
const char* toString(CompareLayout layout);

}  // namespace penumbra::gui
