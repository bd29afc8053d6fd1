#pragma once
/// Built-in phantoms for the photon engine's tests, calibration, benchmark and CLI: water boxes
/// and a lung-slab box as relative electron density, with one open field from gantry 0 at a
/// given SSD (the GPU machine has no DICOM and no shared data, so these are built in code).
///
/// Geometry (patient LPS, mm): x lateral (patient left), y depth (gantry 0 sends the beam along
/// +y, from anterior), z lateral (superior). The water surface is the plane y = 0, the grid
/// starts there (voxel faces on the surface) and the central axis x = z = 0 runs through voxel
/// centres (odd lateral voxel counts).
#include <memory>
#include <string>
#include <vector>

#include "core/volume.hpp"
#include "photon/photon_dose.hpp"

namespace penumbra::photon {

struct PhotonPhantomCase {
  std::string name;
  std::shared_ptr<Volume<float>> density;  ///< relative electron density
  std::vector<PhotonBeam> beams;
  double surfaceYMm = 0;  ///< y of the water surface (depth = y - surfaceYMm)
};

/// Shape of a box phantom.
struct WaterBoxSpec {
  double widthMm = 300;  ///< lateral extent along x and z
  double depthMm = 300;  ///< along y, from the surface
  double lateralSpacingMm = 5;
  double depthSpacingMm = 2;
  double ssdMm = 1000;   ///< source to surface; the isocentre is at depth SAD - SSD
  double fieldMm = 100;  ///< square field side at the isocentre plane
  double sadMm = 1000;
};

/// Water (RED 1) box with one gantry-0 field of `fieldMm` x `fieldMm`, 100 MU.
PhotonPhantomCase makeWaterBox(const WaterBoxSpec& spec = {});
/// The same box with a slab of relative electron density `slabDensity` (lung ~0.25) between
/// depths slabFromMm and slabToMm.
PhotonPhantomCase makeLungSlab(const WaterBoxSpec& spec = {}, double slabFromMm = 50,
                               double slabToMm = 120, double slabDensity = 0.25);

/// Dose along the central axis (x = z = 0) of a box phantom's dose volume: one value per
/// voxel row along y, with depths of the voxel centres [mm].
void centralAxis(const Volume<float>& dose, double surfaceYMm, std::vector<double>& depthMm,
                 std::vector<double>& value);
/// Linear interpolation of (x, y) samples at x0 (x ascending); clamps at the ends.
double interpolate(const std::vector<double>& x, const std::vector<double>& y, double x0);

}  // namespace penumbra::photon
