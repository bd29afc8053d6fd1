// Physics of the collapsed-cone engine (CPU reference) with the 6 MV beam model from the shared
// photon-beam data: TERMA against analytic polyenergetic attenuation, energy conservation of
// the transport, the central-axis depth dose of the reference field against published 6 MV
// data, a lung slab, and the reproducibility claims (classic = DDA-nc bit for bit; atomic and
// atomic-free deposits agree, atomic-free is bitwise reproducible at any thread count).
//
// Phantoms are small (5 mm lateral, 2 mm depth voxels) so that the file runs in well under a
// minute on two cores.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "core/error.hpp"
#include "photon/photon_backend.hpp"
#include "photon/photon_phantoms.hpp"
#include "test_data.hpp"

namespace penumbra::photon {
namespace {

int hardwareThreads() { return std::max(1, int(std::thread::hardware_concurrency())); }

PhotonDoseRequest boxRequest(const PhotonPhantomCase& pc) {
  PhotonDoseRequest req;
  req.density = pc.density;
  req.beams = pc.beams;
  req.backend = Backend::Cpu;
  req.params.cpuThreads = hardwareThreads();
  return req;
}

/// The uncalibrated model straight from the data (no dose run), for single-stage tests.
std::shared_ptr<const PhotonBeamModel> rawModel() {
  static const auto model = PhotonBeamModel::load6MV(penumbra::test::testDataDir());
  return model;
}

/// Analytic TERMA per unit fluence at the isocentre on the central axis: inverse square from the
/// point source times sum_E f_E E mu_E exp(-mu_E rho_path), rho_path in g/cm^2.
double analyticTerma(const Spectrum& s, double distanceMm, double sadMm, double pathCm) {
  double sum = 0;
  for (std::size_t e = 0; e < s.energyMeV.size(); ++e)
    sum += s.fluence[e] * s.energyMeV[e] * s.muRho[e] * std::exp(-s.muRho[e] * pathCm);
  return (sadMm / distanceMm) * (sadMm / distanceMm) * sum;
}

TEST(PhotonTerma, CentralAxisFollowsPolyenergeticAttenuationWithHardening) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const PhotonPhantomCase pc = makeWaterBox();  // 30 cm cube, SSD 100 cm, 10 x 10 cm^2
  const PhotonDoseRequest req = boxRequest(pc);
  const detail::ResolvedRequest r = detail::resolveRequest(req, *rawModel());
  const std::vector<double> terma =
      detail::computeTermaCpu(r, r.beams[0], DdaVariant::BranchFree, r.threads, {});
  const Volume<float>& d = *pc.density;
  const int ic = d.grid.dims[0] / 2, kc = d.grid.dims[2] / 2;
  double worst = 0;
  std::vector<double> depth, corrected;
  for (int j = 0; j < d.grid.dims[1]; ++j) {
    const double y = d.grid.origin.y + j * d.grid.spacing.y;  // depth of the voxel centre [mm]
    const double expected = analyticTerma(rawModel()->spectrum, 1000 + y, 1000, y / 10);
    const double got = terma[d.grid.linearIndex(ic, j, kc)];
    // The issue asks for 0.5 %; the gather ray reaches the voxel centre exactly, so the
    // difference is rounding only.
    worst = std::max(worst, std::abs(got / expected - 1));
    depth.push_back(y / 10);
    corrected.push_back(std::log(got * (1000 + y) * (1000 + y) / 1e6));
  }
  EXPECT_LT(worst, 1e-9);
  // Beam hardening: the effective attenuation coefficient (inverse square removed) falls with
  // depth because the low energies are absorbed first.
  auto muEff = [&](double z0, double z1) {
    return -(interpolate(depth, corrected, z1) - interpolate(depth, corrected, z0)) / (z1 - z0);
  };
  const double shallow = muEff(1, 5), deep = muEff(20, 28);
  std::printf("TERMA effective mu: %.5f /cm at 1-5 cm, %.5f /cm at 20-28 cm\n", shallow, deep);
  EXPECT_GT(shallow, 1.05 * deep);
  // Outside the field (6 cm off axis at the surface of a 10 x 10 field) TERMA is 0.
  EXPECT_EQ(terma[d.grid.linearIndex(ic + 12, 5, kc)], 0.0);
}

TEST(PhotonTerma, LungSlabShortensTheRadiologicalPath) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  const PhotonPhantomCase pc = makeLungSlab(WaterBoxSpec{}, 50, 120, 0.25);
  const PhotonDoseRequest req = boxRequest(pc);
  const detail::ResolvedRequest r = detail::resolveRequest(req, *rawModel());
  const std::vector<double> terma =
      detail::computeTermaCpu(r, r.beams[0], DdaVariant::Classic, r.threads, {});
  const Grid& g = pc.density->grid;
  const int ic = g.dims[0] / 2, kc = g.dims[2] / 2;
  for (double y : {31.0, 81.0, 151.0, 251.0}) {
    const int j = int(std::lround((y - g.origin.y) / g.spacing.y));
    // Voxel rows 25..59 (centres 51..119 mm, faces 50..120 mm) hold lung.
    const double path = y <= 50 ? y : (y <= 120 ? 50 + 0.25 * (y - 50) : y - 0.75 * 70);
    const double expected = analyticTerma(rawModel()->spectrum, 1000 + y, 1000, path / 10);
    EXPECT_NEAR(terma[g.linearIndex(ic, j, kc)] / expected, 1.0, 1e-6) << "depth " << y;
  }
}

