#include "proton/spot_generation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "proton/physics/bragg_kleeman.hpp"
#include "proton/proton_tables.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::proton {

const char* toString(SpotGridPattern p) {
  return p == SpotGridPattern::Square ? "square" : "hexagonal";
}
const char* toString(SpotWeighting w) {
  return w == SpotWeighting::Uniform ? "uniform" : "depth";
}

Vec3 targetCentroid(const Mask& mask) {
  mask.validate();
  const Grid& g = mask.grid;
  double si = 0, sj = 0, sk = 0;
  std::size_t n = 0;
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = 0; i < g.dims[0]; ++i)
        if (mask.at(i, j, k)) {
          si += i, sj += j, sk += k;
          ++n;
        }
  PENUMBRA_REQUIRE(n > 0, InvalidArgument, "target centroid: the target mask is empty");
  // Mean index, then one conversion: exact for any direction matrix (the map is affine).
  return g.indexToWorld(Vec3{si / double(n), sj / double(n), sk / double(n)});
}

Volume<float> stoppingPowerRatio(const CtVolume& ct, const CalibrationCurve& hlut) {
  ct.validate();
  const CalibrationCurve curve =
      hlut.points().empty()
          ? CalibrationCurve::load(resourceDir() + "/calibration/hu_to_spr_matrad_default.csv")
          : hlut;
  // CT values are int16: a 65536-entry table makes the conversion one lookup per voxel.
  std::vector<float> lut(65536);
  for (int hu = -32768; hu <= 32767; ++hu) lut[std::size_t(hu + 32768)] = float(curve(double(hu)));
  Volume<float> spr(ct.grid);
  for (std::size_t v = 0; v < spr.data.size(); ++v)
    spr.data[v] = lut[std::size_t(int(ct.data[v]) + 32768)];
  return spr;
}

BevTargetProjection projectTarget(const Volume<float>& spr, const Mask& target,
                                  const BeamPlacement& placement, double raySpacingMm,
                                  const JobControl& job) {
  spr.validate();
  target.validate();
  PENUMBRA_REQUIRE(spr.grid.sameGeometry(target.grid), InvalidArgument,
                   "spot generation: the target mask is not on the CT grid");
  PENUMBRA_REQUIRE(raySpacingMm >= 0 && std::isfinite(raySpacingMm), InvalidArgument,
                   "spot generation: ray spacing must be >= 0 mm");
  const Grid& g = spr.grid;
  BevTargetProjection p;
  p.frame = makeBeamFrame(placement.gantryDeg, placement.couchDeg, placement.isocenter,
                          placement.virtualSourceDistanceMm);
  const BeamFrame& f = p.frame;
  p.spacingMm = raySpacingMm > 0
                    ? raySpacingMm
                    : 0.5 * std::min({g.spacing.x, g.spacing.y, g.spacing.z});

  // BEV bounding box of the target voxels, widened by half a voxel diagonal (scaled to the
  // isocentre plane) so rays through the outer halves of edge voxels are included.
  const double halfDiag = 0.5 * norm(g.spacing);
  double aMin = 1e300, aMax = -1e300, bMin = 1e300, bMax = -1e300;
  std::size_t voxels = 0;
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = 0; i < g.dims[0]; ++i) {
        if (!target.at(i, j, k)) continue;
        double a, b, d;
        f.patientToBev(g.indexToWorld(Vec3{double(i), double(j), double(k)}), a, b, d);
        PENUMBRA_REQUIRE(d > halfDiag, InvalidArgument,
                         "spot generation: the target reaches the virtual source");
        const double r = halfDiag * f.sad / (d - halfDiag);
        aMin = std::min(aMin, a - r), aMax = std::max(aMax, a + r);
        bMin = std::min(bMin, b - r), bMax = std::max(bMax, b + r);
        ++voxels;
      }
  PENUMBRA_REQUIRE(voxels > 0, InvalidArgument, "spot generation: the target mask is empty");
  // Ray grid aligned to the isocentre (multiples of the spacing), so the spot grid, also
  // centred there, samples the same lattice for every beam.
  const double h = p.spacingMm;
  p.a0 = std::floor(aMin / h) * h;
  p.b0 = std::floor(bMin / h) * h;
  p.nA = int(std::ceil((aMax - p.a0) / h)) + 1;
  p.nB = int(std::ceil((bMax - p.b0) / h)) + 1;
  PENUMBRA_REQUIRE(double(p.nA) * double(p.nB) < 4e7, InvalidArgument,
                   "spot generation: target projection too large for the ray spacing");
  p.rays.assign(std::size_t(p.nA) * std::size_t(p.nB), {});

  parallelFor(std::size_t(p.nB), 0, job, [&](std::size_t ib, int) {
    for (int ia = 0; ia < p.nA; ++ia) {
      const double a = p.a0 + ia * h, b = p.b0 + double(ib) * h;
      const Ray ray{f.source, f.bevToPatient(a, b, f.sad) - f.source};
      double wepl = 0;
      auto& out = p.rays[ib * std::size_t(p.nA) + std::size_t(ia)];
      for (const VoxelSegment& s : traceRay(g, ray, DdaVariant::BranchFree)) {
        const double w0 = wepl;
        wepl += s.lengthMm * double(spr.at(s.i, s.j, s.k));
        if (!target.at(s.i, s.j, s.k)) continue;
        if (!out.empty() && out.back().exitMm == w0)
          out.back().exitMm = wepl;  // contiguous target voxels: one interval
        else
          out.push_back({w0, wepl});
      }
    }
  });
  p.minWeplMm = std::numeric_limits<double>::infinity();
  p.maxWeplMm = -std::numeric_limits<double>::infinity();
  for (const auto& r : p.rays) {
    if (r.empty()) continue;
    ++p.hitRays;
    p.minWeplMm = std::min(p.minWeplMm, r.front().entryMm);
    p.maxWeplMm = std::max(p.maxWeplMm, r.back().exitMm);
  }
  PENUMBRA_REQUIRE(p.hitRays > 0, InvalidArgument,
                   "spot generation: no ray from the source reaches the target");
  return p;
}

