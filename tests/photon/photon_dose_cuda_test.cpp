// CUDA backend of the photon collapsed-cone engine against the CPU reference (double): seeded
// random-density phantoms (anisotropic voxels, an oblique grid, two beams with collimator
// rotation), a 10 x 10 cm^2 field in water, both DDA variants and both deposit strategies; the
// reproducibility claims on the GPU (classic = DDA-nc bit for bit, atomic-free runs bitwise
// identical, atomic vs atomic-free within float rounding); energy bookkeeping; refusal of a plan
// that does not fit; cancel; the GPU cache across calls (identical bits from the cached density,
// invalidation by another volume, the CT converted on the GPU as on the host, a resampled
// density); the same transport-segment count on both backends; the workspace estimate covering
// what the GPU run keeps. Skips without a device or without the photon-beam data.
//
// The CUDA backend poisons TERMA (always) and the dose (atomic-free deposit) with NaN before its
// launches, and the comparisons count non-finite voxels, so a voxel that no kernel wrote
// cannot pass as a zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <span>
#include <string>
#include <thread>

#include "core/device.hpp"
#include "core/error.hpp"
#include "photon/photon_backend.hpp"
#include "photon/photon_dose.hpp"
#include "photon/photon_phantoms.hpp"
#include "raytrace/raytrace.hpp"
#include "test_data.hpp"
#include "gpu_test_support.hpp"

