#pragma once
/// Header-only 3D-DDA voxel traversal (Amanatides & Woo 1987) shared by the CPU backend and the
/// CUDA kernels, in the two forms of Xiao et al., Med. Phys. 39 (2012): the classic nested-branch
/// step (their Algorithm 1) and the branch-free "DDA-nc" step (their Algorithm 2).
///
/// Geometry. The ray is set up once in double precision (setupDdaRay): patient mm -> continuous
/// grid index (voxel centres at integers, voxel (i,j,k) spans [i-0.5, i+0.5]), clipped by a slab
/// test against the box [-0.5, dims-0.5], and re-based at the entry point. The parameter t is mm
/// along the ray from the entry point (the world direction is normalised), so segment lengths come
/// out in mm with no further scaling, whatever the spacing and direction cosines.
///
/// Bitwise agreement of the two variants. Both run the same floating-point operations: T.a +=
/// DeltaT.a when axis a steps (DDA-nc's `T.a += VoxelIncr.a * DeltaT.a` is that same sum, since
/// the product by 0 or 1 is exact), and the segment length is min(T) - previous min(T) (the
/// paper's fmin form) in both. At an exact tie (a ray through an edge or corner) DDA-nc steps all
/// tied axes in one iteration; the classic form steps them one per iteration, and the
/// intermediate iterations have length exactly 0. Segments of length <= 0 are never reported (in
/// either variant), so both report the same voxels with the same lengths, bit for bit.
///
/// Only `if constexpr` and plain arithmetic are used so that nvcc (C++17) compiles it as device
/// code. Keep FMA contraction off where bitwise CPU/GPU agreement matters (the CUDA file is built
/// with --fmad=false, the CPU library with -ffp-contract=off).
#ifdef __CUDACC__
#define PENUMBRA_HD __host__ __device__
#define PENUMBRA_HD_INLINE __host__ __device__ __forceinline__
#else
#define PENUMBRA_HD
#define PENUMBRA_HD_INLINE inline
#endif

#ifndef __CUDACC__
#include <cmath>
#endif

