// penumbra-cli bench: runs the benchmark suites this build supports and prints one table.
// Timings live here, never in tests (house rule 4).
#include <cstdint>
#include <cstdio>
#include <iostream>

#include "bench_table.hpp"
#include "cli_commands.hpp"
#include "core/bandwidth.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "file/atomic_file.hpp"

namespace penumbra::cli {

std::vector<BenchRow> benchImport(int reps);  // bench_import.cpp
std::vector<BenchRow> benchProton(int reps);  // bench_proton.cpp
std::vector<BenchRow> benchSpmv(int reps);    // bench_spmv.cpp
std::vector<BenchRow> benchMcml(int reps, std::uint64_t packets);  // bench_mcml.cpp (0: 1e8)
std::vector<BenchRow> benchOptimise(int reps);  // bench_optimise.cpp
std::vector<BenchRow> benchDoseMatrix(int reps);  // bench_dose_matrix.cpp (hn-2field D, GPU and CPU)
std::vector<BenchRow> benchCccs(int reps);      // bench_cccs.cpp (photon collapsed cone)
// bench_interactive.cpp: scripted edits, edit-to-dose latency; cpuEdits per CPU session
std::vector<BenchRow> benchInteractive(int cpuEdits);
// bench_gamma.cpp; dir: also write the case as MetaImage (empty: do not)
std::vector<BenchRow> benchGamma(int reps, const std::string& writeCaseDir);
// bench_robust.cpp: hn-2field robustness evaluation, 21 scenarios, CUDA and CPU
std::vector<BenchRow> benchRobust(int reps);

namespace {

std::vector<BenchRow> benchBandwidth(int reps) {
  std::vector<BenchRow> rows;
  std::string why;
  if (queryCudaDevices(&why).empty()) {
    std::cout << "bandwidth: skipped, no usable GPU (" << why << ")\n";
    return rows;
  }
  const std::size_t bytes = std::size_t(2) << 30;  // 2 GiB: far beyond the 50-60 MB L2
  BenchRow row{"bandwidth", "d2d-copy-2GiB", measureCopyBandwidth(bytes, reps), "", ""};
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.0f GB/s", row.profile.gbPerS());
  row.rate = rate;
  row.note = "bytes read + written";
  rows.push_back(row);
  return rows;
}

}  // namespace

int cmdBench(Args args) {
  OptionParser options("bench", std::move(args));
  const std::string json = options.text("--json");
  const std::string repsText = options.text("--reps");
  const bool haveReps = !repsText.empty();
  const int reps = haveReps ? parseOptionInteger(repsText, "--reps") : 5;
  PENUMBRA_REQUIRE(reps >= 1, InvalidArgument,
                   "--reps: must be at least 1, got " + std::to_string(reps));
  // mcml only: packets per run (default 1e8; "1e7" style accepted) and 1 run unless --reps.
  const std::uint64_t mcmlPackets = options.count("--packets", 0, 10, INT64_MAX);
  // gamma only: write the benchmark's two doses as MetaImage into this folder.
  const std::string gammaCaseDir = options.text("--write-gamma-case");
  std::vector<std::string> suites = options.rest();
  for (const std::string& s : suites)
    if (s.size() > 1 && s[0] == '-') {  // an unknown option, or one without its value
      std::cerr << "penumbra-cli bench: unexpected argument '" << s << "'\n" << usageOf("bench");
      return 2;
    }
  if (suites.empty()) suites = {"bandwidth", "import", "proton"};
  std::vector<BenchRow> rows;
  for (const auto& s : suites) {
    std::vector<BenchRow> r;
    if (s == "bandwidth")
      r = benchBandwidth(std::max(reps, 20));
    else if (s == "import")
      r = benchImport(reps);
    else if (s == "proton")
      r = benchProton(reps);
    else if (s == "spmv")
      r = benchSpmv(reps);
    else if (s == "mcml")
      r = benchMcml(haveReps ? reps : 1, mcmlPackets);
    else if (s == "optimise")
      r = benchOptimise(reps);
    else if (s == "dose-matrix")
      r = benchDoseMatrix(reps);
    else if (s == "cccs")
      r = benchCccs(reps);
    else if (s == "gamma")
      r = benchGamma(reps, gammaCaseDir);
    else if (s == "interactive")
      r = benchInteractive(reps);
    else if (s == "robust")
      r = benchRobust(reps);
    else {
      std::cerr << "penumbra-cli bench: unknown suite '" << s
                << "' (bandwidth, import, proton, spmv, mcml, optimise, dose-matrix, cccs, gamma, "
                   "interactive, robust)\n";
      return 2;
    }
    rows.insert(rows.end(), r.begin(), r.end());
  }
  // "% of peak" is relative to this GPU's bandwidth measured in this run (d2d copy).
  for (const auto& r : rows)
    if (r.suite == "bandwidth") applyMeasuredPeak(rows, r.profile.gbPerS());
  printBenchTable(rows);
  if (!json.empty()) {
    io::writeFileAtomically(json, benchRowsToJson(rows, todayIso()), "benchmark JSON");
    std::cout << "wrote " << json << "\n";
  }
  return 0;
}

}  // namespace penumbra::cli