namespace penumbra::photon {
namespace {

#define REQUIRE_GPU_AND_DATA()          \
  do {                                  \
    REQUIRE_GPU();                      \
    PENUMBRA_REQUIRE_DATA("photon-beam"); \
  } while (0)

/// The uncalibrated 6 MV model (raw dose units; no calibration run needed for comparisons).
std::shared_ptr<const PhotonBeamModel> rawModel() {
  static const auto model = PhotonBeamModel::load6MV(penumbra::test::testDataDir());
  return model;
}

int hardwareThreads() { return std::max(1, int(std::thread::hardware_concurrency())); }

/// Seeded random phantom: a water-like body with 12 random boxes of RED 0.05..2.0 (lung, air
/// pockets, bone), anisotropic voxels, odd sizes (not multiples of the 32 x 4 line tiles). Seed
/// 2 uses an oblique grid (axes permuted and flipped), the others an LPS-aligned one. Two beams
/// at random gantry and collimator angles with rectangular fields.
PhotonDoseRequest randomCase(std::uint32_t seed, Backend backend) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  Grid g;
  g.dims = {37 + int(seed % 3) * 4, 29 + int(seed % 2) * 6, 33};
  g.spacing = {3.0, 2.5, 3.5};
  if (seed == 2) g.direction = Mat3::fromColumns(Vec3{0, 1, 0}, Vec3{-1, 0, 0}, Vec3{0, 0, 1});
  const Vec3 half{0.5 * (g.dims[0] - 1) * g.spacing.x, 0.5 * (g.dims[1] - 1) * g.spacing.y,
                  0.5 * (g.dims[2] - 1) * g.spacing.z};
  const Vec3 centre = g.direction * half;
  g.origin = Vec3{-centre.x, -centre.y, -centre.z};  // the grid's centre at the origin
  auto density = std::make_shared<Volume<float>>(g, 1.0f);
  for (int b = 0; b < 12; ++b) {
    int lo[3], hi[3];
    for (int a = 0; a < 3; ++a) {
      lo[a] = int(uni(rng) * g.dims[a]);
      hi[a] = std::min(g.dims[a] - 1, lo[a] + 2 + int(uni(rng) * g.dims[a] / 3));
    }
    const float rho = float(0.05 + 1.95 * uni(rng));
    for (int k = lo[2]; k <= hi[2]; ++k)
      for (int j = lo[1]; j <= hi[1]; ++j)
        for (int i = lo[0]; i <= hi[0]; ++i) density->at(i, j, k) = rho;
  }
  PhotonDoseRequest req;
  req.density = density;
  for (int b = 0; b < 2; ++b) {
    PhotonBeam beam;
    beam.name = "beam" + std::to_string(b);
    beam.gantryDeg = 360 * uni(rng);
    beam.collimatorDeg = 90 * uni(rng);
    beam.isocenter = {10 * (uni(rng) - 0.5), 10 * (uni(rng) - 0.5), 10 * (uni(rng) - 0.5)};
    beam.x1Mm = -20 - 20 * uni(rng);
    beam.x2Mm = 15 + 20 * uni(rng);
    beam.y1Mm = -25 - 10 * uni(rng);
    beam.y2Mm = 20 + 15 * uni(rng);
    beam.monitorUnits = 50 + 100 * uni(rng);
    req.beams.push_back(beam);
  }
  req.backend = backend;
  req.model = rawModel();
  req.params.cpuThreads = hardwareThreads();
  req.params.keepTerma = true;
  return req;
}

/// 10 x 10 cm^2 at SSD 100 cm on a 20 x 20 x 20 cm^3 water box (4 mm lateral, 2.5 mm depth).
PhotonDoseRequest waterCase(Backend backend) {
  WaterBoxSpec spec;
  spec.widthMm = 200;
  spec.depthMm = 200;
  spec.lateralSpacingMm = 4;
  spec.depthSpacingMm = 2.5;
  const PhotonPhantomCase pc = makeWaterBox(spec);
  PhotonDoseRequest req;
  req.density = pc.density;
  req.beams = pc.beams;
  req.backend = backend;
  req.model = rawModel();
  req.params.cpuThreads = hardwareThreads();
  req.params.keepTerma = true;
  return req;
}

double maxOf(std::span<const float> v) {
  double m = 0;
  for (float x : v) m = std::max(m, double(x));
  return m;
}

/// Max |gpu - cpu| relative to the CPU maximum; counts non-finite GPU voxels (poison that was
/// never overwritten) and dumps the worst voxel on failure.
double compareVolumes(const Volume<float>& gpu, const Volume<float>& cpu, const std::string& name) {
  const double vmax = maxOf(cpu.data);
  EXPECT_GT(vmax, 0.0) << name;
  EXPECT_GT(maxOf(gpu.data), 0.0) << name;
  EXPECT_EQ(gpu.data.size(), cpu.data.size()) << name;
  double worst = 0;
  std::size_t at = 0, nonFinite = 0;
  for (std::size_t v = 0; v < cpu.data.size() && v < gpu.data.size(); ++v) {
    if (!std::isfinite(gpu.data[v])) {
      ++nonFinite;
      continue;
    }
    const double d = std::fabs(double(gpu.data[v]) - double(cpu.data[v]));
    if (d > worst) worst = d, at = v;
  }
  EXPECT_EQ(nonFinite, 0u) << name << ": voxels left unwritten (poison)";
  const double rel = vmax > 0 ? worst / vmax : 0;
  std::printf("%s: max %.5g, max |cuda - cpu| = %.3g %% of max (voxel %zu: %.6g vs %.6g)\n",
              name.c_str(), vmax, 100 * rel, at, double(gpu.data[at]), double(cpu.data[at]));
  if (rel >= 5e-3) {
    std::ofstream dump(name + "_cuda_vs_cpu.txt");
    dump << "voxel " << at << " cuda " << gpu.data[at] << " cpu " << cpu.data[at] << " max " << vmax
         << "\n";
  }
  return rel + double(nonFinite);
}

/// Sum of dose x mass [raw units x g] of a single-beam result divided by its Gy scale: the
/// deposited energy as the dose volume holds it.
double doseEnergy(const PhotonDoseResult& res, const Volume<float>& density, double gyPerRaw) {
  const double voxelCm3 = res.dose.grid.voxelVolumeMm3() / 1000.0;
  double e = 0;
  for (std::size_t v = 0; v < res.dose.data.size(); ++v)
    e += double(res.dose.data[v]) * std::max(double(density.data[v]), 1e-3) * voxelCm3;
  return e / gyPerRaw;
}

TEST(PhotonDoseCuda, RandomDensityPhantomsMatchCpuWithinHalfAPercent) {
  REQUIRE_GPU_AND_DATA();
  for (std::uint32_t seed : {1u, 2u, 3u}) {
    PhotonDoseRequest req = randomCase(seed, Backend::Cpu);
    req.params.deposit = DepositStrategy::AtomicFree;
    const PhotonDoseResult cpu = computePhotonDose(req);
    req.backend = Backend::Cuda;
    for (DdaVariant v : {DdaVariant::Classic, DdaVariant::BranchFree})
      for (DepositStrategy dep : {DepositStrategy::Atomic, DepositStrategy::AtomicFree}) {
        req.params.variant = v;
        req.params.deposit = dep;
        const PhotonDoseResult gpu = computePhotonDose(req);
        ASSERT_EQ(gpu.backend, Backend::Cuda);
        const std::string name = "random" + std::to_string(seed) + "-" + toString(v) +
                                 (dep == DepositStrategy::Atomic ? "-atomic" : "-atomic-free");
        EXPECT_LT(compareVolumes(gpu.dose, cpu.dose, name + "-dose"), 5e-3);
        EXPECT_LT(compareVolumes(gpu.terma, cpu.terma, name + "-terma"), 1e-3);
        EXPECT_FALSE(gpu.profiles.empty());
      }
  }
}

TEST(PhotonDoseCuda, WaterTenByTenFieldMatchesCpuWithinHalfAPercent) {
  REQUIRE_GPU_AND_DATA();
  PhotonDoseRequest req = waterCase(Backend::Cpu);
  req.params.deposit = DepositStrategy::Atomic;
  const PhotonDoseResult cpu = computePhotonDose(req);
  req.backend = Backend::Cuda;
  for (DepositStrategy dep : {DepositStrategy::Atomic, DepositStrategy::AtomicFree}) {
    req.params.deposit = dep;
    const PhotonDoseResult gpu = computePhotonDose(req);
    const std::string name =
        std::string("water-10x10-") + (dep == DepositStrategy::Atomic ? "atomic" : "atomic-free");
    EXPECT_LT(compareVolumes(gpu.dose, cpu.dose, name), 5e-3);
    // The energy bookkeeping agrees with the CPU's to float rounding.
    EXPECT_NEAR(gpu.energy.termaEnergy, cpu.energy.termaEnergy, 1e-4 * cpu.energy.termaEnergy);
    EXPECT_NEAR(gpu.energy.released, cpu.energy.released, 1e-4 * cpu.energy.released);
    EXPECT_NEAR(gpu.energy.deposited, cpu.energy.deposited, 1e-4 * cpu.energy.deposited);
    EXPECT_NEAR(gpu.energy.escaped, cpu.energy.escaped, 1e-3 * cpu.energy.escaped);
  }
}

TEST(PhotonDoseCuda, ClassicAndDdaNcAreBitwiseIdenticalOnTheGpu) {
  REQUIRE_GPU_AND_DATA();
  PhotonDoseRequest req = randomCase(7, Backend::Cuda);
  req.params.deposit = DepositStrategy::AtomicFree;  // deterministic sums: bits comparable
  req.params.variant = DdaVariant::Classic;
  const PhotonDoseResult a = computePhotonDose(req);
  req.params.variant = DdaVariant::BranchFree;
  const PhotonDoseResult b = computePhotonDose(req);
  ASSERT_GT(maxOf(a.dose.data), 0.0);
  EXPECT_EQ(std::memcmp(a.dose.data.data(), b.dose.data.data(), a.dose.data.size() * 4), 0);
  EXPECT_EQ(std::memcmp(a.terma.data.data(), b.terma.data.data(), a.terma.data.size() * 4), 0);
  EXPECT_EQ(a.voxelDirectionSteps, b.voxelDirectionSteps);
}

TEST(PhotonDoseCuda, AtomicFreeRunsAreBitwiseIdentical) {
  REQUIRE_GPU_AND_DATA();
  PhotonDoseRequest req = waterCase(Backend::Cuda);
  req.params.deposit = DepositStrategy::AtomicFree;
  const PhotonDoseResult first = computePhotonDose(req);
  ASSERT_GT(maxOf(first.dose.data), 0.0);
  for (int run = 0; run < 3; ++run) {
    const PhotonDoseResult again = computePhotonDose(req);
    EXPECT_EQ(
        std::memcmp(first.dose.data.data(), again.dose.data.data(), first.dose.data.size() * 4), 0)
        << "run " << run;
    EXPECT_EQ(again.energy.deposited, first.energy.deposited);
  }
}

TEST(PhotonDoseCuda, AtomicAndAtomicFreeAgreeToFloatRounding) {
  REQUIRE_GPU_AND_DATA();
  for (std::uint32_t seed : {4u, 5u}) {
    PhotonDoseRequest req = randomCase(seed, Backend::Cuda);
    req.params.deposit = DepositStrategy::Atomic;
    const PhotonDoseResult a = computePhotonDose(req);
    req.params.deposit = DepositStrategy::AtomicFree;
    const PhotonDoseResult f = computePhotonDose(req);
    const double dmax = maxOf(f.dose.data);
    ASSERT_GT(dmax, 0.0);
    double worst = 0;
    for (std::size_t v = 0; v < f.dose.data.size(); ++v)
      worst = std::max(worst, std::fabs(double(a.dose.data[v]) - double(f.dose.data[v])));
    std::printf("seed %u: max |atomic - atomic-free| = %.3g of max dose\n", seed, worst / dmax);
    EXPECT_LE(worst, 1e-5 * dmax);
  }
}

TEST(PhotonDoseCuda, EnergyIsConservedOnTheGpu) {
  REQUIRE_GPU_AND_DATA();
  // One beam, so that the dose volume divided by the beam's Gy scale is the raw dose.
  for (DepositStrategy dep : {DepositStrategy::Atomic, DepositStrategy::AtomicFree}) {
    PhotonDoseRequest req = randomCase(6, Backend::Cuda);
    req.beams.resize(1);
    req.params.deposit = dep;
    const PhotonDoseResult res = computePhotonDose(req);
    const EnergyBalance& e = res.energy;
    ASSERT_GT(e.released, 0.0);
    // Released energy splits into deposited and escaped (per-line float sums: 1e-5).
    EXPECT_NEAR(e.deposited + e.escaped, e.released, 1e-5 * e.released);
    // Every voxel's TERMA enters each direction once: released = TERMA energy x the kernel's
    // energy fraction (sum over the bands), up to lines clipped at the grid's corners.
    double fraction = 0;
    const ConeSet cones =
        collapseKernel(rawModel()->kernel, req.params.polarCones, req.params.azimuthalCones);
    for (const ConeBand& b : cones.bands) fraction += b.fraction;
    EXPECT_NEAR(e.released, e.termaEnergy * fraction, 1e-4 * e.released);
    // The dose volume holds exactly the deposited energy (no slot lost or counted twice).
    const double gy = rawModel()->gyPerMuPerRawDose > 0
                          ? req.beams[0].monitorUnits * rawModel()->gyPerMuPerRawDose
                          : 1.0;
    const double inDose = doseEnergy(res, *req.density, gy);
    std::printf("%s: released %.6g, deposited %.6g + escaped %.6g, in the dose volume %.6g\n",
                dep == DepositStrategy::Atomic ? "atomic" : "atomic-free", e.released, e.deposited,
                e.escaped, inDose);
    EXPECT_NEAR(inDose, e.deposited, 1e-4 * e.deposited);
  }
}

TEST(PhotonDoseCuda, RefusesAPlanLargerThanDeviceMemoryBeforeAllocating) {
  REQUIRE_GPU_AND_DATA();
  PhotonDoseRequest req = waterCase(Backend::Cuda);
  req.doseGrid = req.density->grid;
  req.doseGrid.dims = {4000, 4000, 4000};  // 6.4e10 voxels
  req.doseGrid.spacing = {0.1, 0.1, 0.1};
  try {
    (void)computePhotonDose(req);
    FAIL() << "an absurd dose grid was not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory) << e.what();
    EXPECT_NE(e.message().find("GPU"), std::string::npos) << e.message();
    std::printf("refusal: %s\n", e.message().c_str());
  }
}

/// Cancels the job at the first progress report of the GPU transport stage.
class CancelAtTransport : public ProgressSink {
 public:
  void report(double, std::string_view stage) override {
    if (stage.find("collapsed cones") != std::string_view::npos) token.requestCancel();
  }
  CancelToken token;
};

TEST(PhotonDoseCuda, CancelBetweenLaunchesThrowsCancelledError) {
  REQUIRE_GPU_AND_DATA();
  PhotonDoseRequest req = waterCase(Backend::Cuda);
  CancelAtTransport sink;
  JobControl job;
  job.progress = &sink;
  job.cancel = &sink.token;
  EXPECT_THROW((void)computePhotonDose(req, job), CancelledError);
  EXPECT_TRUE(sink.token.isCancelled());
}

bool sameBits(const Volume<float>& a, const Volume<float>& b) {
  return a.data.size() == b.data.size() &&
         std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)) == 0;
}

