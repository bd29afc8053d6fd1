// CPU reference of MCML: hand-checkable cases, energy bookkeeping and a published slab.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "mcml/mcml.hpp"
#include "mcml/philox.hpp"

using namespace penumbra;
using namespace penumbra::mcml;

namespace {

LayeredMedium slab(double n, double mua, double mus, double g, double d, double nOut = 1.0) {
  LayeredMedium m;
  m.nAbove = m.nBelow = nOut;
  m.layers.push_back(Layer{n, mua, mus, g, d});
  return m;
}

McmlConfig cpuConfig(std::uint64_t packets, std::uint64_t seed = 7) {
  McmlConfig c;
  c.packets = packets;
  c.seed = seed;
  c.backend = Backend::Cpu;
  c.dz = 0.001;
  c.dr = 0.01;
  c.nz = 20;
  c.nr = 50;
  c.na = 30;
  c.batches = 10;
  return c;
}

}  // namespace

TEST(McmlCpu, SpecularReflectanceIsFresnelAtNormalIncidence) {
  EXPECT_NEAR(specularReflectance(slab(1.4, 1, 10, 0.9, 0.1)), (0.4 / 2.4) * (0.4 / 2.4), 1e-15);
  EXPECT_EQ(specularReflectance(slab(1.0, 1, 10, 0.9, 0.1)), 0.0);
}

TEST(McmlCpu, PhiloxMatchesTheRandom123KnownAnswer) {
  // Random123 kat_vectors: philox4x32 10 rounds, counter and key all ones (0xffffffff).
  const Philox4 r = philox4x32_10(~0u, ~0u, ~0u, ~0u, ~0u, ~0u);
  EXPECT_EQ(r.v[0], 0x408f276du);
  EXPECT_EQ(r.v[1], 0x41c83b0eu);
  EXPECT_EQ(r.v[2], 0xa20bc7c6u);
  EXPECT_EQ(r.v[3], 0x6d5451fdu);
  const Philox4 z = philox4x32_10(0, 0, 0, 0, 0, 0);
  EXPECT_EQ(z.v[0], 0x6627e8d5u);
  EXPECT_EQ(z.v[3], 0x9b00dbd8u);
}

// A non-scattering glass slab (n 1.5 in air): the packet bounces between two Fresnel
// interfaces with R = 0.04 each, so Tt = (1-R)^2 / (1-R^2) and Rd = R (1-R)^2 / (1-R^2).
TEST(McmlCpu, GlassSlabMatchesTheGeometricSeries) {
  const double R = 0.04;
  const McmlResult r = runMcml(slab(1.5, 0, 0, 0, 0.1), cpuConfig(200000));
  EXPECT_NEAR(r.Rsp, R, 1e-12);
  const double tt = (1 - R) * (1 - R) / (1 - R * R), rd = R * (1 - R) * (1 - R) / (1 - R * R);
  EXPECT_NEAR(r.Tt, tt, 3 * r.TtErr + 1e-12);
  EXPECT_NEAR(r.Rd, rd, 3 * r.RdErr + 1e-12);
  EXPECT_EQ(r.A, 0.0);
  EXPECT_GT(r.RdErr, 0.0);
}

TEST(McmlCpu, EnergyIsConservedIncludingRoulette) {
  LayeredMedium m = slab(1.37, 1, 100, 0.9, 0.1);
  m.layers.push_back(Layer{1.45, 2, 50, 0.5, 0.05});
  McmlConfig c = cpuConfig(20000);
  c.dz = 0.01;  // 20 bins cover both layers (0.15 cm)
  const McmlResult r = runMcml(m, c);
  EXPECT_NEAR(r.energyBalance(), 0.0, 1e-9) << "Rsp+Rd+A+Tt = " << r.Rsp + r.Rd + r.A + r.Tt;
  EXPECT_NEAR(r.Rsp + r.Rd + r.A + r.Tt, 1.0, 0.01);  // roulette gain averages to 0
  const double sumAl = std::accumulate(r.A_l.begin(), r.A_l.end(), 0.0);
  EXPECT_NEAR(sumAl, r.A, 1e-12);
  EXPECT_GT(r.A_l[1], 0.0);
}

TEST(McmlCpu, SameSeedGivesTheSameResult) {
  const LayeredMedium m = slab(1.4, 1, 100, 0.9, 0.05);
  McmlConfig c = cpuConfig(5000);
  c.cpuThreads = 2;
  const McmlResult a = runMcml(m, c), b = runMcml(m, c);
  EXPECT_EQ(a.A_rz, b.A_rz);
  EXPECT_EQ(a.Rd, b.Rd);
  c.seed = 8;
  EXPECT_NE(runMcml(m, c).Rd, a.Rd);
}

TEST(McmlCpu, FluenceIsAbsorptionOverMua) {
  const McmlResult r = runMcml(slab(1.4, 2, 100, 0.9, 0.05), cpuConfig(5000));
  for (std::size_t i = 0; i < r.A_rz.size(); i += 37) EXPECT_DOUBLE_EQ(r.fluence[i], r.A_rz[i] / 2);
}

// The MCML manual's verification case: matched boundaries, mua 10, mus 90 /cm, g 0.75,
// d 0.02 cm. Adding-doubling (van de Hulst, Prahl) gives Rd = 0.09734 and Tt = 0.66096 as quoted
// in the MCML manual (Wang and Jacques 1992) and in Wang and Wu, "Biomedical Optics: Principles
// and Imaging" (Wiley 2007), ch. 3 (Rd ~ 0.0974 there; see also yyiz/maui_code,
// tests/refrIndexMatch/3_9_20_refrIndexMatch_README.md, which reproduces 0.0974).
TEST(McmlCpu, MatchedSlabReproducesThePublishedValues) {
  const McmlResult r = runMcml(slab(1.0, 10, 90, 0.75, 0.02), cpuConfig(200000, 11));
  EXPECT_EQ(r.Rsp, 0.0);
  EXPECT_NEAR(r.Rd, 0.09734, 3 * r.RdErr) << "Rd " << r.Rd << " +- " << r.RdErr;
  EXPECT_NEAR(r.Tt, 0.66096, 3 * r.TtErr) << "Tt " << r.Tt << " +- " << r.TtErr;
  EXPECT_LT(r.RdErr, 0.001);
  EXPECT_NEAR(r.energyBalance(), 0.0, 1e-9);
}

TEST(McmlCpu, RejectsBadInput) {
  McmlConfig c = cpuConfig(100);
  EXPECT_THROW(runMcml(LayeredMedium{}, c), Error);
  EXPECT_THROW(runMcml(slab(1.4, 1, 10, 1.0, 0.1), c), Error);
  c.batches = 1;
  EXPECT_THROW(runMcml(slab(1.4, 1, 10, 0.9, 0.1), c), Error);
  EXPECT_THROW(parseTallyMethod("fast"), Error);
  EXPECT_EQ(parseTallyMethod("warp-double"), TallyMethod::WarpAggregatedDouble);
}
