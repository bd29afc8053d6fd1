// MCML driver: validation, batches, standard errors and MCML's output scaling (ScaleRdTt,
// ScaleA, Sum2DRd, Sum2DA of mcmlio.c). The backends only return raw weight sums per batch.
#include "mcml/mcml.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/host_memory.hpp"
#include "mcml/mcml_transport.hpp"

namespace penumbra::mcml {

namespace {
constexpr double kPi = 3.14159265358979323846;
struct MethodName {
  TallyMethod m;
  const char* name;
};
constexpr MethodName kNames[] = {
    {TallyMethod::FloatAtomic, "float"},          {TallyMethod::DoubleAtomic, "double"},
    {TallyMethod::WarpAggregatedDouble, "warp-double"}, {TallyMethod::KahanFloatPair, "kahan"},
    {TallyMethod::FixedPoint64, "fixed64"},       {TallyMethod::SharedBuffer, "shared"},
    {TallyMethod::RegisterCache, "register"},     {TallyMethod::SharedRegister, "shared-register"}};

unsigned cpuThreads(const McmlConfig& c) {
  return c.cpuThreads > 0 ? unsigned(c.cpuThreads)
                          : std::max(1u, std::thread::hardware_concurrency());
}

/// "12 s", "45 min", "24 h", "52 days", "3 years".
std::string formatDuration(double s) {
  char buf[48];
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%.0f s", s);
  else if (s < 7200)
    std::snprintf(buf, sizeof buf, "%.0f min", s / 60);
  else if (s < 2 * 86400.0)
    std::snprintf(buf, sizeof buf, "%.0f h", s / 3600);
  else if (s < 2 * 365 * 86400.0)
    std::snprintf(buf, sizeof buf, "%.0f days", s / 86400);
  else
    std::snprintf(buf, sizeof buf, "%.3g years", s / (365 * 86400.0));
  return buf;
}

/// MCML IzToLayer: the layer (0-based here) holding the centre of depth bin iz.
int izToLayer(const LayeredMedium& m, const McmlConfig& c, int iz) {
  double z1 = 0;
  const int nl = int(m.layers.size());
  int i = 0;
  z1 = m.layers[0].d;
  while ((iz + 0.5) * c.dz >= z1 && i < nl - 1) {
    ++i;
    z1 += m.layers[std::size_t(i)].d;
  }
  return i;
}
}  // namespace

const char* toString(TallyMethod m) {
  for (const auto& n : kNames)
    if (n.m == m) return n.name;
  return "?";
}

TallyMethod parseTallyMethod(const std::string& text) {
  for (const auto& n : kNames)
    if (text == n.name) return n.m;
  std::string all;
  for (const auto& n : kNames) all += std::string(all.empty() ? "" : ", ") + n.name;
  PENUMBRA_THROW(InvalidArgument, "unknown tally method '" + text + "' (one of: " + all + ")");
}

std::vector<TallyMethod> allTallyMethods() {
  std::vector<TallyMethod> v;
  for (const auto& n : kNames) v.push_back(n.m);
  return v;
}

bool tallyConservesEnergy(TallyMethod m) { return m != TallyMethod::FloatAtomic; }

void McmlTally::resize(const McmlConfig& c) {
  Rd_ra.assign(std::size_t(c.nr) * c.na, 0.0);
  Tt_ra.assign(std::size_t(c.nr) * c.na, 0.0);
  A_rz.assign(std::size_t(c.nr) * c.nz, 0.0);
  rouletteGain = 0;
}

void validate(const LayeredMedium& m, const McmlConfig& c) {
  PENUMBRA_REQUIRE(!m.layers.empty(), InvalidArgument, "the medium has no layers");
  PENUMBRA_REQUIRE(int(m.layers.size()) <= kMaxLayers, InvalidArgument,
                   "at most " + std::to_string(kMaxLayers) + " layers are supported");
  PENUMBRA_REQUIRE(
      m.nAbove >= 1 && m.nBelow >= 1 && std::isfinite(m.nAbove) && std::isfinite(m.nBelow),
      InvalidArgument,
      "ambient refractive indices must be >= 1 (above " + formatG(m.nAbove) + ", below " +
          formatG(m.nBelow) + ")");
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    const Layer& l = m.layers[i];
    const std::string at = "layer " + std::to_string(i + 1) + ": ";
    PENUMBRA_REQUIRE(l.n >= 1 && std::isfinite(l.n), InvalidArgument,
                     at + "refractive index " + formatG(l.n) + " is below 1");
    PENUMBRA_REQUIRE(l.mua >= 0 && l.mus >= 0, InvalidArgument, at + "mua and mus must be >= 0");
    PENUMBRA_REQUIRE(l.g > -1 && l.g < 1, InvalidArgument, at + "g must lie in (-1, 1)");
    PENUMBRA_REQUIRE(l.d > 0 && std::isfinite(l.d), InvalidArgument,
                     at + "thickness " + formatG(l.d) + " cm must be finite and positive");
    PENUMBRA_REQUIRE(std::isfinite(l.mua) && std::isfinite(l.mus), InvalidArgument,
                     at + "mua and mus must be finite");
  }
  PENUMBRA_REQUIRE(c.packets >= 1, InvalidArgument, "packets must be at least 1");
  PENUMBRA_REQUIRE(c.dz > 0 && c.dr > 0 && std::isfinite(c.dz) && std::isfinite(c.dr),
                   InvalidArgument, "dz and dr must be finite and positive");
  PENUMBRA_REQUIRE(c.nz >= 1 && c.nr >= 1 && c.na >= 1, InvalidArgument,
                   "nz, nr and na must be at least 1");
  PENUMBRA_REQUIRE(c.batches >= 2 && std::uint64_t(c.batches) <= c.packets, InvalidArgument,
                   "batches must be in [2, packets]");
  PENUMBRA_REQUIRE(c.weightThreshold > 0 && c.rouletteChance > 0 && c.rouletteChance <= 1,
                   InvalidArgument, "bad roulette parameters");
}

