// photon/terma_box: the host bound of the voxels whose TERMA can be > 0 holds every voxel that
// the GPU TERMA kernel's quick-reject test lets through (checked voxel by voxel on small random
// grids, rotated and not, beams from all sides, open boxes anywhere on the map), and is tight
// for an axis-aligned field.
#include "photon/terma_box.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <random>

namespace penumbra::photon {
namespace {

/// terma_kernel.cu's voxelOpen quick reject, written out: true when the voxel may have TERMA > 0.
bool passesReject(const TermaBoxInput& in, int i, int j, int k) {
  const int idx[3] = {i, j, k};
  double rel[3];
  for (int a = 0; a < 3; ++a) {
    double p = in.geo.origin[a];
    for (int b = 0; b < 3; ++b) p += in.geo.toLocal[b][a] * (idx[b] * in.geo.spacing[b]);
    rel[a] = p - in.source[a];
  }
  const double d = rel[0] * in.w[0] + rel[1] * in.w[1] + rel[2] * in.w[2];
  if (d <= 0) return false;
  const double scale = in.sad / d;
  const double a = (rel[0] * in.u[0] + rel[1] * in.u[1] + rel[2] * in.u[2]) * scale;
  const double b = (rel[0] * in.v[0] + rel[1] * in.v[1] + rel[2] * in.v[2]) * scale;
  const double du = in.footU * scale / 3, dv = in.footV * scale / 3;
  const double x = (a - in.mapU0) / in.mapPitch, y = (b - in.mapV0) / in.mapPitch;
  const double ex = std::fabs(du) / in.mapPitch + 2, ey = std::fabs(dv) / in.mapPitch + 2;
  return !(x + ex < in.openLo[0] || x - ex > in.openHi[0] || y + ey < in.openLo[1] ||
           y - ey > in.openHi[1]);
}

/// The box of the voxels that pass, by brute force; false when none does.
bool exactBox(const TermaBoxInput& in, int lo[3], int hi[3]) {
  for (int a = 0; a < 3; ++a) lo[a] = INT_MAX, hi[a] = INT_MIN;
  for (int k = 0; k < in.geo.dims[2]; ++k)
    for (int j = 0; j < in.geo.dims[1]; ++j)
      for (int i = 0; i < in.geo.dims[0]; ++i) {
        if (!passesReject(in, i, j, k)) continue;
        const int idx[3] = {i, j, k};
        for (int a = 0; a < 3; ++a)
          lo[a] = std::min(lo[a], idx[a]), hi[a] = std::max(hi[a], idx[a]);
      }
  return lo[0] <= hi[0];
}

void rotation(std::mt19937& rng, double m[3][3], bool axisAligned) {
  std::uniform_real_distribution<double> ang(-M_PI, M_PI);
  const double a = axisAligned ? 0 : ang(rng), b = axisAligned ? 0 : 0.3 * ang(rng);
  const double ca = std::cos(a), sa = std::sin(a), cb = std::cos(b), sb = std::sin(b);
  const double rz[3][3] = {{ca, -sa, 0}, {sa, ca, 0}, {0, 0, 1}};
  const double rx[3][3] = {{1, 0, 0}, {0, cb, -sb}, {0, sb, cb}};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      m[r][c] = 0;
      for (int k = 0; k < 3; ++k) m[r][c] += rz[r][k] * rx[k][c];
    }
}

/// A beam from a random gantry angle and tilt (source at distance sad from the isocentre).
TermaBoxInput randomCase(std::mt19937& rng, bool rotatedGrid) {
  std::uniform_real_distribution<double> U(0, 1);
  TermaBoxInput in{};
  in.geo.dims[0] = 18 + int(U(rng) * 10);
  in.geo.dims[1] = 14 + int(U(rng) * 10);
  in.geo.dims[2] = 10 + int(U(rng) * 8);
  for (int a = 0; a < 3; ++a) {
    in.geo.spacing[a] = 2 + 3 * U(rng);
    in.geo.origin[a] = -0.5 * in.geo.spacing[a] * in.geo.dims[a] + 20 * (U(rng) - 0.5);
  }
  rotation(rng, in.geo.toLocal, !rotatedGrid);
  const double gantry = 2 * M_PI * U(rng), tilt = 0.4 * (U(rng) - 0.5);
  const double w[3] = {std::sin(gantry) * std::cos(tilt), -std::cos(gantry) * std::cos(tilt),
                       std::sin(tilt)};
  const double u0[3] = {std::cos(gantry), std::sin(gantry), 0};
  const double v[3] = {w[1] * u0[2] - w[2] * u0[1], w[2] * u0[0] - w[0] * u0[2],
                       w[0] * u0[1] - w[1] * u0[0]};
  const double nv = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  const double u[3] = {v[1] * w[2] - v[2] * w[1], v[2] * w[0] - v[0] * w[2],
                       v[0] * w[1] - v[1] * w[0]};
  const double nu = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  in.sad = 300 + 700 * U(rng);
  const double iso[3] = {15 * (U(rng) - 0.5), 15 * (U(rng) - 0.5), 10 * (U(rng) - 0.5)};
  for (int a = 0; a < 3; ++a) {
    in.w[a] = w[a];
    in.u[a] = u[a] / nu;
    in.v[a] = v[a] / nv;
    in.source[a] = iso[a] - in.sad * w[a];
  }
  in.mapPitch = 1 + 2 * U(rng);
  in.mapU0 = -100, in.mapV0 = -100;
  const int nMap = int(200 / in.mapPitch);
  for (int c = 0; c < 2; ++c) {
    const int a = int(U(rng) * nMap), b = int(U(rng) * nMap);
    in.openLo[c] = std::min(a, b) - 2, in.openHi[c] = std::max(a, b) / 3 + std::min(a, b) / 2;
    if (in.openHi[c] < in.openLo[c]) std::swap(in.openLo[c], in.openHi[c]);
  }
  in.footU = 3 * U(rng), in.footV = -3 * U(rng);  // the kernel takes |foot|
  return in;
}

TEST(TermaBox, HoldsEveryVoxelTheKernelsQuickRejectLetsThrough) {
  std::mt19937 rng(20261126);
  int nonEmpty = 0, empty = 0;
  for (int c = 0; c < 400; ++c) {
    const TermaBoxInput in = randomCase(rng, c % 2 == 1);
    int lo[3], hi[3], exLo[3], exHi[3];
    const bool any = termaIndexBox(in, lo, hi);
    const bool exactAny = exactBox(in, exLo, exHi);
    (exactAny ? nonEmpty : empty) += 1;
    if (!exactAny) continue;  // a region with no voxel centre may still get a (harmless) box
    ASSERT_TRUE(any) << "case " << c << ": voxels pass but the bound says none";
    for (int a = 0; a < 3; ++a) {
      ASSERT_LE(lo[a], exLo[a]) << "case " << c << " axis " << a;
      ASSERT_GE(hi[a], exHi[a]) << "case " << c << " axis " << a;
      ASSERT_GE(lo[a], 0);
      ASSERT_LT(hi[a], in.geo.dims[a]);
    }
  }
  EXPECT_GT(nonEmpty, 100) << "the random cases must exercise the bound";
  EXPECT_GT(empty, 5) << "and some fields that miss the grid";
}

TermaBoxInput axisAlignedField() {
  TermaBoxInput in{};
  in.geo.dims[0] = in.geo.dims[1] = in.geo.dims[2] = 64;
  for (int a = 0; a < 3; ++a) {
    in.geo.spacing[a] = 2;
    in.geo.origin[a] = -63;
    for (int b = 0; b < 3; ++b) in.geo.toLocal[a][b] = a == b ? 1 : 0;
  }
  // Beam along +y (source at y = -1000), map axes x and z; 4 x 4 cm^2 open at the isocentre.
  const double w[3] = {0, 1, 0}, u[3] = {1, 0, 0}, v[3] = {0, 0, 1};
  for (int a = 0; a < 3; ++a) in.w[a] = w[a], in.u[a] = u[a], in.v[a] = v[a];
  in.source[0] = 0, in.source[1] = -1000, in.source[2] = 0;
  in.sad = 1000;
  in.mapPitch = 1, in.mapU0 = -100, in.mapV0 = -100;
  in.openLo[0] = in.openLo[1] = 80, in.openHi[0] = in.openHi[1] = 119;
  in.footU = in.footV = 2;
  return in;
}

TEST(TermaBox, IsTightForAnAxisAlignedField) {
  const TermaBoxInput in = axisAlignedField();
  int lo[3], hi[3], exLo[3], exHi[3];
  ASSERT_TRUE(termaIndexBox(in, lo, hi));
  ASSERT_TRUE(exactBox(in, exLo, exHi));
  EXPECT_EQ(lo[1], 0);  // the beam crosses the whole grid along y
  EXPECT_EQ(hi[1], 63);
  for (int a : {0, 2}) {
    EXPECT_LE(lo[a], exLo[a]);
    EXPECT_GE(hi[a], exHi[a]);
    EXPECT_LE(exLo[a] - lo[a], 2) << "axis " << a;
    EXPECT_LE(hi[a] - exHi[a], 2) << "axis " << a;
    EXPECT_LT(hi[a] - lo[a], 40) << "a 4 cm field is not the whole 12.8 cm grid";
  }
}

TEST(TermaBox, AClosedMapOrAGridBehindTheSourceHasNoBox) {
  TermaBoxInput in = axisAlignedField();
  int lo[3], hi[3];
  in.openLo[0] = 5, in.openHi[0] = 4;
  EXPECT_FALSE(termaIndexBox(in, lo, hi)) << "no open pixel";
  in = axisAlignedField();
  in.source[1] = 1000;  // the grid lies behind the source (w points away from it)
  EXPECT_FALSE(termaIndexBox(in, lo, hi));
}

}  // namespace
}  // namespace penumbra::photon
