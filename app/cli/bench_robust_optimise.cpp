// Robust optimisation benchmark (issue 16, item 3's goal: hn-2field with 21 scenarios optimised
// in <= 10 s on the H200): makeHeadNeckCase at the finest dose grid whose 21 scenario matrices
// fit (2 mm first; 1 mm needs ~190 GB), objective = target sphere at 2 Gy (min 97 %, max 104 %)
// and the body outside it below 80 %, the default 21 scenarios (range +-3.5 % x setup +-3 mm).
// Rows, CUDA and CPU:
//  - robust_matrix_build: the 21 matrices (proton engine, D^T, upload). The CPU row builds
//    the first kCpuBuilt scenarios only and reports their measured time (the CPU build of all
//    21 at 2 mm takes minutes); the speed-up compares time per matrix;
//  - robust_optimise_iteration: ms per COWC iteration over a fixed number of iterations (the
//    CPU runs on the GPU's matrices, copied to host engines, so both multiply the same D_s);
//  - robust_optimise_to_convergence: default stopping rules, at most 100 iterations, with the
//    worst-case target D95 over the 21 scenarios of the nominally optimised plan (same
//    budget) and of the robust plan. The CPU runs it when 100 iterations would take <= 2 min.
// Not registered in cmd_bench.cpp here: `bench robust` (the evaluation's suite) takes it.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "bench_table.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "optimise/robust_optimise.hpp"
#include "proton/proton_phantoms.hpp"
#include "robust/robust_matrices.hpp"
#include "robust/scenario.hpp"

