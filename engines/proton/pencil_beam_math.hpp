#pragma once
/// The pencil-beam arithmetic shared by the CPU reference (double) and the CUDA kernels (float),
/// header-only and host/device so that both backends evaluate the same expressions.
///
/// Beam's-eye (BEV) grid of one beam (da Silva et al.): rays from the virtual source S through
/// the lateral points (a_i, b_j) of the isocentre plane, a_i = a0 + i da, b_j = b0 + j db [mm],
/// sampled on planes at axial distance d_k = d0 + k dd [mm] from the source. Sample (i, j, k) is
///   P = S + d_k w + (d_k / SAD)(a_i u + b_j v),
/// so the grid diverges with the beam. Arrays over it are stored (k * nB + j) * nA + i: a depth
/// plane is contiguous, which is what the superposition reads and writes.
///
/// Dose of one spot (a_s, b_s, weight W) of energy layer E at BEV sample P with water-equivalent
/// depth z (traced along P's own ray) and lateral distance r = |(a_i, b_j) - (a_s, b_s)| d_k/SAD:
///   D = W * N * IDD_E(z) * G(r; sigma_E(z)) * kGyPerMeVPerGram * 100 mm^2/cm^2,
///   G = exp(-r^2 / (2 sigma^2)) / (2 pi sigma^2 (1 - exp(-c^2/2))) for r < c sigma, else 0,
/// N = 1e9 protons per unit weight, c = the cut-off in sigmas. Dividing by (1 - exp(-c^2/2)) puts
/// back the 1.1 % of a 2D Gaussian beyond 3 sigma, so the truncated kernel still carries all of
/// the IDD's energy (the energy-conservation test depends on it).
///
/// Per (layer, sample) everything but the spot distance is folded into three numbers
/// (DepthTerms), so the spot loop costs one compare, one exp and two multiplies:
///   amp = K IDD / sigma^2,  expo = (d/SAD)^2 / (2 sigma^2),  cutIso2 = c^2 sigma^2 (SAD/d)^2,
///   D = W * amp * exp(-rIso^2 * expo)  when rIso^2 < cutIso2, rIso = distance at the iso plane.
#include "raytrace/dda_traversal.hpp"  // PENUMBRA_HD macros

