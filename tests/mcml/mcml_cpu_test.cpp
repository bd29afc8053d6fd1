// CPU reference of MCML: hand-checkable cases, energy bookkeeping and a published slab.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/error.hpp"
#include "mcml/mcml.hpp"
#include "mcml/mcml_setup.hpp"
#include "mcml/mcml_transport.hpp"
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

// The drop splits w into deposit + remaining weight exactly (bit for bit) at any albedo, in the
// GPU's float as in double: the energy bookkeeping does not need albedo >= 1/2.
template <typename Real>
void expectExactSplit() {
  const double albedos[][2] = {{10, 90}, {50, 50}, {50, 10}, {1, 0}, {90, 10}, {1e3, 1e-3},
                               {4.3, 107}, {300, 1}, {0, 5}, {0.7, 0.3}};
  for (const auto& ab : albedos) {
    LayeredMedium m;
    m.layers.push_back(Layer{1.4, ab[0], ab[1], 0.9, 0.1});
    const TransportSetup<Real> s = makeSetup<Real>(m, McmlConfig{});
    const LayerParams<Real>& L = s.layer[1];
    EXPECT_GE(L.splitFactor, Real(0.5));
    std::uint32_t x = 12345;
    Real w = Real(1);
    for (int k = 0; k < 20000; ++k) {
      x = x * 1664525u + 1013904223u;
      // weights over the whole range roulette leaves, incl. the launch weight and 10x survivors
      if (k % 50 == 0) w = Real(1e-5) + Real(x >> 8) * Real(1.0 / 16777216.0);
      Real dw, wNew;
      dropWeight(L, w, &dw, &wNew);
      ASSERT_EQ(dw + wNew, w) << "mua " << ab[0] << " mus " << ab[1] << " w " << double(w);
      ASSERT_GE(dw, Real(0));
      ASSERT_GE(wNew, Real(0));
      // and the split is the MCML one: wNew = w mus / (mua + mus) to rounding
      ASSERT_NEAR(double(wNew), double(w) * ab[1] / (ab[0] + ab[1]), 4e-7 * double(w));
      w = wNew > Real(1e-4) ? wNew : wNew * Real(10) + Real(1e-4);
    }
  }
}

TEST(McmlCpu, WeightSplitIsExactAtAnyAlbedo) {
  expectExactSplit<double>();
  expectExactSplit<float>();
}

// Low albedo (pigmented or blood-rich tissue at short wavelengths): mua 50, mus 10 /cm, g 0.9,
// under a tissue layer of ordinary albedo. Energy is conserved exactly as for any other layer,
// and Tt lies between the ballistic (unscattered) transmission exp(-(mua+mus) d) and exp(-mua d)
// (with matched boundaries every transmitted path is at least d long).
TEST(McmlCpu, LowAlbedoLayerConservesEnergy) {
  McmlConfig c = cpuConfig(40000, 13);
  c.dz = 0.002;
  {
    LayeredMedium m = slab(1.0, 50, 10, 0.9, 0.02);
    const McmlResult r = runMcml(m, c);
    EXPECT_NEAR(r.energyBalance(), 0.0, 1e-9) << "Rsp+Rd+A+Tt = " << r.Rsp + r.Rd + r.A + r.Tt;
    EXPECT_NEAR(r.Rsp + r.Rd + r.A + r.Tt, 1.0, 0.01);
    EXPECT_GT(r.Tt, std::exp(-60 * 0.02) - 3 * r.TtErr) << r.Tt << " +- " << r.TtErr;
    EXPECT_LT(r.Tt, std::exp(-50 * 0.02) + 3 * r.TtErr) << r.Tt << " +- " << r.TtErr;
    EXPECT_GT(r.Rd, 0.0);
    EXPECT_GT(r.A, 0.5);
  }
  {
    LayeredMedium m = slab(1.4, 50, 10, 0.9, 0.01);
    m.layers.push_back(Layer{1.4, 2.7, 187, 0.82, 0.03});
    const McmlResult r = runMcml(m, c);
    EXPECT_NEAR(r.energyBalance(), 0.0, 1e-9) << "Rsp+Rd+A+Tt = " << r.Rsp + r.Rd + r.A + r.Tt;
    EXPECT_NEAR(r.Rsp + r.Rd + r.A + r.Tt, 1.0, 0.01);
    EXPECT_GT(r.A_l[0], r.A_l[1]);  // the pigmented layer on top absorbs most
    EXPECT_NEAR(std::accumulate(r.A_l.begin(), r.A_l.end(), 0.0), r.A, 1e-12);
  }
}

