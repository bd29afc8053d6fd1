// `penumbra-cli bench interactive` (issue 15, item 2): a scripted editing session replayed on
// the dose engines, as the live dose of the GUI would run it, without Qt. Every edit changes the
// plan, builds a new request and calls the engine until the dose is in host memory; the
// latency of that is what a planner waits for. Edits run back to back (a GUI that coalesces
// slider events starts the next dose when the previous one is ready).
//
// Sessions (100 edits on CUDA; the CPU replays the first --reps edits, default 5, since one CPU
// dose takes seconds):
//  - proton "hn-2field" (bench proton's case, 1 mm grid, CT input): edits cycle through gantry
//    +2 deg of one beam, the weights of one energy layer of one beam (x 1.05 or / 1.05), the
//    isocentre of both beams +1 mm (x), weights again: 25 gantry, 25 isocentre, 50 weight edits;
//  - photon "water-256^3" (bench cccs's water cube, 256^3 voxels of 2 mm, one 10 x 10 field):
//    gantry +2 deg, isocentre +1 mm (x), jaw X2 +2 mm or -2 mm in turn: 34 / 33 / 33, with the
//    atomic and the atomic-free deposit.
// Before each session the engine's GPU cache (and the proton host cache) is released and one
// dose of the unedited plan is computed: that first dose is reported separately ("cold"; the
// CUDA context is already up). Rows: p50 as median_ms, the minimum as min_ms, p95 in the rate
// column, maximum and edit count in the note, per edit kind and for all edits (variant
// "<engine or deposit>: <kind>"; the DDA variant is DDA-nc everywhere).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>

#include "bench_table.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "photon/photon_dose.hpp"
#include "proton/prepare_cache.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"

namespace penumbra::cli {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kGpuEdits = 100;

double msSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// Nearest-rank percentile (q in (0, 1]) of a non-empty list.
double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const std::size_t rank = std::size_t(std::ceil(q * double(v.size())));
  return v[std::min(v.size(), std::max<std::size_t>(rank, 1)) - 1];
}

/// The latencies of one session, per edit kind.
struct Session {
  std::string caseName, backend, device, variant;
  double coldMs = 0;
  std::vector<std::string> kinds;  ///< in script order
  std::map<std::string, std::vector<double>> ms;
  std::map<std::string, std::vector<double>> kernelMs;  ///< CUDA: kernel time of each edit
  /// CUDA: every profile the engine reports per edit (kernels, copies, host stages, device
  /// span), to see where an edit's time goes.
  std::map<std::string, std::vector<double>> stageMs;
  std::string cacheNote;  ///< what the cache served, summed over the session
};

void addRows(const Session& s, const std::string& extraNote, std::vector<BenchRow>& rows) {
  auto profile = [&](const std::string& kernel, const std::string& variant, double median, double min,
                     int reps) {
    KernelProfile p;
    p.kernel = kernel;
    p.variant = variant;
    p.backend = s.backend;
    p.device = s.device;
    p.repetitions = reps;
    p.medianMs = median;
    p.minMs = min;
    return p;
  };
  rows.push_back({"interactive", s.caseName, profile("first_dose_cold", s.variant, s.coldMs, s.coldMs, 1),
                  "", s.backend == "cuda"
                          ? "unedited plan after the GPU cache was released (CUDA context up)"
                          : "unedited plan, before the edits"});
  std::vector<double> all;
  std::vector<std::string> order;
  for (const std::string& k : s.kinds)
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
  order.push_back("all");
  for (const std::string& kind : order) {
    const bool total = kind == "all";
    std::vector<double> v;
    if (total) {
      for (const auto& [k, ms] : s.ms) v.insert(v.end(), ms.begin(), ms.end());
    } else {
      v = s.ms.at(kind);
    }
    const double p50 = percentile(v, 0.5), p95 = percentile(v, 0.95), mx = percentile(v, 1.0);
    std::string note = fmt("max %.2f ms, ", mx) + std::to_string(v.size()) + " edits";
    const auto km = s.kernelMs.find(kind);
    if (km != s.kernelMs.end() && !km->second.empty())
      note += fmt("; kernels p50 %.2f ms", percentile(km->second, 0.5));
    if (total && !s.stageMs.empty()) {
      note += "; p50 of";
      for (const auto& [stage, ms] : s.stageMs) note += " " + stage + fmt(" %.2f", percentile(ms, 0.5));
      note += " ms";
    }
    if (total) {
      note += "; " + extraNote;
      if (!s.cacheNote.empty()) note += "; " + s.cacheNote;
      if (s.backend == "cuda")
        note += std::string(p95 <= 33 ? "; p95 <= 33 ms goal met" : "; p95 above the 33 ms goal") +
                (p95 <= 16 ? ", stretch 16 ms met" : ", stretch 16 ms not met");
    }
    BenchRow row{"interactive", s.caseName,
                 profile("edit_to_dose", s.variant + ": " + kind, p50,
                         *std::min_element(v.begin(), v.end()), int(v.size())),
                 fmt("p95 %.2f ms", p95), note};
    std::cout << "interactive: " << s.caseName << " " << s.backend << " " << row.profile.variant
              << ": p50 " << fmt("%.2f", p50) << fmt(" p95 %.2f", p95) << fmt(" max %.2f ms", mx)
              << std::endl;
    rows.push_back(row);
  }
}

