#pragma once
/// The plan's robustness as the GUI shows it (issue 16, item 4): the scenario settings the
/// Robustness panel edits (and the Optimise panel's robust option reuses), the last good
/// evaluation (robust::RobustnessResult: the table, the DVH bands, the worst-case and spread
/// doses) and whether the DVH panel draws the bands.
///
/// It lives in model/ for the same reason as the ComparisonModel: the DVH panel (dose/) draws
/// the bands and the Optimise panel (optimise/) reads the scenario settings, and neither may
/// include the robust/ feature folder that fills it. Results are immutable and shared; a
/// worker never sees this object.
///
/// Two lifetimes: the table stays until a newer evaluation replaces it (a failed or cancelled
/// run keeps it; a plan edit only marks it stale), while the bands belong to the plan they were
/// computed for and are dropped at the first plan edit (clearBands()), so that the DVH panel
/// never draws an old plan's envelope around a new plan's curves.
#include <QObject>
#include <QString>
#include <memory>

#include "robust/robustness.hpp"

namespace penumbra::gui {

/// What the Robustness panel's scenario editor describes.
struct RobustnessSettings {
  robust::ScenarioOptions scenarios;  ///< range %, setup mm, axes or sphere of N, combine
  /// Dose grid of the evaluation [mm]; 0: the plan's own dose grid (Plan dock).
  double doseGridMm = 0;
};

/// One finished evaluation and what it was computed for.
struct RobustnessEvaluation {
  std::shared_ptr<const robust::RobustnessResult> result;
  int planRevision = 0;  ///< RobustnessModel::planRevision() when the run started
  double prescriptionGy = 0;
  QString when;       ///< "12:03:04"
  int runNumber = 0;  ///< the run's number in the job list ("Robustness 3")
};

class RobustnessModel : public QObject {
  Q_OBJECT
 public:
  explicit RobustnessModel(QObject* parent = nullptr);

  const RobustnessSettings& settings() const { return settings_; }
  void setSettings(const RobustnessSettings& settings);

  /// The last good evaluation (null before the first and after the patient changed).
  const std::shared_ptr<const RobustnessEvaluation>& current() const { return current_; }
  void setCurrent(std::shared_ptr<const RobustnessEvaluation> evaluation);
  /// Drops the evaluation and the bands (new patient).
  void clear();

  /// Raised at every plan edit (planEdited()); an evaluation of an older revision is stale.
  int planRevision() const { return planRevision_; }
  bool isStale() const { return current_ && current_->planRevision != planRevision_; }
  /// A plan edit: the bands go, the table stays (stale).
  void planEdited();

  /// The DVH bands of the current plan: the current evaluation's while no edit came since,
  /// else null.
  std::shared_ptr<const robust::RobustnessResult> bands() const;
  bool bandsVisible() const { return bandsVisible_; }
  void setBandsVisible(bool on);

 signals:
  void settingsChanged();
  /// A new evaluation, or none (cleared).
  void evaluationChanged();
  /// bands() or bandsVisible() changed: the DVH panel redraws.
  void bandsChanged();
  /// isStale() may have changed.
  void staleChanged(bool stale);

 private:
  RobustnessSettings settings_;
  std::shared_ptr<const RobustnessEvaluation> current_;
  bool bandsVisible_ = true;
  int planRevision_ = 0;
};

}  // namespace penumbra::gui
