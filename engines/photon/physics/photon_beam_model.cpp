// The 6 MV beam model assembled from the published data in shared/data/photon-beam.
#include "photon/physics/photon_beam_model.hpp"

#include <filesystem>
#include <memory>
#include <string>

#include "core/error.hpp"

namespace penumbra::photon {

std::shared_ptr<const PhotonBeamModel> PhotonBeamModel::load6MV(const std::string& dataDir) {
  const std::string spectrumPath = dataDir + "/photon-beam/spectra/egsnrc/mohan6.spectrum";
  const std::string kernelDir = dataDir + "/photon-beam/kernels/mackie_wiscplan_6MV_bin";
  const std::string nistPath = dataDir + "/reference/nist_xray_water_mu_rho_0.1-20MeV.csv";
  for (const auto& p : {spectrumPath, kernelDir, nistPath}) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec))
      PENUMBRA_THROW(Io, "6 MV photon beam model: '" + p + "' not found (is the data folder '" +
                             dataDir + "' complete?)");
  }
  const WaterAttenuation water = WaterAttenuation::load(nistPath);
  const MackieKernels mono = MackieKernels::load(kernelDir);
  auto model = std::make_shared<PhotonBeamModel>();
  model->name = "6 MV (Mohan 1985 spectrum, Mackie 1988 kernels)";
  model->spectrum = rebinOnto(readEgsSpectrum(spectrumPath), mono.energyMeV, water);
  model->kernel = makePolyenergeticKernel(mono, model->spectrum);
  model->sadMm = 1000;
  model->offAxisSofteningPerDeg = 0;
  model->gyPerMuPerRawDose = 0;  // calibrated by the dose engine (10 x 10 cm^2, SSD 100 cm)
  return model;
}

}  // namespace penumbra::photon
