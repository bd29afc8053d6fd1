#include "photon/photon_phantoms.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace penumbra::photon {

namespace {

/// Odd voxel count covering about `extent` mm at spacing h (at least 1).
int oddCount(double extent, double h) {
  int n = std::max(1, int(std::lround(extent / h)));
  if (n % 2 == 0) ++n;
  return n;
}

}  // namespace

PhotonPhantomCase makeWaterBox(const WaterBoxSpec& s) {
  PENUMBRA_REQUIRE(s.widthMm > 0 && s.depthMm > 0 && s.lateralSpacingMm > 0 &&
                       s.depthSpacingMm > 0 && s.ssdMm > 0 && s.fieldMm > 0 && s.sadMm > 0,
                   InvalidArgument, "water box: sizes, spacings, SSD, SAD and field must be > 0");
  PENUMBRA_REQUIRE(s.ssdMm <= s.sadMm + s.depthMm, InvalidArgument,
                   "water box: the isocentre (SAD - SSD deep) lies beyond the phantom");
  PhotonPhantomCase pc;
  pc.name = "water";
  const int nl = oddCount(s.widthMm, s.lateralSpacingMm);
  const int nd = std::max(1, int(std::lround(s.depthMm / s.depthSpacingMm)));
  Grid g;
  g.dims = {nl, nd, nl};
  g.spacing = {s.lateralSpacingMm, s.depthSpacingMm, s.lateralSpacingMm};
  const double half = 0.5 * (nl - 1) * s.lateralSpacingMm;
  g.origin = {-half, 0.5 * s.depthSpacingMm, -half};
  pc.density = std::make_shared<Volume<float>>(g, 1.0f);
  pc.surfaceYMm = 0;
  PhotonBeam b;
  b.name = "AP";
  b.sadMm = s.sadMm;
  b.isocenter = {0, s.sadMm - s.ssdMm, 0};
  b.x1Mm = b.y1Mm = -0.5 * s.fieldMm;
  b.x2Mm = b.y2Mm = 0.5 * s.fieldMm;
  b.monitorUnits = 100;
  pc.beams.push_back(b);
  return pc;
}

PhotonPhantomCase makeLungSlab(const WaterBoxSpec& s, double from, double to, double rho) {
  PENUMBRA_REQUIRE(from >= 0 && to > from && rho > 0, InvalidArgument,
                   "lung slab: need 0 <= from < to and a positive density");
  PhotonPhantomCase pc = makeWaterBox(s);
  pc.name = "lung-slab";
  Volume<float>& d = *pc.density;
  for (int j = 0; j < d.grid.dims[1]; ++j) {
    const double y = d.grid.origin.y + j * d.grid.spacing.y;  // voxel centre depth
    if (y < from || y > to) continue;
    for (int k = 0; k < d.grid.dims[2]; ++k)
      for (int i = 0; i < d.grid.dims[0]; ++i) d.at(i, j, k) = float(rho);
  }
  return pc;
}

void centralAxis(const Volume<float>& dose, double surfaceYMm, std::vector<double>& depthMm,
                 std::vector<double>& value) {
  const Grid& g = dose.grid;
  const int ic = g.dims[0] / 2, kc = g.dims[2] / 2;
  depthMm.clear();
  value.clear();
  for (int j = 0; j < g.dims[1]; ++j) {
    depthMm.push_back(g.indexToWorld(Vec3{double(ic), double(j), double(kc)}).y - surfaceYMm);
    value.push_back(double(dose.at(ic, j, kc)));
  }
}

double interpolate(const std::vector<double>& x, const std::vector<double>& y, double x0) {
  PENUMBRA_REQUIRE(!x.empty() && x.size() == y.size(), InvalidArgument,
                   "interpolate: need equally long, non-empty samples");
  if (x0 <= x.front()) return y.front();
  if (x0 >= x.back()) return y.back();
  const std::size_t i = std::size_t(std::upper_bound(x.begin(), x.end(), x0) - x.begin());
  const double t = (x0 - x[i - 1]) / (x[i] - x[i - 1]);
  return y[i - 1] + t * (y[i] - y[i - 1]);
}

}  // namespace penumbra::photon
