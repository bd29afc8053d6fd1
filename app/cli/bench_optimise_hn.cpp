// "Optimise" on hn-2field end to end (issue 14, item 2's second goal and item 5): from the click
// to the optimised dose in host memory - the dose-deposition matrix built by the proton engine,
// the SpMV engine made from it, projected L-BFGS to convergence (at most 100 iterations), the
// optimised weights and dose downloaded. The case is `bench proton`'s hn-2field (11 300 spots,
// 200 x 200 x 150 voxels of 1 mm, cut-off 1e-4, ~1.5e9 entries); objective: 2 Gy uniform to the
// 30-mm target sphere with min/max terms at 97 % / 104 %, and an overdose limit of 1.6 Gy on
// every other voxel inside the head.
//
// Two GPU paths, same optimiser: "device-resident" (D stays on the GPU: transposed and laid out
// there, nothing but the row offsets crosses the bus) and "via host" (D downloaded, transposed
// and planned on the host, uploaded: the path before this change). The CPU runs the same
// pipeline on its backends (its D build alone took 57.7 s on 16 cores of the H200 machine).
// Whole times are wall clock around each stage; CUDA: one warm-up (per-energy tables), then
// `reps` runs, the median reported.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>

#include "bench_table.hpp"
#include "core/device.hpp"
#include "optimise/optimise.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"

namespace penumbra::cli {

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

struct HnProblem {
  proton::ProtonDoseRequest request;
  optimise::PlanObjective objective;
  std::vector<double> weights;
};

HnProblem hnProblem() {
  proton::ProtonPhantomCase pc = proton::makeHeadNeckCase(1.0);
  HnProblem p;
  const Grid& g = pc.doseGrid;
  Mask target(g, 0), head(g, 0);
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = 0; i < g.dims[0]; ++i) {
        const Vec3 x = g.indexToWorld(Vec3{double(i), double(j), double(k)});
        if (norm(x - pc.targetCenter) <= pc.targetRadiusMm) target.at(i, j, k) = 1;
        else if (pc.ct.at(i, j, k) > -500) head.at(i, j, k) = 1;
      }
  const double rx = 2.0;
  p.objective = optimise::PlanObjective(
      {optimise::targetObjective("Target", optimise::voxelsOfMask(target), rx, 1.0, 0.97 * rx, 20.0,
                                 1.04 * rx, 20.0),
       optimise::organAtRiskObjective("Head-Target", optimise::voxelsOfMask(head), 0.8 * rx, 1.0)});
  p.weights = optimise::planWeights(pc.beams);
  p.request.ct = std::make_shared<const CtVolume>(std::move(pc.ct));
  p.request.beams = std::move(pc.beams);
  p.request.doseGrid = g;
  p.request.params.computeDoseMatrix = true;
  return p;
}

struct Stages {
  double buildMs = 0, engineMs = 0, optimiseMs = 0, totalMs = 0;
  std::string engineStages;  ///< the SpMV engine's stages, "name ms, ..."
  double dBuildMs = 0;       ///< the proton engine's own time for D
  optimise::OptimiseResult result;
  std::int64_t nnz = 0;
  std::string device;
};

/// One "Optimise": D, the SpMV engine, the optimiser. `onDevice`: D stays on the GPU.
Stages optimiseOnce(const HnProblem& p, Backend backend, bool onDevice, int maxIterations) {
  Stages s;
  const auto t0 = Clock::now();
  proton::ProtonDoseRequest req = p.request;
  req.backend = backend;
  req.params.doseMatrixOnDevice = onDevice;
  proton::ProtonDoseResult built = proton::computeProtonDose(req);
  s.buildMs = msSince(t0);
  for (const KernelProfile& k : built.profiles)
    if (k.kernel == "dose_matrix_build") s.dBuildMs = k.medianMs;
  const auto t1 = Clock::now();
  spmv::SpmvOptions so;
  so.backend = backend;
  std::unique_ptr<spmv::SpmvEngine> engine;
  if (onDevice) {
    s.nnz = built.deviceMatrix->nnz;
    engine = std::make_unique<spmv::SpmvEngine>(std::move(*built.deviceMatrix), so);
  } else {
    s.nnz = built.matrix->nnz();
    engine = std::make_unique<spmv::SpmvEngine>(std::move(static_cast<spmv::HalfCsr&>(*built.matrix)), so);
  }
  built = {};
  s.engineMs = msSince(t1);
  for (const KernelProfile& k : engine->buildProfiles())
    s.engineStages += (s.engineStages.empty() ? "" : ", ") + k.kernel + " " + fmt("%.1f ms", k.medianMs);
  const auto t2 = Clock::now();
  optimise::OptimiserOptions opt;
  opt.maxIterations = maxIterations;
  s.result = optimise::optimiseSpotWeights(*engine, p.objective, p.weights, opt);
  s.optimiseMs = msSince(t2);
  s.totalMs = msSince(t0);
  s.device = engine->deviceName();
  return s;
}