namespace penumbra {

/// Which stepping logic the traversal uses; both give the same voxels and lengths.
enum class DdaVariant {
  Classic,     ///< nested if/else on T (Xiao et al. Algorithm 1)
  BranchFree,  ///< step flags from comparisons, edges/corners in one step ("DDA-nc", Algorithm 2)
};

namespace dda {

/// Grid geometry as plain numbers for host and device code (made from a Grid by
/// makeDdaGeometry() in raytrace.hpp).
struct Geometry {
  int dims[3];
  double origin[3];      ///< patient mm of the centre of voxel (0,0,0)
  double spacing[3];     ///< mm between voxel centres along i, j, k
  double toLocal[3][3];  ///< transposed direction matrix: row a = index axis a in patient space
};

/// A ray in patient mm as plain numbers. direction need not be unit length.
struct RayData {
  double origin[3];
  double direction[3];
  double tMax;  ///< mm along the ray from origin where it ends; +inf for none
};

/// Everything the stepping loop needs, in the loop's precision T.
template <typename T>
struct Start {
  int voxel[3];   ///< first voxel, inside the grid
  int step[3];    ///< -1, 0 or +1 per axis
  T tNext[3];     ///< mm from the entry point to the next boundary plane per axis (Big if none)
  T tDelta[3];    ///< mm between successive planes per axis (Big if parallel)
  T length;       ///< mm of the clipped chord from entry to exit (or to tMax)
  double tEnter;  ///< mm from the ray origin to the entry point (double; informative)
};

/// Large finite stand-in for "never" (the paper's TMax/invDirMax). Finite, so that DDA-nc's
/// 0 * DeltaT stays 0 (0 * inf would be NaN); far beyond any chord in mm, in float too.
template <typename T>
PENUMBRA_HD_INLINE T bigT() {
  return T(1e30);
}

template <typename T>
PENUMBRA_HD_INLINE T minOf(T a, T b) {
  return b < a ? b : a;
}
template <typename T>
PENUMBRA_HD_INLINE T maxOf(T a, T b) {
  return b > a ? b : a;
}

PENUMBRA_HD_INLINE double floorD(double x) {
#ifdef __CUDA_ARCH__
  return ::floor(x);
#else
  return std::floor(x);
#endif
}
PENUMBRA_HD_INLINE double ceilD(double x) {
#ifdef __CUDA_ARCH__
  return ::ceil(x);
#else
  return std::ceil(x);
#endif
}
PENUMBRA_HD_INLINE double sqrtD(double x) {
#ifdef __CUDA_ARCH__
  return ::sqrt(x);
#else
  return std::sqrt(x);
#endif
}

/// Clips the ray against the grid and prepares the stepping state. Returns false when the ray
/// misses the grid (or has zero direction, or tMax <= 0): then no voxel is visited.
/// Always in double: a few dozen flops per ray, and it keeps float traversal relative to the
/// entry point so T stays small (no 1000-mm source distance eaten by float rounding).
template <typename T>
PENUMBRA_HD inline bool setupRay(const Geometry& g, const RayData& r, Start<T>& s) {
  const double n2 = r.direction[0] * r.direction[0] + r.direction[1] * r.direction[1] +
                    r.direction[2] * r.direction[2];
  if (!(n2 > 0) || !(r.tMax > 0)) return false;
  const double inv = 1.0 / sqrtD(n2);
  const double u[3] = {r.direction[0] * inv, r.direction[1] * inv, r.direction[2] * inv};
  const double rel[3] = {r.origin[0] - g.origin[0], r.origin[1] - g.origin[1],
                         r.origin[2] - g.origin[2]};
  double p[3], d[3], invD[3];
  double tEnter = 0, tExit = r.tMax;
  for (int a = 0; a < 3; ++a) {
    if (g.dims[a] <= 0) return false;
    const double* m = g.toLocal[a];
    p[a] = (m[0] * rel[0] + m[1] * rel[1] + m[2] * rel[2]) / g.spacing[a];
    d[a] = (m[0] * u[0] + m[1] * u[1] + m[2] * u[2]) / g.spacing[a];
    if (d[a] == 0) {
      // Parallel to this axis: the ray stays in voxel floor(p + 0.5) (as the reference does).
      const double v = floorD(p[a] + 0.5);
      if (v < 0 || v >= g.dims[a]) return false;
      invD[a] = 0;
      continue;
    }
    invD[a] = 1.0 / d[a];
    const double t1 = (-0.5 - p[a]) * invD[a];
    const double t2 = (g.dims[a] - 0.5 - p[a]) * invD[a];
    tEnter = maxOf(tEnter, minOf(t1, t2));
    tExit = minOf(tExit, maxOf(t1, t2));
  }
  if (!(tEnter < tExit)) return false;
  for (int a = 0; a < 3; ++a) {
    const double e = p[a] + tEnter * d[a];  // entry point, index space
    // On a boundary the voxel is the one the ray moves into.
    double v = d[a] < 0 ? ceilD(e - 0.5) : floorD(e + 0.5);
    v = minOf(maxOf(v, 0.0), double(g.dims[a] - 1));
    s.voxel[a] = int(v);
    if (d[a] == 0) {
      s.step[a] = 0;
      s.tNext[a] = bigT<T>();
      s.tDelta[a] = bigT<T>();
    } else {
      s.step[a] = d[a] > 0 ? 1 : -1;
      const double plane = v + 0.5 * s.step[a];
      const double tn = (plane - p[a]) * invD[a] - tEnter;
      const double td = invD[a] > 0 ? invD[a] : -invD[a];
      s.tNext[a] = T(minOf(tn, double(bigT<T>())));
      s.tDelta[a] = T(minOf(td, double(bigT<T>())));
    }
  }
  s.length = T(tExit - tEnter);
  s.tEnter = tEnter;
  return true;
}

/// Counts of one traversal: `segments` visited (length > 0), `iterations` of the stepping loop
/// (the classic form needs more at edges and corners).
struct Stats {
  int segments = 0;
  int iterations = 0;
};

/// Walks the voxels of a prepared ray in order, calling visit(i, j, k, lengthMm) for each voxel
/// with a positive path length. Stops at the chord's end or when the next voxel is outside.
template <DdaVariant V, typename T, typename Visitor>
PENUMBRA_HD inline Stats traverse(const Start<T>& s, const int dims[3], Visitor& visit) {
  int vx = s.voxel[0], vy = s.voxel[1], vz = s.voxel[2];
  const int sx = s.step[0], sy = s.step[1], sz = s.step[2];
  T tx = s.tNext[0], ty = s.tNext[1], tz = s.tNext[2];
  const T dx = s.tDelta[0], dy = s.tDelta[1], dz = s.tDelta[2];
  const T tEnd = s.length;
  T tPrev = T(0);
  Stats st;
  for (;;) {
    ++st.iterations;
    // Exit distance of the current voxel: the paper's fmin(T.x, fmin(T.y, T.z)), clipped.
    const T tHere = minOf(minOf(tx, minOf(ty, tz)), tEnd);
    const T len = tHere - tPrev;
    if (len > T(0)) {
      visit(vx, vy, vz, len);
      ++st.segments;
    }
    if (tHere >= tEnd) break;
    if constexpr (V == DdaVariant::Classic) {
      // Algorithm 1, lines 16-32: always steps one of the minimal axes.
      if (tx < ty) {
        if (tx < tz) {
          tx += dx;
          vx += sx;
        } else {
          tz += dz;
          vz += sz;
        }
      } else {
        if (ty < tz) {
          ty += dy;
          vy += sy;
        } else {
          tz += dz;
          vz += sz;
        }
      }
    } else {
      // Algorithm 2, lines 17-25: flags from comparisons, every minimal axis steps at once.
      const int ix = (tx <= ty) & (tx <= tz);
      const int iy = (ty <= tx) & (ty <= tz);
      const int iz = (tz <= tx) & (tz <= ty);
      tx += T(ix) * dx;
      ty += T(iy) * dy;
      tz += T(iz) * dz;
      vx += ix * sx;
      vy += iy * sy;
      vz += iz * sz;
    }
    tPrev = tHere;
    // Rounding can put the last boundary a hair before tEnd: never step outside the grid.
    if (unsigned(vx) >= unsigned(dims[0]) || unsigned(vy) >= unsigned(dims[1]) ||
        unsigned(vz) >= unsigned(dims[2]))
      break;
  }
  return st;
}

/// Runtime variant switch over traverse<>.
template <typename T, typename Visitor>
PENUMBRA_HD inline Stats traverse(DdaVariant v, const Start<T>& s, const int dims[3],
                                  Visitor& visit) {
  return v == DdaVariant::Classic ? traverse<DdaVariant::Classic>(s, dims, visit)
                                  : traverse<DdaVariant::BranchFree>(s, dims, visit);
}

}  // namespace dda
}  // namespace penumbra