// A purely absorbing slab (mus = 0) with matched boundaries: the packet goes straight through
// or is absorbed whole at its first interaction, so Tt = exp(-mua d), A = 1 - Tt, Rd = 0, and
// the absorption profile is A_z(z) = mua exp(-mua z) (Beer-Lambert).
TEST(McmlCpu, PurelyAbsorbingSlabFollowsBeerLambert) {
  const double mua = 50, d = 0.02;
  McmlConfig c = cpuConfig(100000, 17);
  c.dz = 0.002;
  c.nz = 10;
  const McmlResult r = runMcml(slab(1.0, mua, 0, 0.9, d), c);
  const double tt = std::exp(-mua * d);
  EXPECT_EQ(r.Rsp, 0.0);
  EXPECT_EQ(r.Rd, 0.0);
  EXPECT_EQ(r.rouletteGain, 0.0);  // every packet leaves with all its weight or none
  EXPECT_NEAR(r.Tt, tt, 3 * r.TtErr) << r.Tt << " +- " << r.TtErr << " vs " << tt;
  EXPECT_NEAR(r.A, 1 - tt, 3 * r.AErr) << r.A << " +- " << r.AErr << " vs " << 1 - tt;
  EXPECT_NEAR(r.A + r.Tt, 1.0, 1e-12);
  EXPECT_GT(r.TtErr, 0.0);
  EXPECT_LT(r.TtErr, 0.005);
  // Per depth bin: expected fraction absorbed exp(-mua z0) - exp(-mua z1); binomial error.
  for (int iz = 0; iz < c.nz; ++iz) {
    const double p = std::exp(-mua * iz * c.dz) - std::exp(-mua * (iz + 1) * c.dz);
    const double got = r.A_z[std::size_t(iz)] * c.dz;
    const double se = std::sqrt(p * (1 - p) / double(c.packets));
    EXPECT_NEAR(got, p, 4 * se) << "bin " << iz;
  }
}

TEST(McmlCpu, RejectsBadInput) {
  McmlConfig c = cpuConfig(100);
  EXPECT_THROW(runMcml(LayeredMedium{}, c), Error);
  EXPECT_THROW(runMcml(slab(1.4, 1, 10, 1.0, 0.1), c), Error);
  EXPECT_THROW(runMcml(slab(1.4, -1, 10, 0.9, 0.1), c), Error);
  EXPECT_THROW(runMcml(slab(1.4, INFINITY, 10, 0.9, 0.1), c), Error);
  EXPECT_NO_THROW(runMcml(slab(1.4, 50, 10, 0.9, 0.1), c));  // low albedo is accepted
  EXPECT_NO_THROW(runMcml(slab(1.4, 50, 0, 0.9, 0.1), c));   // so is a pure absorber
  c.batches = 1;
  EXPECT_THROW(runMcml(slab(1.4, 1, 10, 0.9, 0.1), c), Error);
  EXPECT_THROW(parseTallyMethod("fast"), Error);
  EXPECT_EQ(parseTallyMethod("warp-double"), TallyMethod::WarpAggregatedDouble);
}

namespace {
/// The message of the error runMcml(m, c) throws ("" when it runs), its code in `code`.
std::string runError(const LayeredMedium& m, const McmlConfig& c, ErrorCode* code = nullptr) {
  try {
    (void)runMcml(m, c);
  } catch (const Error& e) {
    if (code) *code = e.code();
    return e.message();
  }
  return "";
}
}  // namespace

TEST(McmlCpu, RejectsInfiniteThicknessAndIndicesBelowOne) {
  const McmlConfig c = cpuConfig(100);
  std::string e = runError(slab(1.4, 1, 10, 0.9, INFINITY), c);
  EXPECT_NE(e.find("layer 1: thickness inf cm must be finite and positive"), std::string::npos)
      << e;
  e = runError(slab(0.5, 1, 10, 0.9, 0.1), c);
  EXPECT_NE(e.find("layer 1: refractive index 0.5 is below 1"), std::string::npos) << e;
  e = runError(slab(1.4, 1, 10, 0.9, 0.1, 0.9), c);
  EXPECT_NE(e.find("ambient refractive indices must be >= 1 (above 0.9, below 0.9)"),
            std::string::npos)
      << e;
}

TEST(McmlCpu, HugeGridsAreRefusedBeforeAllocating) {
  McmlConfig c = cpuConfig(1000);
  c.nr = c.nz = 2000000000;  // 4e18 bins: used to end in std::bad_alloc / length_error
  ErrorCode code{};
  const std::string e = runError(slab(1.4, 1, 10, 0.9, 0.1), c, &code);
  EXPECT_EQ(code, ErrorCode::OutOfMemory) << e;
  EXPECT_NE(e.find("MCML needs"), std::string::npos) << e;
  EXPECT_NE(e.find("nr x nz = 2000000000 x 2000000000"), std::string::npos) << e;
  EXPECT_GT(hostBytes(c), 1e19);  // no overflow of size_t
}

TEST(McmlCpu, RunsThatWouldTakeDaysAreRefusedUpFront) {
  // 10^12 packets in a highly scattering centimetre of tissue: weeks on a CPU. This used to
  // start and run until killed; the estimate (a short pilot run) refuses it in well under a
  // second.
  const LayeredMedium m = slab(1.4, 0.1, 100, 0.9, 1.0);
  McmlConfig c = cpuConfig(1000000000000ULL);
  c.cpuThreads = 2;
  const double estimate = estimateCpuSeconds(m, c);
  EXPECT_GT(estimate, 86400.0);
  ErrorCode code{};
  const std::string e = runError(m, c, &code);
  EXPECT_EQ(code, ErrorCode::Unsupported) << e;
  EXPECT_NE(e.find("1000000000000 packets would take about"), std::string::npos) << e;
  EXPECT_NE(e.find("the limit is 24 h"), std::string::npos) << e;
  // Small runs are estimated to be small.
  EXPECT_LT(estimateCpuSeconds(m, cpuConfig(10000)), 600.0);
}
