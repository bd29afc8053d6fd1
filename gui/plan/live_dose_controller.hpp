#pragma once
/// Live dose (issue 15, item 3): while on, every plan edit (gantry, couch, isocentre, jaws,
/// aperture margin, MU, spot weights, layers) recomputes the edited beam's dose at once and
/// shows its modality's plan dose as one "live" dose set of the DoseSetStore, replaced in place,
/// so the wash, the isodose lines and surfaces and the DVHs follow it.
///
/// Edits and jobs:
///  - every edit raises a generation counter; the edits one user action makes (a gantry change
///    that also regrows a conformal aperture) are merged by a zero-delay timer into one request;
///  - at most one live job runs and one request waits (the latest: a newer one replaces it);
///    a newer edit cancels a running job of an older generation (JobControl cancel);
///  - a result is shown only when its generation is the newest and it is not older or coarser
///    than what is on screen, so a stale dose never replaces a newer one;
///  - live jobs run beside the JobRunner's queue (JobRunner::submitBeside): a long Compute dose
///    or optimisation must not hold up the dose of the beam being dragged.
///
/// Progressive refinement: on the CPU (or on a GPU whose last full-grid run took more than
/// kSlowGpuMs) edits run on a coarser preview grid (previewSpacingMm(): 4 mm, or twice the
/// plan's dose grid when that is coarser) and the full grid follows once no edit has come for
/// settleMs() (~300 ms), or at once when the user lets go of a slice-view handle
/// (editsFinished()). Only the beams edited since the last run go through the engine; the
/// others come from a per-beam cache of each grid (live_dose_job.hpp), dropped when a beam is
/// added or removed, the engine settings change, or the patient closes.
///
/// Faults: a GPU run that fails for want of memory or with a CUDA error keeps the last good dose on screen,
/// says so, and runs the same edit again on the CPU preview; later edits stay on the CPU until
/// live dose is turned off and on again. A failed CPU run or a cancelled job (Jobs dock,
/// Ctrl+.) keeps the last good dose with a message. Nothing here waits for a worker.
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <QTimer>

// QPointer<Job> needs the complete type wherever this header's moc output is compiled.
#include "gui/jobs/job_runner.hpp"
#include "gui/plan/live_dose_job.hpp"
#include "gui/plan/plan_controller.hpp"

class QAction;

namespace penumbra::gui {

enum class LiveGrid { Preview, Full };

/// What the live dose set on screen was computed for.
struct LivePublication {
  int generation = 0;  ///< 0: nothing shown yet
  LiveGrid grid = LiveGrid::Preview;
  double spacingMm = 0;  ///< the dose grid's spacing (largest axis) [mm]
  LiveModality modality = LiveModality::Photon;
  std::vector<photon::PhotonBeam> photonBeams;  ///< photons: the beams as computed
  std::vector<proton::ProtonBeam> protonBeams;  ///< protons: the beams as computed
  Backend backend = Backend::Cpu;
  double wallMs = 0;
  int doseSetId = -1;
};

class LiveDoseController : public QObject {
  Q_OBJECT
public:
  /// A GPU whose full-grid live run takes longer than this gets the preview grid too.
  static constexpr double kSlowGpuMs = 100;

  /// `options` gives the Plan dock's dose settings (backend, grid, engine parameters).
  LiveDoseController(PlanController* controller, std::function<DoseRunOptions()> options,
                     QObject* parent = nullptr);
  ~LiveDoseController() override;

  /// The checkable toggle ("actionLiveDose", Ctrl+L) for the Plan menu and the Plan dock.
  QAction* action() const { return action_; }
  bool isOn() const { return on_; }

  /// Preview grid spacing for `options` [mm] (0 when the full grid is as coarse already).
  double previewSpacingMm(const DoseRunOptions& options) const;
  /// Fixes the preview spacing (0: automatic, as previewSpacingMm() says).
  void setPreviewSpacingMm(double mm) { previewMm_ = mm; }
  /// Quiet time after the last edit before the full grid runs [ms].
  int settleMs() const { return settle_.interval(); }
  void setSettleMs(int ms) { settle_.setInterval(ms); }
  /// Tests: called on the worker before every engine call (may throw an injected fault).
  void setEngineProbe(LiveEngineProbe probe) { probe_ = std::move(probe); }

  /// The newest edit's generation, and what is on screen.
  int generation() const { return generation_; }
  const LivePublication& published() const { return published_; }
  /// True while a live job runs or a request waits.
  bool isBusy() const { return running_.job != nullptr || pending_; }
  /// "live: 14 ms (GPU)", "live: preview 4 mm, refining...", or a fault; empty when off.
  QString statusText() const { return status_; }
  /// True after a GPU failure: live runs stay on the CPU until live dose is turned on again.
  bool cpuFallback() const { return cpuFallback_; }

public slots:
  void setOn(bool on);
  /// The user let go (a handle drag ended): the full grid runs now, without the settle time.
  void editsFinished();

signals:
  void toggled(bool on);
  void statusChanged(const QString& text);
  /// A live result went on screen (published() says what it was computed for).
  void resultShown(int generation);
  /// A user-facing line for the Messages dock.
  void message(const QString& text);

private:
  struct Running {
    QPointer<Job> job;
    int generation = 0;
    LiveGrid grid = LiveGrid::Preview;
    Backend requested = Backend::Auto;
    bool superseded = false;  ///< cancelled by a newer edit (not by the user)
  };
  struct CachedBeam {
    int revision = -1;
    std::shared_ptr<const Volume<float>> dose;
  };

  void onEdited(int beam);
  void onSceneChanged();
  void onEditsMerged();
  void onSettled();
  void request(LiveGrid grid);
  void startPending();
  bool buildInput(LiveGrid grid, LiveDoseInput& in, LivePublication& what);
  void onJobFinished(Job* job, const std::shared_ptr<LiveDoseOutput>& out, Running run, int epoch,
                     const LivePublication& what);
  void publish(LiveDoseOutput& out, LivePublication what);
  void applySpots(const LiveDoseOutput& out);
  bool usePreview(const DoseRunOptions& o) const;
  double fullSpacingMm(const DoseRunOptions& o) const;
  void setStatus(const QString& text);
  void dropCaches();

  PlanController* controller_;
  std::function<DoseRunOptions()> options_;
  QAction* action_ = nullptr;
  bool on_ = false;
  int generation_ = 0;
  LiveModality modality_ = LiveModality::Photon;
  std::vector<int> revisions_;  ///< per beam index: edits since the cache epoch began
  std::map<LiveGrid, std::map<int, CachedBeam>> cache_;
  int cacheEpoch_ = 0;
  std::string cacheSignature_;  ///< engine settings the cache was made with
  std::shared_ptr<const Volume<float>> spr_;
  Running running_;
  bool pending_ = false;
  LiveGrid pendingGrid_ = LiveGrid::Preview;
  LivePublication published_;
  int liveId_ = -1;
  double previewMm_ = 0;
  mutable int gpu_ = -1;     ///< a usable GPU: 1, none: 0, not asked yet: -1
  double lastFullMs_ = -1;   ///< last full-grid run on the GPU [ms]; -1: none yet
  bool cpuFallback_ = false;
  bool applying_ = false;    ///< writing regenerated spots into the plan: not an edit
  int runNumber_ = 0;
  QString status_;
  QStringList lastNotes_;  ///< the last result's engine notes, shown once
  QTimer merge_, settle_;
  LiveEngineProbe probe_;
};

}  // namespace penumbra::gui
