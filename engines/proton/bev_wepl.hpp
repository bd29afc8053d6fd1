#pragma once
/// Water-equivalent path length (WEPL) at every depth sample of one BEV ray, by 3D-DDA through
/// the stopping-power-ratio volume (engines/raytrace/dda_traversal.hpp), host and device.
///
/// The ray runs from the virtual source through iso-plane point (a_i, b_j); its samples lie at
/// distances t_k = d_k * L along it, L = |SAD w + a u + b v| / SAD (plane k at axial distance
/// d_k). Each voxel segment [t, t + len] of SPR rho adds len * rho; a sample inside the segment
/// gets the cumulative WEPL up to it, cum + (t_k - t) rho: exact for the voxelised SPR (no
/// sampling error along the ray). Samples before the CT get 0, samples behind it the total.
///
/// Traversal in double on both backends: the tracing is a small part of the work (one thread
/// per ray, ~10^4 rays per beam), and double keeps the GPU's WEPL within ~1e-12 mm of the CPU
/// reference, so the backends differ only by the float superposition.
#include "proton/pencil_beam_math.hpp"
#include "raytrace/dda_traversal.hpp"

namespace penumbra::proton::pb {

/// Visitor of dda::traverse that writes the WEPL [mm] of the ray's samples.
template <typename Out>
struct WeplSampler {
  const float* spr;
  long long nx, nxy;
  Out* out;          ///< sample k goes to out[k * stride]
  long long stride;
  int nD;
  double t0, step;   ///< distance of sample 0 along the ray and between samples [mm]
  double cum;        ///< WEPL up to tPos [mm]
  double tPos;       ///< distance from the source of the current segment start [mm]
  int k;             ///< next sample

  PENUMBRA_HD_INLINE double tAt(int kk) const { return t0 + double(kk) * step; }

  PENUMBRA_HD_INLINE void operator()(int i, int j, int kk, double len) {
    const double rho = double(spr[kk * nxy + j * nx + i]);
    const double tEnd = tPos + len;
    for (; k < nD; ++k) {
      const double t = tAt(k);
      if (t > tEnd) break;
      out[k * stride] = Out(cum + (t - tPos) * rho);
    }
    cum += len * rho;
    tPos = tEnd;
  }
};

/// Traces ray (i, j) of the BEV grid and writes WEPL [mm] at its nD samples to
/// out[k * stride], k = 0..nD-1.
template <DdaVariant V, typename Out>
PENUMBRA_HD inline void traceBevRay(const dda::Geometry& geo, const float* spr,
                                    const BevGeometry& g, int i, int j, Out* out,
                                    long long stride) {
  const double a = g.a0 + double(i) * g.da, b = g.b0 + double(j) * g.db;
  dda::RayData ray;
  double n2 = 0;
  for (int c = 0; c < 3; ++c) {
    ray.origin[c] = g.source[c];
    ray.direction[c] = g.sad * g.w[c] + a * g.u[c] + b * g.v[c];
    n2 += ray.direction[c] * ray.direction[c];
  }
  const double lengthPerDepth = dda::sqrtD(n2) / g.sad;
  ray.tMax = (g.d0 + double(g.nD - 1) * g.dd) * lengthPerDepth + 1.0;
  WeplSampler<Out> s{spr, geo.dims[0], (long long)geo.dims[0] * geo.dims[1], out, stride, g.nD,
                     g.d0 * lengthPerDepth, g.dd * lengthPerDepth, 0.0, 0.0, 0};
  dda::Start<double> st;
  if (dda::setupRay(geo, ray, st)) {
    for (; s.k < g.nD && s.tAt(s.k) <= st.tEnter; ++s.k) out[s.k * stride] = Out(0);
    s.tPos = st.tEnter;
    dda::traverse<V>(st, geo.dims, s);
  }
  for (; s.k < g.nD; ++s.k) out[s.k * stride] = Out(s.cum);
}

}  // namespace penumbra::proton::pb
