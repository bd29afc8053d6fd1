// The photon beam model assembled from the published data in shared/data/photon-beam.
#include "photon/physics/photon_beam_model.hpp"

#include <filesystem>
#include <memory>
#include <string>

#include "core/error.hpp"

namespace penumbra::photon {

std::shared_ptr<const PhotonBeamModel> PhotonBeamModel::load(const std::string& dataDir,
                                                             const std::string& spectrumRelPath,
                                                             const std::string& name) {
  const std::string spectrumPath = dataDir + "/photon-beam/" + spectrumRelPath;
  const std::string kernelDir = dataDir + "/photon-beam/kernels/mackie_wiscplan_6MV_bin";
  const std::string nistPath = dataDir + "/reference/nist_xray_water_mu_rho_0.1-20MeV.csv";
  for (const auto& p : {spectrumPath, kernelDir, nistPath}) {
    std::error_code ec;
    if (!std::filesystem::exists(p, ec))
      PENUMBRA_THROW(Io, "photon beam model '" + name + "': '" + p +
                             "' not found (is the data folder '" + dataDir + "' complete?)");
  }
  const WaterAttenuation water = WaterAttenuation::load(nistPath);
  const MackieKernels mono = MackieKernels::load(kernelDir);
  const Spectrum source = readEgsSpectrum(spectrumPath);
  // The Mackie kernels stop at 6 MeV and rebinOnto() folds any fluence above onto 6 MeV. The
  // 6 MV spectra of the data folder put 0-3.4 % of their energy fluence there (Sheikh-Bagheri and
  // Rogers' Elekta and Siemens spectra reach 8 MeV), a small softening; a spectrum with more than
  // 5 % (a 10 MV beam) would be a different beam and is refused.
  double beyond = 0, total = 0;
  for (std::size_t i = 0; i < source.energyMeV.size(); ++i) {
    const double energyFluence = source.fluence[i] * source.energyMeV[i];
    total += energyFluence;
    if (source.energyMeV[i] > mono.energyMeV.back()) beyond += energyFluence;
  }
  if (beyond > 0.05 * total)
    PENUMBRA_THROW(InvalidArgument,
                   "photon beam model '" + name + "': spectrum '" + spectrumPath + "' has " +
                       std::to_string(100 * beyond / total) + " % of its energy fluence above " +
                       std::to_string(mono.energyMeV.back()) +
                       " MeV, the highest energy of the Mackie kernels (at most 5 % allowed)");
  auto model = std::make_shared<PhotonBeamModel>();
  model->name = name;
  model->spectrum = rebinOnto(source, mono.energyMeV, water);
  model->kernel = makePolyenergeticKernel(mono, model->spectrum);
  model->sadMm = 1000;
  model->offAxisSofteningPerDeg = 0;
  model->gyPerMuPerRawDose = 0;  // calibrated by the dose engine (10 x 10 cm^2, SSD 100 cm)
  return model;
}

std::shared_ptr<const PhotonBeamModel> PhotonBeamModel::load6MV(const std::string& dataDir) {
  return load(dataDir, "spectra/egsnrc/mohan6.spectrum",
              "6 MV (Mohan 1985 spectrum, Mackie 1988 kernels)");
}

}  // namespace penumbra::photon