TEST(PhotonTerma, OffAxisSofteningLowersOffAxisTermaOnly) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  PhotonPhantomCase pc = makeWaterBox();
  pc.beams[0].x1Mm = pc.beams[0].y1Mm = -150;
  pc.beams[0].x2Mm = pc.beams[0].y2Mm = 150;
  auto softened = std::make_shared<PhotonBeamModel>(*rawModel());
  softened->offAxisSofteningPerDeg = 0.01;  // mu x (1 + 0.01 theta_deg): an approximation
  const PhotonDoseRequest req = boxRequest(pc);
  const detail::ResolvedRequest hard = detail::resolveRequest(req, *rawModel());
  const detail::ResolvedRequest soft = detail::resolveRequest(req, *softened);
  const auto t0 =
      detail::computeTermaCpu(hard, hard.beams[0], DdaVariant::BranchFree, hard.threads, {});
  const auto t1 =
      detail::computeTermaCpu(soft, soft.beams[0], DdaVariant::BranchFree, soft.threads, {});
  const Grid& g = pc.density->grid;
  const int ic = g.dims[0] / 2, kc = g.dims[2] / 2;
  const std::size_t axis = g.linearIndex(ic, 50, kc), off = g.linearIndex(ic + 20, 50, kc);
  EXPECT_NEAR(t1[axis] / t0[axis], 1.0, 1e-9);  // theta = 0 up to the rounding of acos
  EXPECT_LT(t1[off], 0.999 * t0[off]);
}

