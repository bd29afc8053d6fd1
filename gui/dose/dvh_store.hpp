#pragma once
/// DVHs of the open patient's structures for every dose set (issue 4, item 4). Each dose set
/// added or replaced (normalised) gets one DVH job on the JobRunner: the contour-based DVH
/// engine (engines/dvh: sub-voxel sampling of the planar contours, trilinear dose) per
/// structure, on a worker thread. Results are kept per dose-set id until the set is removed
/// or the patient changes; the DVH panel draws them. A newer version of a dose set cancels
/// the job still running for the older one.
#include <map>
#include <memory>
#include <vector>

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>

#include "dvh/dvh.hpp"

namespace penumbra::gui {

struct DoseSet;
class DoseSetStore;
class Job;
class JobRunner;
class PlanModel;
class ViewState;

/// The DVHs of one dose set.
struct DoseSetDvhs {
  int doseSetId = 0;
  double prescriptionGy = 0;  ///< the prescription V95/V107 were computed for
  std::vector<dvh::DvhResult> results;  ///< one per structure with contours or a mask
  std::vector<QString> warnings;        ///< per-structure failures and engine warnings

  const dvh::DvhResult* find(const QString& structure) const;
};

class DvhStore : public QObject {
  Q_OBJECT
public:
  DvhStore(ViewState* state, DoseSetStore* doseSets, PlanModel* plan, JobRunner* jobs,
           QObject* parent = nullptr);

  /// The options every GUI DVH is computed with (tests compute the reference with the same).
  static dvh::DvhOptions options(double prescriptionGy);

  /// DVHs of the dose set with `doseSetId`, or null (not computed yet, or failed).
  const DoseSetDvhs* forDoseSet(int doseSetId) const;
  /// True while a DVH job is queued or running.
  bool isBusy() const;
  DoseSetStore* doseSets() const { return doseSets_; }

public slots:
  /// (Re)computes the DVHs of the dose set at `index` of the DoseSetStore.
  void recompute(int doseSetIndex);

signals:
  /// The DVHs of a dose set are ready (or were dropped: forDoseSet() returns null).
  void dvhsChanged(int doseSetId);
  void computeStarted(int doseSetId);
  /// All DVHs were dropped (new patient).
  void cleared();
  void message(const QString& text);

private:
  void onRemoved();
  void onSceneChanged();

  ViewState* state_;
  DoseSetStore* doseSets_;
  PlanModel* plan_;
  JobRunner* jobs_;
  std::map<int, std::shared_ptr<const DoseSetDvhs>> results_;
  QHash<int, QPointer<Job>> pending_;
};

}  // namespace penumbra::gui
