// The photon engine's contract without beam data: validation errors say what is wrong and why,
// the workspace estimate, the CUDA entry point of a CPU-only build.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "photon/photon_backend.hpp"
#include "photon/photon_phantoms.hpp"

namespace penumbra::photon {
namespace {

PhotonDoseRequest smallRequest() {
  WaterBoxSpec spec;
  spec.widthMm = spec.depthMm = 60;
  spec.lateralSpacingMm = spec.depthSpacingMm = 5;
  spec.fieldMm = 40;
  const PhotonPhantomCase pc = makeWaterBox(spec);
  PhotonDoseRequest req;
  req.density = pc.density;
  req.beams = pc.beams;
  req.backend = Backend::Cpu;
  return req;
}

void expectInvalid(const PhotonDoseRequest& req, const std::string& what) {
  try {
    validate(req);
    FAIL() << "validate() accepted a request that should fail with '" << what << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos)
        << "message '" << e.what() << "' does not contain '" << what << "'";
  }
}

TEST(PhotonDoseValidation, AcceptsTheSmallWaterBox) { EXPECT_NO_THROW(validate(smallRequest())); }

TEST(PhotonDoseValidation, NamesWhatIsWrong) {
  PhotonDoseRequest r = smallRequest();
  r.density.reset();
  expectInvalid(r, "no CT or relative electron density");

  r = smallRequest();
  r.beams.clear();
  expectInvalid(r, "has no beams");

  r = smallRequest();
  r.beams[0].x1Mm = 30;
  r.beams[0].x2Mm = 20;
  expectInvalid(r, "closed or crossed jaws");

  r = smallRequest();
  r.beams[0].y2Mm = r.beams[0].y1Mm;
  expectInvalid(r, "closed or crossed jaws");

  r = smallRequest();
  r.params.polarCones = 5;
  expectInvalid(r, "must divide the kernel's 48 polar bins");

  r = smallRequest();
  r.params.polarCones = 0;
  expectInvalid(r, "must divide the kernel's 48 polar bins");

  r = smallRequest();
  r.params.azimuthalCones = 0;
  expectInvalid(r, "azimuthal cones");

  r = smallRequest();
  r.params.cpuThreads = -1;
  expectInvalid(r, "cpuThreads");

  r = smallRequest();
  r.beams[0].monitorUnits = -5;
  expectInvalid(r, "monitor units");

  r = smallRequest();
  r.beams[0].gantryDeg = std::nan("");
  expectInvalid(r, "angle");

  r = smallRequest();
  r.beams[0].sadMm = 0;
  expectInvalid(r, "source-axis distance");

  r = smallRequest();
  r.beams[0].aperture = {{{0, 0}, {10, 0}}};
  expectInvalid(r, "fewer than 3 vertices");

  r = smallRequest();
  r.doseGrid = r.density->grid;
  r.doseGrid.spacing.y = 0;
  expectInvalid(r, "positive spacing");
}

TEST(PhotonDoseValidation, RefusesUnphysicalValuesNamingThem) {
  // Each of these used to run to an inf/NaN dose.
  PhotonDoseRequest r = smallRequest();
  r.beams[0].monitorUnits = 1e308;
  expectInvalid(r, "monitor units 1e+308 outside [0, 100000]");

  r = smallRequest();
  r.beams[0].sadMm = 1e-9;
  expectInvalid(r, "source-axis distance 1e-09 mm outside [500, 2000] mm");

  r = smallRequest();
  r.doseGrid = r.density->grid;
  r.doseGrid.spacing.z = 1e-300;
  expectInvalid(r, "dose grid spacing 1e-300 mm (axis 3) is outside [0.01, 100] mm");

  r = smallRequest();
  r.beams[0].monitorUnits = kMaxMonitorUnits;
  r.beams[0].sadMm = kMaxSadMm;
  EXPECT_NO_THROW(validate(r));
}

TEST(PhotonDoseValidation, ComputeRefusesBeforeLoadingData) {
  PhotonDoseRequest r = smallRequest();
  r.params.polarCones = 7;
  EXPECT_THROW(computePhotonDose(r), Error);
}

TEST(PhotonDoseWorkspace, CountsTheBuffers) {
  PhotonDoseRequest r = smallRequest();
  const PhotonWorkspaceEstimate free = workspaceBytes(r);
  const std::size_t n = r.density->grid.voxelCount();
  EXPECT_GE(free.hostBytes, 40 * n);  // density, TERMA, dose, 3 slots, output
  EXPECT_GE(free.deviceBytes, 24 * n);
  EXPECT_NE(free.breakdown.find("96 cone directions"), std::string::npos) << free.breakdown;
  r.params.deposit = DepositStrategy::Atomic;
  r.params.cpuThreads = 1;
  EXPECT_LT(workspaceBytes(r).hostBytes, free.hostBytes);
}

TEST(PhotonDensity, CtThroughTheDefaultCurveAndTrilinearResampling) {
  Grid g;
  g.dims = {10, 8, 6};
  g.spacing = {4, 4, 4};
  g.origin = {-18, -14, -10};
  auto ct = std::make_shared<CtVolume>(g, std::int16_t(0));
  for (int k = 0; k < 6; ++k)
    for (int j = 0; j < 8; ++j) ct->at(0, j, k) = -1000;  // an air column at i = 0
  ct->at(9, 7, 5) = 100;
  PhotonDoseRequest req = smallRequest();
  req.density.reset();
  req.ct = ct;
  // Same grid: the HU->RED curve (matRad default: 0 -> 1, 100 -> 1.095, air -> 0.001).
  std::vector<float> rho = detail::resolveDensity(req, g);
  EXPECT_EQ(rho[g.linearIndex(5, 4, 3)], 1.0f);
  EXPECT_NEAR(rho[g.linearIndex(9, 7, 5)], 1.095f, 1e-6);
  EXPECT_NEAR(rho[g.linearIndex(0, 4, 3)], 0.001f, 1e-7);
  for (float v : rho) EXPECT_GE(v, detail::kMinDensity);
  // A dose grid shifted by half a voxel along x and reaching beyond the CT: trilinear inside,
  // air outside the CT's box.
  Grid d = g;
  d.dims = {12, 8, 6};
  d.origin.x = g.origin.x - 2;  // voxel centres on the CT's voxel faces
  rho = detail::resolveDensity(req, d);
  EXPECT_NEAR(rho[d.linearIndex(1, 4, 3)], 0.5 * (0.001 + 1.0), 1e-6);  // between air and water
  EXPECT_EQ(rho[d.linearIndex(5, 4, 3)], 1.0f);
  EXPECT_EQ(rho[d.linearIndex(11, 4, 3)], detail::kMinDensity);  // x = 24 mm: outside the CT
}

#ifndef PENUMBRA_HAVE_CUDA
TEST(PhotonDoseBackend, CudaEntryPointOfACpuBuildSaysWhy) {
  detail::ResolvedRequest r;
  PhotonDoseResult result;
  try {
    detail::computeCuda(r, result, {});
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
    EXPECT_NE(std::string(e.what()).find("no CUDA support"), std::string::npos) << e.what();
  }
}
#endif

}  // namespace
}  // namespace penumbra::photon