TEST(PhotonDoseCudaCache, CachedDensityGivesIdenticalBitsAndAnotherVolumeReplacesIt) {
  REQUIRE_GPU_AND_DATA();
  releasePhotonGpuCache();
  PhotonDoseRequest req = randomCase(8, Backend::Cuda);
  req.params.deposit = DepositStrategy::AtomicFree;  // deterministic: bits comparable
  const PhotonDoseResult first = computePhotonDose(req);
  EXPECT_FALSE(first.densityCached);
  ASSERT_GT(maxOf(first.dose.data), 0.0);
  const PhotonDoseResult second = computePhotonDose(req);
  EXPECT_TRUE(second.densityCached);
  EXPECT_TRUE(sameBits(first.dose, second.dose));
  EXPECT_TRUE(sameBits(first.terma, second.terma));

  // The same voxels in a new volume (another owner): uploaded again, the same bits.
  const auto copy = std::make_shared<Volume<float>>(*req.density);
  PhotonDoseRequest same = req;
  same.density = copy;
  const PhotonDoseResult fromCopy = computePhotonDose(same);
  EXPECT_FALSE(fromCopy.densityCached);
  EXPECT_TRUE(sameBits(first.dose, fromCopy.dose));

  // Other voxels: a dense slab across the middle. The cache must not serve the old density.
  auto changed = std::make_shared<Volume<float>>(*req.density);
  const Grid& g = changed->grid;
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = g.dims[0] / 3; i < g.dims[0] / 2; ++i) changed->at(i, j, k) = 1.8f;
  PhotonDoseRequest other = req;
  other.density = changed;
  const PhotonDoseResult slab = computePhotonDose(other);
  EXPECT_FALSE(slab.densityCached);
  EXPECT_FALSE(sameBits(first.dose, slab.dose));
  // ... and gives what a run without any cache gives.
  releasePhotonGpuCache();
  const PhotonDoseResult slabFresh = computePhotonDose(other);
  EXPECT_FALSE(slabFresh.densityCached);
  EXPECT_TRUE(sameBits(slab.dose, slabFresh.dose));

  // The invalidation rule for a volume changed in place: releasePhotonGpuCache() makes the next
  // call read the new voxels.
  const PhotonDoseResult cached = computePhotonDose(other);
  EXPECT_TRUE(cached.densityCached);
  std::fill(changed->data.begin(), changed->data.end(), 1.0f);
  releasePhotonGpuCache();
  const PhotonDoseResult water = computePhotonDose(other);
  EXPECT_FALSE(water.densityCached);
  PhotonDoseRequest waterReq = req;
  waterReq.density = std::make_shared<Volume<float>>(g, 1.0f);
  EXPECT_TRUE(sameBits(water.dose, computePhotonDose(waterReq).dose));
}

