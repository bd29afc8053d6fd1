#pragma once
/// Internal interface between computePhotonDose() (validation, resolving, dispatch) and the
/// backends. Not public API; tests use it to reach single stages.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "core/progress.hpp"
#include "photon/photon_dose.hpp"
#include "photon/transport_lattice.hpp"

namespace penumbra::photon::detail {

/// Densities below this are clamped (air): keeps every radiological step finite and positive.
inline constexpr float kMinDensity = 1e-3f;

/// Atomic-free deposit on the GPU: the slot storage of one transport launch is at most this
/// much, and at most half of the GPU memory free for the run, but at least what one direction
/// over the whole volume needs (3 floats per voxel). Directions that do not fit go to further
/// launches. 8 GiB holds all 96 directions of a 256^3 water cube (4.6 GB) in one launch and
/// leaves most of an 80 GB card to the other engines (the buffer stays in the GPU cache).
inline constexpr double kMaxSlotBytes = 8.0 * 1024.0 * 1024.0 * 1024.0;

/// One beam, resolved: frame, open-field map, MU scaling, cone directions in patient space.
struct PreparedBeam {
  PhotonBeam beam;
  Vec3 source;    ///< LPS mm
  Vec3 u, v, w;   ///< lateral axes after the collimator rotation, w = axis source -> isocentre
  double sadMm = 1000;
  /// Open fraction (0..1) at the isocentre plane on a regular BEV map: pixel (i, j) centre at
  /// (mapU0 + i mapPitch, mapV0 + j mapPitch), layout j * mapNu + i. Jaws and aperture
  /// polygons are rasterised with sub-pixel sampling; outside the map the field is closed.
  double mapU0 = 0, mapV0 = 0, mapPitch = 0.5;
  int mapNu = 0, mapNv = 0;
  std::vector<float> openFraction;
  double gyPerRawDose = 0;  ///< MU x model.gyPerMuPerRawDose (1 for an uncalibrated model)
  /// Cone directions (ConeSet order) as unit vectors in patient LPS, and their lattices.
  std::vector<Vec3> coneDirections;
  std::vector<TransportLattice> lattices;
};

/// Everything resolved from a request before a backend runs.
struct ResolvedRequest {
  const PhotonDoseRequest* request = nullptr;
  Grid grid;                   ///< the dose grid = compute grid
  std::vector<float> density;  ///< relative electron density on grid, >= kMinDensity
  /// True when `density` was left empty for the CUDA backend, which resolves the density itself
  /// (from its cache, or by converting the request's volume on the GPU when the grids match).
  bool densityDeferred = false;
  CalibrationCurve hlut;  ///< the HU -> RED curve in use (CT input)
  std::vector<PreparedBeam> beams;
  const PhotonBeamModel* model = nullptr;
  ConeSet cones;
  int threads = 1;
};

// ---- resolving (photon_dose.cpp, aperture.cpp) ---------------------------------------------

/// Everything a backend needs from a validated request, for `model` (which the caller keeps
/// alive): the dose grid, the density on it (unless deferDensity), the cones (a copy of
/// `cones` when given) and the prepared beams.
ResolvedRequest resolveRequest(const PhotonDoseRequest& request, const PhotonBeamModel& model,
                               bool deferDensity = false, const ConeSet* cones = nullptr);
/// The model's kernel collapsed onto polar x azimuthal cones, once per process and (model,
/// cones): the band fits cost 25-42 ms on the two-core development machine, more than a whole
/// GPU dose. Keyed by the model's owner (models are immutable once shared as const); entries of
/// freed models are dropped. Thread-safe.
std::shared_ptr<const ConeSet> cachedCones(const std::shared_ptr<const PhotonBeamModel>& model,
                                           int polar, int azimuthal);
/// Relative electron density of the request on `grid`: the given density or the CT through the
/// HU->RED curve, trilinear where the grids differ (air outside the input volume), clamped to
/// >= kMinDensity.
std::vector<float> resolveDensity(const PhotonDoseRequest& request, const Grid& grid);
/// The request's HU -> RED curve, or the default one (resources/calibration/
/// hu_to_red_matrad_default.csv, read once per process).
CalibrationCurve effectiveHlut(const PhotonDoseRequest& request);
/// RED of every int16 HU value (index HU + 32768), as float: the CT conversion of both
/// backends reads this table, so the CPU and GPU densities are the same floats.
std::vector<float> huToRedTable(const CalibrationCurve& hlut);
/// True when the dose grid is the input volume's grid (no resampling: the density is the input
/// voxel for voxel, clamped).
bool doseGridIsInputGrid(const PhotonDoseRequest& request, const Grid& doseGrid);
/// Frame (collimator rotation applied), open-fraction map, MU scaling, cone directions and
/// their lattices on `grid`.
PreparedBeam prepareBeam(const PhotonBeam& beam, const Grid& grid, const ConeSet& cones,
                         const PhotonBeamModel& model);
/// Source and axes of a beam (aperture.cpp): makeBeamFrame's IEC 61217 frame (core) with u, v
/// rotated by the collimator angle (positive: counter-clockwise seen from the source).
void beamAxes(const PhotonBeam& beam, Vec3& source, Vec3& u, Vec3& v, Vec3& w);
/// Fills beam.map* and beam.openFraction from the jaws and aperture (sub-pixel sampling).
void rasteriseOpenField(PreparedBeam& beam);
/// Bilinear open fraction at isocentre-plane point (a, b) [mm]; 0 outside the map.
double openFractionAt(const PreparedBeam& beam, double a, double b);
/// Open fraction of the voxel centred at p (LPS mm): the mean of openFractionAt over 3 x 3
/// points spread over the voxel's lateral footprint (footU x footV mm, the voxel's extent along
/// u and v) projected to the isocentre plane. 0 for points behind the source.
double voxelOpenFraction(const PreparedBeam& beam, const Vec3& p, double footU, double footV);
/// Lateral footprint of a grid voxel along the beam's u and v [mm]: sum_a |u . axis_a| h_a.
void voxelFootprint(const PreparedBeam& beam, const Grid& grid, double& footU, double& footV);

// ---- CPU reference (cpu/terma_cpu.cpp, cpu/cccs_cpu.cpp), double precision -----------------

/// Raw TERMA [MeV/g per unit photon fluence at the isocentre] of one beam at every voxel
/// centre: open fraction (averaged over the voxel's lateral footprint) x inverse square x
/// sum_E f_E E mu/rho_E exp(-mu/rho_E rho_path), rho_path the radiological path from the source
/// to the voxel centre by 3D-DDA through the density (cm of water).
std::vector<double> computeTermaCpu(const ResolvedRequest& r, const PreparedBeam& beam,
                                    DdaVariant variant, int threads, const JobControl& job);
/// Adds the raw dose of one beam from its TERMA to dose (MeV/g per unit fluence) and fills the
/// energy balance; returns the transport segments from each line's first voxel with TERMA > 0
/// (PhotonDoseResult::voxelDirectionSteps).
std::uint64_t superposeCpu(const ResolvedRequest& r, const PreparedBeam& beam,
                           const std::vector<double>& terma, DdaVariant variant, int threads,
                           const JobControl& job, std::vector<double>& dose, EnergyBalance& energy);
void computeCpu(const ResolvedRequest& r, PhotonDoseResult& result, const JobControl& job);

// ---- CUDA (cuda/photon_dose_cuda.cu; photon_dose_nocuda.cpp throws Unsupported) ------------

void computeCuda(const ResolvedRequest& r, PhotonDoseResult& result, const JobControl& job);

/// Where the CUDA backend keeps its cache between calls (see photon_dose.hpp). Held here,
/// type-erased, so that releasePhotonGpuCache() links without CUDA. A run marks the cache in use
/// and takes the workspace out under the mutex (exclusive use; a concurrent run finds it in use
/// and works with a private workspace), and puts it back at the end of a successful run unless
/// releasePhotonGpuCache() bumped the generation meanwhile.
struct GpuCacheSlot {
  std::mutex mutex;
  std::shared_ptr<void> workspace;  ///< idle workspace of cuda/photon_dose_cuda.cu, or null
  std::size_t deviceBytes = 0;      ///< GPU memory that idle workspace holds
  std::uint64_t generation = 0;
  bool inUse = false;  ///< a run holds the workspace
};
GpuCacheSlot& gpuCacheSlot();
/// GPU memory held by the idle cache (a run reuses it, so it counts as free for the run).
double gpuCacheBytes();

}  // namespace penumbra::photon::detail