namespace {

/// Range spread sigma [mm] at a CSDA range [mm]: straggling (Bortfeld 1997, eq. 17:
/// 0.012 R^0.935, R in cm) and the machine's energy spread through dR/dE, in quadrature.
double rangeSpreadSigmaMm(double rangeMm, const ProtonMachine& machine) {
  const BeamModel& bm = machine.beamModel();
  const double e = std::clamp(energyForRange(rangeMm / 10.0), bm.minEnergyMeV(), bm.maxEnergyMeV());
  const double straggle = 0.012 * std::pow(rangeMm / 10.0, 0.935);
  const double spread = rangeDerivativeCmPerMeV(e) * bm.energySpreadMeV(e);
  return 10.0 * std::sqrt(straggle * straggle + spread * spread);
}

/// Spot grid node (i, j) at the isocentre plane [mm].
void spotPosition(SpotGridPattern pattern, double s, int i, int j, double& a, double& b) {
  if (pattern == SpotGridPattern::Square) {
    a = i * s, b = j * s;
  } else {
    a = (i + ((j & 1) ? 0.5 : 0.0)) * s;
    b = j * s * std::sqrt(3.0) / 2.0;
  }
}

}  // namespace

SpotGenerationResult generateSpots(const Volume<float>& spr, const Mask& target,
                                   const BeamPlacement& placement,
                                   const SpotGenerationOptions& o, const ProtonMachine* machine,
                                   const JobControl& job) {
  auto finite = [](double v) { return std::isfinite(v); };
  PENUMBRA_REQUIRE(finite(o.spotSpacingMm) && o.spotSpacingMm > 0, InvalidArgument,
                   "spot generation: spot spacing must be > 0 mm");
  PENUMBRA_REQUIRE(finite(o.layerSpacingMm) && o.layerSpacingMm >= 0, InvalidArgument,
                   "spot generation: layer spacing must be >= 0 mm (0: derived)");
  PENUMBRA_REQUIRE(finite(o.lateralMarginMm) && o.lateralMarginMm >= 0 &&
                       finite(o.proximalMarginMm) && o.proximalMarginMm >= 0 &&
                       finite(o.distalMarginMm) && o.distalMarginMm >= 0,
                   InvalidArgument, "spot generation: margins must be >= 0 mm");
  PENUMBRA_REQUIRE(finite(o.depthWeightExponent) && o.depthWeightExponent >= 0, InvalidArgument,
                   "spot generation: depth-weight exponent must be >= 0");
  std::shared_ptr<const ProtonMachine> generic;
  if (!machine) machine = (generic = ProtonMachine::generic()).get();
  const BeamModel& bm = machine->beamModel();

  SpotGenerationResult res;
  res.projection = projectTarget(spr, target, placement, o.raySpacingMm, job);
  const BevTargetProjection& p = res.projection;
  ProtonBeam& beam = res.beam;
  beam.name = placement.name;
  beam.gantryDeg = placement.gantryDeg;
  beam.couchDeg = placement.couchDeg;
  beam.isocenter = placement.isocenter;
  beam.virtualSourceDistanceMm = placement.virtualSourceDistanceMm;

  // ---- energy layers: distal first, evenly spaced in range ----------------------------------
  const double rMax = p.maxWeplMm + o.distalMarginMm;
  const double rMin = std::max(0.0, p.minWeplMm - o.proximalMarginMm);
  const double s = o.layerSpacingMm > 0
                       ? o.layerSpacingMm
                       : std::clamp(2.0 * rangeSpreadSigmaMm(rMax, *machine), 1.0, 10.0);
  const int nLayers = std::max(1, int(std::ceil((rMax - rMin) / s - 1e-9)) + 1);
  res.layerSpacingUsedMm = nLayers > 1 ? (rMax - rMin) / double(nLayers - 1) : s;
  const double eLo = bm.minEnergyMeV(), eHi = bm.maxEnergyMeV();

  // ---- lateral grid bounds (spot indices) over the projection + margin ----------------------
  const double sp = o.spotSpacingMm;
  const double rowPitch = o.pattern == SpotGridPattern::Square ? sp : sp * std::sqrt(3.0) / 2.0;
  const double reach = o.lateralMarginMm + 0.5 * p.spacingMm;  // half a ray: sampling tolerance
  const double aLo = p.a0 - reach, aHi = p.a0 + (p.nA - 1) * p.spacingMm + reach;
  const double bLo = p.b0 - reach, bHi = p.b0 + (p.nB - 1) * p.spacingMm + reach;
  const int jLo = int(std::floor(bLo / rowPitch)), jHi = int(std::ceil(bHi / rowPitch));
  const int iLo = int(std::floor(aLo / sp)) - 1, iHi = int(std::ceil(aHi / sp)) + 1;
  const int win = int(std::ceil(reach / p.spacingMm));

  std::vector<std::uint8_t> active(p.rays.size());
  int clampedLow = 0, clampedHigh = 0, emptyLayers = 0;
  for (int l = 0; l < nLayers; ++l) {
    const double r = nLayers > 1 ? rMax - l * res.layerSpacingUsedMm : rMax;
    double e = energyForRange(std::max(r, 0.1) / 10.0);
    if (e < eLo) e = eLo, ++clampedLow;
    if (e > eHi) e = eHi, ++clampedHigh;
    // Rays whose target passage (widened by the WEPL margins) overlaps this layer's slab.
    const double half = 0.5 * res.layerSpacingUsedMm;
    bool any = false;
    for (std::size_t ray = 0; ray < p.rays.size(); ++ray) {
      active[ray] = 0;
      for (const WeplInterval& iv : p.rays[ray])
        if (iv.entryMm - o.proximalMarginMm <= r + half && iv.exitMm + o.distalMarginMm >= r - half) {
          active[ray] = 1;
          any = true;
          break;
        }
    }
    EnergyLayer layer;
    layer.energyMeV = e;
    for (int j = jLo; j <= jHi && any; ++j) {
      // Serpentine order (alternate rows reversed): the scan path a delivery system would run.
      const bool reverse = ((j - jLo) & 1) != 0;
      for (int n = 0; n <= iHi - iLo; ++n) {
        const int i = reverse ? iHi - n : iLo + n;
        double a, b;
        spotPosition(o.pattern, sp, i, j, a, b);
        const int ca = int(std::lround((a - p.a0) / p.spacingMm));
        const int cb = int(std::lround((b - p.b0) / p.spacingMm));
        bool keep = false;
        for (int ib = std::max(0, cb - win); ib <= std::min(p.nB - 1, cb + win) && !keep; ++ib)
          for (int ia = std::max(0, ca - win); ia <= std::min(p.nA - 1, ca + win) && !keep; ++ia) {
            if (!active[std::size_t(ib) * std::size_t(p.nA) + std::size_t(ia)]) continue;
            const double da = p.a0 + ia * p.spacingMm - a, db = p.b0 + ib * p.spacingMm - b;
            keep = da * da + db * db <= reach * reach;
          }
        if (keep) layer.spots.push_back({a, b, 1.0});
      }
    }
    if (layer.spots.empty()) {  // a gap in depth (a target in two parts along the beam)
      ++emptyLayers;
      continue;
    }
    // Clamped energies repeat: merge such layers (union of spot positions) instead of
    // delivering the same energy twice.
    if (!beam.layers.empty() && beam.layers.back().energyMeV == e) {
      auto& prev = beam.layers.back().spots;
      for (const ProtonSpot& sp2 : layer.spots) {
        const bool dup = std::any_of(prev.begin(), prev.end(), [&](const ProtonSpot& q) {
          return std::abs(q.x - sp2.x) < 1e-9 && std::abs(q.y - sp2.y) < 1e-9;
        });
        if (!dup) prev.push_back(sp2);
      }
      continue;
    }
    beam.layers.push_back(std::move(layer));
    res.layerRangesMm.push_back(r);
  }
  char buf[256];
  if (clampedLow > 0) {
    std::snprintf(buf, sizeof buf,
                  "%d layer(s) need less than the machine's lowest energy %.1f MeV (range %.1f "
                  "mm): clamped and merged; the proximal target edge at %.1f mm WEPL needs a range "
                  "shifter",
                  clampedLow, eLo, 10.0 * rangeCm(eLo), p.minWeplMm);
    res.messages.push_back(buf);
  }
  if (clampedHigh > 0) {
    std::snprintf(buf, sizeof buf,
                  "%d layer(s) need more than the machine's highest energy %.1f MeV (range %.1f "
                  "mm): clamped; the distal target edge at %.1f mm WEPL is out of reach",
                  clampedHigh, eHi, 10.0 * rangeCm(eHi), p.maxWeplMm);
    res.messages.push_back(buf);
  }
  if (emptyLayers > 0)
    res.messages.push_back(std::to_string(emptyLayers) +
                           " layer(s) reach no target voxel and were left out");
  applyWeighting(beam, o.weighting, o.depthWeightExponent);
  return res;
}