BenchRow stageRow(const char* kernel, const char* variant, const std::string& device, Backend b,
                  const std::vector<double>& ms, std::string rate, std::string note) {
  return BenchRow{"optimise", "hn-2field", timedProfile(kernel, variant, b, device, ms), std::move(rate),
                  std::move(note)};
}

}  // namespace

std::vector<BenchRow> benchOptimiseHeadNeck(int reps) {
  std::vector<BenchRow> rows;
  std::cout << "optimise: hn-2field, Optimise from the click to the optimised dose ...\n" << std::flush;
  const HnProblem p = hnProblem();
  constexpr int kIterations = 100;
  struct Way {
    Backend backend;
    bool onDevice;
    const char* variant;
  };
  std::vector<Way> ways;
  if (!queryCudaDevices().empty()) {
    ways.push_back({Backend::Cuda, true, "device-resident"});
    ways.push_back({Backend::Cuda, false, "via host"});
  }
  // The CPU pipeline takes minutes at 1 mm; PENUMBRA_BENCH_HN_CPU=0 leaves it out.
  const char* cpuEnv = std::getenv("PENUMBRA_BENCH_HN_CPU");
  if (!cpuEnv || std::string(cpuEnv) != "0") ways.push_back({Backend::Cpu, false, "cpu"});
  double cpuTotal = 0;
  std::vector<BenchRow> cudaTotals;
  for (const Way& w : ways) {
    const bool gpu = w.backend == Backend::Cuda;
    const int warmups = gpu && w.onDevice ? 1 : 0, runs = gpu ? std::max(1, reps) : 1;
    std::vector<double> build, engine, opt, total, perIt;
    Stages last;
    for (int r = 0; r < warmups + runs; ++r) {
      last = optimiseOnce(p, w.backend, w.onDevice, kIterations);
      if (r < warmups) continue;
      build.push_back(last.buildMs);
      engine.push_back(last.engineMs);
      opt.push_back(last.optimiseMs);
      total.push_back(last.totalMs);
      if (last.result.iterations > 0) perIt.push_back(last.optimiseMs / last.result.iterations);
    }
    const std::string its = std::to_string(last.result.iterations) + " it, " +
                            optimise::toString(last.result.state) + ", f " + fmt("%.9g", last.result.objective);
    rows.push_back(stageRow("optimise_dose_matrix", w.variant, last.device, w.backend, build,
                            fmt("%.3g entries", double(last.nnz)),
                            "proton engine, D and the dose; D alone " + fmt("%.1f ms", last.dBuildMs)));
    rows.push_back(stageRow("optimise_spmv_engine", w.variant, last.device, w.backend, engine, "",
                            w.onDevice ? "D^T and both layouts on the GPU: " + last.engineStages
                                       : std::string("D^T and layouts on the host, upload")));
    // Setup (objective and vectors on the device, the first f) is the time to iteration 0.
    const auto& h = last.result.history;
    const double setupMs = h.empty() ? 0 : 1e3 * h.front().elapsedSeconds;
    const double loopMsPerIt = h.size() > 1 ? 1e3 * (h.back().elapsedSeconds - h.front().elapsedSeconds) / double(h.size() - 1) : 0;
    rows.push_back(stageRow("optimise_iterations", w.variant, last.device, w.backend, opt,
                            fmt("%.2f ms/it", medianOf(perIt)),
                            its + ", setup " + fmt("%.1f ms", setupMs) + ", loop " + fmt("%.2f ms/it", loopMsPerIt)));
    BenchRow t = stageRow("optimise_click_to_dose", w.variant, last.device, w.backend, total,
                          its, gpu && w.onDevice ? "goal (issue 14): <= 1 s on the H200" : "");
    if (gpu) cudaTotals.push_back(t);
    else cpuTotal = t.profile.medianMs;
    rows.push_back(t);
  }
  if (cpuTotal > 0)
    for (BenchRow& r : rows)
      if (r.profile.kernel == "optimise_click_to_dose" && r.profile.backend == "cuda" && r.profile.medianMs > 0)
        r.speedupVsCpu = cpuTotal / r.profile.medianMs;
  return rows;
}

}  // namespace penumbra::cli
