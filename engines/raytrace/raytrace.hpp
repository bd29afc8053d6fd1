#pragma once
/// Ray tracing through voxel grids: the 3D-DDA traversal every dose engine shares (TERMA, WEPL,
/// collapsed-cone transport), in two run-time selectable variants that visit the same voxels
/// with the same lengths bit for bit (see dda_traversal.hpp), on the CPU and on CUDA, plus an
/// exact Siddon-style reference to test them against.
///
/// Units: positions and lengths in patient mm (DICOM LPS); densities are relative (to water), so
/// a radiological path is in water-equivalent mm.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/grid.hpp"
#include "core/kernel_profile.hpp"
#include "core/vec3.hpp"
#include "core/volume.hpp"
#include "raytrace/dda_traversal.hpp"

namespace penumbra {

/// A ray in patient coordinates.
struct Ray {
  Vec3 origin;     ///< start point, mm (may lie outside the grid)
  Vec3 direction;  ///< direction, any non-zero length (normalised internally)
  double tMax = std::numeric_limits<double>::infinity();  ///< mm along the ray where it ends
};

/// One voxel crossed by a ray and the geometric path length in it.
struct VoxelSegment {
  int i = 0, j = 0, k = 0;
  double lengthMm = 0;  ///< mm; in float traversals, the float value widened exactly

  bool operator==(const VoxelSegment& o) const {
    return i == o.i && j == o.j && k == o.k && lengthMm == o.lengthMm;
  }
};

/// Arithmetic of the stepping loop. Setup and clipping are always double.
enum class DdaPrecision {
  Double,  ///< the CPU reference
  Float,   ///< what the CUDA kernels run; the CPU float path runs the same code
};

/// "classic" / "dda-nc" (the KernelProfile variant names).
const char* toString(DdaVariant v);
/// Accepts "classic" and "dda-nc" / "branchfree" (case-insensitive); throws InvalidArgument.
DdaVariant parseDdaVariant(const std::string& text);
const char* toString(DdaPrecision p);

/// Plain-number form of a grid for the traversal core. Throws InvalidArgument for a grid with
/// non-positive spacing or a direction matrix that is not orthonormal.
dda::Geometry makeDdaGeometry(const Grid& grid);
/// Plain-number form of a ray. Throws InvalidArgument for non-finite origin or direction, a
/// zero direction, or a NaN or non-positive tMax.
dda::RayData makeDdaRay(const Ray& ray);

// ---- CPU -----------------------------------------------------------------------------------

/// Voxels crossed by the ray, in order along it, with their path lengths in mm. Empty when the
/// ray misses the grid. Segments of zero length (grazing an edge or corner) are not reported.
std::vector<VoxelSegment> traceRay(const Grid& grid, const Ray& ray, DdaVariant variant,
                                   DdaPrecision precision = DdaPrecision::Double);

/// Sum over crossed voxels of path length (mm) x density (relative): water-equivalent mm.
double radiologicalPath(const Volume<float>& density, const Ray& ray, DdaVariant variant,
                        DdaPrecision precision = DdaPrecision::Double);

/// radiologicalPath for every ray, out[r] for rays[r]; bit-identical to the one-ray call.
/// Runs on up to `threads` std::threads (0: hardware concurrency; small batches run inline).
void traceRadiologicalPaths(const Volume<float>& density, const std::vector<Ray>& rays,
                            DdaVariant variant, std::vector<double>& out,
                            DdaPrecision precision = DdaPrecision::Double, int threads = 0);

/// Exact reference (Siddon 1985 style, double): every plane crossing inside [0, tMax] is
/// computed directly, all are merged and sorted, and each interval between consecutive distinct
/// crossings is assigned to the voxel holding its midpoint; length = interval in mm. Slow
/// (sorts per ray); for tests and benchmark accuracy columns.
std::vector<VoxelSegment> siddonReference(const Grid& grid, const Ray& ray);
/// Radiological path of siddonReference's segments (summed in double, in order).
double siddonRadiologicalPath(const Volume<float>& density, const Ray& ray);

/// Total number of voxel segments the rays visit (the traffic model of the timing functions).
std::size_t countVoxelSegments(const Grid& grid, const std::vector<Ray>& rays, DdaVariant variant,
                               DdaPrecision precision);

/// Times traceRadiologicalPaths on the CPU (median of `reps` after one warm-up). bytes counts
/// one density read (4 B) per visited voxel plus the ray input and result.
KernelProfile timeRadiologicalPathsCpu(const Volume<float>& density, const std::vector<Ray>& rays,
                                       DdaVariant variant, DdaPrecision precision, int reps,
                                       int threads = 0);

// ---- CUDA (float traversal; raytrace_nocuda.cpp throws Unsupported without CUDA) -----------

/// Radiological path of every ray on the GPU (one thread per ray, float stepping, the same code
/// as DdaPrecision::Float on the CPU). out[r] is the float result. When kernelMs is given, it
/// receives the kernel's time from CUDA events (upload and download excluded).
void traceRadiologicalPathsCuda(const Volume<float>& density, const std::vector<Ray>& rays,
                                DdaVariant variant, std::vector<float>& out,
                                float* kernelMs = nullptr);

/// Voxel list of every ray on the GPU: result[r] is what traceRay(grid, rays[r], variant,
/// DdaPrecision::Float) returns. Each ray gets a fixed buffer of maxSegmentsPerRay segments
/// (0: dims[0]+dims[1]+dims[2], which no straight ray can exceed); a ray needing more throws
/// InvalidArgument. Device buffers are poisoned (-1 / NaN) before the launch. For tests.
std::vector<std::vector<VoxelSegment>> traceRaysCuda(const Grid& grid, const std::vector<Ray>& rays,
                                                     DdaVariant variant, int maxSegmentsPerRay = 0);

/// Times the radiological-path kernel: CUDA events around each launch, 3 warm-ups, median of
/// `reps`, inputs resident on the device (no allocation or copy in the timed loop). Fills
/// grid/block, registers, occupancy and a traffic model (bytes: density reads per visited
/// voxel + ray input + result).
KernelProfile timeRadiologicalPathsCuda(const Volume<float>& density, const std::vector<Ray>& rays,
                                        DdaVariant variant, int reps);

}  // namespace penumbra
