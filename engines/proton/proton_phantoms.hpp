#pragma once
/// Built-in phantoms and simple automatic plans for the proton engine's tests, benchmark and CLI
/// (the GPU machine has no DICOM library and no shared data, so these are built in code).
#include <cstdint>
#include <string>
#include <vector>

#include "core/volume.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_plan.hpp"
#include "spmv/half_csr.hpp"

namespace penumbra::proton {

/// A CT, a plan and a dose grid.
struct ProtonPhantomCase {
  std::string name;
  CtVolume ct;  ///< HU
  std::vector<ProtonBeam> beams;
  Grid doseGrid;          ///< where the dose is wanted (may differ from the CT grid)
  Vec3 targetCenter;      ///< LPS mm
  double targetRadiusMm = 0;
};

/// Axis-aligned grid with the given dims, spacing [mm] and first voxel centre [mm].
Grid makeAxisGrid(std::array<int, 3> dims, Vec3 spacing, Vec3 origin);

/// Spots on a square grid of `spotSpacingMm` covering the target sphere's projection (+ margin
/// mm) at the iso plane, and `layers` energies whose CSDA ranges run evenly from the smallest
/// proximal to the largest distal water-equivalent depth of the target along the spot rays
/// (traced through `spr`), clamped to [50, 250] MeV. Weights 1. The beam's isocentre is the
/// target centre.
ProtonBeam planBeamOnSphere(const Volume<float>& spr, std::string name, double gantryDeg,
                            double couchDeg, Vec3 targetCenter, double targetRadiusMm,
                            int layers, double spotSpacingMm, double marginMm = 3.0,
                            double sadMm = 2000.0);

/// SPR volume of a CT through the default matRad HU->SPR curve (resources/calibration).
Volume<float> sprOfCt(const CtVolume& ct);

/// Water box phantom: 200 x 200 x 300 mm water (HU 0) in air, 2 mm voxels, one beam from
/// gantry 0 with 10 layers on a 30-mm-radius target at 100 mm depth.
ProtonPhantomCase makeWaterPhantomCase();
/// matRad BOXPHANTOM equivalent: 160^3 voxels of 3 mm, first voxel centre -240 mm, HU -1024
/// outside and 0 inside the 81^3-voxel BODY (voxels 39..119), target = the 21^3-voxel
/// OuterTarget (voxels 69..89, centre -3 mm). Plan: gantry 0 and 90, 5 layers each, 6-mm spots.
ProtonPhantomCase makeBoxPhantomCase();
/// Head-and-neck-sized heterogeneous phantom ("hn-2field", da Silva's test case size): a water
/// ellipsoid (semi-axes 75, 95, 70 mm) with a 6-mm bone shell (HU 1000) and an air cavity
/// (radius 15 mm, HU -1000), CT and dose grid 200 x 200 x 150 mm at `doseSpacingMm`, two
/// fields (gantry 45 and 315) of 50 layers x ~110 spots on a 30-mm-radius target.
ProtonPhantomCase makeHeadNeckCase(double doseSpacingMm = 1.0);
/// Seeded random heterogeneous phantom: water body box with random boxes of HU -1000..1500,
/// dims^3 voxels of 2.5 mm, and two beams at random gantry angles with 3 layers of randomly
/// placed spots of random weights. For CUDA-vs-CPU tests.
ProtonPhantomCase makeRandomPhantomCase(std::uint32_t seed, int dims = 48);

/// A dose request for the case: its CT, beams and dose grid on `backend`, default parameters.
ProtonDoseRequest phantomRequest(const ProtonPhantomCase& pc, Backend backend = Backend::Auto);

/// The dose-deposition matrix the CPU engine builds for the case (its CT, beams and dose grid,
/// default parameters): the real matrix of the SpMV tests and benchmark.
spmv::HalfCsr phantomDoseMatrix(const ProtonPhantomCase& pc);

}  // namespace penumbra::proton
