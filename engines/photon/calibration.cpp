// defaultPhotonModel(): the 6 MV beam model from the shared photon-beam data, calibrated once
// per process so that 1 MU gives 0.01 Gy at the depth of maximum dose on the central axis of a
// 10 x 10 cm^2 field at SSD 100 cm in water (the usual reference condition of a linac's
// monitor chamber calibration).
#include <algorithm>
#include <mutex>

#include "core/error.hpp"
#include "photon/photon_dose.hpp"
#include "photon/photon_phantoms.hpp"

namespace penumbra::photon {

namespace {

/// The calibration phantom: 25 x 25 cm^2 wide (7.5 cm of water beside the field edges) and 15 cm
/// deep (backscatter from beyond ~10 cm to dmax is negligible), 4 mm lateral and 2 mm depth
/// voxels (dmax sits on the flat top of the depth-dose curve), 8 x 12 cones.
double calibrationMaxRawDose(const std::shared_ptr<const PhotonBeamModel>& uncalibrated) {
  WaterBoxSpec spec;
  spec.widthMm = 250;
  spec.depthMm = 150;
  spec.lateralSpacingMm = 4;
  spec.depthSpacingMm = 2;
  spec.ssdMm = 1000;
  spec.sadMm = uncalibrated->sadMm;
  spec.fieldMm = 100;
  const PhotonPhantomCase pc = makeWaterBox(spec);
  PhotonDoseRequest req;
  req.density = pc.density;
  req.beams = pc.beams;
  req.backend = Backend::Cpu;
  req.model = uncalibrated;
  req.params.polarCones = 8;
  req.params.azimuthalCones = 12;
  const PhotonDoseResult res = computePhotonDose(req);  // raw dose: the model is uncalibrated
  std::vector<double> depth, dose;
  centralAxis(res.dose, pc.surfaceYMm, depth, dose);
  return *std::max_element(dose.begin(), dose.end());
}

}  // namespace

std::shared_ptr<const PhotonBeamModel> defaultPhotonModel() {
  // Computed once; a failure (missing data) is not cached, so a later call can succeed.
  static std::mutex mutex;
  static std::shared_ptr<const PhotonBeamModel> cached;
  std::lock_guard<std::mutex> lock(mutex);
  if (cached) return cached;
  const std::string dir = findPhotonDataDir();
  PENUMBRA_REQUIRE(!dir.empty(), Io,
                   "photon beam data not found: no photon-beam folder under $PENUMBRA_DATA, "
                   "$PENUMBRA_TEST_DATA or <source>/../shared/data");
  auto model = std::make_shared<PhotonBeamModel>(*PhotonBeamModel::load6MV(dir));
  model->gyPerMuPerRawDose = 0;
  const double maxRaw = calibrationMaxRawDose(model);
  PENUMBRA_REQUIRE(maxRaw > 0, Internal,
                   "photon beam calibration: the reference field gave no dose on the central axis");
  model->gyPerMuPerRawDose = 0.01 / maxRaw;
  cached = model;
  return cached;
}

}  // namespace penumbra::photon