double specularReflectance(const LayeredMedium& m) {
  const double n0 = m.nAbove, n1 = m.layers[0].n;
  double r1 = (n0 - n1) / (n0 + n1);
  r1 *= r1;
  const Layer& l1 = m.layers[0];
  if (l1.mua == 0.0 && l1.mus == 0.0 && m.layers.size() > 1) {  // glass first layer
    const double n2 = m.layers[1].n;
    double r2 = (n1 - n2) / (n1 + n2);
    r2 *= r2;
    r1 = r1 + (1 - r1) * (1 - r1) * r2 / (1 - r1 * r2);
  }
  return r1;
}

std::size_t workspaceBytes(const McmlConfig& c) {
  // Worst case (Kahan pairs, 8 bytes a bin) for A_rz, Rd_ra and Tt_ra, plus a few scalars.
  const double bins = double(c.nr) * double(c.nz) + 2.0 * double(c.nr) * double(c.na);
  return std::size_t(std::min(bins * 8 + 4096, 1.8e19));
}

double hostBytes(const McmlConfig& c, Backend backend) {
  const double nrz = double(c.nr) * double(c.nz), nra = double(c.nr) * double(c.na);
  const double tally = nrz + 2 * nra;  // one McmlTally
  // runMcml: the sum, one batch's tally, sumSqA, and the results A_rz, A_rzErr, fluence, Rd_ra,
  // Tt_ra and the 1D arrays. CPU: a tally per thread; CUDA: the download buffer.
  double doubles = 2 * tally + nrz + 3 * nrz + 2 * nra + double(c.nz) + 2.0 * c.nr + 2.0 * c.na;
  if (backend == Backend::Cuda)
    doubles += std::max(nrz, nra);
  else
    doubles += tally * double(cpuThreads(c));
  return 8 * doubles;
}

