// Spot-weight optimisation benchmark (issue 5, item 5's "iterations per second on the demo
// plan"): the BOXPHANTOM-equivalent demo plan built in code (160^3 CT voxels of 3 mm, water BODY
// 81^3, 63-mm cubic target, gantry 0 and 90, spots from generateSpots with the default 5-mm
// hexagonal grid and 3-mm layers), D from the proton engine (GPU when present) on the 3-mm CT grid (cut-off
// 1e-4), then projected L-BFGS for a fixed number of iterations on the CPU SpMV engine and,
// when a GPU is usable, on the CUDA one. Case name "boxphantom-2field".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "bench_table.hpp"
#include "cli_commands.hpp"
#include "core/device.hpp"
#include "optimise/optimise.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "proton/spot_generation.hpp"

namespace penumbra::cli {

namespace {

struct DemoProblem {
  spmv::HalfCsr matrix;
  optimise::PlanObjective objective;
  std::vector<double> weights;
  double buildSeconds = 0;
};

DemoProblem demoProblem() {
  const auto t0 = std::chrono::steady_clock::now();
  const Grid grid = proton::makeAxisGrid({160, 160, 160}, {3, 3, 3}, {-240, -240, -240});
  CtVolume ct(grid, -1024);
  Mask target(grid, 0), bodyOutside(grid, 0);
  for (int k = 39; k <= 119; ++k)
    for (int j = 39; j <= 119; ++j)
      for (int i = 39; i <= 119; ++i) {
        ct.at(i, j, k) = 0;
        const bool in = i >= 69 && i <= 89 && j >= 69 && j <= 89 && k >= 69 && k <= 89;
        (in ? target : bodyOutside).at(i, j, k) = 1;
      }
  auto spr = std::make_shared<const Volume<float>>(proton::stoppingPowerRatio(ct));
  const Vec3 iso = proton::targetCentroid(target);
  proton::ProtonDoseRequest req;
  req.spr = spr;
  for (double gantry : {0.0, 90.0})
    req.beams.push_back(
        proton::generateSpots(*spr, target, {gantry == 0 ? "G0" : "G90", gantry, 0, iso}).beam);
  req.backend = Backend::Auto;  // D built on the GPU when there is one (issue 14, item 1)
  req.params.computeDoseMatrix = true;
  proton::ProtonDoseResult built = proton::computeProtonDose(req);
  DemoProblem p;
  p.matrix = std::move(static_cast<spmv::HalfCsr&>(*built.matrix));
  const double rx = 2.0;
  p.objective = optimise::PlanObjective(
      {optimise::targetObjective("OuterTarget", optimise::voxelsOfMask(target), rx, 1.0, 0.97 * rx,
                                 20.0, 1.04 * rx, 20.0),
       optimise::organAtRiskObjective("BODY-OuterTarget", optimise::voxelsOfMask(bodyOutside),
                                      0.8 * rx, 1.0)});
  p.weights = optimise::planWeights(req.beams);
  p.buildSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

}  // namespace

std::vector<BenchRow> benchOptimiseHeadNeck(int reps);  // bench_optimise_hn.cpp

std::vector<BenchRow> benchOptimise(int reps) {
  std::vector<BenchRow> rows;
  std::cout << "optimise: building the demo plan's dose matrix on the CPU ...\n" << std::flush;
  const DemoProblem p = demoProblem();
  const double rows_ = double(p.matrix.rows), cols = double(p.matrix.cols),
               nnz = double(p.matrix.nnz());
  std::printf("optimise: D %.0f x %.0f, %.3g non-zeros, built in %.1f s (CT, spots and D, GPU when present)\n", rows_, cols, nnz,
              p.buildSeconds);
  {
    KernelProfile prof;
    prof.kernel = "optimise_dose_matrix";
    prof.variant = "ct, spots and D";
    prof.backend = queryCudaDevices().empty() ? "cpu" : "cuda";
    prof.repetitions = 1;
    prof.medianMs = prof.minMs = 1e3 * p.buildSeconds;
    rows.push_back({"optimise", "boxphantom-2field", prof, fmt("%.3g entries", nnz), "proton engine (GPU when present)"});
  }
  // Fixed work per run: no early stop, so CPU and CUDA run the same iterations.
  optimise::OptimiserOptions options;
  options.maxIterations = 20;
  options.relativeDecrease = 0;
  options.projectedGradient = 0;
  // Three ways to run the same iterations: all on the CPU; the products on the GPU with the loop
  // on the host (the 2026-11-21 path); the whole loop on the GPU.
  struct Way {
    Backend backend;
    bool hostLoop;
    const char* variant;
  };
  std::vector<Way> ways{{Backend::Cpu, true, "spmv-cpu"}};
  if (!queryCudaDevices().empty()) {
    ways.push_back({Backend::Cuda, true, "spmv-cuda, host loop"});
    ways.push_back({Backend::Cuda, false, "gpu loop"});
  }
  std::unique_ptr<spmv::SpmvEngine> cpuEngine, gpuEngine;
  auto engineFor = [&](Backend b) -> const spmv::SpmvEngine& {
    std::unique_ptr<spmv::SpmvEngine>& e = b == Backend::Cuda ? gpuEngine : cpuEngine;
    if (!e) {
      spmv::SpmvOptions so;
      so.backend = b;
      e = std::make_unique<spmv::SpmvEngine>(p.matrix, so);
    }
    return *e;
  };
  double cpuMs = 0;
  for (const Way& way : ways) {
    const spmv::SpmvEngine& engine = engineFor(way.backend);
    options.hostLoop = way.hostLoop;
    std::vector<double> perIterationMs;
    optimise::OptimiseResult last;
    // CUDA: one warm-up run, then `reps` timed runs. CPU: one timed run (~1 s per iteration on
    // 2 cores at 3 mm; its run-to-run spread is small next to the GPU speed-up being measured).
    const bool gpu = way.backend == Backend::Cuda;
    const int warmups = gpu ? 1 : 0, runs = gpu ? std::max(1, reps) : 1;
    for (int r = 0; r < warmups + runs; ++r) {
      last = optimise::optimiseSpotWeights(engine, p.objective, p.weights, options);
      if (r >= warmups && last.iterations > 0)
        perIterationMs.push_back(1e3 * last.elapsedSeconds / last.iterations);
    }
    KernelProfile prof;
    prof.kernel = "projected_lbfgs_iteration";
    prof.variant = way.variant;
    prof.backend = toString(engine.backend());
    prof.device = engine.deviceName();
    prof.repetitions = int(perIterationMs.size());
    prof.medianMs = medianOf(perIterationMs);
    prof.minMs = perIterationMs.empty()
                     ? 0
                     : *std::min_element(perIterationMs.begin(), perIterationMs.end());
    // Products per iteration on the byte model (6 B per nnz, 12 per row, 8 per column;
    // D^T swaps rows and columns) and 2 flops per non-zero.
    const double products =
        double(last.doseProducts + last.gradientProducts) / std::max(1, last.iterations);
    prof.bytes = products * (6 * nnz + 10 * (rows_ + cols));
    prof.flops = products * 2 * nnz;
    BenchRow row{"optimise", "boxphantom-2field", prof,
                 fmt("%.1f it/s", prof.medianMs > 0 ? 1e3 / prof.medianMs : 0),
                 fmt("%.2f products/iteration", products) + ", f " + fmt("%.9g", last.objective) +
                     " after " + std::to_string(last.iterations) + " iterations"};
    if (!gpu)
      cpuMs = prof.medianMs;
    else if (prof.medianMs > 0)
      row.speedupVsCpu = cpuMs / prof.medianMs;
    rows.push_back(row);
  }
  // Time to converge with the default stopping rules (what "Optimise" does), one run each.
  double cpuConvergeMs = 0;
  for (const Way& way : ways) {
    if (way.backend == Backend::Cuda && way.hostLoop) continue;
    optimise::OptimiserOptions defaults;
    defaults.hostLoop = way.hostLoop;
    const optimise::OptimiseResult res =
        optimise::optimiseSpotWeights(engineFor(way.backend), p.objective, p.weights, defaults);
    KernelProfile prof;
    prof.kernel = "optimise_to_convergence";
    prof.variant = way.variant;
    prof.backend = toString(way.backend);
    prof.device = engineFor(way.backend).deviceName();
    prof.repetitions = 1;
    prof.medianMs = prof.minMs = 1e3 * res.elapsedSeconds;
    BenchRow row{"optimise", "boxphantom-2field", prof, std::to_string(res.iterations) + " it",
                 std::string(optimise::toString(res.state)) + ": " + res.stopReason + ", f " +
                     fmt("%.9g", res.objective)};
    if (way.backend == Backend::Cpu)
      cpuConvergeMs = prof.medianMs;
    else if (prof.medianMs > 0)
      row.speedupVsCpu = cpuConvergeMs / prof.medianMs;
    rows.push_back(row);
  }
  for (BenchRow& r : benchOptimiseHeadNeck(reps)) rows.push_back(std::move(r));
  return rows;
}

}  // namespace penumbra::cli
