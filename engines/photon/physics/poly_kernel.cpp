// Polyenergetic point kernel: Mackie monoenergetic kernels weighted by each spectral
// component's share of the TERMA (fluence x E x mu/rho), as in Ahnesjo (1989) and WiscPlan.
#include <cmath>
#include <string>

#include "core/error.hpp"
#include "photon/physics/photon_beam_model.hpp"

namespace penumbra::photon {

double PolyKernel::energyFraction() const {
  double s = 0;
  for (double v : value) s += v;
  return s;
}

PolyKernel makePolyenergeticKernel(const MackieKernels& mono, const Spectrum& spectrum) {
  const int nE = mono.nE(), nP = mono.nPolar(), nR = mono.nRadial();
  PENUMBRA_REQUIRE(
      nE > 0 && nP > 0 && nR > 0 && mono.total.size() == static_cast<std::size_t>(nE) * nP * nR,
      InvalidArgument, "polyenergetic kernel: kernel arrays are inconsistent");
  PENUMBRA_REQUIRE(spectrum.energyMeV.size() == static_cast<std::size_t>(nE) &&
                       spectrum.fluence.size() == spectrum.energyMeV.size() &&
                       spectrum.muRho.size() == spectrum.energyMeV.size(),
                   InvalidArgument,
                   "polyenergetic kernel: spectrum '" + spectrum.name + "' has " +
                       std::to_string(spectrum.energyMeV.size()) +
                       " energies (with mu/rho needed), kernels have " + std::to_string(nE) +
                       "; rebin it with rebinOnto() first");
  for (int e = 0; e < nE; ++e)
    PENUMBRA_REQUIRE(
        std::abs(spectrum.energyMeV[e] - mono.energyMeV[e]) <= 1e-6 * mono.energyMeV[e],
        InvalidArgument,
        "polyenergetic kernel: spectrum energy " + std::to_string(spectrum.energyMeV[e]) +
            " MeV != kernel energy " + std::to_string(mono.energyMeV[e]) + " MeV");
  std::vector<double> w(nE);
  double wSum = 0;
  for (int e = 0; e < nE; ++e) {
    w[e] = spectrum.fluence[e] * spectrum.energyMeV[e] * spectrum.muRho[e];
    PENUMBRA_REQUIRE(w[e] >= 0 && std::isfinite(w[e]), InvalidArgument,
                     "polyenergetic kernel: negative or non-finite spectral weight");
    wSum += w[e];
  }
  PENUMBRA_REQUIRE(wSum > 0, InvalidArgument,
                   "polyenergetic kernel: spectrum '" + spectrum.name + "' has no weight");
  PolyKernel k;
  k.radiusCm = mono.radiusCm;
  k.polarUpperDeg = mono.polarUpperDeg;
  k.value.assign(static_cast<std::size_t>(nP) * nR, 0.0);
  for (int e = 0; e < nE; ++e) {
    const double we = w[e] / wSum;
    for (int p = 0; p < nP; ++p)
      for (int r = 0; r < nR; ++r)
        k.value[static_cast<std::size_t>(p) * nR + r] += we * mono.at(e, p, r);
  }
  return k;
}

}  // namespace penumbra::photon