TEST(PhotonDoseCudaCache, LargeVolumeGoesThroughPageLockedCopies) {
  REQUIRE_GPU_AND_DATA();
  // 136^3 voxels (10 MiB of float): large enough for the page-locked upload from the request's
  // own memory and the DMA into the result's page-locked memory (both from 8 MiB on).
  Grid g;
  g.dims = {136, 136, 136};
  g.spacing = {2.5, 2.5, 2.5};
  g.origin = {-168.75, -168.75, -168.75};
  auto density = std::make_shared<Volume<float>>(g, 1.0f);
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 60; j < 80; ++j)
      for (int i = 0; i < g.dims[0]; ++i) density->at(i, j, k) = 0.25f;  // a lung slab
  PhotonDoseRequest req;
  req.density = density;
  PhotonBeam beam;
  beam.name = "AP";
  beam.monitorUnits = 100;
  req.beams = {beam};
  req.model = rawModel();
  req.backend = Backend::Cuda;
  req.params.deposit = DepositStrategy::AtomicFree;
  req.params.cpuThreads = hardwareThreads();
  releasePhotonGpuCache();
  const PhotonDoseResult cold = computePhotonDose(req);
  const PhotonDoseResult warm = computePhotonDose(req);
  EXPECT_FALSE(cold.densityCached);
  EXPECT_TRUE(warm.densityCached);
  EXPECT_TRUE(sameBits(cold.dose, warm.dose));
  auto variantOf = [](const PhotonDoseResult& r, const std::string& kernel) {
    for (const KernelProfile& p : r.profiles)
      if (p.kernel == kernel) return p.variant;
    return std::string("(none)");
  };
  std::printf("cold: upload %s, download %s; warm: upload %s, download %s\n",
              variantOf(cold, "density_upload").c_str(), variantOf(cold, "dose_download").c_str(),
              variantOf(warm, "density_upload").c_str(), variantOf(warm, "dose_download").c_str());
  EXPECT_NE(variantOf(cold, "density_upload").find("page-locked"), std::string::npos);
  EXPECT_NE(variantOf(cold, "dose_download").find("page-locked"), std::string::npos);
  EXPECT_EQ(variantOf(warm, "density_upload"), "(none)");
  EXPECT_NE(variantOf(warm, "dose_download").find("page-locked"), std::string::npos);
  req.backend = Backend::Cpu;
  req.params.deposit = DepositStrategy::Atomic;
  const PhotonDoseResult cpu = computePhotonDose(req);
  EXPECT_LT(compareVolumes(warm.dose, cpu.dose, "large-lung-slab"), 5e-3);
}

