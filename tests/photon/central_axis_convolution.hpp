#pragma once
// Reference central-axis depth dose for the photon tests: TERMA of a point source with a square
// field in a homogeneous water box, convolved directly with the tabulated polyenergetic point
// kernel (all 48 polar x 24 radial Mackie bins, no cone collapse, no exponential fit, no
// transport lattice). It shares only the TERMA formula and the kernel table with the engine, so
// a difference between the two is the engine's kernel representation and discretisation.
//
// Dose at P = (0, 0, z): D(P) = sum over kernel bins of K_bin x <T(P - s)>, the mean of TERMA
// over the points s of the bin (polar band x radial shell, uniform per volume), s measured from
// the interaction point along the kernel's polar axis = the beam direction (the engine does not
// tilt the kernel either). In a convex homogeneous box every path from an interaction point to
// P stays in water, so T = 0 outside the box is the whole boundary treatment.
//
// Cost: ~1.2 million TERMA look-ups per dose point (quadrature 4 polar x 6 or 12 radial x 24
// azimuthal points per bin), ~25 ms per point on one core.
#include <algorithm>
#include <cmath>
#include <vector>

#include "photon/physics/photon_beam_model.hpp"

namespace penumbra::photon::reference {

/// Water box with its surface at z = 0, a point source on the axis at z = -ssdCm and a square
/// field of side fieldCm at distance sadCm from the source. All lengths in cm.
struct WaterBoxBeam {
  double halfWidthCm = 15;  ///< the box spans |x|, |y| <= halfWidthCm
  double depthCm = 30;      ///< and 0 <= z <= depthCm
  double ssdCm = 100;
  double sadCm = 100;
  double fieldCm = 10;
};

class CentralAxisConvolution {
 public:
  CentralAxisConvolution(const Spectrum& spectrum, const PolyKernel& kernel,
                         const WaterBoxBeam& box)
      : kernel_(kernel), box_(box) {
    // TERMA per unit fluence at the isocentre without the inverse square, tabulated against the
    // water path length: sum_E f_E E mu_E exp(-mu_E path) (the engine's formula in water).
    const double maxPath =
        2 * std::sqrt(2 * box.halfWidthCm * box.halfWidthCm + box.depthCm * box.depthCm);
    terma_.resize(std::size_t(maxPath / kStep) + 2);
    for (std::size_t i = 0; i < terma_.size(); ++i) {
      double t = 0;
      for (std::size_t e = 0; e < spectrum.energyMeV.size(); ++e)
        t += spectrum.fluence[e] * spectrum.energyMeV[e] * spectrum.muRho[e] *
             std::exp(-spectrum.muRho[e] * double(i) * kStep);
      terma_[i] = t;
    }
  }

  /// TERMA [MeV/g per unit fluence at the isocentre] at (x, y, z) cm: open field (sharp edges),
  /// inverse square from the source, attenuation along the ray's water path.
  double terma(double x, double y, double z) const {
    if (z < 0 || z > box_.depthCm || std::abs(x) > box_.halfWidthCm ||
        std::abs(y) > box_.halfWidthCm)
      return 0;
    const double fromSource = box_.ssdCm + z;  // along the axis
    const double halfField = 0.5 * box_.fieldCm * fromSource / box_.sadCm;
    if (std::abs(x) > halfField || std::abs(y) > halfField) return 0;
    const double d = std::sqrt(x * x + y * y + fromSource * fromSource);
    const double path = d * z / fromSource;  // the part of the ray below the surface
    const double u = path / kStep;
    const std::size_t i = std::min(std::size_t(u), terma_.size() - 2);
    const double f = u - double(i);
    return (terma_[i] + f * (terma_[i + 1] - terma_[i])) * (box_.sadCm / d) * (box_.sadCm / d);
  }