TEST(PhotonDose, EnergyIsConservedInWaterAndInALungSlabWithAnObliqueBeam) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  WaterBoxSpec spec;
  spec.widthMm = spec.depthMm = 200;
  spec.lateralSpacingMm = spec.depthSpacingMm = 5;
  for (int lung = 0; lung < 2; ++lung) {
    PhotonPhantomCase pc = lung ? makeLungSlab(spec, 40, 100, 0.25) : makeWaterBox(spec);
    if (lung) {
      pc.beams[0].gantryDeg = 30;
      pc.beams[0].collimatorDeg = 20;
      pc.beams[0].isocenter = {0, 100, 0};
    }
    PhotonDoseRequest req = boxRequest(pc);
    const PhotonDoseResult res = computePhotonDose(req);
    const EnergyBalance& e = res.energy;
    std::printf(
        "%s: TERMA x mass %.6g, released %.6g, deposited %.6g, escaped %.6g MeV/(photon/cm^2)\n",
        pc.name.c_str(), e.termaEnergy, e.released, e.deposited, e.escaped);
    ASSERT_GT(e.released, 0);
    EXPECT_NEAR((e.deposited + e.escaped) / e.released, 1.0, 1e-9);
    // Released = TERMA x mass x the energy the cones carry (sum of A + B over the bands); the
    // issue asks for 1 % against the kernel's energy fraction.
    const ConeSet cones = collapseKernel(defaultPhotonModel()->kernel, 8, 12);
    double carried = 0;
    for (const ConeBand& b : cones.bands) carried += b.A + b.B;
    EXPECT_NEAR(e.released / (e.termaEnergy * carried), 1.0, 1e-9);
    EXPECT_NEAR(e.released / (e.termaEnergy * defaultPhotonModel()->kernel.energyFraction()), 1.0,
                0.01);
    // The dose volume holds the deposited energy (float output).
    const double gy = pc.beams[0].monitorUnits * defaultPhotonModel()->gyPerMuPerRawDose;
    const Grid& g = res.dose.grid;
    double mass = 0;
    for (std::size_t v = 0; v < g.voxelCount(); ++v)
      mass +=
          double(res.dose.data[v]) / gy * double(pc.density->data[v]) * g.voxelVolumeMm3() / 1000;
    EXPECT_NEAR(mass / e.deposited, 1.0, 1e-5);
    EXPECT_GT(e.escaped, 0.02 * e.released);  // scattered photons leave a 20 cm box
    EXPECT_LT(e.escaped, 0.5 * e.released);
  }
}

TEST(PhotonDose, ReferenceFieldDepthDoseMatchesPublished6MV) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  // 10 x 10 cm^2 at SSD 100 cm in a 30 x 30 x 30 cm^3 water box (5 mm lateral, 2 mm deep voxels).
  const PhotonPhantomCase pc = makeWaterBox();
  const PhotonDoseResult res = computePhotonDose(boxRequest(pc));
  std::vector<double> depth, dose;
  centralAxis(res.dose, pc.surfaceYMm, depth, dose);
  const std::size_t iMax = std::size_t(std::max_element(dose.begin(), dose.end()) - dose.begin());
  const double dmaxMm = depth[iMax], dm = dose[iMax];
  const double pdd5 = 100 * interpolate(depth, dose, 50) / dm;
  const double pdd10 = 100 * interpolate(depth, dose, 100) / dm;
  const double pdd20 = 100 * interpolate(depth, dose, 200) / dm;
  std::printf(
      "10x10 SSD 100: dmax %.1f mm, PDD(5) %.1f %%, PDD(10) %.1f %%, PDD(20) %.1f %%, "
      "max %.4f Gy for 100 MU\n",
      dmaxMm, pdd5, pdd10, pdd20, dm);
  // Published 6 MV: depth of maximum 1.5 cm, and %dd(10) = 67 % for the 10 x 10 cm^2 field at
  // SSD 100 cm, the beam-quality index by which BJR Supplement 25 (Central axis depth dose data
  // for use in radiotherapy, British Journal of Radiology, 1996) tabulates megavoltage X-ray
  // depth doses; clinical 6 MV beams lie at 66-67 %. Tolerance 3 % of the maximum dose (a
  // global dose difference). The model has no electron contamination and no head scatter.
  EXPECT_GE(dmaxMm, 10.0);
  EXPECT_LE(dmaxMm, 20.0);
  EXPECT_NEAR(pdd10, 67.0, 3.0);
  // Calibration: 100 MU give 1 Gy at dmax of this field (the calibration's grid differs a bit).
  EXPECT_NEAR(dm, 1.0, 0.01);
  // Symmetric field: the dose is symmetric about the axis to rounding of the lattice sums.
  const Grid& g = res.dose.grid;
  const int ic = g.dims[0] / 2, kc = g.dims[2] / 2, j = 50;
  EXPECT_NEAR(res.dose.at(ic - 8, j, kc), res.dose.at(ic + 8, j, kc), 0.01 * dm);
  EXPECT_NEAR(res.dose.at(ic, j, kc - 8), res.dose.at(ic, j, kc + 8), 0.01 * dm);
}

