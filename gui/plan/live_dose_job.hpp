#pragma once
/// The worker side of the live dose (LiveDoseController): what one live run computes, with no
/// Qt in it, so that it runs on a job's thread and its inputs are plain copies.
///
/// A live run is the dose of one modality's beams on one grid, summed beam by beam: the
/// controller keeps each beam's dose of the last run (per grid), and a run recomputes only the
/// beams edited since (usually the one being dragged) and adds the others from that cache. The
/// engines are linear in the spot weights and MU, so the sum of single-beam runs is the plan's
/// dose to float rounding; recomputing one beam of a three-beam plan costs a third.
///
/// A proton beam whose angles or isocentre changed has lost its spots (PlanModel::setGeometry:
/// they were placed for the old geometry). The run generates them again with the beam's last
/// spot options on its target (proton::generateSpots), so dragging a proton beam's gantry shows
/// the dose of a freshly placed beam; the controller puts those spots into the plan with the
/// dose. Optimised weights are gone either way: the geometry change dropped them.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/kernel_profile.hpp"
#include "core/progress.hpp"
#include "core/volume.hpp"
#include "photon/photon_dose.hpp"
#include "proton/spot_generation.hpp"
#include "raytrace/dda_traversal.hpp"

namespace penumbra {
struct Patient;
}

namespace penumbra::gui {

enum class LiveModality { Proton, Photon };

/// One beam of a live run: either its dose from the cache, or what the engine needs.
struct LiveBeamTask {
  int index = -1;     ///< beam index in the PlanModel when the run was made
  int revision = 0;   ///< the controller's edit count of that beam (cache key)
  std::string name;
  std::shared_ptr<const Volume<float>> cached;  ///< set: no engine run for this beam
  proton::ProtonBeam proton;  ///< protons: geometry, and spots unless regenerated
  photon::PhotonBeam photon;  ///< photons
  /// Protons without spots: generate them on this mask (null: the beam gives no dose).
  const Mask* target = nullptr;
  proton::SpotGenerationOptions spotOptions;
};

/// Called on the worker before each engine call with the backend asked for; it may throw
/// (tests inject a GPU out-of-memory or driver error here). Empty: nothing.
using LiveEngineProbe = std::function<void(Backend requested, LiveModality modality)>;

struct LiveDoseInput {
  LiveModality modality = LiveModality::Photon;
  std::shared_ptr<const Patient> patient;  ///< keeps the CT and the masks alive
  Grid doseGrid;                           ///< empty: the CT grid
  Backend backend = Backend::Auto;
  DdaVariant variant = DdaVariant::BranchFree;
  int cpuThreads = 0;
  photon::PhotonDoseParameters photonParams;
  std::function<std::shared_ptr<const photon::PhotonBeamModel>()> photonModel;
  /// Protons: the patient's stopping-power ratios from an earlier run (null: made here once).
  std::shared_ptr<const Volume<float>> spr;
  std::vector<LiveBeamTask> beams;
  LiveEngineProbe probe;
};

struct LiveBeamDose {
  int index = -1;
  int revision = 0;
  std::shared_ptr<const Volume<float>> dose;
};

struct LiveDoseOutput {
  Volume<float> dose;                 ///< Gy, summed over the beams
  std::vector<LiveBeamDose> computed; ///< beams run by the engine this time (for the cache)
  /// Protons: spots generated for beams that had none (index, revision and result).
  struct Spots {
    int index = -1;
    int revision = 0;
    proton::SpotGenerationResult result;
  };
  std::vector<Spots> spots;
  std::vector<proton::ProtonBeam> protonBeams;  ///< the beams as computed (snapshot)
  std::shared_ptr<const Volume<float>> spr;     ///< protons: for the next run
  Backend backend = Backend::Cpu;  ///< the last engine run's (meaningless when computed is empty)
  std::string device;
  std::vector<KernelProfile> profiles;
  std::vector<std::string> messages;
  double wallMs = 0;  ///< the whole run on the worker
};

/// Builds the generic machine's depth-dose tables of the beams' energies a few at a time, with a
/// cancel check in between: ProtonMachine::prepare() cannot be interrupted and takes up to
/// ~170 ms per energy on one core, which would delay a cancel by seconds.
void prepareProtonTables(const std::vector<proton::ProtonBeam>& beams, const JobControl& job);

/// Gives the engines' GPU caches back (the patient closed): the photon engine's density, work
/// buffers and page-locked host buffer, and the comparison's doses. Safe while a run still
/// holds a cache (that run drops it instead of putting it back). A no-op without CUDA.
void releaseEngineGpuCaches();

/// Runs on a job's worker thread. Throws CancelledError on cancel and Error on engine failure.
LiveDoseOutput runLiveDose(const LiveDoseInput& input, const JobControl& job);

}  // namespace penumbra::gui
