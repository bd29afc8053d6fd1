#pragma once
/// Photon collapsed-cone convolution/superposition (CCCS) dose engine (Ahnesjo, Med. Phys. 16,
/// 577 (1989)) with the 3D-DDA transport of Xiao et al. (Med. Phys. 39 (2012)): polyenergetic
/// TERMA by ray tracing from the point source through relative electron density (beam hardening
/// from the per-energy attenuation), then kernel transport along collapsed cones on lattices of
/// parallel transport lines, one lattice per cone direction.
///
/// Transport lattice. For one direction d, every transport line is an integer voxel translate
/// of one line, so all lines step through the same voxel pattern (a 3D-DDA walk with either
/// variant); the lines start one per voxel of the plane before the volume along d's dominant
/// index axis, and every voxel is crossed by 1-3 lines per direction whose path lengths add up
/// to exactly one slice chord. A voxel's released energy therefore enters each direction once,
/// and the energy bookkeeping (released = deposited + escaped) closes to rounding.
///
/// Deposit strategies: Atomic (every segment adds its energy with an atomic add; order-dependent
/// float sums) and AtomicFree (no atomics; each voxel's contributions are summed in a fixed
/// order, so repeated runs give identical bits). The CPU reference is double precision.
///
/// Field: jaws and optional aperture polygons at the isocentre plane, rasterised with sub-pixel
/// sampling into an open-fraction map; a voxel's TERMA takes the map's mean over the voxel's
/// footprint. Approximations: the kernel is not tilted along the diverging rays (cones about
/// the central axis everywhere), and the optional off-axis softening
/// (PhotonBeamModel::offAxisSofteningPerDeg, off by default) scales mu/rho in the TERMA's
/// attenuation exponent by 1 + k theta_deg instead of modelling an off-axis spectrum.
/// There is no electron contamination and no head scatter (extra-focal source).
///
/// Check, then run (as the proton engine): validate(), workspaceBytes(), computePhotonDose()
/// refuses what does not fit before allocating.
///
/// GPU cache across calls (planning recomputes the dose of one patient many times). The CUDA
/// backend keeps, per process, the relative electron density on the GPU, its work buffers
/// (TERMA, dose, the atomic-free slot storage, ...) and a page-locked host buffer for the next
/// result, and reuses them in the next call. The density is reused when the request names the
/// same input volume: the same shared_ptr owner (compared as owners, so a new volume that
/// happens to get a freed one's address does not match), the same data pointer, size and
/// grid, the same dose grid and, for a CT, the same HU -> RED curve. Invalidation rule: a
/// volume is immutable once it is shared as const with the engine; a caller that changes
/// voxels in place must pass a new shared_ptr (or call releasePhotonGpuCache()), or it gets
/// the dose of the old voxels. A different volume replaces the cached density; the cache is
/// freed at exit or by releasePhotonGpuCache(). Thread-safe: a call that finds the cache in
/// use by another thread runs with buffers of its own. A cancelled or failed GPU run frees the
/// cache. Both backends also keep, per process, the model's kernel collapsed onto the cones,
/// keyed by the model's owner and cone counts: a beam model too is immutable once shared.
///
/// Units: patient LPS mm; beam weight in monitor units (MU); dose in Gy (see
/// PhotonBeamModel::gyPerMuPerRawDose; 1 MU = 0.01 Gy at dmax of 10 x 10 at SSD 100 cm).
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/calibration.hpp"
#include "core/device.hpp"
#include "core/kernel_profile.hpp"
#include "core/progress.hpp"
#include "core/vec3.hpp"
#include "core/volume.hpp"
#include "photon/physics/photon_beam_model.hpp"
#include "raytrace/dda_traversal.hpp"