TEST(PhotonDoseCudaCache, CtIsConvertedOnTheGpuToTheHostsDensity) {
  REQUIRE_GPU_AND_DATA();
  // A CT of random HU (air to bone, some outside the curve's range and below -1000).
  PhotonDoseRequest req = randomCase(9, Backend::Cuda);
  const Grid g = req.density->grid;
  auto ct = std::make_shared<CtVolume>(g, std::int16_t(0));
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> hu(-1024, 2500);
  for (auto& v : ct->data) v = std::int16_t(hu(rng));
  for (int i = 0; i < 50; ++i) ct->data[std::size_t(i) * 97] = std::int16_t(-32768);
  req.density.reset();
  req.ct = ct;
  req.params.deposit = DepositStrategy::AtomicFree;
  releasePhotonGpuCache();
  const PhotonDoseResult fromCt = computePhotonDose(req);
  EXPECT_FALSE(fromCt.densityCached);
  // The CT again: from the cache, the same bits.
  const PhotonDoseResult again = computePhotonDose(req);
  EXPECT_TRUE(again.densityCached);
  EXPECT_TRUE(sameBits(fromCt.dose, again.dose));
  // The host's conversion (the CPU path's density) as a density volume.
  PhotonDoseRequest host = req;
  host.ct.reset();
  auto red = std::make_shared<Volume<float>>(g);
  const std::vector<float> density = detail::resolveDensity(req, g);
  red->data.assign(density.begin(), density.end());
  host.density = red;
  const PhotonDoseResult fromRed = computePhotonDose(host);
  ASSERT_GT(maxOf(fromCt.dose.data), 0.0);
  EXPECT_TRUE(sameBits(fromCt.dose, fromRed.dose));
  EXPECT_TRUE(sameBits(fromCt.terma, fromRed.terma));
  // The density volume replaced the CT in the cache (one volume is cached); the CT comes back
  // from the cache after its next upload, and another HU -> RED curve is converted again.
  EXPECT_FALSE(computePhotonDose(req).densityCached);
  EXPECT_TRUE(computePhotonDose(req).densityCached);
  PhotonDoseRequest curve = req;
  curve.hlut = CalibrationCurve("test", {{-1000.0, 0.0}, {0.0, 1.0}, {3000.0, 3.0}});
  const PhotonDoseResult other = computePhotonDose(curve);
  EXPECT_FALSE(other.densityCached);
  EXPECT_FALSE(sameBits(fromCt.dose, other.dose));
  // And the CT path agrees with the CPU reference.
  req.backend = Backend::Cpu;
  const PhotonDoseResult cpu = computePhotonDose(req);
  EXPECT_LT(compareVolumes(fromCt.dose, cpu.dose, "ct-atomic-free-dose"), 5e-3);
}