McmlResult runMcml(const LayeredMedium& m, const McmlConfig& c, const JobControl& job) {
  validate(m, c);
  const BackendChoice choice = selectBackend(c.backend);
  const std::string grid = "nr x nz = " + std::to_string(c.nr) + " x " + std::to_string(c.nz) +
                           " bins for A_rz, nr x na = " + std::to_string(c.nr) + " x " +
                           std::to_string(c.na) + " for Rd_ra and Tt_ra";
  refuseIfHostMemoryExceeded(hostBytes(c, choice.backend), "MCML", grid);
  if (choice.backend == Backend::Cuda && choice.device) {
    const double need = double(workspaceBytes(c)), free = double(choice.device->freeMemoryBytes);
    if (need > 0.95 * free)
      PENUMBRA_THROW(OutOfMemory, "MCML needs " + formatBytes(need) + " on the GPU but " +
                                      formatBytes(free) + " are free on " + choice.device->name +
                                      " (" + grid + ")");
  }
  if (choice.backend == Backend::Cpu && c.maxCpuSeconds > 0 && c.packets > 4000) {
    const double seconds = estimateCpuSeconds(m, c);
    if (seconds > c.maxCpuSeconds)
      PENUMBRA_THROW(Unsupported,
                     "MCML on the CPU: " + std::to_string(c.packets) +
                         " packets would take about " + formatDuration(seconds) + " on " +
                         std::to_string(cpuThreads(c)) +
                         " threads (estimated from a pilot run); the limit is " +
                         formatDuration(c.maxCpuSeconds) +
                         ". Use fewer packets, a GPU, or a higher limit (maxCpuSeconds)");
  }
  McmlResult res;
  res.backend = choice.backend;
  if (!choice.message.empty()) res.messages.push_back(choice.message);
  res.tally = c.tally;
  res.Rsp = specularReflectance(m);
  const std::size_t nrz = std::size_t(c.nr) * c.nz, nra = std::size_t(c.nr) * c.na;
  McmlTally sum;
  sum.resize(c);
  std::vector<double> sumSqA(nrz, 0.0);
  std::vector<double> bRd, bA, bTt;
  const int B = c.batches;
  for (int b = 0; b < B; ++b) {
    job.checkCancel();
    const std::uint64_t first = c.packets * std::uint64_t(b) / std::uint64_t(B);
    const std::uint64_t count = c.packets * std::uint64_t(b + 1) / std::uint64_t(B) - first;
    McmlTally t;
    t.resize(c);
    if (choice.backend == Backend::Cuda) {
      res.elapsedMs += runBatchCuda(m, c, first, count, t, &res.device, &res.devicesUsed,
                                    &res.profiles);
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      runBatchCpu(m, c, first, count, t);
      res.elapsedMs +=
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      res.device = "cpu";
    }
    double rd = 0, a = 0, tt = 0;
    for (std::size_t i = 0; i < nra; ++i) {
      rd += t.Rd_ra[i];
      tt += t.Tt_ra[i];
      sum.Rd_ra[i] += t.Rd_ra[i];
      sum.Tt_ra[i] += t.Tt_ra[i];
    }
    for (std::size_t i = 0; i < nrz; ++i) {
      a += t.A_rz[i];
      sum.A_rz[i] += t.A_rz[i];
      const double x = t.A_rz[i] / double(count);
      sumSqA[i] += x * x;
    }
    sum.rouletteGain += t.rouletteGain;
    bRd.push_back(rd / double(count));
    bA.push_back(a / double(count));
    bTt.push_back(tt / double(count));
    job.report(double(b + 1) / B, "tracing photon packets");
  }
  auto stderrOf = [B](const std::vector<double>& v) {
    double mean = 0, ss = 0;
    for (double x : v) mean += x;
    mean /= B;
    for (double x : v) ss += (x - mean) * (x - mean);
    return std::sqrt(ss / (double(B) * (B - 1)));
  };
  res.RdErr = stderrOf(bRd);
  res.AErr = stderrOf(bA);
  res.TtErr = stderrOf(bTt);

  // MCML Sum2DRd / Sum2DA and ScaleRdTt / ScaleA.
  const double N = double(c.packets), dr = c.dr, dz = c.dz;
  const double da = 0.5 * kPi / c.na;
  res.Rd_r.assign(std::size_t(c.nr), 0.0);
  res.Tt_r.assign(std::size_t(c.nr), 0.0);
  res.Rd_a.assign(std::size_t(c.na), 0.0);
  res.Tt_a.assign(std::size_t(c.na), 0.0);
  res.Rd_ra.assign(nra, 0.0);
  res.Tt_ra.assign(nra, 0.0);
  for (int ir = 0; ir < c.nr; ++ir)
    for (int ia = 0; ia < c.na; ++ia) {
      const std::size_t i = std::size_t(ir) * c.na + ia;
      res.Rd_r[std::size_t(ir)] += sum.Rd_ra[i];
      res.Rd_a[std::size_t(ia)] += sum.Rd_ra[i];
      res.Tt_r[std::size_t(ir)] += sum.Tt_ra[i];
      res.Tt_a[std::size_t(ia)] += sum.Tt_ra[i];
      res.Rd += sum.Rd_ra[i];
      res.Tt += sum.Tt_ra[i];
      const double s2 = 1.0 / ((ir + 0.5) * std::sin(2.0 * (ia + 0.5) * da) * 4.0 * kPi * kPi *
                               dr * std::sin(da / 2) * dr * N);
      res.Rd_ra[i] = sum.Rd_ra[i] * s2;
      res.Tt_ra[i] = sum.Tt_ra[i] * s2;
    }
  for (int ir = 0; ir < c.nr; ++ir) {
    const double s = 1.0 / ((ir + 0.5) * 2.0 * kPi * dr * dr * N);
    res.Rd_r[std::size_t(ir)] *= s;
    res.Tt_r[std::size_t(ir)] *= s;
  }
  for (int ia = 0; ia < c.na; ++ia) {
    const double s = 1.0 / (std::sin((ia + 0.5) * da) * 2.0 * kPi * da * N);
    res.Rd_a[std::size_t(ia)] *= s;
    res.Tt_a[std::size_t(ia)] *= s;
  }
  res.Rd /= N;
  res.Tt /= N;
  res.A_z.assign(std::size_t(c.nz), 0.0);
  res.A_l.assign(m.layers.size(), 0.0);
  res.A_rz.assign(nrz, 0.0);
  res.A_rzErr.assign(nrz, 0.0);
  res.fluence.assign(nrz, 0.0);
  for (int iz = 0; iz < c.nz; ++iz) {
    const int layer = izToLayer(m, c, iz);
    const double mua = m.layers[std::size_t(layer)].mua;
    for (int ir = 0; ir < c.nr; ++ir) {
      const std::size_t i = std::size_t(ir) * c.nz + iz;
      res.A_z[std::size_t(iz)] += sum.A_rz[i];
      const double vol = (ir + 0.5) * 2.0 * kPi * dr * dr * dz * N;
      res.A_rz[i] = sum.A_rz[i] / vol;
      const double mean = sum.A_rz[i] / N;  // per-packet batch mean (equal-size batches)
      const double var = std::max(0.0, (sumSqA[i] - B * mean * mean) / (B - 1));
      res.A_rzErr[i] = std::sqrt(var / B) * N / vol;
      res.fluence[i] = mua > 0 ? res.A_rz[i] / mua : 0.0;
    }
    res.A_l[std::size_t(layer)] += res.A_z[std::size_t(iz)] / N;
    res.A += res.A_z[std::size_t(iz)];
    res.A_z[std::size_t(iz)] /= dz * N;
  }
  res.A /= N;
  res.rouletteGain = sum.rouletteGain / N;
  return res;
}

}  // namespace penumbra::mcml
