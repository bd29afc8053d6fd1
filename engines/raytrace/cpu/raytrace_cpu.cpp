// CPU backend of the ray tracer: the header-only DDA core run in double (the reference) or in
// float (the same code the CUDA kernels run), one ray per call or batched over std::threads.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <thread>

#include "core/error.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra {

const char* toString(DdaVariant v) { return v == DdaVariant::Classic ? "classic" : "dda-nc"; }

const char* toString(DdaPrecision p) { return p == DdaPrecision::Double ? "double" : "float"; }

DdaVariant parseDdaVariant(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "classic") return DdaVariant::Classic;
  if (t == "dda-nc" || t == "branchfree" || t == "branch-free") return DdaVariant::BranchFree;
  PENUMBRA_THROW(InvalidArgument, "unknown DDA variant '" + text + "' (classic or dda-nc)");
}

dda::Geometry makeDdaGeometry(const Grid& grid) {
  PENUMBRA_REQUIRE(grid.dims[0] >= 0 && grid.dims[1] >= 0 && grid.dims[2] >= 0, InvalidArgument,
                   "grid dimensions must not be negative");
  for (int a = 0; a < 3; ++a)
    PENUMBRA_REQUIRE(grid.spacing[a] > 0 && std::isfinite(grid.spacing[a]), InvalidArgument,
                     "grid spacing must be positive");
  PENUMBRA_REQUIRE(grid.isOrthonormal(), InvalidArgument,
                   "grid direction cosines must be orthonormal");
  dda::Geometry g{};
  const Mat3 t = grid.direction.transposed();
  for (int a = 0; a < 3; ++a) {
    g.dims[a] = grid.dims[a];
    g.origin[a] = grid.origin[a];
    g.spacing[a] = grid.spacing[a];
    for (int b = 0; b < 3; ++b) g.toLocal[a][b] = t.m[a][b];
  }
  return g;
}

dda::RayData makeDdaRay(const Ray& ray) {
  for (int a = 0; a < 3; ++a)
    PENUMBRA_REQUIRE(std::isfinite(ray.origin[a]) && std::isfinite(ray.direction[a]),
                     InvalidArgument, "ray origin and direction must be finite");
  PENUMBRA_REQUIRE(dot(ray.direction, ray.direction) > 0, InvalidArgument,
                   "ray direction must not be zero");
  PENUMBRA_REQUIRE(ray.tMax > 0, InvalidArgument, "ray tMax must be positive (or +inf)");
  dda::RayData r{};
  for (int a = 0; a < 3; ++a) {
    r.origin[a] = ray.origin[a];
    r.direction[a] = ray.direction[a];
  }
  r.tMax = ray.tMax;
  return r;
}

namespace {

template <typename T>
struct SegmentCollector {
  std::vector<VoxelSegment>* out;
  void operator()(int i, int j, int k, T len) { out->push_back({i, j, k, double(len)}); }
};

/// Accumulates length x density in the loop's precision T (as the CUDA kernel does).
template <typename T>
struct DensityAccumulator {
  const float* density;
  std::size_t nx, nxy;
  T sum = T(0);
  void operator()(int i, int j, int k, T len) {
    sum += len * T(density[std::size_t(k) * nxy + std::size_t(j) * nx + std::size_t(i)]);
  }
};

template <typename T>
std::vector<VoxelSegment> traceTyped(const dda::Geometry& g, const dda::RayData& r,
                                     DdaVariant variant) {
  std::vector<VoxelSegment> out;
  dda::Start<T> s;
  if (!dda::setupRay(g, r, s)) return out;
  SegmentCollector<T> c{&out};
  dda::traverse(variant, s, g.dims, c);
  return out;
}

template <typename T>
double radiologicalTyped(const dda::Geometry& g, const float* density, const dda::RayData& r,
                         DdaVariant variant) {
  dda::Start<T> s;
  if (!dda::setupRay(g, r, s)) return 0.0;
  DensityAccumulator<T> acc{density, std::size_t(g.dims[0]),
                            std::size_t(g.dims[0]) * std::size_t(g.dims[1])};
  dda::traverse(variant, s, g.dims, acc);
  return double(acc.sum);
}

double radiologicalOne(const dda::Geometry& g, const float* density, const dda::RayData& r,
                       DdaVariant variant, DdaPrecision precision) {
  return precision == DdaPrecision::Double ? radiologicalTyped<double>(g, density, r, variant)
                                           : radiologicalTyped<float>(g, density, r, variant);
}

}  // namespace