namespace penumbra::cli {

namespace {

constexpr int kCpuBuilt = 2;
constexpr int kMaxIterations = 100;

struct HnProblem {
  proton::ProtonDoseRequest plan;
  std::vector<std::int64_t> target;
  optimise::PlanObjective objective;
  double spacingMm = 0;
};

HnProblem hnProblem(double h, Backend backend) {
  const proton::ProtonPhantomCase pc = proton::makeHeadNeckCase(h);
  HnProblem p;
  p.spacingMm = h;
  p.plan.ct = std::make_shared<const CtVolume>(pc.ct);
  p.plan.beams = pc.beams;
  p.plan.doseGrid = pc.doseGrid;  // the CT grid
  p.plan.backend = backend;
  std::vector<std::int64_t> body;
  const Grid& g = pc.doseGrid;
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = 0; i < g.dims[0]; ++i) {
        const auto row = std::int64_t(g.linearIndex(i, j, k));
        if (norm(g.indexToWorld(Vec3{double(i), double(j), double(k)}) - pc.targetCenter) <=
            pc.targetRadiusMm)
          p.target.push_back(row);
        else if (pc.ct.at(i, j, k) > -500)
          body.push_back(row);
      }
  const double rx = 2.0;
  p.objective = optimise::PlanObjective(
      {optimise::targetObjective("Target", p.target, rx, 1.0, 0.97 * rx, 20.0, 1.04 * rx, 20.0),
       optimise::organAtRiskObjective("Body-Target", body, 0.8 * rx, 1.0)});
  return p;
}

/// The worst (lowest) target D95 over the scenarios and the scenario's name.
std::string worstD95(const std::vector<const spmv::SpmvEngine*>& e, const std::vector<double>& w,
                     const HnProblem& p, const std::vector<robust::Scenario>& sc) {
  const auto st = optimise::scenarioStatistics(e, w, p.target);
  std::size_t k = 0;
  for (std::size_t s = 1; s < st.size(); ++s)
    if (st[s].d95Gy < st[k].d95Gy) k = s;
  return fmt("%.3f Gy", st[k].d95Gy) + " (" + sc[k].name + ")";
}

/// Fixed-iteration COWC runs: ms per iteration (median over `runs`), and the products' bytes.
BenchRow iterationRow(const std::vector<const spmv::SpmvEngine*>& e, const HnProblem& p,
                      int iterations, int runs, const std::string& caseName) {
  optimise::RobustOptions ro;
  ro.optimiser.maxIterations = iterations;
  ro.optimiser.relativeDecrease = 0;
  ro.optimiser.projectedGradient = 0;
  std::vector<double> ms;
  optimise::RobustOptimiseResult last;
  for (int r = 0; r < runs; ++r) {
    last = optimise::optimiseRobust(e, p.objective, optimise::planWeights(p.plan.beams), ro);
    if (last.iterations > 0) ms.push_back(1e3 * last.elapsedSeconds / last.iterations);
  }
  KernelProfile prof =
      timedProfile("robust_optimise_iteration", "cowc, " + std::to_string(e.size()) + " scenarios",
              e[0]->backend(), e[0]->deviceName(), ms);
  double nnz = 0;
  for (const auto* x : e) nnz += double(x->matrix(spmv::Product::D).nnz());
  nnz /= double(e.size());
  const double products =
      double(last.doseProducts + last.gradientProducts) / std::max(1, last.iterations);
  const double rows = double(e[0]->matrix(spmv::Product::D).rows),
               cols = double(e[0]->matrix(spmv::Product::D).cols);
  prof.bytes = products * (6 * nnz + 10 * (rows + cols));
  prof.flops = products * 2 * nnz;
  return BenchRow{"robust-optimise", caseName, prof,
                  fmt("%.2f it/s", prof.medianMs > 0 ? 1e3 / prof.medianMs : 0),
                  fmt("%.1f products/iteration", products) + ", " +
                      std::to_string(last.iterations) + " iterations per run, host loop"};
}

/// Nominal and COWC optimisation to convergence (<= kMaxIterations), worst D95 of both.
BenchRow convergenceRow(const std::vector<const spmv::SpmvEngine*>& e, const HnProblem& p,
                        const std::vector<robust::Scenario>& sc, const std::string& caseName) {
  optimise::OptimiserOptions o;
  o.maxIterations = kMaxIterations;
  const std::vector<double> w0 = optimise::planWeights(p.plan.beams);
  const optimise::OptimiseResult nominal = optimise::optimiseSpotWeights(*e[0], p.objective, w0, o);
  optimise::RobustOptions ro;
  ro.optimiser = o;
  const optimise::RobustOptimiseResult res = optimise::optimiseRobust(e, p.objective, w0, ro);
  KernelProfile prof =
      timedProfile("robust_optimise_to_convergence", "cowc, " + std::to_string(e.size()) + " scenarios",
              e[0]->backend(), e[0]->deviceName(), {1e3 * res.elapsedSeconds});
  return BenchRow{"robust-optimise", caseName, prof, std::to_string(res.iterations) + " it",
                  std::string(optimise::toString(res.state)) + ": " + res.stopReason +
                      "; worst-case target D95: nominal plan " +
                      worstD95(e, nominal.weights, p, sc) + ", robust plan " +
                      worstD95(e, res.weights, p, sc)};
}

}  // namespace