double kernelSum(const std::vector<KernelProfile>& profiles) {
  double ms = 0;
  for (const KernelProfile& p : profiles)
    if (p.backend == "cuda" && p.registersPerThread > 0) ms += p.medianMs;  // kernels, not copies
  return ms;
}

// ---- proton hn-2field ------------------------------------------------------------------------

/// Applies edit k of the script to the plan; returns its kind.
std::string protonEdit(std::vector<proton::ProtonBeam>& beams, int k) {
  proton::ProtonBeam& b = beams[std::size_t(k / 4) % beams.size()];
  switch (k % 4) {
    case 0:
      b.gantryDeg += 2;
      return "gantry";
    case 2:
      for (proton::ProtonBeam& each : beams) each.isocenter.x += 1.0;
      return "isocentre";
    default: {
      const double f = (k / 2) % 2 ? 1.0 / 1.05 : 1.05;
      for (proton::ProtonSpot& s : b.layers[std::size_t(k * 7) % b.layers.size()].spots) s.weight *= f;
      return "weights";
    }
  }
}

void protonSessions(int cpuEdits, bool gpu, std::vector<BenchRow>& rows) {
  using namespace penumbra::proton;
  const ProtonPhantomCase pc = makeHeadNeckCase(1.0);
  ProtonDoseRequest base;
  base.ct = std::make_shared<const CtVolume>(pc.ct);
  base.doseGrid = pc.doseGrid;
  base.variant = DdaVariant::BranchFree;
  std::vector<double> energies;
  for (const auto& b : pc.beams)
    for (const auto& l : b.layers) energies.push_back(l.energyMeV);
  ProtonMachine::generic()->prepare(energies);  // machine data, built once: not an edit
  std::cout << "interactive: proton hn-2field, " << totalSpotCount(pc.beams) << " spots, dose grid "
            << pc.doseGrid.voxelCount() << " voxels" << std::endl;
  for (Backend backend : {Backend::Cuda, Backend::Cpu}) {
    if (backend == Backend::Cuda && !gpu) continue;
    const int edits = backend == Backend::Cuda ? kGpuEdits : cpuEdits;
    Session s;
    s.caseName = "hn-2field";
    s.variant = "proton";
    base.backend = backend;
    if (backend == Backend::Cuda) {  // context and modules up, on another case
      ProtonDoseRequest warm = base;
      const ProtonPhantomCase small = makeRandomPhantomCase(1, 33);
      warm.ct = std::make_shared<const CtVolume>(small.ct);
      warm.beams = small.beams;
      warm.doseGrid = small.doseGrid;
      (void)computeProtonDose(warm);
    }
    releaseProtonGpuCache();
    detail::clearBeamCache();
    std::vector<ProtonBeam> plan = pc.beams;
    ProtonDoseRequest req = base;
    req.beams = plan;
    auto t0 = Clock::now();
    const ProtonDoseResult cold = computeProtonDose(req);
    s.coldMs = msSince(t0);
    s.backend = cold.backend == Backend::Cuda ? "cuda" : "cpu";
    s.device = cold.device;
    int weplBeams = 0, bevBeams = 0, beams = 0;
    for (int k = 0; k < edits; ++k) {
      t0 = Clock::now();
      const std::string kind = protonEdit(plan, k);
      ProtonDoseRequest edited = base;  // the request as a GUI would build it: a copy of the plan
      edited.beams = plan;
      const ProtonDoseResult res = computeProtonDose(edited);
      const double ms = msSince(t0);
      s.kinds.push_back(kind);
      s.ms[kind].push_back(ms);
      if (res.backend == Backend::Cuda) s.kernelMs[kind].push_back(kernelSum(res.profiles));
      weplBeams += res.weplCachedBeams;
      bevBeams += res.bevDoseCachedBeams;
      beams += int(plan.size());
    }
    if (backend == Backend::Cuda)
      s.cacheNote = std::to_string(weplBeams) + " of " + std::to_string(beams) +
                    " beam doses reused the WEPL, " + std::to_string(bevBeams) +
                    " the BEV dose";
    addRows(s,
            backend == Backend::Cuda ? std::string("25 gantry, 25 isocentre, 50 weight edits")
                                     : "CPU: the first " + std::to_string(edits) +
                                           " edits of the script only (a CPU dose takes seconds)",
            rows);
  }
  releaseProtonGpuCache();
}

