// CUDA backend of the proton dose engine against the CPU reference: BOXPHANTOM, seeded random
// heterogeneous phantoms, both DDA variants, memory refusal, cancel. Skips without a device.
// The CUDA backend poisons its device outputs (NaN) before every launch, and these tests check
// every voxel is finite and the maximum positive, so an unwritten voxel cannot pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdio>
#include <fstream>

#include "core/device.hpp"
#include "core/error.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "proton_dose_test_support.hpp"
#include "gpu_test_support.hpp"

namespace penumbra::proton {
namespace {

using namespace proton::test;

ProtonDoseRequest caseRequest(const ProtonPhantomCase& pc, Backend backend, DdaVariant v) {
  ProtonDoseRequest r;
  r.ct = std::make_shared<CtVolume>(pc.ct);
  r.beams = pc.beams;
  r.doseGrid = pc.doseGrid;
  r.backend = backend;
  r.variant = v;
  return r;
}

/// Max |cuda - cpu| relative to the CPU maximum; dumps the worst voxel on failure.
double compare(const ProtonDoseResult& gpu, const ProtonDoseResult& cpu, const std::string& name) {
  EXPECT_EQ(gpu.backend, Backend::Cuda);
  const double dmax = maxOf(cpu.dose.data);
  EXPECT_GT(dmax, 0.0);
  EXPECT_GT(maxOf(gpu.dose.data), 0.0);
  double worst = 0;
  std::size_t at = 0, nonFinite = 0;
  for (std::size_t v = 0; v < cpu.dose.data.size(); ++v) {
    if (!std::isfinite(gpu.dose.data[v])) {
      ++nonFinite;
      continue;
    }
    const double d = std::fabs(double(gpu.dose.data[v]) - double(cpu.dose.data[v]));
    if (d > worst) {
      worst = d;
      at = v;
    }
  }
  EXPECT_EQ(nonFinite, 0u) << name << ": voxels left unwritten (poison)";
  const double rel = dmax > 0 ? worst / dmax : 0;
  std::printf("%s: max dose %.4g Gy, max |cuda - cpu| = %.3g %% of max (voxel %zu: %.6g vs %.6g)\n",
              name.c_str(), dmax, 100 * rel, at, double(gpu.dose.data[at]), double(cpu.dose.data[at]));
  if (rel >= 1e-3) {
    std::ofstream dump(name + "_cuda_vs_cpu.txt");
    dump << "voxel " << at << " cuda " << gpu.dose.data[at] << " cpu " << cpu.dose.data[at]
         << " max " << dmax << "\n";
  }
  return rel;
}

TEST(ProtonDoseCuda, BoxPhantomMatchesCpuWithinTenthOfAPercent) {
  REQUIRE_GPU();
  const ProtonPhantomCase pc = makeBoxPhantomCase();
  const ProtonDoseResult cpu = computeProtonDose(caseRequest(pc, Backend::Cpu, DdaVariant::BranchFree));
  for (DdaVariant v : {DdaVariant::Classic, DdaVariant::BranchFree}) {
    const ProtonDoseResult gpu = computeProtonDose(caseRequest(pc, Backend::Cuda, v));
    EXPECT_LT(compare(gpu, cpu, std::string("boxphantom-") + (v == DdaVariant::Classic ? "classic" : "dda-nc")),
              1e-3);
    EXPECT_FALSE(gpu.profiles.empty());
  }
}

TEST(ProtonDoseCuda, RandomHeterogeneousPhantomsMatchCpuWithinTenthOfAPercent) {
  REQUIRE_GPU();
  for (std::uint32_t seed : {1u, 2u, 3u, 4u, 5u}) {
    // Awkward sizes: 37 and 53 voxels are not multiples of the 16-ray tiles or 32-thread warps.
    const ProtonPhantomCase pc = makeRandomPhantomCase(seed, seed % 2 ? 37 : 53);
    const ProtonDoseResult cpu = computeProtonDose(caseRequest(pc, Backend::Cpu, DdaVariant::Classic));
    const ProtonDoseResult gpu = computeProtonDose(caseRequest(pc, Backend::Cuda, DdaVariant::BranchFree));
    EXPECT_LT(compare(gpu, cpu, pc.name), 1e-3);
  }
}

TEST(ProtonDoseCuda, ClassicAndDdaNcAgreeOnTheGpu) {
  REQUIRE_GPU();
  const ProtonPhantomCase pc = makeRandomPhantomCase(9, 45);
  const ProtonDoseResult a = computeProtonDose(caseRequest(pc, Backend::Cuda, DdaVariant::Classic));
  const ProtonDoseResult b = computeProtonDose(caseRequest(pc, Backend::Cuda, DdaVariant::BranchFree));
  const double dmax = maxOf(a.dose.data);
  ASSERT_GT(dmax, 0.0);
  // The traversal visits the same voxels with the same lengths, so the WEPL and everything
  // downstream should be identical; nvcc may contract the two instantiations' arithmetic into
  // FMAs differently, so the check allows float rounding and reports whether it was bitwise.
  double worst = 0;
  for (std::size_t v = 0; v < a.dose.data.size(); ++v)
    worst = std::max(worst, std::fabs(double(a.dose.data[v]) - double(b.dose.data[v])));
  std::printf("classic vs dda-nc on the GPU: %s, max difference %.3g of max\n",
              std::memcmp(a.dose.data.data(), b.dose.data.data(), a.dose.data.size() * 4) == 0
                  ? "bitwise identical" : "not bitwise identical",
              worst / dmax);
  EXPECT_LE(worst, 1e-6 * dmax);
}

TEST(ProtonDoseCuda, RefusesAPlanLargerThanDeviceMemoryBeforeAllocating) {
  REQUIRE_GPU();
  ProtonDoseRequest r;
  r.spr = slabPhantom();
  r.beams = {singleSpotBeam(150)};
  r.doseGrid = makeAxisGrid({4000, 4000, 4000}, {0.25, 0.25, 0.25}, {-500, -500, -500});
  r.backend = Backend::Cuda;
  try {
    (void)computeProtonDose(r);
    FAIL() << "an absurd dose grid was not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::OutOfMemory);
    EXPECT_NE(e.message().find("on the GPU"), std::string::npos) << e.message();
    std::printf("refusal: %s\n", e.message().c_str());
  }
}

TEST(ProtonDoseCuda, CancelledTokenThrowsCancelledError) {
  REQUIRE_GPU();
  CancelToken token;
  token.requestCancel();
  JobControl job;
  job.cancel = &token;
  ProtonDoseRequest r = physicsRequest(slabPhantom(), singleSpotBeam(120));
  r.backend = Backend::Cuda;
  EXPECT_THROW((void)computeProtonDose(r, job), CancelledError);
}

TEST(ProtonDoseCuda, PristinePeakR80MatchesCpu) {
  REQUIRE_GPU();
  for (double e : {100.0, 200.0}) {
    ProtonDoseRequest r = physicsRequest(slabPhantom(), singleSpotBeam(e));
    const ProtonDoseResult cpu = computeProtonDose(r);
    r.backend = Backend::Cuda;
    const ProtonDoseResult gpu = computeProtonDose(r);
    const auto a = laterallyIntegrated(cpu.dose), b = laterallyIntegrated(gpu.dose);
    const Grid& g = cpu.dose.grid;
    const double ra = distalFallPosition(a, g.origin.y, g.spacing.y);
    const double rb = distalFallPosition(b, g.origin.y, g.spacing.y);
    EXPECT_NEAR(ra, rb, 0.05) << e << " MeV";
    EXPECT_LT(compare(gpu, cpu, "pristine-" + std::to_string(int(e))), 1e-3);
  }
}

}  // namespace
}  // namespace penumbra::proton
