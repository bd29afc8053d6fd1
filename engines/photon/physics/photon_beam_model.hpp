#pragma once
/// Photon beam model for the collapsed-cone engine, built only from published data (see
/// ../shared/data/photon-beam/README.md): the Mohan et al. (1985) 6 MV fluence spectrum, Mackie
/// et al. (1988) EGS monoenergetic point kernels (14 energies 0.2-6 MeV, 48 polar x 24 radial
/// bins) and NIST (Hubbell-Seltzer) mu/rho of water.
///
/// Pipeline: Spectrum (rebinned onto the kernel energies) -> polyenergetic kernel (weights
/// fluence x E x mu/rho, energy fraction ~0.958 for 6 MV) -> ConeSet (polar bands of the kernel
/// collapsed onto cone axes, azimuth split evenly, each band's cumulative radial kernel fitted
/// with two exponentials) -> PhotonBeamModel (what the dose engine reads).
///
/// Units: energies MeV, mu/rho cm^2/g, radii cm of water (g/cm^2 radiological distance), angles
/// degrees from the primary photon direction. Kernel values are fractions of the interacting
/// photon's energy (dimensionless), never per-volume densities.
#include <memory>
#include <string>
#include <vector>

namespace penumbra::photon {

/// A photon fluence spectrum on discrete energies, each with water attenuation data.
struct Spectrum {
  std::string name;
  std::vector<double> energyMeV;  ///< representative energy of each bin, ascending
  std::vector<double> fluence;    ///< relative photon fluence per bin, sums to 1
  std::vector<double> muRho;      ///< mu/rho of water at energyMeV [cm^2/g]
  std::vector<double> muEnRho;    ///< mu_en/rho of water at energyMeV [cm^2/g]
  double meanEnergyMeV() const;   ///< fluence-weighted
};

/// Reads an EGSnrc .spectrum file (title; "NBINS, EMIN, MODE"; NBINS lines "E_upper, value";
/// MODE 1 = per MeV, 0 = per bin; commas optional, CRLF tolerated). Returns the bins as given
/// (energy = bin centre) with empty muRho/muEnRho. Throws Format naming file and line.
Spectrum readEgsSpectrum(const std::string& path);

/// mu/rho and mu_en/rho of water from the NIST table
/// (reference/nist_xray_water_mu_rho_0.1-20MeV.csv), log-log interpolated.
class WaterAttenuation {
public:
  static WaterAttenuation load(const std::string& csvPath);
  double muRho(double energyMeV) const;
  double muEnRho(double energyMeV) const;

private:
  std::vector<double> logE_, logMu_, logMuEn_;
};

/// Mackie monoenergetic point kernels (total of the 5 categories), C order
/// [energy][polar][radial].
struct MackieKernels {
  std::vector<double> energyMeV;      ///< 14
  std::vector<double> radiusCm;       ///< 24 outer radii of the radial shells
  std::vector<double> polarUpperDeg;  ///< 48 upper edges of the polar bins
  std::vector<double> total;          ///< fraction of the photon energy deposited per voxel
  int nE() const { return static_cast<int>(energyMeV.size()); }
  int nPolar() const { return static_cast<int>(polarUpperDeg.size()); }
  int nRadial() const { return static_cast<int>(radiusCm.size()); }
  double at(int e, int p, int r) const {
    return total[(static_cast<std::size_t>(e) * nPolar() + p) * nRadial() + r];
  }
  /// Reads kernels/mackie_wiscplan_6MV_bin/ (kernel_header.txt and the float32 .bin files).
  static MackieKernels load(const std::string& dir);
};

/// Rebins a spectrum onto the kernel energies (each source bin's fluence goes to the kernel
/// energy bin that contains its centre; kernel bin edges are the midpoints between kernel
/// energies) and fills mu/rho from `water`.
Spectrum rebinOnto(const Spectrum& source, const std::vector<double>& energiesMeV,
                   const WaterAttenuation& water);

/// Polyenergetic kernel: the monoenergetic kernels weighted by fluence x E x mu/rho (the energy
/// released per unit mass, TERMA, by each spectral component), normalised by the sum of weights.
struct PolyKernel {
  std::vector<double> radiusCm;
  std::vector<double> polarUpperDeg;
  std::vector<double> value;  ///< [polar][radial]
  double energyFraction() const;  ///< sum of value (~0.958 for Mohan 6 MV)
};
PolyKernel makePolyenergeticKernel(const MackieKernels& mono, const Spectrum& spectrum);

/// One polar band of cones (all azimuths share it).
struct ConeBand {
  double polarLoDeg = 0, polarHiDeg = 0;
  double axisDeg = 0;        ///< polar angle of the collapsed cone axis (energy-weighted mean)
  double fraction = 0;       ///< energy fraction of the whole band (sum of the kernel bins)
  /// Cumulative kernel of the band, K(r) = A (1 - e^{-a r}) + B (1 - e^{-b r}), r in cm of
  /// water; A + B == fraction (the fit keeps the total energy exactly). Least squares over the
  /// tabulated radii up to kConeFitMaxRadiusCm (see cone_collapse.cpp for why not to 60 cm).
  double A = 0, a = 0, B = 0, b = 0;
  std::vector<double> cumulative;  ///< tabulated K at PolyKernel::radiusCm (for tests/plots)
  double fitMaxRelError = 0;  ///< max |fit - table| / fraction over the fitted radii (<= 20 cm)
};

/// Radial range of the two-exponential fit of each band [cm of water]: the tabulated radii up to
/// here (the kernel table goes on to 60 cm).
inline constexpr double kConeFitMaxRadiusCm = 20.0;

/// Cone directions: nPolar bands x nAzimuth cones. The unit vectors are in the beam frame
/// (x, y lateral, z = primary photon direction).
struct ConeDirection {
  double x = 0, y = 0, z = 1;
  int band = 0;         ///< index into ConeSet::bands
  double weight = 0;    ///< share of the band's energy: 1 / nAzimuth
};
struct ConeSet {
  std::vector<ConeBand> bands;
  std::vector<ConeDirection> directions;  ///< band-major, nPolar * nAzimuth
  int nPolar = 0, nAzimuth = 0;
};
/// Collapses the kernel onto nPolar equal-width polar bands (must divide the kernel's 48 polar
/// bins; throws InvalidArgument otherwise) and nAzimuth >= 1 azimuthal cones.
ConeSet collapseKernel(const PolyKernel& kernel, int nPolar, int nAzimuth);

/// Everything the dose engine needs about the machine.
struct PhotonBeamModel {
  std::string name;          ///< e.g. "6 MV (Mohan 1985 spectrum, Mackie 1988 kernels)"
  Spectrum spectrum;         ///< on the kernel energies, with mu/rho
  PolyKernel kernel;
  double sadMm = 1000;       ///< point source to isocentre
  /// Optional off-axis softening (an approximation, off by default): mu/rho of every energy is
  /// scaled by (1 + softening * theta_deg) where theta is the angle from the central axis.
  double offAxisSofteningPerDeg = 0;
  /// Gy per monitor unit per unit of the engine's raw dose (MeV/g per unit energy fluence);
  /// set so that 1 MU gives 0.01 Gy at the depth of maximum dose of a 10 x 10 cm^2 field at
  /// SSD 100 cm in water. 0 until calibrated.
  double gyPerMuPerRawDose = 0;

