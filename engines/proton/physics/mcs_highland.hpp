#pragma once
/// Lateral spread of a proton pencil beam in water by multiple Coulomb scattering (MCS):
/// Fermi-Eyges transport with a Highland scattering power, as in the pencil-beam algorithm of
/// Hong et al., Phys. Med. Biol. 41 (1996) 1305 (the model behind da Silva's kernel superposition).
///
///   sigma_MCS^2(z) = (1 + log10(z/X0)/9)^2 * Int_0^z (z - z')^2 (14.1 MeV / pv(z'))^2 / X0 dz'
///
/// pv(z') = E (E + 2 M) / (E + M) is the momentum times velocity of a proton of residual kinetic
/// energy E = E(R0 - z') (the CSDA range relation of bragg_kleeman.hpp), M = 938.272 MeV, and
/// X0 = 36.08 cm the radiation length of water. The Highland logarithmic factor is the thick-
/// target form (Gottschalk et al., NIM B 74 (1993) 467): it depends on the total thickness z, so
/// it multiplies the whole integral instead of sitting inside it. This matches Highland's
/// formula at every depth; Gottschalk's "differential Highland" scattering power (Med. Phys. 37
/// (2010) 352) would make T local but changes sigma by only a few percent.
///
/// The integrand has the singularity (pv)^-2 ~ (R0 - z')^-1.13 at the end of range, integrable
/// against (z - z')^2, handled by tanh-sinh quadrature in the residual-range variable. Beyond R0
/// the beam has stopped: sigma is held at its end-of-range value.
///
/// Units: energies in MeV, depths in cm of water (WEPL), sigma in mm.
#include <vector>

namespace penumbra::proton {

struct HighlandParameters {
  double radiationLengthCm = 36.08;   ///< X0 of water [cm] (PDG: 36.08 g/cm^2)
  double highlandConstantMeV = 14.1;  ///< Highland's E_s [MeV]
  double protonMassMeV = 938.272;     ///< M c^2 [MeV]
};

/// pv [MeV] of a proton of kinetic energy energyMeV [MeV].
double protonPvMeV(double energyMeV, double protonMassMeV = 938.272);

/// sigma_MCS [mm] at water-equivalent depth zWepCm [cm] of a pencil beam of initial energy
/// energyMeV [MeV] (sigma of the projected lateral displacement, one axis). 0 at z <= 0.
double sigmaMcsMm(double energyMeV, double zWepCm, const HighlandParameters& params = {});

/// sigma_MCS [mm] on the grid z_i = i dzCm, i = 0..n-1.
std::vector<double> tabulateSigmaMcsMm(double energyMeV, double dzCm, std::size_t n,
                                       const HighlandParameters& params = {});

/// Total lateral sigma [mm]: initial spot size in air at isocentre, MCS in the patient, and an
/// optional divergence term (sigma_theta x distance from isocentre), added in quadrature.
double totalSigmaMm(double sigmaAirMm, double sigmaMcsMm, double divergenceTermMm = 0.0);

}  // namespace penumbra::proton
