#pragma once
// Shared helpers of the ray-tracing tests: seeded random grids and rays, comparison of voxel
// lists against the reference with a tolerance, and a dump of any failing case to a file.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "raytrace/raytrace.hpp"

namespace penumbra::test {

constexpr DdaVariant kVariants[] = {DdaVariant::Classic, DdaVariant::BranchFree};

inline Grid makeGrid(int nx, int ny, int nz, Vec3 spacing, Vec3 origin = {0, 0, 0}) {
  Grid g;
  g.dims = {nx, ny, nz};
  g.spacing = spacing;
  g.origin = origin;
  return g;
}

/// Random orthonormal matrix (QR of a random matrix by Gram-Schmidt), possibly improper.
inline Mat3 randomRotation(std::mt19937_64& rng) {
  std::normal_distribution<double> n(0, 1);
  Vec3 a{n(rng), n(rng), n(rng)}, b{n(rng), n(rng), n(rng)};
  a = normalized(a);
  b = normalized(b - dot(a, b) * a);
  Vec3 c = cross(a, b);
  if (rng() & 1) c = -1.0 * c;
  return Mat3::fromColumns(a, b, c);
}

/// Random grid: 1..maxDim voxels per axis, spacing 0.4..3 mm, origin within +-200 mm, and
/// direction cosines that are the identity, a signed axis permutation or a random rotation.
inline Grid randomGrid(std::mt19937_64& rng, int maxDim = 40) {
  std::uniform_int_distribution<int> dim(1, maxDim);
  std::uniform_real_distribution<double> sp(0.4, 3.0), org(-200, 200);
  Grid g = makeGrid(dim(rng), dim(rng), dim(rng), {sp(rng), sp(rng), sp(rng)},
                    {org(rng), org(rng), org(rng)});
  const int kind = int(rng() % 3);
  if (kind == 1) {
    const Vec3 e[3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const int p = int(rng() % 3);
    const double s0 = (rng() & 1) ? 1 : -1, s1 = (rng() & 1) ? 1 : -1;
    g.direction =
        Mat3::fromColumns(s0 * e[p], s1 * e[(p + 1) % 3], cross(s0 * e[p], s1 * e[(p + 1) % 3]));
  } else if (kind == 2) {
    g.direction = randomRotation(rng);
  }
  return g;
}

/// Random ray for a grid: origin inside (a third of rays) or up to ~2 grid diagonals away;
/// direction towards a random point of the (slightly enlarged) box, or fully random (a fifth:
/// many miss); tMax infinite or a random length.
inline Ray randomRay(const Grid& g, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u01(0, 1);
  auto boxPoint = [&](double margin) {
    Vec3 idx;
    for (int a = 0; a < 3; ++a) idx[a] = -0.5 - margin + u01(rng) * (g.dims[a] + 2 * margin);
    return g.indexToWorld(idx);
  };
  Vec3 lo, hi;
  g.worldBounds(lo, hi);
  const double diag = norm(hi - lo);
  Ray r;
  std::normal_distribution<double> n(0, 1);
  if (u01(rng) < 1.0 / 3) {
    r.origin = boxPoint(0);
  } else {
    const Vec3 dirOut = normalized(Vec3{n(rng), n(rng), n(rng)});
    r.origin = 0.5 * (lo + hi) + (0.6 + 1.5 * u01(rng)) * diag * dirOut;
  }
  if (u01(rng) < 0.2)
    r.direction = Vec3{n(rng), n(rng), n(rng)};
  else
    r.direction = boxPoint(0.2) - r.origin;
  if (norm(r.direction) == 0) r.direction = {1, 0, 0};
  if (u01(rng) < 0.25) r.tMax = u01(rng) * 2 * diag;
  return r;
}

inline double totalLength(const std::vector<VoxelSegment>& s) {
  double t = 0;
  for (const auto& v : s) t += v.lengthMm;
  return t;
}

inline std::string describe(const Grid& g, const Ray& r) {
  std::ostringstream os;
  os.precision(17);
  os << "grid dims " << g.dims[0] << " " << g.dims[1] << " " << g.dims[2] << " spacing "
     << g.spacing.x << " " << g.spacing.y << " " << g.spacing.z << " origin " << g.origin.x << " "
     << g.origin.y << " " << g.origin.z << " direction";
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) os << " " << g.direction.m[i][j];
  os << "\nray origin " << r.origin.x << " " << r.origin.y << " " << r.origin.z << " direction "
     << r.direction.x << " " << r.direction.y << " " << r.direction.z << " tMax " << r.tMax << "\n";
  return os.str();
}

inline std::string describe(const std::vector<VoxelSegment>& s) {
  std::ostringstream os;
  os.precision(17);
  for (const auto& v : s)
    os << "  (" << v.i << "," << v.j << "," << v.k << ") " << v.lengthMm << "\n";
  return os.str();
}

/// Writes a failing case next to the test binary and returns the file name.
inline std::string dumpCase(const std::string& name, const Grid& g, const Ray& r,
                            const std::vector<VoxelSegment>& got,
                            const std::vector<VoxelSegment>& want) {
  const std::string file = "raytrace_failure_" + name + ".txt";
  std::ofstream os(file);
  os << describe(g, r) << "got:\n" << describe(got) << "reference:\n" << describe(want);
  return file;
}

/// Same voxels in the same order, lengths within absTol, after dropping segments shorter than
/// absTol from both (a near-tie may cut a corner voxel by a rounding error in one of them).
inline bool sameWithin(const std::vector<VoxelSegment>& a, const std::vector<VoxelSegment>& b,
                       double absTol, std::string* why) {
  auto strip = [&](const std::vector<VoxelSegment>& s) {
    std::vector<VoxelSegment> o;
    for (const auto& v : s)
      if (v.lengthMm > absTol) o.push_back(v);
    return o;
  };
  const auto sa = strip(a), sb = strip(b);
  if (sa.size() != sb.size()) {
    *why = "segment counts " + std::to_string(sa.size()) + " vs " + std::to_string(sb.size());
    return false;
  }
  for (std::size_t n = 0; n < sa.size(); ++n) {
    if (sa[n].i != sb[n].i || sa[n].j != sb[n].j || sa[n].k != sb[n].k) {
      *why = "voxel differs at segment " + std::to_string(n);
      return false;
    }
    if (std::abs(sa[n].lengthMm - sb[n].lengthMm) > absTol) {
      *why = "length differs at segment " + std::to_string(n);
      return false;
    }
  }
  return true;
}

/// Bitwise equality of two voxel lists (indices and lengths).
inline bool identical(const std::vector<VoxelSegment>& a, const std::vector<VoxelSegment>& b) {
  return a == b;
}

}  // namespace penumbra::test
