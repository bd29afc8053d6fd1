#pragma once
/// Bortfeld's analytical Bragg curve: T. Bortfeld, "An analytical approximation of the Bragg
/// curve for therapeutic proton beams", Med. Phys. 24 (1997) 2024-2033.
///
/// Unstraggled curve (Bortfeld eqs. 12-16), residual range r = R0 - z, water density rho:
///   Dhat(z) = Phi0 / (rho (1 + beta R0)) * alpha^(-1/p) * [ r^(1/p-1)/p + (beta/p + gamma beta
///             + epsilon/R0) r^(1/p) ]                                        for 0 <= z < R0.
/// The first term is the stopping power of primaries times their fluence (which falls linearly,
/// Phi ~ 1 + beta r, through non-elastic nuclear interactions at beta = 0.012 /cm); the second
/// collects the fluence-loss slope, the fraction gamma = 0.6 of the energy released in nuclear
/// interactions that is deposited locally (the rest leaves as neutrons and gammas), and
/// Bortfeld's "tail" protons (fraction epsilon of the primary fluence in a low-energy tail of the
/// spectrum, added on top of Phi0). Bortfeld fitted epsilon ~ 0.1-0.2 to a passively scattered
/// beam line; a scanned beam with no scatterer in the nozzle has essentially no such tail, so
/// the default here is epsilon = 0.
///
/// Straggled curve (Bortfeld eq. 26-27): Dhat convolved with a Gaussian in depth of width
///   sigma^2 = sigma_mono^2 + sigma_E0^2 (dR0/dE0)^2,   sigma_mono = 0.012 R0^0.935  [cm]
/// (Bortfeld eq. 18; the second term is his alpha^2 p^2 E0^(2p-2) sigma_E0^2 with dR/dE taken
/// from the accurate range relation instead of the power law). Convolving r^(nu-1) with a
/// Gaussian gives exactly sigma^(nu-1) Gamma(nu) exp(-zeta^2/4) D_{-nu}(-zeta) / sqrt(2 pi),
/// zeta = r / sigma, so
///   D(z) = Phi0 Gamma(1/p) sigma^(1/p) exp(-zeta^2/4) / (sqrt(2 pi) rho p alpha^(1/p) (1+beta R0))
///          * [ D_{-1/p}(-zeta) / sigma + (beta/p + gamma beta + epsilon/R0) D_{-1/p-1}(-zeta) ].
/// This one expression covers the plateau (zeta >> 1, where it tends to Dhat), the peak, and the
/// region beyond R0 (zeta < 0, a Gaussian tail); there is no piecewise switch. Only the surface
/// (z near 0, where the true curve starts at z = 0) is not convolved, an error of order
/// exp(-(R0/sigma)^2/2): nil.
///
/// R0 and alpha: R0 = rangeCm(E0) (the log-log cubic fit, see bragg_kleeman.hpp), p from the
/// power-law fit, and alpha_eff = R0 / E0^p, so that the stopping-power term integrates exactly
/// to E0 over [0, R0] (energy conservation) and the peak sits at the PSTAR range.
///
/// Units: z, R0, sigma in cm of water; D in MeV cm^2/g per proton (with Phi0 = 1 proton/cm^2:
/// dose per fluence; equivalently the laterally integrated -dE/d(rho z) of a pencil beam of one
/// proton). With rho = 1 g/cm^3, Int D dz [MeV cm^3/g] * rho = MeV per proton.
#include "proton/physics/bragg_kleeman.hpp"

namespace penumbra::proton {

struct BortfeldParameters {
  double beta = 0.012;              ///< fluence loss by non-elastic nuclear interactions [1/cm]
  double gamma = 0.6;               ///< fraction of nuclear-released energy deposited locally [-]
  double epsilon = 0.0;             ///< low-energy tail fluence fraction [-] (Bortfeld: 0-0.2)
  double p = kBraggKleemanWater.p;  ///< shape exponent of the range-energy power law [-]
  double stragglingCoefficient = 0.012;  ///< sigma_mono = coeff * R0^exponent, R0 in cm
  double stragglingExponent = 0.935;
  double densityGPerCm3 = 1.0;  ///< water
};

/// One Bragg curve at fixed nominal energy. Cheap to construct; evaluation costs ~1 us in the
/// plateau (asymptotic series) and ~10 us near the peak (tanh-sinh quadratures).
class BortfeldBraggCurve {
 public:
  /// energyMeV: nominal kinetic energy E0 > 0 [MeV]; energySpreadMeV: 1-sigma spread [MeV] >= 0.
  BortfeldBraggCurve(double energyMeV, double energySpreadMeV = 0.0,
                     const BortfeldParameters& params = {});

  /// Straggled, laterally integrated dose per proton at water-equivalent depth zCm [cm];
  /// MeV cm^2/g. Zero for z < 0.
  double operator()(double zCm) const;
  /// Same without range straggling or energy spread (sigma = 0); zero for z >= R0.
  double unstraggled(double zCm) const;

  double energyMeV() const { return e0_; }
  double rangeCm() const { return r0_; }                   ///< R0 [cm], PSTAR CSDA range
  double sigmaCm() const { return sigma_; }                ///< total range spread [cm]
  double sigmaStragglingCm() const { return sigmaMono_; }  ///< sigma_mono [cm]
  double sigmaEnergySpreadCm() const { return sigmaE_; }   ///< sigma_E0 dR/dE [cm]
  double alphaEff() const { return alpha_; }               ///< R0 / E0^p [cm MeV^-p]
  const BortfeldParameters& parameters() const { return par_; }

 private:
  BortfeldParameters par_;
  double e0_, r0_, alpha_, sigmaMono_, sigmaE_, sigma_;
  double prefactor_;  // E0 R0^(-1/p) / (rho (1 + beta R0)) = alpha^(-1/p) / (rho (1+beta R0))
  double c2_;         // beta/p + gamma beta + epsilon/R0 [1/cm]
};

/// Energy deposited per primary proton [MeV] by the model, from its parameters alone (no
/// integration): Int_0^R0 Dhat dz rho = E0 [1 + beta R0 (1 + gamma p)/(p + 1) + epsilon p/(p + 1)]
/// / (1 + beta R0). Straggling and energy spread only move dose in depth, so the straggled curve
/// integrates to the same value. With epsilon = 0 this is E0 minus (1 - gamma) times the energy
/// carried by the protons removed in nuclear interactions, E0 beta R0 p / ((p + 1)(1 + beta R0)).
double energyDepositedPerProtonMeV(double energyMeV, const BortfeldParameters& params = {});

}  // namespace penumbra::proton