TEST(PhotonDoseCudaCache, ResampledDensityIsCachedToo) {
  REQUIRE_GPU_AND_DATA();
  PhotonDoseRequest req = randomCase(10, Backend::Cuda);
  req.params.deposit = DepositStrategy::AtomicFree;
  req.doseGrid = req.density->grid;
  req.doseGrid.dims = {30, 27, 25};
  req.doseGrid.spacing = {3.7, 3.1, 4.3};
  releasePhotonGpuCache();
  const PhotonDoseResult a = computePhotonDose(req);
  const PhotonDoseResult b = computePhotonDose(req);
  EXPECT_FALSE(a.densityCached);
  EXPECT_TRUE(b.densityCached);
  ASSERT_GT(maxOf(a.dose.data), 0.0);
  EXPECT_TRUE(sameBits(a.dose, b.dose));
  // Another dose grid on the same volume: resampled again.
  req.doseGrid.spacing.x = 3.6;
  EXPECT_FALSE(computePhotonDose(req).densityCached);
}

TEST(PhotonDoseCuda, BothBackendsCountTheSameTransportSegments) {
  REQUIRE_GPU_AND_DATA();
  for (std::uint32_t seed : {1u, 2u}) {
    PhotonDoseRequest req = randomCase(seed, Backend::Cpu);
    req.params.deposit = DepositStrategy::Atomic;
    const PhotonDoseResult cpu = computePhotonDose(req);
    req.backend = Backend::Cuda;
    const PhotonDoseResult gpu = computePhotonDose(req);
    std::printf("seed %u: segments from the first TERMA > 0 voxel: CPU %llu, GPU %llu\n", seed,
                (unsigned long long)cpu.voxelDirectionSteps,
                (unsigned long long)gpu.voxelDirectionSteps);
    ASSERT_GT(cpu.voxelDirectionSteps, 0u);
    // The GPU walks in float, the CPU in double: near a voxel corner a direction's pattern can
    // differ by a segment (1 direction in ~9000 in a scratch check of random directions).
    EXPECT_NEAR(double(gpu.voxelDirectionSteps), double(cpu.voxelDirectionSteps),
                1e-3 * double(cpu.voxelDirectionSteps));
  }
}

