// Gamma benchmark (issue 13): one 256^3 case, 2 %/2 mm and 1 %/1 mm global gamma with a 10 %
// cut-off, CUDA and CPU (all threads) in one run, pass rates beside the times.
//  - "box4-256": an analytic four-field photon box dose (AP, PA, LR, RL fields of 10 x 10 cm^2,
//    exponential depth dose, error-function penumbra of sigma 3 mm, zero outside a 28 cm body
//    cylinder) on 256^3 voxels of 1.5 mm (38.4 cm), 2 Gy maximum; evaluated: the same dose
//    shifted 1 mm along x and scaled by 1.01, on the same grid. Analytic rather than a CCCS
//    dose so that the case is the same on every machine and costs no engine run.
// CUDA: whole compareDoses() call (validation, upload, kernel, download, statistics), median of
// the repetitions: cold, warm back to back, warm 50 ms apart; plus the kernel alone. CPU: one call on all hardware threads. Accuracy:
// max |gamma_cuda - gamma_cpu| over the evaluated points, and the pass-rate difference.
// `--write-gamma-case DIR` also writes the two doses as MetaImage (for timing a peer, e.g.
// scripts/reference/pymedphys_gamma.py --bench).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "bench_table.hpp"
#include "compare/compare.hpp"
#include "core/device.hpp"
#include "core/parallel_for.hpp"
#include "image/metaimage_writer.hpp"

namespace penumbra::cli {

namespace {

using namespace penumbra::compare;

double boxDose(Vec3 p) {
  if (p.x * p.x + p.y * p.y > 140.0 * 140.0) return 0;
  // Field edge: 50 % at +-50 mm, sigma 3 mm (erf argument x / (sigma sqrt 2)).
  auto edge = [](double x) {
    const double s = 3.0 * std::sqrt(2.0);
    return 0.5 * (std::erf((50 - x) / s) + std::erf((50 + x) / s));
  };
  const double mu = 0.005;  // 1/mm
  const double ex = edge(p.x), ey = edge(p.y), ez = edge(p.z);
  return 0.5 * (std::exp(-mu * (p.y + 140)) * ex * ez + std::exp(-mu * (140 - p.y)) * ex * ez +
                std::exp(-mu * (p.x + 140)) * ey * ez + std::exp(-mu * (140 - p.x)) * ey * ez);
}

std::shared_ptr<Volume<float>> sampleDose(const Grid& g, double scale, Vec3 shift) {
  auto v = std::make_shared<Volume<float>>(g, 0.0f);
  parallelFor(std::size_t(g.dims[2]), resolveThreads(0), JobControl{}, [&](std::size_t k, int) {
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = 0; i < g.dims[0]; ++i)
        v->at(i, j, int(k)) =
            float(scale * boxDose(g.indexToWorld({double(i), double(j), double(k)}) - shift));
  });
  return v;
}

struct GammaCase {
  std::string name;
  std::shared_ptr<Volume<float>> ref, eval;
};

GammaCase box4() {
  GammaCase c;
  c.name = "box4-256";
  Grid g;
  g.dims = {256, 256, 256};
  g.spacing = {1.5, 1.5, 1.5};
  g.origin = {-0.5 * 255 * 1.5, -0.5 * 255 * 1.5, -0.5 * 255 * 1.5};
  auto ref = sampleDose(g, 1.0, {0, 0, 0});
  // Scale to 2 Gy at the maximum (the pass rates do not depend on it; the numbers read better).
  const float mx = *std::max_element(ref->data.begin(), ref->data.end());
  const double k = 2.0 / mx;
  for (float& d : ref->data) d = float(d * k);
  c.ref = ref;
  c.eval = sampleDose(g, 1.01 * k, {1, 0, 0});
  return c;
}

std::string rateText(const CompareResult& r, double ms) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1f Mpts/s", r.gammaStats.evaluatedPoints / (ms * 1e3));
  return b;
}

std::string passNote(const CompareResult& r) {
  char b[160];
  std::snprintf(b, sizeof b, "pass %.3f %%, mean %.4f, %lld points, depth-limited %lld",
                r.gammaStats.passRatePercent, r.gammaStats.mean,
                (long long)r.gammaStats.evaluatedPoints, (long long)r.gammaStats.depthLimitedPoints);
  return b;
}

