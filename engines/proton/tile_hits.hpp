#pragma once
/// Which 16 x 16-ray BEV tiles a spot can reach: the one definition behind the tile lists
/// (bev_grid.hpp), used by the host build (bev_grid.cpp) and by the GPU build
/// (cuda/tile_list_kernels.cu), so that both make the same lists bit for bit. Both translation
/// units compile without FMA contraction (-ffp-contract=off, --fmad=false): every double
/// operation below rounds as written, on either side.
///
/// A spot (iso-plane x, y) of a layer with cull radius R reaches tile (ta, tb) when the tile
/// lies in the spot's ray box (spotRays: the rays its disc can touch, widened by one cell for
/// the dose matrix, which interpolates between ray i and i + 1) and the disc meets the tile's
/// rays plus one cell (discMeetsTile). tilesInBox() counts the tiles of the box: summed over
/// the spots it bounds the lists' length from above, at O(1) per spot (layoutBeam's estimate).
#include <cmath>

#include "proton/pencil_beam_math.hpp"

namespace penumbra::proton::pb {

/// A spot's ray box: rays [iLo, iHi] x [jLo, jHi]. Tiles [iLo / kTile, iHi / kTile] x
/// [jLo / kTile, jHi / kTile] (integer division, as in C++) when iLo <= iHi, else none. jHi may
/// be negative (a spot beyond the grid's low edge): the division then rounds towards zero, and
/// the disc test decides, as the host loop always did.
struct SpotRays {
  int iLo, iHi, jLo, jHi;
};

PENUMBRA_HD_INLINE SpotRays spotRays(double x, double y, double R, const BevGeometry& g) {
  SpotRays r;
  const int iLo = int(ceil((x - R - g.a0) / g.da)) - 1;
  const int iHi = int(floor((x + R - g.a0) / g.da));
  const int jLo = int(ceil((y - R - g.b0) / g.db)) - 1;
  const int jHi = int(floor((y + R - g.b0) / g.db));
  r.iLo = iLo > 0 ? iLo : 0;
  r.iHi = iHi < g.nA - 1 ? iHi : g.nA - 1;
  r.jLo = jLo > 0 ? jLo : 0;
  r.jHi = jHi < g.nB - 1 ? jHi : g.nB - 1;
  return r;
}

/// Tiles the ray box visits (an upper bound of the tiles the spot reaches).
PENUMBRA_HD_INLINE long long tilesInBox(const SpotRays& r) {
  if (r.iLo > r.iHi) return 0;
  const int nb = r.jHi / kTile - r.jLo / kTile + 1;
  return nb > 0 ? (long long)(r.iHi / kTile - r.iLo / kTile + 1) * nb : 0;
}

/// Whether tile (ta, tb) lies in the box (the tiles the host loop visits).
PENUMBRA_HD_INLINE bool boxHasTile(const SpotRays& r, int ta, int tb) {
  return r.iLo <= r.iHi && ta >= r.iLo / kTile && ta <= r.iHi / kTile && tb >= r.jLo / kTile &&
         tb <= r.jHi / kTile;
}

/// Exact disc-rectangle test: the disc of squared radius R2 about (x, y) meets the rays of tile
/// (ta, tb) plus one cell (the last ray of the grid closes the rectangle at the grid's edge).
PENUMBRA_HD_INLINE bool discMeetsTile(double x, double y, double R2, const BevGeometry& g, int ta,
                                      int tb) {
  const int iEnd = (ta + 1) * kTile < g.nA - 1 ? (ta + 1) * kTile : g.nA - 1;
  const int jEnd = (tb + 1) * kTile < g.nB - 1 ? (tb + 1) * kTile : g.nB - 1;
  const double aLo = g.a0 + g.da * double(ta * kTile);
  const double aHi = g.a0 + g.da * double(iEnd);
  const double bLo = g.b0 + g.db * double(tb * kTile);
  const double bHi = g.b0 + g.db * double(jEnd);
  // std::clamp(x, lo, hi) written out (it is not available in device code).
  const double ca = (x < aLo ? aLo : (aHi < x ? aHi : x)) - x;
  const double cb = (y < bLo ? bLo : (bHi < y ? bHi : y)) - y;
  return ca * ca + cb * cb <= R2;
}

}  // namespace penumbra::proton::pb