TEST(PhotonDoseCuda, WorkspaceEstimateCoversWhatTheGpuKeeps) {
  REQUIRE_GPU_AND_DATA();
  for (DepositStrategy dep : {DepositStrategy::Atomic, DepositStrategy::AtomicFree}) {
    PhotonDoseRequest req = waterCase(Backend::Cuda);
    req.params.deposit = dep;
    const PhotonWorkspaceEstimate est = workspaceBytes(req);
    releasePhotonGpuCache();
    EXPECT_EQ(detail::gpuCacheBytes(), 0.0);
    (void)computePhotonDose(req);
    const double kept = detail::gpuCacheBytes();  // every device buffer of the run
    std::printf("%s: estimate %zu (minimum %zu) bytes, kept %.0f bytes\n",
                dep == DepositStrategy::Atomic ? "atomic" : "atomic-free", est.deviceBytes,
                est.deviceBytesMinimum, kept);
    EXPECT_GT(kept, 12.0 * double(req.density->grid.voxelCount()));
    EXPECT_LE(kept, double(est.deviceBytes)) << est.breakdown;
    EXPECT_LE(est.deviceBytesMinimum, est.deviceBytes);
  }
  releasePhotonGpuCache();
  EXPECT_EQ(detail::gpuCacheBytes(), 0.0);
}

}  // namespace
}  // namespace penumbra::photon
