#pragma once
/// The dose comparison shown (issue 13, item 3): which two dose sets were compared (A the
/// reference, B the evaluated), with which gamma criteria, the engine's result (gamma and
/// difference volumes on A's grid, statistics, per-structure pass rates), and what the slice
/// views show: the dose wash as usual, the gamma map or the difference map.
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

  /// "Gamma 3 %/3 mm global" (with the normalisation when it is not the reference maximum).
  static QString criteriaText(const compare::GammaCriteria& c);

signals:
  void comparisonChanged();
  void viewModeChanged(penumbra::gui::CompareViewMode mode);
  void sideBySideChanged(bool on);

private:
  std::shared_ptr<const Comparison> current_;
  CompareViewMode mode_ = CompareViewMode::Dose;
  bool sideBySide_ = false;
};

const char* toString(CompareViewMode mode);

}  // namespace penumbra::gui