  /// Builds the 6 MV model from the photon-beam data folder (dataDir = .../shared/data): the
  /// Mohan 6 MV spectrum, load(dataDir, "spectra/egsnrc/mohan6.spectrum", ...). Throws Io naming
  /// the missing file (ErrorCode has no NotFound).
  static std::shared_ptr<const PhotonBeamModel> load6MV(const std::string& dataDir);

  /// The same model with another EGSnrc .spectrum file, spectrumRelPath relative to
  /// dataDir/photon-beam (e.g. "spectra/cerr/6MVVarian.spectrum", Sheikh-Bagheri and Rogers'
  /// Varian 6 MV). `name` becomes PhotonBeamModel::name. Throws Io for a missing file, Format for
  /// a malformed spectrum, InvalidArgument for a spectrum with more than 5 % of its energy
  /// fluence above 6 MeV (the Mackie kernels' highest energy).
  static std::shared_ptr<const PhotonBeamModel> load(const std::string& dataDir,
                                                     const std::string& spectrumRelPath,
                                                     const std::string& name);
};

/// Where the photon beam data live: $PENUMBRA_DATA, else $PENUMBRA_TEST_DATA, else
/// <source dir>/../shared/data. Empty when none exists.
std::string findPhotonDataDir();

}  // namespace penumbra::photon
