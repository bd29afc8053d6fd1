// Physics of the full 3D engine (CPU reference) in water and slab phantoms: range, lateral
// width, range shift by heterogeneities, energy conservation. The 1D physics models have their
// own tests (range_energy_test, bortfeld_test, mcs_test); these check that the 3D engine -
// ray tracing, BEV grid, superposition, resampling - carries them through without loss.
#include <gtest/gtest.h>

#include <cmath>

#include "core/calibration.hpp"
#include "proton/physics/bortfeld_bragg_curve.hpp"
#include "proton/physics/bragg_kleeman.hpp"
#include "proton/proton_dose.hpp"
#include "proton_dose_test_support.hpp"
#include "pstar_reference.hpp"

namespace penumbra::proton {
namespace {

using namespace proton::test;

constexpr double kSurfaceY = -100.0;  // water surface of slabPhantom [mm]

/// PSTAR CSDA range [mm] from the shared data when present, else from the engine's fit to it
/// (within 0.05 mm of every PSTAR row, range_energy_test.cpp).
double csdaRangeMm(double e) {
  if (penumbra::test::haveData(penumbra::test::kPstarFile))
    return 10.0 * penumbra::test::PstarTable::load().rangeCm(e);
  return 10.0 * rangeCm(e);
}

double r80OfRun(std::shared_ptr<Volume<float>> spr, double energy) {
  const ProtonDoseResult res = computeProtonDose(physicsRequest(std::move(spr), singleSpotBeam(energy)));
  const auto idd = laterallyIntegrated(res.dose);
  const Grid& g = res.dose.grid;
  return distalFallPosition(idd, g.origin.y, g.spacing.y) - kSurfaceY;
}

class PristinePeak : public ::testing::TestWithParam<double> {};

TEST_P(PristinePeak, R80InWaterMatchesPstarCsdaRangeWithin1mm) {
  const double e = GetParam();
  const double r80 = r80OfRun(slabPhantom(), e);
  const double ref = csdaRangeMm(e);
  std::printf("E = %.0f MeV: R80 (3D engine) = %.2f mm, PSTAR CSDA = %.2f mm\n", e, r80, ref);
  EXPECT_NEAR(r80, ref, 1.0);
}

INSTANTIATE_TEST_SUITE_P(Energies, PristinePeak, ::testing::Values(100.0, 200.0));

// Fermi-Eyges with Highland's scattering power, by moments on a midpoint rule: a different
// quadrature and form than mcs_highland.cpp's tanh-sinh integral of (z - z')^2 T(z').
double independentSigmaMcsMm(double e0, double zCm) {
  const double r0 = rangeCm(e0), x0 = 36.08, m = 938.272;
  const int n = 20000;
  const double h = zCm / n;
  double a0 = 0, a1 = 0, a2 = 0;
  for (int i = 0; i < n; ++i) {
    const double z = (i + 0.5) * h;
    const double e = energyForRange(r0 - z);
    const double pv = e * (e + 2 * m) / (e + m);
    const double t = (14.1 / pv) * (14.1 / pv) / x0;
    a0 += t * h;
    a1 += t * z * h;
    a2 += t * z * z * h;
  }
  const double f = 1 + std::log10(zCm / x0) / 9;
  return 10.0 * f * std::sqrt(zCm * zCm * a0 - 2 * zCm * a1 + a2);
}

TEST(ProtonDosePhysics, LateralSigmaMatchesHighlandFermiEygesWithin5Percent) {
  const double e = 150.0;
  ProtonDoseRequest req = physicsRequest(slabPhantom(), singleSpotBeam(e));
  req.params.sampling.cutoffSigmas = 4;
  const ProtonDoseResult res = computeProtonDose(req);
  const auto machine = ProtonMachine::generic();
  const double sigmaAir = machine->beamModel().spotSigmaMm(e);
  const double c = req.params.sampling.cutoffSigmas;
  // Second moment of a 2D Gaussian cut at c sigma, per axis, relative to sigma^2.
  const double trunc = (1 - (1 + c * c / 2) * std::exp(-c * c / 2)) / (1 - std::exp(-c * c / 2));
  const Grid& g = res.dose.grid;
  for (double depthMm : {20.0, 80.0, 130.0, 150.0}) {
    const int j = int(std::lround((kSurfaceY + depthMm - g.origin.y) / g.spacing.y));
    const double depth = g.origin.y + j * g.spacing.y - kSurfaceY;
    double s0 = 0, s1 = 0, s2 = 0;
    for (int k = 0; k < g.dims[2]; ++k)
      for (int i = 0; i < g.dims[0]; ++i) {
        const double x = g.origin.x + i * g.spacing.x, d = res.dose.at(i, j, k);
        s0 += d;
        s1 += d * x;
        s2 += d * x * x;
      }
    ASSERT_GT(s0, 0) << "no dose at depth " << depth;
    const double measured = std::sqrt(s2 / s0 - (s1 / s0) * (s1 / s0));
    // Physical sigma at this plane: in-air spot plus MCS at the water-equivalent depth.
    const double mcs = independentSigmaMcsMm(e, depth / 10.0);
    const double expected = std::sqrt((sigmaAir * sigmaAir + mcs * mcs) * trunc);
    std::printf("depth %.1f mm: sigma measured %.3f mm, expected %.3f mm (MCS %.3f)\n", depth,
                measured, expected, mcs);
    EXPECT_NEAR(measured / expected, 1.0, 0.05) << "at depth " << depth << " mm";
  }
}

struct SlabCase {
  const char* name;
  double hu;
};
class SlabShift : public ::testing::TestWithParam<SlabCase> {};

TEST_P(SlabShift, RangeShiftEqualsWaterEquivalentThicknessWithinHalfMm) {
  const CalibrationCurve hlut = CalibrationCurve::load(
      std::string(PENUMBRA_SOURCE_DIR) + "/resources/calibration/hu_to_spr_matrad_default.csv");
  const double spr = hlut(GetParam().hu);
  const double y0 = -70, y1 = -50;  // 20 mm slab at 30-50 mm depth, on voxel edges
  const double e = 150.0;
  const double water = r80OfRun(slabPhantom(), e);
  const double slab = r80OfRun(slabPhantom(y0, y1, float(spr)), e);
  const double expected = -(y1 - y0) * (double(float(spr)) - 1.0);  // shallower for SPR > 1
  std::printf("%s slab (HU %.0f, SPR %.4f): R80 %.2f -> %.2f mm, shift %.3f mm, expected %.3f\n",
              GetParam().name, GetParam().hu, spr, water, slab, slab - water, expected);
  EXPECT_NEAR(slab - water, expected, 0.5);
}

INSTANTIATE_TEST_SUITE_P(Materials, SlabShift,
                         ::testing::Values(SlabCase{"bone", 1000}, SlabCase{"lung", -700}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ProtonDosePhysics, EnergyIntegralMatchesEnergyDepositedPerSpotWithin1Percent) {
  for (double e : {100.0, 160.0}) {
    const double weight = 2.5;  // 2.5e9 protons
    const ProtonDoseResult res = computeProtonDose(physicsRequest(slabPhantom(), singleSpotBeam(e, weight)));
    // Mass per voxel: volume [cm^3] x density, 1 g/cm^3 in water and 0.001 in the air before
    // it (where the engine reports dose-to-water at WEPL ~0, as every pencil-beam code does).
    const Grid& g = res.dose.grid;
    const double volCm3 = g.voxelVolumeMm3() / 1000.0;
    double joules = 0;
    for (int k = 0; k < g.dims[2]; ++k)
      for (int j = 0; j < g.dims[1]; ++j) {
        const double rho = g.origin.y + j * g.spacing.y < kSurfaceY ? 0.001 : 1.0;
        for (int i = 0; i < g.dims[0]; ++i)
          joules += double(res.dose.at(i, j, k)) * volCm3 * rho * 1e-3;  // Gy x kg
      }
    const double protons = weight * kProtonsPerWeightUnit;
    const double mevPerProton = joules / 1.602176634e-13 / protons;
    const double expected = energyDepositedPerProtonMeV(e);
    std::printf("E = %.0f MeV: deposited %.3f MeV per proton, Bortfeld model %.3f MeV\n", e,
                mevPerProton, expected);
    EXPECT_NEAR(mevPerProton / expected, 1.0, 0.01);
  }
}

}  // namespace
}  // namespace penumbra::proton