TEST(PhotonDose, LungSlabLowersTheDoseInItAndBuildsUpAgainBehindIt) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  // A narrow field (3 x 3 cm^2), where the longer electron ranges in lung (RED 0.25) break the
  // lateral equilibrium, compared with the same water box without the slab.
  WaterBoxSpec spec;
  spec.widthMm = 150;
  spec.depthMm = 200;
  spec.lateralSpacingMm = 2.5;
  spec.depthSpacingMm = 2;
  spec.fieldMm = 30;
  const double from = 50, to = 120;
  const PhotonPhantomCase water = makeWaterBox(spec);
  const PhotonPhantomCase lung = makeLungSlab(spec, from, to, 0.25);
  const PhotonDoseResult rw = computePhotonDose(boxRequest(water));
  const PhotonDoseResult rl = computePhotonDose(boxRequest(lung));
  std::vector<double> depth, dw, dl;
  centralAxis(rw.dose, 0, depth, dw);
  centralAxis(rl.dose, 0, depth, dl);
  for (std::size_t j = 20; j < 80; j += 3)
    std::printf("depth %5.1f mm: water %.4f, lung slab %.4f Gy\n", depth[j], dw[j], dl[j]);
  // Inside the slab's first half the dose is below the water dose at the same depth, although
  // the primary fluence is higher there (less attenuation above).
  for (std::size_t j = 0; j < depth.size(); ++j)
    if (depth[j] > from + 10 && depth[j] < from + 35) {
      EXPECT_LT(dl[j], dw[j]) << "depth " << depth[j];
    }
  // Behind the slab the dose builds up again in water: it rises over the first millimetres,
  // while the homogeneous water dose keeps falling there.
  std::size_t last = 0;  // last lung voxel on the axis
  for (std::size_t j = 0; j < depth.size(); ++j)
    if (depth[j] < to) last = j;
  const double peakBehind =
      *std::max_element(dl.begin() + long(last) + 1, dl.begin() + long(last) + 6);
  EXPECT_GT(peakBehind, 1.01 * dl[last]);
  for (std::size_t j = last; j < last + 5; ++j) EXPECT_LT(dw[j + 1], dw[j]);
  // Far behind the slab, 5.25 cm less water-equivalent depth: more dose than in water.
  EXPECT_GT(interpolate(depth, dl, 180), 1.1 * interpolate(depth, dw, 180));
}

/// A heterogeneous phantom on a rotated grid with an oblique, collimated beam: no voxel face,
/// edge or lattice line lines up with anything by construction.
PhotonDoseRequest obliqueRequest() {
  Grid g;
  g.dims = {36, 32, 40};
  g.spacing = {5, 4, 4.5};
  const double a = 0.2;
  g.direction =
      Mat3::fromColumns({std::cos(a), std::sin(a), 0}, {-std::sin(a), std::cos(a), 0}, {0, 0, 1});
  g.origin = g.direction * Vec3{-87.5, -62, -87.75};
  auto rho = std::make_shared<Volume<float>>(g, 1.0f);
  for (int k = 0; k < 40; ++k)
    for (int j = 0; j < 32; ++j)
      for (int i = 0; i < 36; ++i) {
        if (j >= 10 && j < 20) rho->at(i, j, k) = 0.25f;                                // lung
        if (i >= 20 && i < 26 && j >= 22 && j < 27 && k > 10) rho->at(i, j, k) = 1.7f;  // bone
        if (j < 2) rho->at(i, j, k) = 0.001f;                                           // air above
      }
  PhotonDoseRequest req;
  req.density = rho;
  PhotonBeam b;
  b.gantryDeg = 25;
  b.couchDeg = 10;
  b.collimatorDeg = 20;
  b.isocenter = {3, 8, -4};
  b.x1Mm = -35, b.x2Mm = 45, b.y1Mm = -30, b.y2Mm = 25;
  req.beams = {b};
  req.backend = Backend::Cpu;
  req.params.polarCones = 4;
  req.params.azimuthalCones = 6;
  req.params.cpuThreads = hardwareThreads();
  req.params.keepTerma = true;
  return req;
}

