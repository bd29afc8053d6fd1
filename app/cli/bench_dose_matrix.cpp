// Dose-deposition matrix benchmark (issue 14, item 1): D of hn-2field (the `bench proton` case:
// 2 fields x 50 layers, 11 300 spots, 200 x 200 x 150 voxels of 1 mm; cut-off 1e-4) built by the
// proton engine on the GPU and on the CPU (all threads), with nnz, bytes and time, the GPU's
// kernels, and the GPU matrix compared with the CPU's entry by entry.
//
// Times come from the engine's own profiles of computeProtonDose(computeDoseMatrix): "on
// device" = request to CSR in GPU memory (uploads, double WEPL, three passes, scan), "to host"
// = the same plus the host vectors and the download (what the optimiser takes today). The dose
// itself, computed in the same call, is not in either. CUDA: one warm-up, then `reps` runs
// (median); CPU: one run (its memory peak is ~14 B per entry, ~25 GB here: 28 s for the same
// case at 2 mm, 2.0e8 entries, on 2 busy cores of the development machine).
#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <optional>

#include "bench_table.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"

namespace penumbra::cli {

namespace {

using namespace penumbra::proton;

/// Profiles of `reps` runs, keyed by kernel/variant, with median and min over the runs.
struct Timed {
  std::map<std::string, KernelProfile> p;
  std::optional<DoseMatrixCsr> matrix;
};

Timed timeBuild(const ProtonDoseRequest& req, int reps) {
  Timed out;
  std::map<std::string, std::vector<double>> ms;
  for (int r = 0; r < reps; ++r) {
    ProtonDoseResult res = computeProtonDose(req);
    for (const KernelProfile& p : res.profiles) {
      if (p.kernel.rfind("dose_matrix", 0) != 0) continue;
      const std::string key = p.kernel + "/" + p.variant;
      ms[key].push_back(p.medianMs);
      out.p[key] = p;
    }
    if (r + 1 == reps) out.matrix = std::move(res.matrix);
  }
  for (auto& [key, p] : out.p) {
    p.medianMs = medianOf(ms[key]);
    p.minMs = *std::min_element(ms[key].begin(), ms[key].end());
    p.repetitions = int(ms[key].size());
  }
  return out;
}

/// Values differing between the matrices, or -1 when the structure differs.
std::int64_t valuesDiffering(const DoseMatrixCsr& a, const DoseMatrixCsr& b) {
  if (a.rowPtr != b.rowPtr || a.colIdx != b.colIdx) return -1;
  std::int64_t n = 0;
  for (std::size_t e = 0; e < a.values.size(); ++e) n += a.values[e] != b.values[e];
  return n;
}

}  // namespace

std::vector<BenchRow> benchDoseMatrix(int reps) {
  std::vector<BenchRow> rows;
  const ProtonPhantomCase pc = makeHeadNeckCase(1.0);
  ProtonDoseRequest req = phantomRequest(pc);
  req.variant = DdaVariant::BranchFree;
  req.params.computeDoseMatrix = true;
  std::vector<double> energies;
  for (const auto& b : req.beams)
    for (const auto& l : b.layers) energies.push_back(l.energyMeV);
  ProtonMachine::generic()->prepare(energies);  // tables once, outside every timing
  std::cout << "dose-matrix: hn-2field, " << totalSpotCount(req.beams) << " spots, "
            << pc.doseGrid.voxelCount() << " voxels, cut-off " << req.params.doseMatrixRelativeCutoff
            << "\n" << std::flush;

  std::string why;
  const bool gpu = !queryCudaDevices(&why).empty();
  Timed cuda;
  if (gpu) {
    req.backend = Backend::Cuda;
    (void)computeProtonDose(req);  // warm-up: context, modules, allocator, host page pools
    cuda = timeBuild(req, std::max(reps, 3));
  } else {
    std::cout << "dose-matrix: CUDA rows skipped, no usable GPU (" << why << ")\n";
  }

  req.backend = Backend::Cpu;
  Timed cpu;
  std::string cpuFailure;
  try {
    cpu = timeBuild(req, 1);
  } catch (const Error& e) {  // e.g. a development machine without the ~25 GB it needs
    cpuFailure = e.message();
    std::cout << "dose-matrix: CPU row skipped: " << cpuFailure << "\n";
  }
  const auto cpuIt = cpu.p.find("dose_matrix_build/cpu");
  const double cpuMs = cpuIt != cpu.p.end() ? cpuIt->second.medianMs : 0;

  const DoseMatrixCsr* ref = cpu.matrix ? &*cpu.matrix : cuda.matrix ? &*cuda.matrix : nullptr;
  const double nnz = ref ? double(ref->nnz()) : 0, dropped = ref ? double(ref->droppedEntries) : 0;
  const double csrBytes = ref ? 6.0 * nnz + 8.0 * double(ref->rows + 1) : 0;
  const std::string sizes = fmt("nnz %.4g", nnz) + fmt(" (%.3g dropped by the cut-off)", dropped) +
                            fmt(", CSR %.2f GB", csrBytes * 1e-9);
  std::int64_t differ = -2;
  if (cpu.matrix && cuda.matrix) differ = valuesDiffering(*cuda.matrix, *cpu.matrix);
  const std::string accuracy =
      differ == -2 ? std::string() :
      differ == -1 ? std::string("; STRUCTURE DIFFERS from the CPU matrix") :
                     fmt("; structure identical to the CPU's, %.0f values differ", double(differ)) +
                         fmt(" (%.2g of nnz)", double(differ) / std::max(nnz, 1.0));

  if (gpu) {
    for (const char* key : {"dose_matrix_build/on-device", "dose_matrix_build/to-host"}) {
      const auto it = cuda.p.find(key);
      if (it == cuda.p.end()) continue;
      const KernelProfile& p = it->second;
      const bool device = std::string(key).find("on-device") != std::string::npos;
      BenchRow row{"dose-matrix", "hn-2field", p, fmt("%.3g entries/s", nnz / (p.medianMs * 1e-3)),
                   (device ? "request to CSR on the GPU; " : "request to CSR in host memory; ") + sizes +
                       (cpuMs > 0 ? fmt("; CPU %.0f ms", cpuMs) : std::string()) +
                       (device ? (p.medianMs <= 500 ? ", <= 0.5 s goal met" : ", above the 0.5 s goal")
                               : std::string()) + (device ? accuracy : std::string())};
      if (cpuMs > 0) row.speedupVsCpu = cpuMs / p.medianMs;
      if (device && differ >= 0) {
        row.accuracy = double(differ);
        row.accuracyWhat = "fp16 values differing from the CPU matrix (structure identical)";
      }
      rows.push_back(row);
    }
    for (const char* key : {"dose_matrix_wepl_f64/dda-nc", "dose_matrix_column_max/brick-warp",
                            "dose_matrix_count_kept/brick-warp", "dose_matrix_write_kept/brick-warp",
                            "dose_matrix_host_memory/wait", "dose_matrix_download/d2h"}) {
      const auto it = cuda.p.find(key);
      if (it == cuda.p.end()) continue;
      const KernelProfile& p = it->second;
      std::string rate, note;
      if (p.registersPerThread > 0)
        note = fmt("%.0f regs", p.registersPerThread) + fmt(", %.0f B smem", p.sharedBytesPerBlock) +
               fmt(", occupancy %.0f %%", 100 * p.theoreticalOccupancy) + ", sum of its launches";
      if (p.kernel != "dose_matrix_wepl_f64" && p.kernel.find("kept") != std::string::npos)
        rate = fmt("%.3g entries/s", nnz / (p.medianMs * 1e-3));
      else if (p.kernel == "dose_matrix_column_max")
        rate = fmt("%.3g entries/s", (nnz + dropped) / (p.medianMs * 1e-3));
      if (p.kernel == "dose_matrix_download") rate = fmt("%.1f GB/s", p.gbPerS());
      if (p.kernel == "dose_matrix_host_memory")
        note = "waiting for the host vectors (zero fill, page locking) after the GPU finished";
      rows.push_back({"dose-matrix", "hn-2field", p, rate, note});
    }
  }
  if (cpuIt != cpu.p.end()) {
    BenchRow row{"dose-matrix", "hn-2field", cpuIt->second, fmt("%.3g entries/s", nnz / (cpuMs * 1e-3)),
                 "request to CSR in host memory (SPR, WEPL, entries, fp16), one run; " + sizes};
    row.speedupVsCpu = 1;
    rows.push_back(row);
  }
  return rows;
}

}  // namespace penumbra::cli
