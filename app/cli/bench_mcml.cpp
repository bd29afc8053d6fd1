// MCML benchmark (issue 6): the five-layer skin model at 633 nm of Lo et al. (2009): Tuchin
// (1997) Table 1 optical properties, dr 0.01 cm, dz 0.002 cm, 256 x 256 grid, 10^8 packets on
// CUDA with every tally method (time and error against the double tally of the same packets),
// and the single-thread CPU reference on 10^5 packets, extrapolated linearly to 10^8 (stated in
// the row's note). Case name "skin-633nm".
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "bench_table.hpp"
#include "cli_commands.hpp"
#include "mcml/mcml.hpp"

namespace penumbra::cli {

namespace {

using namespace penumbra::mcml;

/// The 633 nm rows of data/reference/skin_5layer_tuchin1997.csv; the same numbers embedded
/// (Tuchin, Physics-Uspekhi 40 (1997) 495, Table 1) when the file is absent.
LayeredMedium skinModel(std::string* source) {
  LayeredMedium m;
  std::ifstream in(dataDir() + "/reference/skin_5layer_tuchin1997.csv");
  for (std::string line; in && std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.rfind("layer", 0) == 0) continue;
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    if (f.size() == 8 && f[2] == "633")
      m.layers.push_back({std::stod(f[6]), std::stod(f[3]), std::stod(f[4]), std::stod(f[5]), std::stod(f[7])});
  }
  if (m.layers.size() == 5) {
    *source = "skin_5layer_tuchin1997.csv";
    return m;
  }
  *source = "embedded Tuchin 1997 Table 1";
  m.layers = {{1.5, 4.3, 107, 0.79, 0.01}, {1.4, 2.7, 187, 0.82, 0.02}, {1.4, 3.3, 192, 0.82, 0.02},
              {1.4, 2.7, 187, 0.82, 0.09}, {1.4, 3.4, 194, 0.82, 0.06}};
  return m;
}

McmlConfig skinConfig(std::uint64_t packets, TallyMethod t, Backend b) {
  McmlConfig c;
  c.packets = packets;
  c.dr = 0.01;
  c.dz = 0.002;
  c.nr = c.nz = 256;
  c.na = 30;
  c.seed = 2026;
  c.tally = t;
  c.backend = b;
  c.batches = 10;
  return c;
}

std::string fmt(const char* f, double v) {
  char b[96];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

double relL1(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::fabs(a[i] - b[i]);
    den += std::fabs(b[i]);
  }
  return den > 0 ? num / den : 0;
}

double wallMs(const LayeredMedium& m, const McmlConfig& c, McmlResult* out) {
  const auto t0 = std::chrono::steady_clock::now();
  *out = runMcml(m, c);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<BenchRow> benchMcml(int reps) {
  std::vector<BenchRow> rows;
  std::string source;
  const LayeredMedium skin = skinModel(&source);
  const std::uint64_t N = 100000000, nCpu = 100000;

  // CPU reference, one thread, 10^5 packets, extrapolated x1000 to 10^8.
  McmlConfig cc = skinConfig(nCpu, TallyMethod::FixedPoint64, Backend::Cpu);
  cc.cpuThreads = 1;
  McmlResult cpu;
  const double cpuMs = wallMs(skin, cc, &cpu);
  const double cpuMsAtN = cpuMs * double(N) / double(nCpu);
  {
    KernelProfile p;
    p.kernel = "mcml_cpu_reference";
    p.variant = "double";
    p.backend = "cpu";
    p.device = "1 thread";
    p.repetitions = 1;
    p.medianMs = p.minMs = cpuMsAtN;
    BenchRow row{"mcml", "skin-633nm", p, fmt("%.3g packets/s", double(nCpu) / (cpuMs * 1e-3)),
                 "measured " + fmt("%.0f", cpuMs) + " ms on 1e5 packets, x1000 to 1e8 (linear); " +
                     "Rd " + fmt("%.5f", cpu.Rd) + " A " + fmt("%.5f", cpu.A) + " Tt " + fmt("%.5f", cpu.Tt)};
    row.speedupVsCpu = 1.0;
    rows.push_back(row);
  }
  std::string why;
  if (queryCudaDevices(&why).empty()) {
    std::cout << "mcml: CUDA rows skipped, no usable GPU (" << why << ")\n";
    return rows;
  }
  // Warm-up: module load, constant upload, first allocations.
  McmlResult warm;
  wallMs(skin, skinConfig(1000000, TallyMethod::FixedPoint64, Backend::Cuda), &warm);

  McmlResult ref;
  double refMs = 0;
  std::vector<std::pair<TallyMethod, McmlResult>> results;
  std::vector<std::pair<double, double>> times;  // (wall median, kernel median)
  for (TallyMethod t : allTallyMethods()) {
    std::vector<double> wall, kern;
    McmlResult r;
    for (int k = 0; k < std::max(1, std::min(reps, 3)); ++k) {
      wall.push_back(wallMs(skin, skinConfig(N, t, Backend::Cuda), &r));
      kern.push_back(r.elapsedMs);
    }
    times.push_back({medianOf(wall), medianOf(kern)});
    if (t == TallyMethod::DoubleAtomic) {
      ref = r;
      refMs = medianOf(wall);
    }
    results.push_back({t, std::move(r)});
  }
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& [t, r] = results[i];
    KernelProfile p = r.profiles.empty() ? KernelProfile{} : r.profiles.front();
    p.kernel = "mcml_persistent";
    p.variant = toString(t);
    p.backend = "cuda";
    p.device = r.device + (r.devicesUsed > 1 ? " x" + std::to_string(r.devicesUsed) : "");
    p.repetitions = std::max(1, std::min(reps, 3));
    p.medianMs = times[i].first;
    p.minMs = times[i].first;
    BenchRow row{"mcml", "skin-633nm", p, fmt("%.3g packets/s", double(N) / (times[i].first * 1e-3)),
                 "kernels " + fmt("%.1f ms", times[i].second) + "; energy " +
                     fmt("%+.1e", r.energyBalance()) + "; Rd " + fmt("%.5f", r.Rd) + " A " +
                     fmt("%.5f", r.A) + " Tt " + fmt("%.5f", r.Tt) +
                     (tallyConservesEnergy(t) ? "" : " (not energy-conserving)")};
    row.speedupVsBaseline = refMs / times[i].first;
    row.speedupVsCpu = cpuMsAtN / times[i].first;
    row.accuracy = relL1(r.A_rz, ref.A_rz);
    row.accuracyWhat = "A_rz rel. L1 vs double tally";
    rows.push_back(row);
  }
  std::cout << "mcml: skin model from " << source << "; 1e8 packets in 10 batches; time = wall "
               "time of runMcml (transport, downloads, scaling); baseline = double atomics\n";
  return rows;
}

}  // namespace penumbra::cli