// ---- photon water cube 256^3 ------------------------------------------------------------------

std::string photonEdit(photon::PhotonBeam& b, int k) {
  switch (k % 3) {
    case 0:
      b.gantryDeg += 2;
      return "gantry";
    case 1:
      b.isocenter.x += 1.0;
      return "isocentre";
    default:
      b.x2Mm += (k / 3) % 2 ? -2.0 : 2.0;
      return "jaw";
  }
}

void photonSessions(int cpuEdits, bool gpu, std::vector<BenchRow>& rows) {
  using namespace penumbra::photon;
  std::shared_ptr<const PhotonBeamModel> model;
  try {
    std::cout << "interactive: loading and calibrating the 6 MV model" << std::endl;
    model = defaultPhotonModel();  // once per process (a CPU dose run); not an edit
  } catch (const Error& e) {
    std::cout << "interactive: photon sessions skipped: " << e.message() << std::endl;
    return;
  }
  Grid g;
  g.dims = {256, 256, 256};
  g.spacing = {2, 2, 2};
  g.origin = {-255, -255, -255};
  PhotonDoseRequest base;
  base.density = std::make_shared<const Volume<float>>(g, 1.0f);
  base.model = model;
  PhotonBeam field;
  field.name = "AP 10x10";
  field.monitorUnits = 100;
  struct Config {
    Backend backend;
    DepositStrategy deposit;
    const char* variant;
  };
  const Config configs[] = {{Backend::Cuda, DepositStrategy::Atomic, "atomic"},
                            {Backend::Cuda, DepositStrategy::AtomicFree, "atomic-free"},
                            {Backend::Cpu, DepositStrategy::Atomic, "atomic"}};
  for (const Config& c : configs) {
    if (c.backend == Backend::Cuda && !gpu) continue;
    const int edits = c.backend == Backend::Cuda ? kGpuEdits : cpuEdits;
    Session s;
    s.caseName = "water-256^3";
    s.variant = c.variant;
    base.backend = c.backend;
    base.params.variant = DdaVariant::BranchFree;
    base.params.deposit = c.deposit;
    releasePhotonGpuCache();
    PhotonBeam beam = field;
    PhotonDoseRequest req = base;
    req.beams = {beam};
    auto t0 = Clock::now();
    const PhotonDoseResult cold = computePhotonDose(req);
    s.coldMs = msSince(t0);
    s.backend = cold.backend == Backend::Cuda ? "cuda" : "cpu";
    s.device = cold.device;
    int cached = 0;
    for (int k = 0; k < edits; ++k) {
      t0 = Clock::now();
      const std::string kind = photonEdit(beam, k);
      PhotonDoseRequest edited = base;
      edited.beams = {beam};
      const PhotonDoseResult res = computePhotonDose(edited);
      const double ms = msSince(t0);
      s.kinds.push_back(kind);
      s.ms[kind].push_back(ms);
      if (res.backend == Backend::Cuda) {
        s.kernelMs[kind].push_back(kernelSum(res.profiles));
        for (const KernelProfile& p : res.profiles) s.stageMs[p.kernel].push_back(p.medianMs);
      }
      cached += res.densityCached ? 1 : 0;
    }
    if (c.backend == Backend::Cuda)
      s.cacheNote = std::to_string(cached) + " of " + std::to_string(edits) + " density cached";
    addRows(s,
            c.backend == Backend::Cuda ? std::string("34 gantry, 33 isocentre, 33 jaw edits")
                                       : "CPU: the first " + std::to_string(edits) +
                                             " edits of the script only (a CPU dose takes seconds)",
            rows);
  }
  releasePhotonGpuCache();
}

}  // namespace

/// `penumbra-cli bench interactive [--reps R]`: R = the CPU's edits per session (default 5).
std::vector<BenchRow> benchInteractive(int cpuEdits) {
  std::vector<BenchRow> rows;
  std::string why;
  const bool gpu = !queryCudaDevices(&why).empty();
  if (!gpu) std::cout << "interactive: CUDA sessions skipped, no usable GPU (" << why << ")" << std::endl;
  // PENUMBRA_INTERACTIVE_CASES=photon (or proton) runs one engine's sessions.
  for (const std::string& c : splitList(std::getenv("PENUMBRA_INTERACTIVE_CASES"), "proton,photon")) {
    if (c == "proton") protonSessions(cpuEdits, gpu, rows);
    else if (c == "photon") photonSessions(cpuEdits, gpu, rows);
    else PENUMBRA_THROW(InvalidArgument,
                        "bench interactive: unknown case '" + c + "' in PENUMBRA_INTERACTIVE_CASES (proton, photon)");
  }
  return rows;
}

}  // namespace penumbra::cli