namespace penumbra::photon {

/// Source-axis distances accepted [mm]: every external-beam photon machine in clinical use lies
/// in [500, 2000] (CyberKnife 650-1000, Co-60 800, TomoTherapy 850, C-arm linacs 1000, Elekta
/// Unity 1435). 1e-9 mm put the source at the isocentre and the dose at inf/NaN.
inline constexpr double kMinSadMm = 500;
inline constexpr double kMaxSadMm = 2000;
/// Largest monitor units of one beam: 1e5 MU is ~1000 Gy at dmax (a 24 Gy single-fraction SRS
/// arc uses ~6000 MU). Beyond it the MU is an input error (1e308 gave an infinite dose).
inline constexpr double kMaxMonitorUnits = 1e5;

/// One open field or conformal aperture at the isocentre plane, in beam-limiting-device
/// coordinates (IEC X = u, Y = v after the collimator rotation), mm.
struct PhotonBeam {
  std::string name;
  double gantryDeg = 0;      ///< IEC 61217
  double couchDeg = 0;       ///< IEC 61217
  double collimatorDeg = 0;  ///< IEC 61217, rotates u, v about the beam axis
  Vec3 isocenter;            ///< patient LPS mm
  double sadMm = 1000;       ///< [kMinSadMm, kMaxSadMm]
  double x1Mm = -50, x2Mm = 50, y1Mm = -50, y2Mm = 50;  ///< jaws (x1 < x2, y1 < y2)
  /// Target-conformal aperture: closed polygons at the isocentre plane (u, v mm); the open
  /// field is their union clipped by the jaws. Empty: the jaws alone.
  std::vector<std::vector<std::array<double, 2>>> aperture;
  double monitorUnits = 100;  ///< [0, kMaxMonitorUnits]
};

enum class DepositStrategy {
  Atomic,      ///< atomic adds (CUDA); plain adds on the CPU
  AtomicFree,  ///< fixed-order per-voxel sums, bitwise reproducible
};

struct PhotonDoseParameters {
  int polarCones = 8;     ///< must divide 48 (the kernel's polar bins)
  int azimuthalCones = 12;
  DdaVariant variant = DdaVariant::BranchFree;
  DepositStrategy deposit = DepositStrategy::AtomicFree;
  int cpuThreads = 0;     ///< 0: all hardware threads
  bool keepTerma = false; ///< return the TERMA volume too
};

/// The request. Either `density` (relative electron density, preferred when given) or `ct` (HU,
/// converted through `hlut`) must be set. The engine computes on `doseGrid` (the density is
/// resampled there, trilinear).
struct PhotonDoseRequest {
  std::shared_ptr<const CtVolume> ct;
  std::shared_ptr<const Volume<float>> density;
  CalibrationCurve hlut;  ///< HU -> RED; empty: resources/calibration/hu_to_red_matrad_default.csv
  std::vector<PhotonBeam> beams;
  Grid doseGrid;          ///< empty: the CT (or density) grid
  Backend backend = Backend::Auto;
  PhotonDoseParameters params;
  std::shared_ptr<const PhotonBeamModel> model;  ///< null: defaultPhotonModel()
};

/// Energy bookkeeping of a run [MeV per unit photon fluence (1/cm^2) at the isocentre, each
/// beam unweighted by its MU, summed over beams]. released == deposited + escaped to rounding;
/// released == termaEnergy x (sum over the cone bands of A + B), the kernel's energy fraction.
struct EnergyBalance {
  double termaEnergy = 0;     ///< sum of raw TERMA x mass over voxels
  double released = 0;        ///< energy sent into the cones (TERMA x mass x cone fractions)
  double deposited = 0;       ///< sum of raw dose x mass (summed along the transport lines)
  double escaped = 0;         ///< radiant energy leaving the volume at the line ends
};

struct PhotonDoseResult {
  Volume<float> dose;   ///< Gy for the beams' MU, on the dose grid
  Volume<float> terma;  ///< raw TERMA (MeV/g per unit fluence), summed over beams, if asked
  Backend backend = Backend::Cpu;
  std::string device;
  std::vector<KernelProfile> profiles;
  std::vector<std::string> messages;
  EnergyBalance energy;
  /// Transport segments, all beams and directions: along every line from its first voxel with
  /// TERMA > 0 to where it leaves the volume (segments before it carry and deposit nothing).
  /// Both backends count the same segments (the GPU walks them in float, the CPU in double, so
  /// rare ties at voxel corners can differ by a segment).
  std::uint64_t voxelDirectionSteps = 0;
  double elapsedMs = 0;
  /// CUDA: the density came from the GPU cache (no upload, no host conversion).
  bool densityCached = false;
};

struct PhotonWorkspaceEstimate {
  /// GPU: what a CUDA run allocates at most (and keeps in the GPU cache afterwards).
  std::size_t deviceBytes = 0;
  /// GPU: the least a CUDA run can work with (the atomic-free deposit with one direction per
  /// launch); computePhotonDose refuses a plan when even this does not fit.
  std::size_t deviceBytesMinimum = 0;
  std::size_t hostBytes = 0;
  std::string breakdown;
};

void validate(const PhotonDoseRequest& request);
PhotonWorkspaceEstimate workspaceBytes(const PhotonDoseRequest& request);
PhotonDoseResult computePhotonDose(const PhotonDoseRequest& request, const JobControl& job = {});

/// Frees the CUDA backend's cache (device buffers, cached density, page-locked host buffer);
/// the next GPU call uploads again. Call it after changing a volume in place, or to give the
/// GPU memory back to other work. A no-op without CUDA or without a cache.
void releasePhotonGpuCache();

/// The 6 MV model from findPhotonDataDir(), calibrated (computed once per process, cached; a
/// CPU run of the reference field, 10 x 10 cm^2 at SSD 100 cm in a 25 x 25 x 15 cm^3 water box,
/// ~3 s on two cores). Throws Io naming the places it looked in when the data are absent.
std::shared_ptr<const PhotonBeamModel> defaultPhotonModel();

/// Target-conformal aperture: the target mask projected from the source onto the isocentre
/// plane in the beam's-eye view (each voxel's projected box, on pixels of half the smallest
/// voxel size, 0.25-1 mm), grown by marginMm (a disk), and traced back to polygons along the
/// pixel edges, for PhotonBeam::aperture (collimator coordinates, so it depends on the
/// collimator angle). Holes of the projection are filled. Throws InvalidArgument for an empty
/// mask, a margin outside [0, 200] mm, or a target reaching behind the source.
std::vector<std::vector<std::array<double, 2>>> conformalAperture(const PhotonBeam& beam,
                                                                  const Mask& target,
                                                                  double marginMm);

}  // namespace penumbra::photon