namespace penumbra::proton::pb {

/// BEV lateral tile edge in rays: the unit of spot culling and of a CUDA thread block (16 x 16).
inline constexpr int kTile = 16;

/// Plain-number BEV grid of one beam (host and device).
struct BevGeometry {
  double source[3];  ///< LPS mm
  double u[3], v[3], w[3];
  double sad;        ///< mm
  int nA, nB, nD;    ///< rays along u, v; depth planes
  double a0, b0;     ///< iso-plane mm of ray (0, 0)
  double da, db;     ///< iso-plane ray spacing [mm]
  double d0, dd;     ///< axial distance of plane 0 from the source, plane step [mm]
};

/// Folded constants of one energy layer at one BEV sample (see the file comment).
template <typename T>
struct DepthTerms {
  T amp;      ///< Gy per unit weight at the spot axis
  T expo;     ///< [1/mm^2], multiplies the iso-plane squared distance
  T cutIso2;  ///< iso-plane squared cut-off radius [mm^2]
};

/// Evaluates the layer tables at WEPL `wepl` [mm]: linear interpolation on z_i = i dz with
/// invDz = 1/dz. Returns false where the layer deposits nothing (beyond the table, IDD 0).
/// scale2 = (d/SAD)^2 of the sample's plane; cut2 = c^2; normK = K / (2 pi (1 - exp(-c^2/2))).
template <typename T, typename V>
PENUMBRA_HD_INLINE bool depthTerms(const V* idd, const V* sigma, int n, T invDz, T wepl,
                                   T scale2, T cut2, T normK, DepthTerms<T>& out) {
  const T x = wepl * invDz;
  if (!(x < T(n - 1))) return false;
  const int i = int(x);
  const T f = x - T(i);
  const T i0 = T(idd[i]), i1 = T(idd[i + 1]);
  const T dose = i0 + f * (i1 - i0);
  if (!(dose > T(0))) return false;
  const T s0 = T(sigma[i]), s1 = T(sigma[i + 1]);
  const T s = s0 + f * (s1 - s0);
  const T s2 = s * s;
  out.amp = normK * dose / s2;
  out.expo = scale2 / (T(2) * s2);
  out.cutIso2 = cut2 * s2 / scale2;
  return true;
}

/// Trilinear interpolation of a BEV array at patient point p [mm]; 0 outside the BEV grid.
/// Coordinates in double (a 2-m source distance leaves float ~1e-4 mm), values in V.
template <typename V>
PENUMBRA_HD inline double sampleBev(const V* bev, const BevGeometry& g, double px, double py,
                                    double pz) {
  const double rx = px - g.source[0], ry = py - g.source[1], rz = pz - g.source[2];
  const double d = rx * g.w[0] + ry * g.w[1] + rz * g.w[2];
  if (!(d > 0)) return 0;
  const double s = g.sad / d;
  const double a = (rx * g.u[0] + ry * g.u[1] + rz * g.u[2]) * s;
  const double b = (rx * g.v[0] + ry * g.v[1] + rz * g.v[2]) * s;
  const double fi = (a - g.a0) / g.da, fj = (b - g.b0) / g.db, fk = (d - g.d0) / g.dd;
  // Inside [0, n-1] on every axis (a sample exactly on the last plane uses the last cell).
  if (!(fi >= 0 && fj >= 0 && fk >= 0 && fi <= g.nA - 1 && fj <= g.nB - 1 && fk <= g.nD - 1))
    return 0;
  int i = int(fi), j = int(fj), k = int(fk);
  if (i > g.nA - 2) i = g.nA > 1 ? g.nA - 2 : 0;
  if (j > g.nB - 2) j = g.nB > 1 ? g.nB - 2 : 0;
  if (k > g.nD - 2) k = g.nD > 1 ? g.nD - 2 : 0;
  const double ti = fi - i, tj = fj - j, tk = fk - k;
  const int i1 = g.nA > 1 ? i + 1 : i, j1 = g.nB > 1 ? j + 1 : j, k1 = g.nD > 1 ? k + 1 : k;
  const long long nA = g.nA, nAB = (long long)g.nA * g.nB;
  auto at = [&](int ii, int jj, int kk) { return double(bev[kk * nAB + jj * nA + ii]); };
  const double c00 = at(i, j, k) + ti * (at(i1, j, k) - at(i, j, k));
  const double c10 = at(i, j1, k) + ti * (at(i1, j1, k) - at(i, j1, k));
  const double c01 = at(i, j, k1) + ti * (at(i1, j, k1) - at(i, j, k1));
  const double c11 = at(i, j1, k1) + ti * (at(i1, j1, k1) - at(i, j1, k1));
  const double c0 = c00 + tj * (c10 - c00);
  const double c1 = c01 + tj * (c11 - c01);
  return c0 + tk * (c1 - c0);
}

/// The BEV cell of patient point p [mm] as sampleBev finds it: lower corner (i, j, k), upper
/// corner (i1, j1, k1) (equal to the lower one along an axis of one sample) and the fractions
/// t[] along each axis. Returns false outside the grid.
struct BevCell {
  int i, j, k, i1, j1, k1;
  double t[3];
};
PENUMBRA_HD_INLINE bool bevCell(const BevGeometry& g, double px, double py, double pz, BevCell& cell) {
  const double rx = px - g.source[0], ry = py - g.source[1], rz = pz - g.source[2];
  const double d = rx * g.w[0] + ry * g.w[1] + rz * g.w[2];
  if (!(d > 0)) return false;
  const double s = g.sad / d;
  const double a = (rx * g.u[0] + ry * g.u[1] + rz * g.u[2]) * s;
  const double b = (rx * g.v[0] + ry * g.v[1] + rz * g.v[2]) * s;
  const double fi = (a - g.a0) / g.da, fj = (b - g.b0) / g.db, fk = (d - g.d0) / g.dd;
  if (!(fi >= 0 && fj >= 0 && fk >= 0 && fi <= g.nA - 1 && fj <= g.nB - 1 && fk <= g.nD - 1))
    return false;
  int i = int(fi), j = int(fj), k = int(fk);
  if (i > g.nA - 2) i = g.nA > 1 ? g.nA - 2 : 0;
  if (j > g.nB - 2) j = g.nB > 1 ? g.nB - 2 : 0;
  if (k > g.nD - 2) k = g.nD > 1 ? g.nD - 2 : 0;
  cell.t[0] = fi - i;
  cell.t[1] = fj - j;
  cell.t[2] = fk - k;
  cell.i = i;
  cell.j = j;
  cell.k = k;
  cell.i1 = g.nA > 1 ? i + 1 : i;
  cell.j1 = g.nB > 1 ? j + 1 : j;
  cell.k1 = g.nD > 1 ? k + 1 : k;
  return true;
}

/// Trilinear weight of corner c = di + 2 dj + 4 dk of a cell with fractions t[].
PENUMBRA_HD_INLINE double cornerWeight(const double t[3], int c) {
  const int di = c & 1, dj = (c >> 1) & 1, dk = (c >> 2) & 1;
  return (di ? t[0] : 1 - t[0]) * (dj ? t[1] : 1 - t[1]) * (dk ? t[2] : 1 - t[2]);
}

/// Corner indices and trilinear weights of sampleBev (for the dose-deposition matrix, whose
/// entries must be the same linear map). Returns false outside the grid. idx[c], wt[c] for the
/// corners c = di + 2 dj + 4 dk.
PENUMBRA_HD inline bool bevCorners(const BevGeometry& g, double px, double py, double pz,
                                   long long idx[8], double wt[8]) {
  BevCell cell;
  if (!bevCell(g, px, py, pz, cell)) return false;
  const long long nA = g.nA, nAB = (long long)g.nA * g.nB;
  for (int c = 0; c < 8; ++c) {
    const int di = c & 1, dj = (c >> 1) & 1, dk = (c >> 2) & 1;
    idx[c] = (long long)(dk ? cell.k1 : cell.k) * nAB + (long long)(dj ? cell.j1 : cell.j) * nA +
             (di ? cell.i1 : cell.i);
    wt[c] = cornerWeight(cell.t, c);
  }
  return true;
}

}  // namespace penumbra::proton::pb
