#pragma once
/// Planning logic behind the panels: places beams on a target, runs spot generation and dose
/// computation as jobs (JobRunner), turns results into PlanModel spots and DoseSetStore dose
/// sets on the GUI thread, shows job errors in a dialog (a GPU out-of-memory error offers to
/// run again on the CPU), and normalises a computed plan to the prescription.
///
/// Dose grid: with doseGridMm > 0 an axis-aligned LPS grid of that spacing covering the CT,
/// else the engine's default (the CT grid). Either way the dose lives in patient coordinates
/// and the displays map it onto the display grid (dose_slice.hpp).
#include <QObject>
#include <QPointer>
#include <QString>

#include "core/device.hpp"
#include "core/structure.hpp"
#include "proton/spot_generation.hpp"
#include "raytrace/dda_traversal.hpp"

class QWidget;

namespace penumbra::gui {

class DoseSetStore;
class Job;
class JobRunner;
class PlanModel;
class ViewState;

struct DoseRunOptions {
  Backend backend = Backend::Auto;
  double doseGridMm = 0;  ///< 0: the CT grid
  DdaVariant variant = DdaVariant::BranchFree;
  int cpuThreads = 0;  ///< 0: all cores
};

enum class NormalisationMode { TargetMean, TargetD50 };

class PlanController : public QObject {
  Q_OBJECT
public:
  PlanController(ViewState* state, PlanModel* plan, DoseSetStore* store, JobRunner* jobs,
                 QWidget* dialogParent, QObject* parent = nullptr);

  PlanModel* plan() const { return plan_; }
  DoseSetStore* doseSets() const { return store_; }
  JobRunner* jobs() const { return jobs_; }

  /// Adds a beam aimed at the centroid of structure `targetName` (or the CT centre when it is
  /// not found); returns its index, -1 without a patient.
  int addBeamOnTarget(const QString& targetName, double gantryDeg, double couchDeg = 0);
  /// Centroid (LPS mm) of a structure's mask; false when absent or empty.
  bool targetCentroid(const QString& targetName, Vec3& lps) const;

  /// Generates layers and spots for beam `beam` on `targetName` as a job; null when it cannot
  /// start (no patient, no such beam or target: the reason goes to message()).
  Job* generateSpots(int beam, const QString& targetName, const proton::SpotGenerationOptions& options);
  /// Computes the plan's dose as a job; on success a dose set is added and made current.
  Job* computeDose(const DoseRunOptions& options);
  const DoseRunOptions& lastDoseOptions() const { return lastOptions_; }

  /// Scales the current dose set and the plan's spot weights so that the target's mean (or
  /// median, D50) dose equals the prescription. The dose set is replaced by the scaled one
  /// (normalisation factor and note recorded in it). Returns the factor, or 0 on failure
  /// (reason in message()).
  double normaliseCurrentDose(const QString& targetName, NormalisationMode mode);

  /// Shows job errors in a dialog (on by default; tests may turn it off).
  void setShowErrorDialogs(bool on) { showDialogs_ = on; }
  /// The last error dialog while it is open.
  QWidget* errorDialog() const { return errorDialog_.data(); }

signals:
  void spotsGenerated(int beam);
  void doseComputed(int doseSetIndex);
  /// A user-facing line for the message log / status bar.
  void message(const QString& text);

private:
  void onDoseFailed(Job* job, const DoseRunOptions& options);
  const Structure* findStructure(const QString& name) const;

  ViewState* state_;
  PlanModel* plan_;
  DoseSetStore* store_;
  JobRunner* jobs_;
  QWidget* dialogParent_;
  QPointer<QWidget> errorDialog_;
  DoseRunOptions lastOptions_;
  bool showDialogs_ = true;
  int runNumber_ = 0;
};

/// An axis-aligned LPS grid of `spacingMm` covering `ct`'s voxel box.
Grid coveringGrid(const Grid& ct, double spacingMm);

}  // namespace penumbra::gui
