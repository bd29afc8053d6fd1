// Photon collapsed-cone (CCCS) benchmark (issue 7), two cases, each with one 6 MV 10 x 10 cm^2
// field from gantry 0, isocentre at the centre, 8 polar x 12 azimuthal cones (96 directions):
//  - "water-256x256x256": a water cube of 256^3 voxels of 2 mm (51.2 cm);
//  - "thorax-512x512x110": a SYNTHETIC thorax-like phantom on a clinical CT grid (512 x 512 x
//    110 voxels of 0.977 x 0.977 x 3 mm): a water body ellipse (34 x 22 cm) in air, two lungs
//    of relative electron density 0.25 and a spine of 1.6 (no DICOM on the GPU machine).
// Per case: the CPU reference (all threads, atomic deposit, timed once), then on CUDA classic
// vs DDA-nc x atomic vs atomic-free: the whole computePhotonDose() wall time (validation,
// density resampling, beam preparation, upload, kernels, download), the device span (upload to
// download, CUDA events), the sum of the kernels, and each kernel's profile. Rates are
// voxel-direction steps per second: segments transported (from a line's first voxel with
// TERMA > 0 to its exit), the GPU's count, the same for every row of a case. Accuracy: max
// |cuda - cpu| in % of the maximum dose.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>

#include "bench_table.hpp"
#include "core/device.hpp"
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
  PhotonDoseResult last;
};

Runs timeRuns(const PhotonDoseRequest& req, int reps, const std::string& variant) {
  Runs out;
  std::vector<double> totals, sums;
  std::map<std::string, std::vector<double>> times;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    PhotonDoseResult res = computePhotonDose(req);
    totals.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    double sum = 0;
    for (const KernelProfile& p : res.profiles) {
      times[p.kernel].push_back(p.medianMs);
      out.profiles[p.kernel] = p;
      out.launches[p.kernel] = p.repetitions;  // a result's profile counts its launches
      if (p.kernel != "cccs_device_total" && p.kernel != "density_upload" &&
          p.kernel != "dose_download")
        sum += p.medianMs;  // kernels (and the slot zero fill) only
    }
    sums.push_back(sum);
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
  fill(out.total, "cccs_total", totals);
  fill(out.kernels, "cccs_kernels_sum", sums);
  return out;
}

std::string fmt(const char* f, double v) {
  char b[96];
  std::snprintf(b, sizeof b, f, v);
  return b;
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
    Runs runs;
  };
  std::vector<Config> configs;
  if (gpu) {
    req.backend = Backend::Cuda;
    for (DepositStrategy dep : {DepositStrategy::Atomic, DepositStrategy::AtomicFree})
      for (DdaVariant v : {DdaVariant::Classic, DdaVariant::BranchFree}) {
        req.params.variant = v;
        req.params.deposit = dep;
        (void)computePhotonDose(req);  // warm-up: module load, allocator, host pages
        const std::string label = std::string(toString(v)) +
                                  (dep == DepositStrategy::Atomic ? " atomic" : " atomic-free");
        configs.push_back({v, dep, timeRuns(req, std::max(reps, 5), label)});
      }
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
               "full CPU run, timed once; " + std::to_string(cpu.last.voxelDirectionSteps) +
                   " segments walked by the CPU (from each culled line's volume entry)"};
    r.speedupVsCpu = 1.0;
    add(r);
    for (const char* k : {"terma_dda", "cccs_transport"}) {
      const auto it = cpu.profiles.find(k);
      if (it != cpu.profiles.end()) add({"cccs", c.name, it->second, "", "CPU stage"});
    }
  }

  const Runs* classicTransport[2] = {nullptr, nullptr};  // per deposit, the classic run
  for (const Config& cf : configs) {
    const Runs& R = cf.runs;
    const int depIdx = cf.deposit == DepositStrategy::Atomic ? 0 : 1;
    if (cf.variant == DdaVariant::Classic) classicTransport[depIdx] = &R;
    const double acc = maxDiffPct(R.last.dose, cpu.last.dose);
    BenchRow total{"cccs", c.name, R.total, rate(R.total.medianMs),
                   fmt("speed-up %.1fx vs CPU", cpuMs / R.total.medianMs) +
                       fmt(", max |cuda-cpu| %.3f %% of max dose", acc) +
                       "; wall time of computePhotonDose (host preparation included)"};
    total.speedupVsCpu = cpuMs / R.total.medianMs;
    total.accuracy = acc;
    total.accuracyWhat = "max |cuda-cpu| in % of max dose";
    add(total);
    const double kMs = R.kernels.medianMs;
    BenchRow kern{
        "cccs", c.name, R.kernels, rate(kMs),
        fmt("GPU kernels (+ slot zero fill), no transfers; %.1fx vs the CPU run", cpuMs / kMs) +
            (c.name.find("256") != std::string::npos
                 ? (kMs <= 15 ? ", <= 15 ms goal met" : ", above the 15 ms goal")
                 : std::string())};
    kern.speedupVsCpu = cpuMs / kMs;
    add(kern);
    for (const char* k : {"cccs_device_total", "density_upload", "dose_download", "terma_dda",
                          "cccs_transport", "slot_zero_fill", "cccs_slot_gather", "partial_sums"}) {
      const auto it = R.profiles.find(k);
      if (it == R.profiles.end()) continue;
      const KernelProfile& p = it->second;
      std::string note;
      if (std::string(k) == "cccs_device_total")
        note =
            "upload of the density to download of the dose (CUDA events; includes GPU idle "
            "while the host zero-fills the fresh output volume)";
      else if (p.registersPerThread == 0)
        note = "copy or fill, CUDA events";
      else
        note = fmt("%.0f regs", double(p.registersPerThread)) +
               fmt(", %.0f B smem", double(p.sharedBytesPerBlock)) +
               fmt(", occupancy %.0f %%", 100 * p.theoreticalOccupancy) + ", " +
               std::to_string(R.launches.at(k)) + " launch(es) per run";
      BenchRow row{"cccs", c.name, p, "", note};
      if (std::string(k) == "cccs_transport") {
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
      } else if (std::string(k) == "terma_dda") {
        const auto ct = cpu.profiles.find("terma_dda");
        if (ct != cpu.profiles.end()) row.speedupVsCpu = ct->second.medianMs / p.medianMs;
        if (p.bytes > 0) row.rate = fmt("%.0f GB/s", p.gbPerS());
      } else if (p.bytes > 0) {
        row.rate = fmt("%.0f GB/s", p.gbPerS());
      }
      add(row);
    }
  }
}

}  // namespace

/// `penumbra-cli bench cccs [--reps R]` (GPU runs: max(R, 5) each, after one warm-up).
std::vector<BenchRow> benchCccs(int reps) {
  std::vector<BenchRow> rows;
  std::cout << "cccs: loading and calibrating the 6 MV model" << std::endl;
  (void)defaultPhotonModel();  // once per process (a CPU dose run); not in any timing
  benchCase(waterCube(), reps, rows);
  benchCase(thorax(), reps, rows);
  return rows;
}

}  // namespace penumbra::cli