double maxGammaDifference(const CompareResult& a, const CompareResult& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.gamma.data.size(); ++i) {
    const float x = a.gamma.data[i], y = b.gamma.data[i];
    if (std::isnan(x) != std::isnan(y)) return std::numeric_limits<double>::infinity();
    if (!std::isnan(x)) worst = std::max(worst, double(std::fabs(x - y)));
  }
  return worst;
}

}  // namespace

std::vector<BenchRow> benchGamma(int reps, const std::string& writeCaseDir) {
  std::vector<BenchRow> rows;
  const auto t0 = std::chrono::steady_clock::now();
  const GammaCase c = box4();
  std::printf("gamma: case %s built in %.1f s\n", c.name.c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (!writeCaseDir.empty()) {
    const std::string comment = "Gy; penumbra-cli bench gamma case " + c.name;
    io::writeMetaImage(writeCaseDir + "/" + c.name + "-reference.mhd", *c.ref, comment + " (reference)");
    io::writeMetaImage(writeCaseDir + "/" + c.name + "-evaluated.mhd", *c.eval,
                       comment + " (evaluated: shifted 1 mm in x, x 1.01)");
    std::printf("gamma: wrote %s/%s-{reference,evaluated}.mhd\n", writeCaseDir.c_str(), c.name.c_str());
  }
  std::string why;
  const bool gpu = !queryCudaDevices(&why).empty();
  if (!gpu) std::cout << "gamma: CUDA rows skipped, no usable GPU (" << why << ")\n";
  for (const double crit : {2.0, 1.0}) {
    CompareRequest req;
    req.reference = c.ref;
    req.evaluated = c.eval;
    req.criteria.dosePercent = crit;
    req.criteria.distanceMm = crit;
    req.criteria.cutoffPercent = 10;
    // PENUMBRA_GAMMA_BUDGET, _GROUP, _STACK, _SKIP and _SLAB: the CUDA search's step budget,
    // lanes per long point, stack entries, boxes passed over a step and log2 of the points a
    // slab (CudaGammaTuning; budget 0 = one lane a point to the end), to compare schedules in
    // one run.
    auto envInt = [](const char* name, int& v) {
      if (const char* e = std::getenv(name); e && *e) v = std::atoi(e);
    };
    envInt("PENUMBRA_GAMMA_BUDGET", req.cudaTuning.stepBudget);
    envInt("PENUMBRA_GAMMA_STACK", req.cudaTuning.stackItems);
    envInt("PENUMBRA_GAMMA_GROUP", req.cudaTuning.laneGroup);
    envInt("PENUMBRA_GAMMA_SKIP", req.cudaTuning.skipLimit);
    envInt("PENUMBRA_GAMMA_SLAB", req.cudaTuning.slabPointsLog2);
    int timeline = 0;
    envInt("PENUMBRA_GAMMA_TIMELINE", timeline);
    req.cudaTuning.timeline = timeline != 0;
    char variant[64];
    std::snprintf(variant, sizeof variant, "%g%%/%gmm global", crit, crit);

    // The CPU path three times, its median the reference of the speed-ups: one run of the 16
    // threads varied 172-340 ms on the GPU machine's host (2026-11-27), so a single sample moved
    // every ratio by up to 2x.
    req.backend = Backend::Cpu;
    std::vector<double> cpuRuns;
    CompareResult cpu;
    for (int r = 0; r < 3; ++r) {
      cpu = CompareResult{};  // as for the GPU below: freeing the last result is not the call
      const auto c0 = std::chrono::steady_clock::now();
      cpu = compareDoses(req);
      cpuRuns.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - c0).count());
    }
    const double cpuMs = medianOf(cpuRuns);
    KernelProfile pc = cpu.profiles.front();
    pc.kernel = "gamma (whole call)";
    pc.variant = variant;
    pc.repetitions = int(cpuRuns.size());
    pc.medianMs = cpuMs;
    pc.minMs = *std::min_element(cpuRuns.begin(), cpuRuns.end());
    BenchRow cpuRow{"gamma", c.name, pc, rateText(cpu, cpuMs), passNote(cpu)};
    if (!gpu) {
      rows.push_back(cpuRow);
      continue;
    }

    req.backend = Backend::Cuda;
    (void)compareDoses(req);  // warm-up: context, module load
    // Cold: nothing cached (doses uploaded, result memory made during the call). Warm: the
    // same doses again with a new criterion, as in the GUI (doses on the GPU, result memory
    // ready).
    std::vector<double> coldMs, ms, kernelMs;
    CompareResult gpuResult;
    for (int r = 0; r < reps; ++r) {
      releaseCompareGpuCache();
      const auto g0 = std::chrono::steady_clock::now();
      gpuResult = compareDoses(req);
      coldMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g0).count());
    }
    for (int r = 0; r < reps; ++r) {
      const auto g0 = std::chrono::steady_clock::now();
      gpuResult = compareDoses(req);
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g0).count());
      kernelMs.push_back(gpuResult.profiles.front().medianMs);
    }
    // Warm again, 50 ms apart: a user changing the criterion (the host memory of the next result
    // is made between calls, not during the next one).
    std::vector<double> pacedMs;
    for (int r = 0; r < reps; ++r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      // The previous result is let go before the clock starts: freeing it is not part of the
      // call (in the GUI it happens when the user drops a comparison).
      gpuResult = CompareResult{};
      const auto g0 = std::chrono::steady_clock::now();
      gpuResult = compareDoses(req);
      pacedMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - g0).count());
    }
    KernelProfile cold = gpuResult.profiles.front();
    cold.kernel = "gamma (whole call, cold)";
    cold.variant = variant;
    cold.repetitions = reps;
    cold.medianMs = medianOf(coldMs);
    cold.minMs = *std::min_element(coldMs.begin(), coldMs.end());
    cold.bytes = 0;
    BenchRow coldRow{"gamma", c.name, cold, rateText(gpuResult, cold.medianMs), "doses uploaded"};
    coldRow.speedupVsCpu = cpuMs / cold.medianMs;
    rows.push_back(coldRow);
    KernelProfile whole = gpuResult.profiles.front();
    whole.kernel = "gamma (whole call, warm)";
    whole.variant = variant;
    whole.repetitions = reps;
    whole.medianMs = medianOf(ms);
    whole.minMs = *std::min_element(ms.begin(), ms.end());
    whole.bytes = 0;
    BenchRow wholeRow{"gamma", c.name, whole, rateText(gpuResult, whole.medianMs), passNote(gpuResult)};
    wholeRow.speedupVsCpu = cpuMs / whole.medianMs;
    wholeRow.accuracy = maxGammaDifference(cpu, gpuResult);
    char diff[96];
    std::snprintf(diff, sizeof diff, "max |gamma cuda - cpu|; pass rates differ by %.4f points",
                  gpuResult.gammaStats.passRatePercent - cpu.gammaStats.passRatePercent);
    wholeRow.accuracyWhat = diff;
    KernelProfile paced = whole;
    paced.kernel = "gamma (whole call, warm, 50 ms apart)";
    paced.medianMs = medianOf(pacedMs);
    paced.minMs = *std::min_element(pacedMs.begin(), pacedMs.end());
    BenchRow pacedRow{"gamma", c.name, paced, rateText(gpuResult, paced.medianMs), passNote(gpuResult)};
    pacedRow.speedupVsCpu = cpuMs / paced.medianMs;
    KernelProfile kernel = gpuResult.profiles.front();
    kernel.variant = variant;
    kernel.repetitions = reps;
    kernel.medianMs = medianOf(kernelMs);
    kernel.minMs = *std::min_element(kernelMs.begin(), kernelMs.end());
    BenchRow kernelRow{"gamma", c.name, kernel, rateText(gpuResult, kernel.medianMs),
                       "search only: its span on the GPU over the slabs (" +
                           gpuResult.profiles.front().variant + ")"};
    kernelRow.speedupVsCpu = cpuMs / kernel.medianMs;
    rows.push_back(wholeRow);
    rows.push_back(pacedRow);
    rows.push_back(kernelRow);
    for (std::size_t p = 1; p < gpuResult.profiles.size(); ++p)
      rows.push_back(BenchRow{"gamma", c.name, gpuResult.profiles[p], "", "last repetition"});
    rows.push_back(cpuRow);
  }
  return rows;
}

}  // namespace penumbra::cli
