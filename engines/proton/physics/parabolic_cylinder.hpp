#pragma once
/// Parabolic cylinder functions D_a(x) of negative order a = -nu (Whittaker's notation), which
/// Bortfeld's analytical Bragg curve needs for a = -1/p and a = -1/p - 1 (p ~ 1.76).
///
/// Method: the integral representation (DLMF 12.5.1, Gradshteyn 9.241.2)
///   D_{-nu}(x) = exp(-x^2/4) / Gamma(nu) * Int_0^inf t^(nu-1) exp(-x t - t^2/2) dt,  nu > 0,
/// evaluated by tanh-sinh quadrature, which is indifferent to the t^(nu-1) end singularity.
/// All terms of the integrand are positive, so unlike the Kummer power series there is no
/// cancellation for x > 0 (the series loses exp(x^2/2) relative: everything by x ~ 8).
///
/// Bortfeld's curve needs exp(-zeta^2/4) D_{-nu}(-zeta) for zeta = (R0 - z)/sigma from about
/// -40 (Gaussian tail beyond the peak) to several hundred (plateau), where D itself over- or
/// underflows. scaledParabolicCylinderD() returns that product directly as
///   Int_0^inf t^(nu-1) exp(-(t - zeta)^2 / 2) dt / Gamma(nu),
/// integrating only where the Gaussian is above exp(-72) (relative truncation < 1e-31), and
/// switching to the asymptotic series sqrt(2 pi) zeta^(nu-1) [1 + (nu-1)(nu-2)/(2 zeta^2) + ...]
/// (four terms; the first omitted term is < 1e-8 relative for nu in [0.2, 2]) for zeta >= 15.
///
/// Accuracy (parabolic_cylinder_test.cpp): relative error < 1e-12 against the closed forms
/// D_{-1}(x) = exp(x^2/4) sqrt(pi/2) erfc(x/sqrt 2), D_{-2}(x) = exp(-x^2/4) - x D_{-1}(x)
/// and D_{-1/2}(x) = sqrt(x/(2 pi)) K_{1/4}(x^2/4) for |x| <= 10, and the three-term recurrence
/// D_{a+1} - x D_a + a D_{a-1} = 0 holds to < 1e-12 for a = -1/p - 1.
#include <array>

namespace penumbra::proton {

/// D_a(x) for order a <= -0.2 (nu = -a >= 0.2). Overflows to +inf for x < -~53.
/// Throws InvalidArgument for a > -0.2.
double parabolicCylinderD(double a, double x);

/// exp(-zeta^2/4) * D_{-nu}(-zeta), nu >= 0.2, any finite zeta. Finite for all zeta; ~0 for
/// zeta < -38 (underflow of exp(-zeta^2/2)).
double scaledParabolicCylinderD(double nu, double zeta);

/// Int_0^inf t^(nu-1) exp(-(t - zeta)^2 / 2) dt, i.e. sqrt(2 pi) times the expectation of
/// max(T,0)^(nu-1) for T ~ N(zeta, 1): the Gaussian smearing of a power law. nu >= 0.2.
double gaussianSmearedPower(double nu, double zeta);
/// {gaussianSmearedPower(nu, zeta), gaussianSmearedPower(nu + 1, zeta)} at the cost of one.
std::array<double, 2> gaussianSmearedPowerPair(double nu, double zeta);

}  // namespace penumbra::proton