std::vector<VoxelSegment> traceRay(const Grid& grid, const Ray& ray, DdaVariant variant,
                                   DdaPrecision precision) {
  const dda::Geometry g = makeDdaGeometry(grid);
  const dda::RayData r = makeDdaRay(ray);
  return precision == DdaPrecision::Double ? traceTyped<double>(g, r, variant)
                                           : traceTyped<float>(g, r, variant);
}

double radiologicalPath(const Volume<float>& density, const Ray& ray, DdaVariant variant,
                        DdaPrecision precision) {
  density.validate();
  return radiologicalOne(makeDdaGeometry(density.grid), density.data.data(), makeDdaRay(ray),
                         variant, precision);
}

void traceRadiologicalPaths(const Volume<float>& density, const std::vector<Ray>& rays,
                            DdaVariant variant, std::vector<double>& out, DdaPrecision precision,
                            int threads) {
  density.validate();
  const dda::Geometry g = makeDdaGeometry(density.grid);
  std::vector<dda::RayData> rd;
  rd.reserve(rays.size());
  for (const Ray& r : rays) rd.push_back(makeDdaRay(r));  // validate all before any work
  out.assign(rays.size(), 0.0);
  const float* dens = density.data.data();
  auto work = [&](std::size_t begin, std::size_t end) {
    for (std::size_t r = begin; r < end; ++r)
      out[r] = radiologicalOne(g, dens, rd[r], variant, precision);
  };
  int n = threads > 0 ? threads : int(std::max(1u, std::thread::hardware_concurrency()));
  // A thread costs ~10-50 us to start; below a few hundred rays one thread is as fast.
  n = int(std::min<std::size_t>(std::size_t(n), std::max<std::size_t>(1, rays.size() / 256)));
  if (n <= 1) {
    work(0, rays.size());
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(std::size_t(n));
  const std::size_t chunk = (rays.size() + std::size_t(n) - 1) / std::size_t(n);
  for (int t = 0; t < n; ++t) {
    const std::size_t b = std::min(rays.size(), std::size_t(t) * chunk);
    const std::size_t e = std::min(rays.size(), b + chunk);
    pool.emplace_back(work, b, e);
  }
  for (auto& th : pool) th.join();
}

std::size_t countVoxelSegments(const Grid& grid, const std::vector<Ray>& rays, DdaVariant variant,
                               DdaPrecision precision) {
  const dda::Geometry g = makeDdaGeometry(grid);
  std::size_t n = 0;
  auto count = [&n](int, int, int, auto) { ++n; };
  for (const Ray& ray : rays) {
    const dda::RayData r = makeDdaRay(ray);
    if (precision == DdaPrecision::Double) {
      dda::Start<double> s;
      if (dda::setupRay(g, r, s)) dda::traverse(variant, s, g.dims, count);
    } else {
      dda::Start<float> s;
      if (dda::setupRay(g, r, s)) dda::traverse(variant, s, g.dims, count);
    }
  }
  return n;
}

KernelProfile timeRadiologicalPathsCpu(const Volume<float>& density, const std::vector<Ray>& rays,
                                       DdaVariant variant, DdaPrecision precision, int reps,
                                       int threads) {
  std::vector<double> out;
  KernelProfile p = timeHost(
      std::string("radiological_path_dda_") + toString(precision), toString(variant),
      [&] { traceRadiologicalPaths(density, rays, variant, out, precision, threads); }, reps);
  // Traffic model: one density read per visited voxel, the ray in (7 doubles), the result out.
  const double voxels = double(countVoxelSegments(density.grid, rays, variant, precision));
  p.bytes = 4.0 * voxels + double(rays.size()) * (7 * 8 + 8);
  p.device = "host (" +
             std::to_string(threads > 0 ? threads : int(std::thread::hardware_concurrency())) +
             " threads)";
  return p;
}

}  // namespace penumbra
