// Proton pencil-beam benchmark: the head-and-neck-sized plan of da Silva et al. ("hn-2field": 2
// fields x 50 energy layers x ~110 spots, 1 mm^3 dose grid over 200 x 200 x 150 mm,
// heterogeneous phantom), whole dose on CUDA and on the CPU (all threads) side by side, each
// kernel's profile, classic vs DDA-nc ray tracing, Gaussian contributions per second, and the
// CUDA-vs-CPU max difference as the accuracy figure.
//
// What "whole dose" includes: computeProtonDose() from the request to the dose in host memory -
// validation, memory estimate, beam preparation (tile lists), CT upload, HU->SPR, ray tracing,
// superposition, resampling and the dose download. It excludes the per-energy depth-dose and
// sigma tables, which are machine data built once per energy and cached (ProtonMachine): the
// warm-up run builds them, and their one-off cost is its own row.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "bench_table.hpp"
#include "core/device.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"

namespace penumbra::cli {

namespace {

using namespace penumbra::proton;

struct Runs {
  KernelProfile total;                          ///< host wall time of computeProtonDose
  std::map<std::string, KernelProfile> kernels; ///< per kernel, median over the runs
  ProtonDoseResult last;
};

Runs timeRuns(const ProtonDoseRequest& req, int reps, const std::string& variant) {
  Runs out;
  std::vector<double> totals;
  std::map<std::string, std::vector<double>> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    ProtonDoseResult res = computeProtonDose(req);
    totals.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    for (const KernelProfile& p : res.profiles) {
      times[p.kernel].push_back(p.medianMs);
      out.kernels[p.kernel] = p;
    }
    out.last = std::move(res);
  }
  for (auto& [name, p] : out.kernels) {
    p.medianMs = medianOf(times[name]);
    p.minMs = *std::min_element(times[name].begin(), times[name].end());
    p.repetitions = reps;
  }
  out.total.kernel = "proton_dose_total";
  out.total.variant = variant;
  out.total.backend = out.last.backend == Backend::Cuda ? "cuda" : "cpu";
  out.total.device = out.last.device;
  out.total.repetitions = reps;
  out.total.medianMs = medianOf(totals);
  out.total.minMs = *std::min_element(totals.begin(), totals.end());
  return out;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

std::vector<BenchRow> benchProton(int reps) {
  std::vector<BenchRow> rows;
  const ProtonPhantomCase pc = makeHeadNeckCase(1.0);
  ProtonDoseRequest req;
  req.ct = std::make_shared<CtVolume>(pc.ct);
  req.beams = pc.beams;
  req.doseGrid = pc.doseGrid;
  req.variant = DdaVariant::BranchFree;
  const std::size_t spots = totalSpotCount(req.beams);
  std::size_t layers = 0;
  for (const auto& b : req.beams) layers += b.layers.size();
  const std::string what = std::to_string(req.beams.size()) + " fields, " + std::to_string(layers) +
                           " layers, " + std::to_string(spots) + " spots, dose grid " +
                           std::to_string(pc.doseGrid.dims[0]) + "x" + std::to_string(pc.doseGrid.dims[1]) +
                           "x" + std::to_string(pc.doseGrid.dims[2]) + " @ 1 mm";
  std::cout << "proton: hn-2field, " << what << "\n";

  // One-off: the machine's per-energy tables (cached for every later run).
  {
    std::vector<double> energies;
    for (const auto& b : req.beams)
      for (const auto& l : b.layers) energies.push_back(l.energyMeV);
    const auto t0 = std::chrono::steady_clock::now();
    ProtonMachine::generic()->prepare(energies);
    KernelProfile p;
    p.kernel = "energy_tables";
    p.variant = "bortfeld+highland";
    p.backend = "cpu";
    p.device = "cpu (all threads)";
    p.repetitions = 1;
    p.medianMs = p.minMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    rows.push_back({"proton", "hn-2field", p, "", "one-off per energy, cached; not in the dose times"});
  }

  // CPU reference, all threads: one timed run after the warm-up above (the run takes seconds).
  req.backend = Backend::Cpu;
  const Runs cpu = timeRuns(req, 1, "dda-nc");
  const double contributions = double(cpu.last.gaussianContributions);

  std::string why;
  const bool gpu = !queryCudaDevices(&why).empty();
  if (!gpu) std::cout << "proton: CUDA rows skipped, no usable GPU (" << why << ")\n";
  Runs cuda, cudaClassic;
  double maxDiffPct = -1;
  if (gpu) {
    req.backend = Backend::Cuda;
    (void)computeProtonDose(req);  // warm-up: context, module load, allocator
    cuda = timeRuns(req, std::max(reps, 5), "dda-nc");
    req.variant = DdaVariant::Classic;
    cudaClassic = timeRuns(req, std::max(reps, 5), "classic");
    req.variant = DdaVariant::BranchFree;
    const auto& a = cuda.last.dose.data;
    const auto& b = cpu.last.dose.data;
    double dmax = 0, diff = 0;
    for (std::size_t v = 0; v < b.size(); ++v) {
      dmax = std::max(dmax, double(b[v]));
      diff = std::max(diff, std::fabs(double(a[v]) - double(b[v])));
    }
    maxDiffPct = dmax > 0 ? 100.0 * diff / dmax : 0;
  }

  const double cpuMs = cpu.total.medianMs;
  {
    BenchRow r{"proton", "hn-2field", cpu.total, fmt("%.3g Gauss/s", contributions / (cpuMs * 1e-3)),
               what + "; " + fmt("%.3g Gaussian contributions", contributions) +
                   "; full CPU run, timed once"};
    rows.push_back(r);
  }
  if (gpu) {
    const double ms = cuda.total.medianMs;
    BenchRow r{"proton", "hn-2field", cuda.total, fmt("%.3g Gauss/s", contributions / (ms * 1e-3)),
               fmt("speed-up %.1fx vs CPU", cpuMs / ms) +
                   fmt(", max |cuda-cpu| %.4f %% of max dose", maxDiffPct) +
                   (ms < 30 ? ", < 30 ms goal met" : ", above the 30 ms goal")};
    r.speedupVsCpu = cpuMs / ms;
    r.accuracy = maxDiffPct;
    r.accuracyWhat = "max |cuda-cpu| in % of max dose";
    rows.push_back(r);
    for (const char* k : {"hu_to_spr", "bev_wepl_dda", "gaussian_superposition", "bev_to_patient_trilinear"}) {
      const auto it = cuda.kernels.find(k);
      if (it == cuda.kernels.end()) continue;
      KernelProfile p = it->second;
      std::string rate, note = fmt("%.0f regs", double(p.registersPerThread)) +
                               fmt(", %.0f B smem", double(p.sharedBytesPerBlock)) +
                               fmt(", occupancy %.0f %%", 100 * p.theoreticalOccupancy) +
                               ", sum over " + std::to_string(req.beams.size()) + " beams";
      if (std::string(k) == "gaussian_superposition")
        rate = fmt("%.3g Gauss/s", contributions / (p.medianMs * 1e-3));
      else if (p.bytes > 0)
        rate = fmt("%.0f GB/s", p.gbPerS());
      BenchRow row{"proton", "hn-2field", p, rate, ""};
      const auto c = cpu.kernels.find(k);
      if (c != cpu.kernels.end() && p.medianMs > 0) {
        note += fmt("; CPU %.1f ms", c->second.medianMs) + fmt(" (%.0fx)", c->second.medianMs / p.medianMs);
        row.speedupVsCpu = c->second.medianMs / p.medianMs;
      }
      const auto classic = cudaClassic.kernels.find(k);
      if (std::string(k) == "bev_wepl_dda" && classic != cudaClassic.kernels.end())
        row.speedupVsBaseline = classic->second.medianMs / p.medianMs;  // baseline: classic DDA
      row.note = note;
      rows.push_back(row);
    }
    const auto wc = cudaClassic.kernels.find("bev_wepl_dda");
    const auto wn = cuda.kernels.find("bev_wepl_dda");
    if (wc != cudaClassic.kernels.end() && wn != cuda.kernels.end())
      rows.push_back({"proton", "hn-2field", wc->second, "",
                      fmt("classic / dda-nc ray tracing time = %.2f", wc->second.medianMs / wn->second.medianMs) +
                          fmt("; whole dose with classic %.2f ms", cudaClassic.total.medianMs)});
  }
  for (const char* k : {"bev_wepl_dda", "gaussian_superposition", "bev_to_patient_trilinear"}) {
    const auto it = cpu.kernels.find(k);
    if (it != cpu.kernels.end()) rows.push_back({"proton", "hn-2field", it->second, "", "CPU stage"});
  }
  return rows;
}

}  // namespace penumbra::cli
