#include "gui/plan/live_dose_job.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include <QWidget>  // plan_controller.hpp's QPointer<QWidget>

#include "compare/compare.hpp"
#include "core/patient.hpp"
#include "core/voxel_memory.hpp"
#include "gui/plan/plan_controller.hpp"  // kPhotonModelFailure
#include "proton/proton_dose.hpp"

namespace penumbra::gui {

void prepareProtonTables(const std::vector<proton::ProtonBeam>& beams, const JobControl& jc) {
  auto machine = proton::ProtonMachine::generic();
  std::vector<double> energies;
  for (const auto& b : beams)
    for (const auto& l : b.layers) energies.push_back(l.energyMeV);
  const int threads = std::max(1, int(std::thread::hardware_concurrency()));
  for (std::size_t e = 0; e < energies.size(); e += std::size_t(threads)) {
    jc.checkCancel();
    jc.report(0.0, "proton dose: depth-dose tables");
    const auto end = energies.begin() + std::ptrdiff_t(std::min(energies.size(), e + std::size_t(threads)));
    machine->prepare({energies.begin() + std::ptrdiff_t(e), end}, threads);
  }
}

namespace {

bool sameGrid(const Grid& a, const Grid& b) {
  for (int d = 0; d < 3; ++d)
    if (a.dims[d] != b.dims[d] || std::abs(a.spacing[d] - b.spacing[d]) > 1e-9 ||
        std::abs(a.origin[d] - b.origin[d]) > 1e-6)
      return false;
  return true;
}

void addInto(Volume<float>& sum, const Volume<float>& beam) {
  if (sum.empty()) {
    sum = beam;
    return;
  }
  if (!sameGrid(sum.grid, beam.grid))
    PENUMBRA_THROW(Internal, "live dose: the beams' doses are on different grids");
  for (std::size_t i = 0; i < sum.data.size(); ++i) sum.data[i] += beam.data[i];
}

template <typename Result>
void keep(LiveDoseOutput& out, Result& r) {
  out.backend = r.backend;
  out.device = r.device;
  for (auto& p : r.profiles) out.profiles.push_back(std::move(p));
  for (auto& m : r.messages) out.messages.push_back(std::move(m));
}

std::shared_ptr<const photon::PhotonBeamModel> loadPhotonModel(const LiveDoseInput& in) {
  // The same wording as the Compute dose job, so the message says where the data are looked for.
  try {
    if (in.photonModel)
      if (auto m = in.photonModel()) return m;
  } catch (const CancelledError&) {
    throw;
  } catch (const Error& e) {
    throw Error(e.code(), kPhotonModelFailure + e.message());
  } catch (const std::exception& e) {
    throw Error(ErrorCode::Io, kPhotonModelFailure + std::string(e.what()));
  }
  throw Error(ErrorCode::Internal, kPhotonModelFailure + std::string("none"));
}

/// Runs one beam through its engine (the step the controller caches).
Volume<float> beamDose(const LiveDoseInput& in, LiveBeamTask& task, const JobControl& jc, LiveDoseOutput& out,
                       std::shared_ptr<const photon::PhotonBeamModel>& model) {
  if (in.modality == LiveModality::Photon) {
    if (!model) model = loadPhotonModel(in);
    photon::PhotonDoseRequest r;
    // Aliasing pointer owned by the patient: the same owner every run, so the CUDA backend's
    // density cache (keyed by the volume's identity) survives between edits.
    r.ct = std::shared_ptr<const CtVolume>(in.patient, &in.patient->ct);
    r.beams = {task.photon};
    r.doseGrid = in.doseGrid;
    r.backend = in.backend;
    r.params = in.photonParams;
    r.model = model;
    if (in.probe) in.probe(in.backend, in.modality);
#ifdef PENUMBRA_HAVE_PHOTON_DOSE
    photon::PhotonDoseResult res = photon::computePhotonDose(r, jc);
    keep(out, res);
    return std::move(res.dose);
#else
    PENUMBRA_THROW(Unsupported, "this build of Penumbra has no photon dose engine (penumbra_photon_dose)");
#endif
  }
  proton::ProtonDoseRequest r;
  r.spr = out.spr;
  r.beams = {task.proton};
  r.doseGrid = in.doseGrid;
  r.backend = in.backend;
  r.variant = in.variant;
  r.params.cpuThreads = in.cpuThreads;
  prepareProtonTables(r.beams, jc);
  if (in.probe) in.probe(in.backend, in.modality);
  proton::ProtonDoseResult res = proton::computeProtonDose(r, jc);
  keep(out, res);
  return std::move(res.dose);
}

}  // namespace

void releaseEngineGpuCaches() {
#ifdef PENUMBRA_HAVE_PHOTON_DOSE
  photon::releasePhotonGpuCache();
#endif
  compare::releaseCompareGpuCache();
  proton::releaseProtonGpuCache();  // SPR, tables, per-beam WEPL and BEV dose (proton_dose.hpp)
  // The idle result blocks the engines kept page-locked for the next result (the caches above
  // held the futures that made them; the patient's doses still in use stay where they are).
  voxel_memory::trim(0);
}

LiveDoseOutput runLiveDose(const LiveDoseInput& input, const JobControl& jc) {
  const auto started = std::chrono::steady_clock::now();
  LiveDoseOutput out;
  LiveDoseInput in = input;  // the tasks get the regenerated spots
  if (in.modality == LiveModality::Proton) {
    out.spr = in.spr;
    const bool needSpr = std::any_of(in.beams.begin(), in.beams.end(), [](const LiveBeamTask& t) { return !t.cached; });
    if (!out.spr && needSpr) {
      jc.report(0.0, "live dose: stopping-power ratios");
      out.spr = std::make_shared<const Volume<float>>(proton::stoppingPowerRatio(in.patient->ct));
    }
  }
  std::shared_ptr<const photon::PhotonBeamModel> model;
  const double n = double(std::max<std::size_t>(1, in.beams.size()));
  for (std::size_t b = 0; b < in.beams.size(); ++b) {
    jc.checkCancel();
    LiveBeamTask& task = in.beams[b];
    if (task.cached) {
      addInto(out.dose, *task.cached);
      if (in.modality == LiveModality::Proton) out.protonBeams.push_back(task.proton);
      continue;
    }
    jc.report(double(b) / n, "live dose: " + task.name);
    if (in.modality == LiveModality::Proton && task.proton.layers.empty()) {
      if (!task.target) {
        out.messages.push_back(task.name + ": no spots and no target to place them on: no dose");
        continue;
      }
      const proton::BeamPlacement placement{task.proton.name, task.proton.gantryDeg, task.proton.couchDeg,
                                            task.proton.isocenter, task.proton.virtualSourceDistanceMm};
      proton::SpotGenerationResult spots =
          proton::generateSpots(*out.spr, *task.target, placement, task.spotOptions, nullptr, jc);
      task.proton.layers = spots.beam.layers;
      out.spots.push_back({task.index, task.revision, std::move(spots)});
    }
    auto dose = std::make_shared<const Volume<float>>(beamDose(in, task, jc, out, model));
    addInto(out.dose, *dose);
    out.computed.push_back({task.index, task.revision, std::move(dose)});
    if (in.modality == LiveModality::Proton) out.protonBeams.push_back(task.proton);
  }
  jc.checkCancel();
  jc.report(1.0, "live dose: done");
  out.wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  return out;
}

}  // namespace penumbra::gui
