// CUDA MCML against the CPU reference and against itself: energy conservation for every tally
// method, each method against a double tally of the same packets, fixed-point determinism, CPU
// vs CUDA within statistics (totals and an A_rz chi-square) and the published matched slab.
// Skips without a GPU (ctest label "gpu").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "core/device.hpp"
#include "mcml/mcml.hpp"
#include "gpu_test_support.hpp"

using namespace penumbra;
using namespace penumbra::mcml;

namespace {

// Tuchin (1997) Table 1, 633 nm (as in Lo et al. 2009); see data/skin_633nm.mci.
LayeredMedium skin() {
  LayeredMedium m;
  m.layers = {{1.5, 4.3, 107, 0.79, 0.01}, {1.4, 2.7, 187, 0.82, 0.02}, {1.4, 3.3, 192, 0.82, 0.02},
              {1.4, 2.7, 187, 0.82, 0.09}, {1.4, 3.4, 194, 0.82, 0.06}};
  return m;
}

LayeredMedium matchedSlab() {
  LayeredMedium m;
  m.layers = {{1.0, 10, 90, 0.75, 0.02}};
  return m;
}

// Low albedo on top (pigmented epidermis / blood-rich layer at a short wavelength: mua 50,
// mus 10 /cm, albedo 1/6) over dermis: exercises the absorbed-fraction branch of the weight split.
LayeredMedium lowAlbedo() {
  LayeredMedium m;
  m.layers = {{1.4, 50, 10, 0.9, 0.01}, {1.4, 2.7, 187, 0.82, 0.05}};
  return m;
}

McmlConfig skinConfig(TallyMethod t, std::uint64_t packets = 200000) {
  McmlConfig c;
  c.packets = packets;
  c.dr = 0.01;
  c.dz = 0.002;
  c.nr = c.nz = 256;
  c.na = 30;
  c.seed = 5;
  c.tally = t;
  c.backend = Backend::Cuda;
  return c;
}

double relL1(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::fabs(a[i] - b[i]);
    den += std::fabs(b[i]);
  }
  return den > 0 ? num / den : 0;
}

}  // namespace

TEST(McmlCuda, EveryTallyMethodConservesEnergyAndMatchesTheDoubleTally) {
  REQUIRE_GPU();
  const McmlResult ref = runMcml(skin(), skinConfig(TallyMethod::DoubleAtomic));
  ASSERT_EQ(ref.backend, Backend::Cuda);
  EXPECT_GT(ref.A, 0.5);
  EXPECT_NEAR(ref.energyBalance(), 0.0, 1e-6);
  for (TallyMethod t : allTallyMethods()) {
    const McmlResult r = runMcml(skin(), skinConfig(t));
    const double drift = relL1(r.A_rz, ref.A_rz);
    std::printf("tally %-16s energy balance %+.3e  A_rz rel. L1 vs double %.3e\n", toString(t),
                r.energyBalance(), drift);
    if (tallyConservesEnergy(t)) {
      EXPECT_NEAR(r.energyBalance(), 0.0, 1e-6) << toString(t);
      EXPECT_LT(drift, 1e-6) << toString(t);
    } else {
      EXPECT_NEAR(r.energyBalance(), 0.0, 1e-3) << toString(t);  // float drift, reported
      EXPECT_LT(drift, 1e-2) << toString(t);
    }
    EXPECT_NEAR(r.Rd, ref.Rd, 1e-4) << toString(t);  // same packets: only tally rounding differs
  }
}

TEST(McmlCuda, FixedPointTalliesAreDeterministicAndAgreeBitForBit) {
  REQUIRE_GPU();
  const McmlResult a = runMcml(skin(), skinConfig(TallyMethod::FixedPoint64, 50000));
  const McmlResult b = runMcml(skin(), skinConfig(TallyMethod::FixedPoint64, 50000));
  EXPECT_EQ(a.A_rz, b.A_rz);
  EXPECT_EQ(a.Rd_ra, b.Rd_ra);
  // Integer sums are associative: the buffered variants give the very same bits.
  for (TallyMethod t : {TallyMethod::SharedBuffer, TallyMethod::RegisterCache, TallyMethod::SharedRegister}) {
    const McmlResult r = runMcml(skin(), skinConfig(t, 50000));
    EXPECT_EQ(r.A_rz, a.A_rz) << toString(t);
    EXPECT_EQ(r.Tt_ra, a.Tt_ra) << toString(t);
  }
  McmlConfig one = skinConfig(TallyMethod::FixedPoint64, 50000);
  one.maxDevices = 1;  // packets keep their streams however the devices split them
  EXPECT_EQ(runMcml(skin(), one).A_rz, a.A_rz);
}