std::vector<BenchRow> benchRobustOptimise(int reps) {
  std::vector<BenchRow> rows;
  const bool gpu = !queryCudaDevices().empty();
  const Backend primary = gpu ? Backend::Cuda : Backend::Cpu;
  const std::vector<robust::Scenario> scenarios = robust::makeScenarios();
  const std::size_t S = scenarios.size();
  robust::ScenarioMatrixOptions mo;
  mo.spmv.backend = primary;

  // The finest grid whose matrices fit (the check runs on sizes only).
  HnProblem p;
  for (double h : {2.0, 3.0, 4.0}) {
    p = hnProblem(h, primary);
    try {
      const robust::ScenarioMatrixEstimate est = robust::estimateScenarioMatrices(p.plan, S, mo);
      robust::refuseIfTooBig(est);
      std::cout << "robust-optimise: " << est.describe() << "\n";
      break;
    } catch (const Error& e) {
      if (e.code() != ErrorCode::OutOfMemory || h == 4.0) throw;
      std::cout << "robust-optimise: " << e.message() << "\n";
    }
  }
  const std::string caseName = "hn-2field " + fmt("%g", p.spacingMm) + " mm";
  std::cout << "robust-optimise: building " << S << " scenario matrices of " << caseName << " on "
            << toString(primary) << " ...\n"
            << std::flush;
  robust::ScenarioMatrices set = robust::buildScenarioMatrices(p.plan, scenarios, mo);
  for (const std::string& m : set.messages) std::cout << "note: " << m << "\n";
  double entries = 0;
  for (std::int64_t n : set.entries) entries += double(n);
  rows.push_back(
      BenchRow{"robust-optimise", caseName,
               timedProfile("robust_matrix_build", std::to_string(S) + " scenarios", set.buildBackend,
                       set.device, {set.elapsedMs}),
               fmt("%.2f matrices/s", double(S) / (set.elapsedMs * 1e-3)),
               fmt("%.3g entries in all", entries) + ", products on " + toString(set.spmvBackend) +
                   (set.deviceResident ? ", matrices kept on the GPU" : "")});
  const auto first = set.engines();
  // 9 iterations: 3 in each temperature round (a round's first iteration costs more products).
  rows.push_back(iterationRow(first, p, 9, gpu ? std::max(1, reps) : 1, caseName));
  const double primaryIterationMs = rows.back().profile.medianMs;
  if (gpu || kMaxIterations * primaryIterationMs <= 120e3)
    rows.push_back(convergenceRow(first, p, scenarios, caseName));
  if (!gpu) return rows;

  // The CPU on the same matrices: the set built again with host copies (untimed), copied out
  // one by one, so that host memory holds one set.
  set.spmv.clear();
  robust::ScenarioMatrixOptions withHost = mo;
  withHost.keepHostMatrices = true;
  set = robust::buildScenarioMatrices(p.plan, scenarios, withHost);
  std::vector<spmv::HalfCsr> ds;
  for (auto& e : set.spmv) {
    ds.push_back(e->matrix(spmv::Product::D));
    e.reset();
  }
  set.spmv.clear();
  std::vector<std::unique_ptr<spmv::SpmvEngine>> cpu;
  spmv::SpmvOptions cpuOptions;
  cpuOptions.backend = Backend::Cpu;
  for (auto& d : ds) cpu.push_back(std::make_unique<spmv::SpmvEngine>(std::move(d), cpuOptions));
  ds.clear();
  std::vector<const spmv::SpmvEngine*> ce;
  for (const auto& e : cpu) ce.push_back(e.get());
  BenchRow cpuIteration = iterationRow(ce, p, 9, 1, caseName);
  const double cpuIterationMs = cpuIteration.profile.medianMs;
  for (BenchRow& r : rows)
    if (r.profile.kernel == "robust_optimise_iteration" && cpuIterationMs > 0 &&
        r.profile.medianMs > 0)
      r.speedupVsCpu = cpuIterationMs / r.profile.medianMs;
  rows.push_back(cpuIteration);
  if (kMaxIterations * cpuIterationMs <= 120e3)
    rows.push_back(convergenceRow(ce, p, scenarios, caseName));
  cpu.clear();

  // The CPU build of the first kCpuBuilt scenarios, as measured (no extrapolation to the set).
  const HnProblem onCpu = hnProblem(p.spacingMm, Backend::Cpu);
  robust::ScenarioMatrixOptions co;
  co.spmv.backend = Backend::Cpu;
  const std::vector<robust::Scenario> some(scenarios.begin(), scenarios.begin() + kCpuBuilt);
  std::cout << "robust-optimise: building " << kCpuBuilt << " of the " << S
            << " matrices on the CPU ...\n"
            << std::flush;
  const robust::ScenarioMatrices cpuSet = robust::buildScenarioMatrices(onCpu.plan, some, co);
  const double cpuSetMs = cpuSet.elapsedMs;
  BenchRow cpuBuild{"robust-optimise", caseName,
                    timedProfile("robust_matrix_build", std::to_string(kCpuBuilt) + " scenarios", Backend::Cpu,
                            cpuSet.device, {cpuSetMs}),
                    fmt("%.3f matrices/s", double(kCpuBuilt) / (cpuSetMs * 1e-3)),
                    std::to_string(kCpuBuilt) + " of the " + std::to_string(S) +
                        " matrices built on the CPU; speed-up per matrix"};
  rows.front().speedupVsCpu = (cpuSetMs / kCpuBuilt) / (rows.front().profile.medianMs / S);
  rows.push_back(cpuBuild);
  return rows;
}

}  // namespace penumbra::cli
