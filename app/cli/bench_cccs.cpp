// Photon collapsed-cone (CCCS) benchmark (issue 7), two cases, each with one 6 MV 10 x 10 cm^2
// field from gantry 0, isocentre at the centre, 8 polar x 12 azimuthal cones (96 directions):
//  - "water-256x256x256": a water cube of 256^3 voxels of 2 mm (51.2 cm);
//  - "thorax-512x512x110": a SYNTHETIC thorax-like phantom on a clinical CT grid (512 x 512 x
//    110 voxels of 0.977 x 0.977 x 3 mm): a water body ellipse (34 x 22 cm) in air, two lungs
//    of relative electron density 0.25 and a spine of 1.6 (no DICOM on the GPU machine).
// Per case: the CPU reference (all threads, atomic deposit, timed once), then on CUDA classic
// vs DDA-nc x atomic vs atomic-free, the whole computePhotonDose() wall time (validation, beam
// preparation, density, kernels, dose in host memory) three ways:
//  - cold: the first call on the volume, after releasePhotonGpuCache() (density upload and
//    conversion, device buffers, the result's page-locked memory; median of 3; the CUDA context
//    and modules are already loaded by a warm-up call);
//  - warm, back to back: repeated calls with the density in the GPU cache, each right after the
//    previous one (the result memory a call uses was started on a helper thread at the start of
//    the previous call; a call waits for it if it is not ready yet);
//  - warm, interactive: the same 50 ms apart (a planner's pace: the next result's memory is
//    ready when the call needs it);
// plus the device span (CUDA events from the first copy or kernel to the end of the download),
// the sum of the kernels, the host stages and each kernel's profile. Rates are voxel-direction
// steps per second: segments transported (from a line's first voxel with TERMA > 0 to its
// exit), the GPU's count, the same for every row of a case (the CPU counts the same segments).
// Accuracy: max |cuda - cpu| in % of the maximum dose.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <thread>

#include "bench_table.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "photon/photon_dose.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::cli {