TEST(PhotonDose, ClassicAndDdaNcVariantsGiveIdenticalDose) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  PhotonDoseRequest req = obliqueRequest();
  for (DepositStrategy deposit : {DepositStrategy::AtomicFree, DepositStrategy::Atomic}) {
    req.params.deposit = deposit;
    req.params.variant = DdaVariant::Classic;
    const PhotonDoseResult classic = computePhotonDose(req);
    req.params.variant = DdaVariant::BranchFree;
    const PhotonDoseResult nc = computePhotonDose(req);
    double maxDose = 0;
    for (float d : classic.dose.data) maxDose = std::max(maxDose, double(d));
    ASSERT_GT(maxDose, 0);
    EXPECT_TRUE(classic.terma.data == nc.terma.data) << "TERMA differs between the variants";
    EXPECT_TRUE(classic.dose.data == nc.dose.data) << "dose differs between the variants";
    EXPECT_EQ(classic.energy.released, nc.energy.released);
    EXPECT_EQ(classic.energy.deposited, nc.energy.deposited);
    EXPECT_EQ(classic.voxelDirectionSteps, nc.voxelDirectionSteps);
  }
}

TEST(PhotonDose, AtomicAndAtomicFreeDepositsAgreeAndAtomicFreeIsBitwiseReproducible) {
  PENUMBRA_REQUIRE_DATA("photon-beam");
  PhotonDoseRequest req = obliqueRequest();
  const auto model = defaultPhotonModel();
  const detail::ResolvedRequest r = detail::resolveRequest(req, *model);
  const auto terma = detail::computeTermaCpu(r, r.beams[0], DdaVariant::BranchFree, r.threads, {});
  auto superpose = [&](DepositStrategy s, int threads) {
    req.params.deposit = s;  // r.request points at req
    std::vector<double> dose(r.grid.voxelCount(), 0.0);
    EnergyBalance e;
    detail::superposeCpu(r, r.beams[0], terma, DdaVariant::BranchFree, threads, {}, dose, e);
    return dose;
  };
  const std::vector<double> free1 = superpose(DepositStrategy::AtomicFree, 1);
  const std::vector<double> atomic = superpose(DepositStrategy::Atomic, hardwareThreads());
  double maxDose = 0, maxDiff = 0;
  for (std::size_t v = 0; v < free1.size(); ++v) {
    maxDose = std::max(maxDose, free1[v]);
    maxDiff = std::max(maxDiff, std::abs(free1[v] - atomic[v]));
  }
  ASSERT_GT(maxDose, 0);
  EXPECT_LT(maxDiff, 1e-12 * maxDose);
  for (int threads : {2, 3, hardwareThreads()})
    EXPECT_TRUE(superpose(DepositStrategy::AtomicFree, threads) == free1)
        << "atomic-free dose changed with " << threads << " threads";
  // Through the public API: two runs, identical bits.
  req.params.deposit = DepositStrategy::AtomicFree;
  EXPECT_TRUE(computePhotonDose(req).dose.data == computePhotonDose(req).dose.data);
}

}  // namespace
}  // namespace penumbra::photon