  /// Dose on the central axis at depth z [cm], same raw units as the engine (MeV/g per unit
  /// fluence at the isocentre).
  double dose(double z) const {
    constexpr double kPi = 3.14159265358979323846;
    constexpr int nPolarPts = 4, nPhi = 24;
    const int nP = int(kernel_.polarUpperDeg.size()), nR = int(kernel_.radiusCm.size());
    std::vector<double> cx, cw, rx6, rw6, rx12, rw12;
    gaussLegendre01(nPolarPts, cx, cw);
    gaussLegendre01(6, rx6, rw6);
    gaussLegendre01(12, rx12, rw12);
    double sum = 0;
    for (int p = 0; p < nP; ++p) {
      const double c0 = std::cos((p ? kernel_.polarUpperDeg[p - 1] : 0.0) * kPi / 180);
      const double c1 = std::cos(kernel_.polarUpperDeg[p] * kPi / 180);
      for (int r = 0; r < nR; ++r) {
        const double k = kernel_.value[std::size_t(p) * nR + r];
        if (k == 0) continue;
        const double r0 = r ? kernel_.radiusCm[r - 1] : 0.0, r1 = kernel_.radiusCm[r];
        const bool wide = r1 - r0 > 2;  // the outer shells (up to 10 cm thick) get more points
        const std::vector<double>& rx = wide ? rx12 : rx6;
        const std::vector<double>& rw = wide ? rw12 : rw6;
        double acc = 0, wsum = 0;
        for (int a = 0; a < nPolarPts; ++a) {
          const double c = c0 + (c1 - c0) * cx[a], s = std::sqrt(std::max(0.0, 1 - c * c));
          for (std::size_t b = 0; b < rx.size(); ++b) {
            // uniform per volume within the shell: uniform in r^3
            const double rr = std::cbrt(r0 * r0 * r0 + (r1 * r1 * r1 - r0 * r0 * r0) * rx[b]);
            const double w = cw[a] * rw[b];
            for (int f = 0; f < nPhi; ++f) {
              const double ph = (f + 0.5) * 2 * kPi / nPhi;
              acc += w * terma(-rr * s * std::cos(ph), -rr * s * std::sin(ph), z - rr * c);
              wsum += w;
            }
          }
        }
        sum += k * acc / wsum;
      }
    }
    return sum;
  }

 private:
  static constexpr double kStep = 0.005;  // cm of water between TERMA table entries

  /// Gauss-Legendre nodes and weights on [0, 1].
  static void gaussLegendre01(int n, std::vector<double>& x, std::vector<double>& w) {
    constexpr double kPi = 3.14159265358979323846;
    x.resize(n);
    w.resize(n);
    for (int i = 0; i < n; ++i) {
      double z = std::cos(kPi * (i + 0.75) / (n + 0.5)), z1 = 0, dp = 0;
      do {
        double p1 = 1, p2 = 0;
        for (int j = 0; j < n; ++j) {
          const double p3 = p2;
          p2 = p1;
          p1 = ((2 * j + 1) * z * p2 - j * p3) / (j + 1);
        }
        dp = n * (z * p1 - p2) / (z * z - 1);
        z1 = z;
        z = z1 - p1 / dp;
      } while (std::abs(z - z1) > 1e-14);
      x[i] = 0.5 * (1 - z);
      w[i] = 1.0 / ((1 - z * z) * dp * dp);
    }
  }

  PolyKernel kernel_;
  WaterBoxBeam box_;
  std::vector<double> terma_;
};

/// The exact polyenergetic superposition: each kernel energy's own monoenergetic kernel
/// convolved with that energy's own TERMA, summed. The kernel thereby hardens with depth as the
/// beam does, which one polyenergetic kernel (CentralAxisConvolution, and the engine) leaves out.
/// `spectrum` must be on the kernel energies (PhotonBeamModel::spectrum is). ~14 x the cost.
class PerEnergyConvolution {
 public:
  PerEnergyConvolution(const Spectrum& spectrum, const MackieKernels& mono,
                       const WaterBoxBeam& box) {
    const std::size_t perEnergy = std::size_t(mono.nPolar()) * std::size_t(mono.nRadial());
    for (int e = 0; e < mono.nE(); ++e) {
      Spectrum one;
      one.energyMeV = {spectrum.energyMeV[e]};
      one.fluence = {spectrum.fluence[e]};
      one.muRho = {spectrum.muRho[e]};
      PolyKernel k;
      k.radiusCm = mono.radiusCm;
      k.polarUpperDeg = mono.polarUpperDeg;
      k.value.assign(mono.total.begin() + long(e * perEnergy),
                     mono.total.begin() + long((e + 1) * perEnergy));
      parts_.emplace_back(one, k, box);
    }
  }
  double dose(double z) const {
    double sum = 0;
    for (const CentralAxisConvolution& c : parts_) sum += c.dose(z);
    return sum;
  }

 private:
  std::vector<CentralAxisConvolution> parts_;
};

}  // namespace penumbra::photon::reference