namespace {

using namespace penumbra::photon;

struct CccsCase {
  std::string name, what;
  std::shared_ptr<Volume<float>> density;
  PhotonBeam beam;
};

PhotonBeam tenByTen() {
  PhotonBeam b;
  b.name = "AP 10x10";
  b.isocenter = {0, 0, 0};
  b.sadMm = 1000;
  b.x1Mm = b.y1Mm = -50;
  b.x2Mm = b.y2Mm = 50;
  b.monitorUnits = 100;
  return b;
}

Grid centredGrid(std::array<int, 3> dims, Vec3 spacing) {
  Grid g;
  g.dims = dims;
  g.spacing = spacing;
  g.origin = {-0.5 * (dims[0] - 1) * spacing.x, -0.5 * (dims[1] - 1) * spacing.y,
              -0.5 * (dims[2] - 1) * spacing.z};
  return g;
}

CccsCase waterCube() {
  CccsCase c;
  c.name = "water-256x256x256";
  c.what = "water cube 256^3 x 2 mm, SSD 74.4 cm";
  c.density = std::make_shared<Volume<float>>(centredGrid({256, 256, 256}, {2, 2, 2}), 1.0f);
  c.beam = tenByTen();
  return c;
}

/// Synthetic thorax (LPS: x patient left, y posterior, z superior; gantry 0 enters anteriorly).
CccsCase thorax() {
  CccsCase c;
  c.name = "thorax-512x512x110";
  c.what =
      "SYNTHETIC thorax on a 512x512x110 CT grid (0.977 x 0.977 x 3 mm): water body, lungs "
      "RED 0.25, spine RED 1.6, air outside";
  const Grid g = centredGrid({512, 512, 110}, {500.0 / 512, 500.0 / 512, 3.0});
  c.density = std::make_shared<Volume<float>>(g, 0.001f);
  Volume<float>& d = *c.density;
  auto in = [](double x, double y, double cx, double cy, double ax, double ay) {
    const double u = (x - cx) / ax, v = (y - cy) / ay;
    return u * u + v * v <= 1.0;
  };
  for (int k = 0; k < g.dims[2]; ++k) {
    const double z = g.origin.z + k * g.spacing.z;
    const bool lungSlices = std::fabs(z) < 140;  // lungs over 28 cm of the 33 cm
    for (int j = 0; j < g.dims[1]; ++j) {
      const double y = g.origin.y + j * g.spacing.y;
      for (int i = 0; i < g.dims[0]; ++i) {
        const double x = g.origin.x + i * g.spacing.x;
        float rho = 0.001f;
        if (in(x, y, 0, 0, 170, 110)) rho = 1.0f;
        if (lungSlices && (in(x, y, -80, -5, 55, 75) || in(x, y, 80, -5, 55, 75))) rho = 0.25f;
        if (in(x, y, 0, 80, 18, 18)) rho = 1.6f;  // vertebral body, posterior
        d.at(i, j, k) = rho;
      }
    }
  }
  c.beam = tenByTen();
  return c;
}

struct Runs {
  KernelProfile total;                            ///< wall time of computePhotonDose
  KernelProfile kernels;                          ///< sum of the kernel times
  std::map<std::string, KernelProfile> profiles;  ///< per kernel, median over runs
  std::map<std::string, int> launches;            ///< per kernel, launches in one run
  int cachedCalls = 0;                            ///< calls whose density came from the cache
  PhotonDoseResult last;
};

enum class Pace {
  Cold,         ///< releasePhotonGpuCache() before each call
  BackToBack,   ///< one call right after the other
  Interactive,  ///< kPauseMs between calls
};
constexpr int kPauseMs = 50;

bool isKernel(const std::string& k) {
  return k != "cccs_device_total" && k != "density_upload" && k != "dose_download" &&
         k.rfind("host_", 0) != 0;
}

Runs timeRuns(const PhotonDoseRequest& req, int reps, const std::string& variant,
              Pace pace = Pace::BackToBack, const char* totalName = "cccs_total") {
  Runs out;
  std::vector<double> totals, sums;
  std::map<std::string, std::vector<double>> times;
  for (int r = 0; r < reps; ++r) {
    if (pace == Pace::Cold) releasePhotonGpuCache();
    if (pace == Pace::Interactive) std::this_thread::sleep_for(std::chrono::milliseconds(kPauseMs));
    const auto t0 = std::chrono::steady_clock::now();
    PhotonDoseResult res = computePhotonDose(req);
    totals.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    double sum = 0;
    for (const KernelProfile& p : res.profiles) {
      times[p.kernel].push_back(p.medianMs);
      out.profiles[p.kernel] = p;
      out.launches[p.kernel] = p.repetitions;     // a result's profile counts its launches
      if (isKernel(p.kernel)) sum += p.medianMs;  // kernels (and the slot zero fill) only
    }
    sums.push_back(sum);
    out.cachedCalls += res.densityCached ? 1 : 0;
    out.last = std::move(res);
  }
  for (auto& [name, p] : out.profiles) {
    p.medianMs = medianOf(times[name]);
    p.minMs = *std::min_element(times[name].begin(), times[name].end());
    p.repetitions = reps;
  }
  auto fill = [&](KernelProfile& p, const char* kernel, const std::vector<double>& ms) {
    p.kernel = kernel;
    p.variant = variant;
    p.backend = out.last.backend == Backend::Cuda ? "cuda" : "cpu";
    p.device = out.last.device;
    p.repetitions = reps;
    p.medianMs = medianOf(ms);
    p.minMs = *std::min_element(ms.begin(), ms.end());
  };
  fill(out.total, totalName, totals);
  fill(out.kernels, "cccs_kernels_sum", sums);
  return out;
}

double maxDiffPct(const Volume<float>& a, const Volume<float>& ref) {
  double dmax = 0, diff = 0;
  for (std::size_t v = 0; v < ref.data.size(); ++v) {
    dmax = std::max(dmax, double(ref.data[v]));
    const double d = std::fabs(double(a.data[v]) - double(ref.data[v]));
    diff = std::isfinite(d) ? std::max(diff, d) : 1e30;
  }
  return dmax > 0 ? 100.0 * diff / dmax : 0;
}

void printNow(const BenchRow& r) {
  std::cout << "cccs: " << r.caseName << " " << r.profile.backend << " " << r.profile.kernel << " "
            << r.profile.variant << ": " << fmt("%.3f ms", r.profile.medianMs)
            << (r.rate.empty() ? "" : ", " + r.rate) << (r.note.empty() ? "" : "; " + r.note)
            << std::endl;
}

void benchCase(const CccsCase& c, int reps, std::vector<BenchRow>& rows) {
  PhotonDoseRequest req;
  req.density = c.density;
  req.beams = {c.beam};
  req.params.polarCones = 8;
  req.params.azimuthalCones = 12;
  const Grid& g = c.density->grid;
  std::cout << "cccs: " << c.name << ": " << c.what << "; " << g.voxelCount() << " voxels, one "
            << "10x10 field, 8x12 cones" << std::endl;
  auto add = [&](BenchRow r) {
    printNow(r);
    rows.push_back(std::move(r));
  };

  std::string why;
  const bool gpu = !queryCudaDevices(&why).empty();
  if (!gpu) std::cout << "cccs: CUDA rows skipped, no usable GPU (" << why << ")" << std::endl;
  // GPU runs first: their step count is the rate of every row.
  struct Config {
    DdaVariant variant;
    DepositStrategy deposit;
    Runs cold, runs, paced;  ///< runs: warm, back to back
  };
  std::vector<Config> configs;
  if (gpu) {
    req.backend = Backend::Cuda;
    for (DepositStrategy dep : {DepositStrategy::Atomic, DepositStrategy::AtomicFree})
      for (DdaVariant v : {DdaVariant::Classic, DdaVariant::BranchFree}) {
        req.params.variant = v;
        req.params.deposit = dep;
        (void)computePhotonDose(req);  // warm-up: module load
        const std::string label = std::string(toString(v)) +
                                  (dep == DepositStrategy::Atomic ? " atomic" : " atomic-free");
        Config cf{v, dep, {}, {}, {}};
        cf.cold = timeRuns(req, 3, label, Pace::Cold, "cccs_wall_cold");
        cf.runs = timeRuns(req, std::max(reps, 10), label, Pace::BackToBack, "cccs_wall_warm");
        cf.paced = timeRuns(req, std::max(reps, 10), label, Pace::Interactive, "cccs_wall_paced");
        configs.push_back(std::move(cf));
      }
    releasePhotonGpuCache();  // the next case's memory, not this one's
  }
  const double steps = configs.empty() ? 0 : double(configs.front().runs.last.voxelDirectionSteps);
  auto rate = [&](double ms) {
    return steps > 0 && ms > 0 ? fmt("%.3g steps/s", steps / (ms * 1e-3)) : std::string();
  };

  // CPU reference: all threads, atomic deposit (each thread owns whole directions), once.
  req.backend = Backend::Cpu;
  req.params.variant = DdaVariant::BranchFree;
  req.params.deposit = DepositStrategy::Atomic;
  const Runs cpu = timeRuns(req, 1, "dda-nc atomic");
  const double cpuMs = cpu.total.medianMs;
  {
    BenchRow r{"cccs", c.name, cpu.total, rate(cpuMs),
               "full CPU run, timed once; the CPU transports " +
                   std::to_string(cpu.last.voxelDirectionSteps) +
                   " segments (from each line's first voxel with TERMA > 0), the GPU " +
                   fmt("%.0f", steps)};
    r.speedupVsCpu = 1.0;
    add(r);
    for (const char* k : {"terma_dda", "cccs_transport"}) {
      const auto it = cpu.profiles.find(k);
      if (it != cpu.profiles.end()) add({"cccs", c.name, it->second, "", "CPU stage"});
    }
  }

  const bool goalCase = c.name.find("256") != std::string::npos;
  auto goal = [&](double ms) {
    return goalCase ? (ms <= 15 ? ", <= 15 ms goal met" : ", above the 15 ms goal") : std::string();
  };
  const Runs* classicTransport[2] = {nullptr, nullptr};  // per deposit, the classic run
  for (const Config& cf : configs) {
    const Runs& R = cf.runs;
    const int depIdx = cf.deposit == DepositStrategy::Atomic ? 0 : 1;
    if (cf.variant == DdaVariant::Classic) classicTransport[depIdx] = &R;
    const double acc = maxDiffPct(R.last.dose, cpu.last.dose);
    const struct {
      const Runs* runs;
      const char* what;
    } walls[] = {
        {&cf.cold,
         "cold: first call on the volume after releasePhotonGpuCache() (density upload and "
         "conversion, device buffers, result memory; CUDA context already up), median of 3"},
        {&cf.runs,
         "warm, back to back: density from the GPU cache, result memory started by the previous "
         "call (waited for if not ready)"},
        {&cf.paced, "warm, interactive: calls 50 ms apart, density cached, result memory ready"},
    };
    for (const auto& w : walls) {
      const double ms = w.runs->total.medianMs;
      BenchRow total{"cccs", c.name, w.runs->total, rate(ms),
                     std::string(w.what) + fmt("; %.0f of ", double(w.runs->cachedCalls)) +
                         std::to_string(w.runs->total.repetitions) + " calls cached" +
                         fmt("; speed-up %.1fx vs CPU", cpuMs / ms) +
                         fmt(", max |cuda-cpu| %.3f %% of max dose", acc) + goal(ms)};
      total.speedupVsCpu = cpuMs / ms;
      total.accuracy = acc;
      total.accuracyWhat = "max |cuda-cpu| in % of max dose";
      add(total);
    }
    const double kMs = R.kernels.medianMs;
    BenchRow kern{
        "cccs", c.name, R.kernels, rate(kMs),
        fmt("GPU kernels (+ slot zero fill), no transfers; %.1fx vs the CPU run", cpuMs / kMs) +
            goal(kMs)};
    kern.speedupVsCpu = cpuMs / kMs;
    add(kern);
    for (const char* k :
         {"host_prepare", "host_setup", "host_output", "host_finish", "cccs_device_total",
          "density_upload", "dose_download",
          "terma_dda", "cccs_transport", "slot_zero_fill", "cccs_slot_gather", "partial_sums"}) {
      const std::string key = k;
      // The upload happens in cold calls only; the rest from the warm back-to-back calls.
      const Runs& from = key == "density_upload" ? cf.cold : R;
      const auto it = from.profiles.find(k);
      if (it == from.profiles.end()) continue;
      const KernelProfile& p = it->second;
      std::string note;
      if (key == "cccs_device_total") {
        note = "first copy or kernel to the end of the dose download (CUDA events), warm";
      } else if (key == "host_prepare") {
        note = "validation, backend choice, cones, beam maps and lattices (host, warm)";
      } else if (key.rfind("host_", 0) == 0) {
        note = p.variant + " (host, warm back to back)";
        const auto pp = cf.paced.profiles.find(k);
        if (pp != cf.paced.profiles.end())
          note += fmt("; %.3f ms at the interactive pace", pp->second.medianMs);
      } else if (key == "density_upload") {
        note = "cold calls only (" + p.variant + ")";
      } else if (p.registersPerThread == 0) {
        note = "copy or fill, CUDA events";
      } else {
        note = fmt("%.0f regs", double(p.registersPerThread)) +
               fmt(", %.0f B smem", double(p.sharedBytesPerBlock)) +
               fmt(", occupancy %.0f %%", 100 * p.theoreticalOccupancy) + ", " +
               std::to_string(from.launches.at(k)) + " launch(es) per run";
      }
      BenchRow row{"cccs", c.name, p, "", note};
      if (key == "cccs_transport") {
        row.rate = rate(p.medianMs);
        const auto ct = cpu.profiles.find("cccs_transport");
        if (ct != cpu.profiles.end()) {
          row.speedupVsCpu = ct->second.medianMs / p.medianMs;
          row.note += fmt("; CPU transport %.0f ms", ct->second.medianMs);
        }
        const Runs* base = classicTransport[depIdx];
        if (base && cf.variant == DdaVariant::BranchFree) {
          const auto bt = base->profiles.find("cccs_transport");
          if (bt != base->profiles.end()) {
            row.speedupVsBaseline = bt->second.medianMs / p.medianMs;
            row.note += fmt("; classic / dda-nc = %.2f", row.speedupVsBaseline);
          }
        }
      } else if (key == "terma_dda") {
        const auto ct = cpu.profiles.find("terma_dda");
        if (ct != cpu.profiles.end()) row.speedupVsCpu = ct->second.medianMs / p.medianMs;
        if (p.bytes > 0) row.rate = fmt("%.0f GB/s", p.gbPerS());
      } else if (p.bytes > 0 && p.medianMs > 0) {
        row.rate = fmt("%.0f GB/s", p.gbPerS());
      }
      add(row);
    }
  }
}

}  // namespace

/// `penumbra-cli bench cccs [--reps R]` (per GPU configuration, after one warm-up call: 3 cold
/// calls, then max(R, 10) warm calls back to back and max(R, 10) at the interactive pace).
std::vector<BenchRow> benchCccs(int reps) {
  std::vector<BenchRow> rows;
  std::cout << "cccs: loading and calibrating the 6 MV model" << std::endl;
  (void)defaultPhotonModel();  // once per process (a CPU dose run); not in any timing
  // PENUMBRA_CCCS_CASES=water (or thorax) runs one case, for quick runs on the GPU machine.
  for (const std::string& c : splitList(std::getenv("PENUMBRA_CCCS_CASES"), "water,thorax")) {
    if (c == "water") benchCase(waterCube(), reps, rows);
    else if (c == "thorax") benchCase(thorax(), reps, rows);
    else PENUMBRA_THROW(InvalidArgument, "bench cccs: unknown case '" + c + "' in PENUMBRA_CCCS_CASES (water, thorax)");
  }
  return rows;
}

}  // namespace penumbra::cli