SpotGenerationResult generateSpots(const CtVolume& ct, const CalibrationCurve& hlut,
                                   const Mask& target, const BeamPlacement& placement,
                                   const SpotGenerationOptions& options,
                                   const ProtonMachine* machine, const JobControl& job) {
  return generateSpots(stoppingPowerRatio(ct, hlut), target, placement, options, machine, job);
}

void applyWeighting(ProtonBeam& beam, SpotWeighting weighting, double exponent) {
  double rMax = 0;
  for (const auto& l : beam.layers) rMax = std::max(rMax, rangeCm(l.energyMeV));
  for (auto& l : beam.layers) {
    const double w = weighting == SpotWeighting::Uniform
                         ? 1.0
                         : std::pow(rangeCm(l.energyMeV) / rMax, exponent);
    for (auto& s : l.spots) s.weight = w;
  }
}

void removeLayer(ProtonBeam& beam, std::size_t layerIndex) {
  PENUMBRA_REQUIRE(layerIndex < beam.layers.size(), InvalidArgument,
                   "remove layer: index " + std::to_string(layerIndex) + " out of range (beam '" +
                       beam.name + "' has " + std::to_string(beam.layers.size()) + " layers)");
  beam.layers.erase(beam.layers.begin() + std::ptrdiff_t(layerIndex));
}

void removeSpot(ProtonBeam& beam, std::size_t layerIndex, std::size_t spotIndex) {
  PENUMBRA_REQUIRE(layerIndex < beam.layers.size(), InvalidArgument,
                   "remove spot: layer " + std::to_string(layerIndex) + " out of range");
  auto& spots = beam.layers[layerIndex].spots;
  PENUMBRA_REQUIRE(spotIndex < spots.size(), InvalidArgument,
                   "remove spot: spot " + std::to_string(spotIndex) + " out of range (layer has " +
                       std::to_string(spots.size()) + ")");
  spots.erase(spots.begin() + std::ptrdiff_t(spotIndex));
  if (spots.empty()) removeLayer(beam, layerIndex);
}

}  // namespace penumbra::proton