TEST(McmlCuda, AgreesWithTheCpuReferenceWithinStatistics) {
  REQUIRE_GPU();
  McmlConfig c = skinConfig(TallyMethod::FixedPoint64, 200000);
  c.nr = c.nz = 64;
  c.batches = 20;
  McmlConfig cpu = c;
  cpu.backend = Backend::Cpu;
  cpu.seed = 99;  // independent packets: the comparison is statistical
  const McmlResult g = runMcml(skin(), c), h = runMcml(skin(), cpu);
  auto within = [](double x, double ex, double y, double ey) {
    return std::fabs(x - y) <= 3 * std::sqrt(ex * ex + ey * ey);
  };
  EXPECT_TRUE(within(g.Rd, g.RdErr, h.Rd, h.RdErr)) << g.Rd << " vs " << h.Rd;
  EXPECT_TRUE(within(g.A, g.AErr, h.A, h.AErr)) << g.A << " vs " << h.A;
  EXPECT_TRUE(within(g.Tt, g.TtErr, h.Tt, h.TtErr)) << g.Tt << " vs " << h.Tt;
  double chi2 = 0;
  int dof = 0;
  for (std::size_t i = 0; i < g.A_rz.size(); ++i) {
    const double v = g.A_rzErr[i] * g.A_rzErr[i] + h.A_rzErr[i] * h.A_rzErr[i];
    if (g.A_rzErr[i] <= 0 || h.A_rzErr[i] <= 0 || g.A_rzErr[i] > 0.2 * g.A_rz[i]) continue;
    chi2 += (g.A_rz[i] - h.A_rz[i]) * (g.A_rz[i] - h.A_rz[i]) / v;
    ++dof;
  }
  std::printf("A_rz chi-square %.1f over %d bins (%.3f per bin)\n", chi2, dof, chi2 / dof);
  ASSERT_GT(dof, 100);
  EXPECT_GT(chi2 / dof, 0.5);
  EXPECT_LT(chi2 / dof, 1.6);
}

// Published values (MCML manual; Wang and Wu, Biomedical Optics, 2007, ch. 3): see
// mcml_cpu_test.cpp for the citation.
TEST(McmlCuda, MatchedSlabReproducesThePublishedValues) {
  REQUIRE_GPU();
  McmlConfig c = skinConfig(TallyMethod::FixedPoint64, 1000000);
  c.dz = 0.001;
  c.nz = 20;
  c.nr = 50;
  const McmlResult r = runMcml(matchedSlab(), c);
  EXPECT_NEAR(r.Rd, 0.09734, 3 * r.RdErr) << r.Rd << " +- " << r.RdErr;
  EXPECT_NEAR(r.Tt, 0.66096, 3 * r.TtErr) << r.Tt << " +- " << r.TtErr;
  EXPECT_NEAR(r.energyBalance(), 0.0, 1e-6);
}

TEST(McmlCuda, LowAlbedoLayerConservesEnergyWithEveryTallyMethod) {
  REQUIRE_GPU();
  McmlConfig rc = skinConfig(TallyMethod::DoubleAtomic);
  rc.nr = rc.nz = 64;
  const McmlResult ref = runMcml(lowAlbedo(), rc);
  ASSERT_EQ(ref.backend, Backend::Cuda);
  EXPECT_NEAR(ref.energyBalance(), 0.0, 1e-6);
  EXPECT_GT(ref.A_l[0], ref.A_l[1]);
  for (TallyMethod t : allTallyMethods()) {
    McmlConfig c = rc;
    c.tally = t;
    const McmlResult r = runMcml(lowAlbedo(), c);
    const double drift = relL1(r.A_rz, ref.A_rz);
    std::printf("low albedo, tally %-16s energy balance %+.3e  A_rz rel. L1 vs double %.3e\n",
                toString(t), r.energyBalance(), drift);
    if (tallyConservesEnergy(t)) {
      EXPECT_NEAR(r.energyBalance(), 0.0, 1e-6) << toString(t);
      EXPECT_LT(drift, 1e-6) << toString(t);
    } else {
      EXPECT_NEAR(r.energyBalance(), 0.0, 1e-3) << toString(t);
      EXPECT_LT(drift, 1e-2) << toString(t);
    }
    EXPECT_NEAR(r.Rd, ref.Rd, 1e-4) << toString(t);
  }
  // Against the CPU reference (independent packets): totals within 3 standard errors.
  McmlConfig g = skinConfig(TallyMethod::FixedPoint64, 200000), h = g;
  g.nr = g.nz = h.nr = h.nz = 64;
  h.backend = Backend::Cpu;
  h.seed = 98;
  const McmlResult a = runMcml(lowAlbedo(), g), b = runMcml(lowAlbedo(), h);
  auto within = [](double x, double ex, double y, double ey) {
    return std::fabs(x - y) <= 3 * std::sqrt(ex * ex + ey * ey);
  };
  EXPECT_TRUE(within(a.Rd, a.RdErr, b.Rd, b.RdErr)) << a.Rd << " vs " << b.Rd;
  EXPECT_TRUE(within(a.A, a.AErr, b.A, b.AErr)) << a.A << " vs " << b.A;
  EXPECT_TRUE(within(a.Tt, a.TtErr, b.Tt, b.TtErr)) << a.Tt << " vs " << b.Tt;
}

// Purely absorbing matched slab (mus = 0): Tt = exp(-mua d), A = 1 - Tt (Beer-Lambert).
TEST(McmlCuda, PurelyAbsorbingSlabFollowsBeerLambert) {
  REQUIRE_GPU();
  LayeredMedium m;
  m.layers = {{1.0, 50, 0, 0.9, 0.02}};
  const double tt = std::exp(-50 * 0.02);
  for (TallyMethod t : {TallyMethod::FixedPoint64, TallyMethod::DoubleAtomic, TallyMethod::SharedRegister}) {
    McmlConfig c = skinConfig(t, 1000000);
    c.dz = 0.002;
    c.nz = 10;
    c.nr = 50;
    const McmlResult r = runMcml(m, c);
    EXPECT_EQ(r.Rd, 0.0) << toString(t);
    EXPECT_NEAR(r.Tt, tt, 3 * r.TtErr) << toString(t) << ": " << r.Tt << " +- " << r.TtErr;
    EXPECT_NEAR(r.A, 1 - tt, 3 * r.AErr) << toString(t) << ": " << r.A << " +- " << r.AErr;
    EXPECT_NEAR(r.energyBalance(), 0.0, 1e-6) << toString(t);
  }
}
