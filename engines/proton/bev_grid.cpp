#include "proton/bev_grid.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "proton/tile_hits.hpp"

namespace penumbra::proton {

namespace {

constexpr double kPi = 3.14159265358979323846;

double smallestSpacing(const Grid& g) {
  return std::min({g.spacing.x, g.spacing.y, g.spacing.z});
}

/// Calls f(tile, layer, spot) for every tile a spot reaches (proton/tile_hits.hpp, the
/// definition the GPU build shares). Spots are visited layer by layer in beam order, so lists
/// come out sorted.
template <typename F>
void forEachTileHit(const ProtonBeam& beam, const BeamLayout& L, F&& f) {
  const pb::BevGeometry& g = L.bev;
  int spot = 0;
  for (std::size_t l = 0; l < beam.layers.size(); ++l) {
    const double R = L.cullRadiusIsoMm[l];
    const double R2 = R * R;
    for (const ProtonSpot& s : beam.layers[l].spots) {
      const pb::SpotRays box = pb::spotRays(s.x, s.y, R, g);
      for (int tb = box.jLo / pb::kTile; box.iLo <= box.iHi && tb <= box.jHi / pb::kTile; ++tb)
        for (int ta = box.iLo / pb::kTile; ta <= box.iHi / pb::kTile; ++ta)
          if (pb::discMeetsTile(s.x, s.y, R2, g, ta, tb)) f(tb * L.tilesA + ta, int(l), spot);
      ++spot;
    }
  }
}

/// Tiles one spot of cull radius R can reach, at most (see layoutBeam). The half ray of slack
/// covers the rounding of R / da; the bound is a count, so slack costs nothing but bytes.
std::size_t tileBoundPerSpot(const BeamLayout& L, double R) {
  const pb::BevGeometry& g = L.bev;
  const auto perAxis = [&](double spacing, int tiles) {
    const double span = std::floor((2.0 * R / spacing + 1.5) / pb::kTile) + 2.0;
    return std::size_t(std::min(span, double(tiles)));
  };
  return perAxis(g.da, L.tilesA) * perAxis(g.db, L.tilesB);
}

}  // namespace

double gaussianNormalisation(double c) {
  const double k = kProtonsPerWeightUnit * kGyPerMeVPerGram * 100.0;
  return k / (2.0 * kPi * (1.0 - std::exp(-0.5 * c * c)));
}

BeamLayout layoutBeam(const ProtonBeam& beam, const Grid& doseGrid, const ProtonMachine& machine,
                      const BevSampling& sampling) {
  const BeamModel& model = machine.beamModel();
  PENUMBRA_REQUIRE(sampling.cutoffSigmas >= 1 && sampling.cutoffSigmas <= 10, InvalidArgument,
                   "kernel cut-off must be between 1 and 10 sigma");
  BeamLayout L;
  L.frame = makeBeamFrame(beam);
  const BeamFrame& F = L.frame;
  const double da = sampling.lateralSpacingMm > 0 ? sampling.lateralSpacingMm
                                                  : smallestSpacing(doseGrid);
  const double dd = sampling.depthStepMm > 0 ? sampling.depthStepMm : smallestSpacing(doseGrid);
  PENUMBRA_REQUIRE(std::isfinite(da) && std::isfinite(dd) && da > 0 && dd > 0, InvalidArgument,
                   "BEV spacing must be positive");

  // Depth range and lateral reach of the dose grid's box (centres +- half a voxel): the
  // perspective image of a box is the hull of its corners' images.
  double dMin = std::numeric_limits<double>::infinity(), dMax = -dMin;
  double aLo = dMin, aHi = -dMin, bLo = dMin, bHi = -dMin;
  for (int c = 0; c < 8; ++c) {
    const Vec3 idx{(c & 1) ? doseGrid.dims[0] - 0.5 : -0.5, (c & 2) ? doseGrid.dims[1] - 0.5 : -0.5,
                   (c & 4) ? doseGrid.dims[2] - 0.5 : -0.5};
    const Vec3 p = doseGrid.indexToWorld(idx);
    double a, b, d;
    F.patientToBev(p, a, b, d);
    PENUMBRA_REQUIRE(d > 0.01 * F.sad, InvalidArgument,
                     "beam '" + beam.name + "': the dose grid reaches its virtual source");
    dMin = std::min(dMin, d);
    dMax = std::max(dMax, d);
    aLo = std::min(aLo, a); aHi = std::max(aHi, a);
    bLo = std::min(bLo, b); bHi = std::max(bHi, b);
  }

  // Spots' reach: c sigma_max per layer (sigma_MCS grows with depth and is largest at the end
  // of range), at the iso plane seen from the nearest plane.
  double sLoA = std::numeric_limits<double>::infinity(), sHiA = -sLoA, sLoB = sLoA, sHiB = -sLoA;
  double reachMax = 0;
  bool anySpot = false;
  for (const EnergyLayer& layer : beam.layers) {
    const double e = layer.energyMeV;
    PENUMBRA_REQUIRE(e >= model.minEnergyMeV() && e <= model.maxEnergyMeV(), InvalidArgument,
                     "beam '" + beam.name + "': energy " + std::to_string(e) +
                         " MeV is outside the beam model");
    const double sig = machine.maxSigmaMm(e);
    const double reach = sampling.cutoffSigmas * sig * F.sad / dMin;
    L.cullRadiusIsoMm.push_back(reach);
    for (const ProtonSpot& s : layer.spots) {
      PENUMBRA_REQUIRE(std::isfinite(s.x) && std::isfinite(s.y) && std::isfinite(s.weight) &&
                           s.weight >= 0,
                       InvalidArgument, "beam '" + beam.name + "': spot with invalid position or weight");
      anySpot = true;
      reachMax = std::max(reachMax, reach);
      sLoA = std::min(sLoA, s.x - reach); sHiA = std::max(sHiA, s.x + reach);
      sLoB = std::min(sLoB, s.y - reach); sHiB = std::max(sHiB, s.y + reach);
    }
  }
  // One extra ray on each side so interpolation at the footprint's edge sees the zero.
  aLo = std::max(aLo, sLoA) - da; aHi = std::min(aHi, sHiA) + da;
  bLo = std::max(bLo, sLoB) - da; bHi = std::min(bHi, sHiB) + da;
  if (!anySpot || !(aLo < aHi) || !(bLo < bHi)) return L;  // empty

  pb::BevGeometry& g = L.bev;
  for (int a = 0; a < 3; ++a) {
    g.source[a] = F.source[a];
    g.u[a] = F.u[a];
    g.v[a] = F.v[a];
    g.w[a] = F.w[a];
  }
  g.sad = F.sad;
  const double nA = std::ceil((aHi - aLo) / da) + 1, nB = std::ceil((bHi - bLo) / da) + 1;
  const double nD = std::ceil((dMax - dMin) / dd) + 1;
  PENUMBRA_REQUIRE(nA * nB * nD < 9e15, InvalidArgument, "BEV grid is absurdly large");
  PENUMBRA_REQUIRE(nA < 2e9 && nB < 2e9 && nD < 2e9, OutOfMemory,
                   "BEV grid of beam '" + beam.name + "' has more than 2^31 samples per axis");
  g.nA = int(nA);
  g.nB = int(nB);
  g.nD = int(nD);
  g.a0 = aLo;
  g.b0 = bLo;
  g.da = da;
  g.db = da;
  g.d0 = dMin;
  g.dd = dd;
  L.empty = false;
  L.tilesA = (g.nA + pb::kTile - 1) / pb::kTile;
  L.tilesB = (g.nB + pb::kTile - 1) / pb::kTile;
  // The lists' length bounded per layer, at O(1) a layer: a spot's ray box spans at most
  // 2R/da + 1 rays a side (tile_hits.hpp), which touch at most floor(span / kTile) + 2 tiles.
  // The exact count (the disc test on every tile of every box) took 0.19 ms a beam for
  // hn-2field on the development machine, before any GPU work of an isocentre edit; the memory
  // estimate and the GPU build's buffer need only a bound (1-2.4x the lists in tests/proton).
  for (std::size_t l = 0; l < beam.layers.size(); ++l)
    L.tileListBound += beam.layers[l].spots.size() * tileBoundPerSpot(L, L.cullRadiusIsoMm[l]);
  return L;
}

PreparedBeam prepareBeam(const ProtonBeam& beam, const Grid& doseGrid, const ProtonMachine& machine,
                         const BevSampling& sampling, std::size_t firstGlobalSpot,
                         TileLists lists) {
  return prepareBeam(beam, layoutBeam(beam, doseGrid, machine, sampling), machine, firstGlobalSpot,
                     lists);
}

PreparedBeam prepareBeam(const ProtonBeam& beam, BeamLayout layout, const ProtonMachine& machine,
                         std::size_t firstGlobalSpot, TileLists lists) {
  PreparedBeam P;
  P.layout = std::move(layout);
  // The GPU build allocates the bound; 2^31 keeps every offset an int on both sides.
  PENUMBRA_REQUIRE(P.layout.tileListBound < std::size_t(1) << 31, OutOfMemory,
                   "beam '" + beam.name + "': more than 2^31 spot-tile pairs");
  P.firstGlobalSpot = firstGlobalSpot;
  const std::size_t spots = beam.spotCount();
  P.spotA.reserve(spots);
  P.spotB.reserve(spots);
  P.spotW.reserve(spots);
  int spot = 0;
  for (const EnergyLayer& layer : beam.layers) {
    PreparedLayer pl;
    pl.spotBegin = spot;
    for (const ProtonSpot& s : layer.spots) {
      P.spotA.push_back(s.x);
      P.spotB.push_back(s.y);
      P.spotW.push_back(s.weight);
      ++spot;
    }
    pl.spotEnd = spot;
    if (!P.layout.empty) pl.table = machine.table(layer.energyMeV);
    P.layers.push_back(pl);
  }
  static std::atomic<std::uint64_t> lastTileListsId{0};
  P.tileListsId = ++lastTileListsId;
  if (P.layout.empty || lists == TileLists::OnDevice) return P;
  // One pass over the spots collects (cell, spot) pairs in spot order; a stable counting sort
  // by cell then gives every list in ascending spot order (the lists are the same as before).
  // It replaced a counting pass plus a filling pass: 0.41 -> 0.31 ms of thread CPU time per
  // hn-2field beam on the development machine (minimum of 40).
  const std::size_t nL = beam.layers.size();
  const std::size_t cells = P.layout.tileCount() * nL;
  std::vector<std::pair<int, int>> hits;
  hits.reserve(P.layout.tileListBound);
  forEachTileHit(beam, P.layout, [&](int t, int l, int s) {
    hits.emplace_back(int(std::size_t(t) * nL + std::size_t(l)), s);
  });
  PENUMBRA_REQUIRE(hits.size() <= P.layout.tileListBound, Internal,
                   "tile lists longer than their bound");
  P.tileLayerBegin.assign(cells + 1, 0);
  for (const auto& h : hits) ++P.tileLayerBegin[std::size_t(h.first) + 1];
  for (std::size_t c = 0; c < cells; ++c) P.tileLayerBegin[c + 1] += P.tileLayerBegin[c];
  P.tileSpots.resize(hits.size());
  std::vector<int> cursor(P.tileLayerBegin.begin(), P.tileLayerBegin.end() - 1);
  for (const auto& h : hits) P.tileSpots[std::size_t(cursor[std::size_t(h.first)]++)] = h.second;
  P.tileListsOnHost = true;
  return P;
}

}  // namespace penumbra::proton
