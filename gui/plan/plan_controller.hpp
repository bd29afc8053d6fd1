#pragma once
/// Planning logic behind the panels: places beams on a target, runs spot generation and dose
/// computation as jobs (JobRunner), turns results into PlanModel spots and DoseSetStore dose
/// sets on the GUI thread, shows job errors in a dialog (a GPU out-of-memory error offers to
/// run again on the CPU), and normalises a computed plan to the prescription.
///
/// Photon beams (photon_plan_controller.cpp): jaws or a conformal aperture around a target
/// (photon::conformalAperture, made on the GUI thread: a projection of the mask), the target's
/// outline for the BEV, and the collapsed-cone dose as a job. A plan with both modalities gets
/// one dose set per modality, not their sum: proton spot weights (1e9 protons) and photon MU
/// are independent scales, so each modality's dose is looked at, normalised (which scales that
/// modality's weights or MU) and exported on its own; a sum is only meaningful once both are
/// normalised to their share of the prescription, which needs a plan-sum dose set this model
/// does not have yet.
///
/// Dose grid: with doseGridMm > 0 an axis-aligned LPS grid of that spacing covering the CT,
/// else the engine's default (the CT grid). Either way the dose lives in patient coordinates
/// and the displays map it onto the display grid (dose_slice.hpp).
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <QObject>
#include <QPointer>
#include <QString>

#include "core/device.hpp"
#include "core/structure.hpp"
#include "photon/photon_dose.hpp"
#include "proton/spot_generation.hpp"
#include "raytrace/dda_traversal.hpp"

class QWidget;

namespace penumbra::gui {

class DoseSetStore;
class Job;
class JobRunner;
class PlanModel;
class ViewState;

/// Collapsed-cone settings of a photon dose run (photon::PhotonDoseParameters).
struct PhotonRunOptions {
  int polarCones = 8;  ///< must divide 48
  int azimuthalCones = 12;
  photon::DepositStrategy deposit = photon::DepositStrategy::AtomicFree;
};

struct DoseRunOptions {
  Backend backend = Backend::Auto;
  double doseGridMm = 0;  ///< 0: the CT grid
  DdaVariant variant = DdaVariant::BranchFree;
  int cpuThreads = 0;  ///< 0: all cores
  PhotonRunOptions photon;
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
  /// The views' state (open patient, structures), for panels that follow the scene.
  const ViewState* viewState() const { return state_; }

  /// Adds a beam aimed at the centroid of structure `targetName` (or the CT centre when it is
  /// not found); returns its index, -1 without a patient.
  int addBeamOnTarget(const QString& targetName, double gantryDeg, double couchDeg = 0);
  /// Centroid (LPS mm) of a structure's mask; false when absent or empty.
  bool targetCentroid(const QString& targetName, Vec3& lps) const;

  /// Adds a photon beam aimed at the centroid of `targetName` (or the CT centre): SAD 1000 mm,
  /// a symmetric `fieldSizeMm` square field, 100 MU; returns its index, -1 without a patient.
  int addPhotonBeamOnTarget(const QString& targetName, double gantryDeg, double couchDeg = 0,
                            double collimatorDeg = 0, double fieldSizeMm = 100);
  /// Shapes photon beam `beam` to `targetName` grown by `marginMm` (photon::conformalAperture);
  /// the jaws are opened or closed to the aperture's bounding box (rounded outwards to 1 mm).
  /// False (reason in message(), beam unchanged) without such a structure or when it does not
  /// project onto the isocentre plane.
  bool setConformalAperture(int beam, const QString& targetName, double marginMm);
  /// Removes photon beam `beam`'s aperture: the jaws alone shape the field.
  void setOpenField(int beam);

  /// Where the photon dose job gets its beam model; default photon::defaultPhotonModel()
  /// (throws when the photon data folder is missing). Tests replace it.
  using PhotonModelProvider = std::function<std::shared_ptr<const photon::PhotonBeamModel>()>;
  void setPhotonModelProvider(PhotonModelProvider provider) { photonModel_ = std::move(provider); }
  const PhotonModelProvider& photonModelProvider() const { return photonModel_; }

  /// Generates layers and spots for beam `beam` on `targetName` as a job; null when it cannot
  /// start (no patient, no such beam or target: the reason goes to message()).
  Job* generateSpots(int beam, const QString& targetName, const proton::SpotGenerationOptions& options);
  /// Computes the plan's dose: a proton job when a proton beam has spots and a photon job when
  /// there are photon beams; on success each adds its dose set and makes it current. Returns
  /// the first job submitted (null when nothing could start; reason in message()).
  Job* computeDose(const DoseRunOptions& options);
  /// The proton beams' dose alone (null without spots).
  Job* computeProtonDose(const DoseRunOptions& options);
  /// The photon beams' dose alone, by the collapsed-cone engine (null without photon beams).
  Job* computePhotonDose(const DoseRunOptions& options);
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
  void onDoseFailed(Job* job, const DoseRunOptions& options, bool photons = false);
  const Structure* findStructure(const QString& name) const;
  /// Recomputes a photon beam's aperture (when conformal) and target outline for its current
  /// geometry (PlanModel::photonShapesStale).
  void updatePhotonShapes(int beam);
  /// The photon beams' MU when dose set `id` was computed (normalisation scales the plan's MU
  /// only while they are unchanged).
  std::map<int, std::vector<photon::PhotonBeam>> photonSnapshots_;
  PhotonModelProvider photonModel_;

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

/// Same beams (by name) with the same MU.
bool sameMonitorUnits(const std::vector<photon::PhotonBeam>& a, const std::vector<photon::PhotonBeam>& b);

/// photon::defaultPhotonModel as a provider.
PlanController::PhotonModelProvider defaultPhotonModelProvider();

/// How a photon dose job's error message starts when the beam model could not be loaded (the
/// photon data folder is missing or incomplete): the error dialog then says where it looks.
inline constexpr const char* kPhotonModelFailure = "Photon beam model: ";

}  // namespace penumbra::gui
