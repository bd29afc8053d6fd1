// Host caches of computeProtonDose() (prepare_cache.hpp): beam layouts and tile lists keyed by
// everything but the spot weights, and the default HU -> SPR curve.
#include "proton/prepare_cache.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <utility>
#include <vector>

#include "core/resource_dir.hpp"

namespace penumbra::proton::detail {

namespace {

/// Bit-for-bit equality of doubles: -0 and +0 differ, as they may in a result's bits.
bool same(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

bool sameSampling(const BevSampling& a, const BevSampling& b) {
  return same(a.lateralSpacingMm, b.lateralSpacingMm) && same(a.depthStepMm, b.depthStepMm) &&
         same(a.cutoffSigmas, b.cutoffSigmas);
}

/// Everything but weights and names: what the layout and the tile lists depend on.
bool sameGeometryAndSpots(const ProtonBeam& a, const ProtonBeam& b) {
  if (!same(a.gantryDeg, b.gantryDeg) || !same(a.couchDeg, b.couchDeg) ||
      !same(a.virtualSourceDistanceMm, b.virtualSourceDistanceMm) ||
      !same(a.isocenter.x, b.isocenter.x) || !same(a.isocenter.y, b.isocenter.y) ||
      !same(a.isocenter.z, b.isocenter.z) || a.layers.size() != b.layers.size())
    return false;
  for (std::size_t l = 0; l < a.layers.size(); ++l) {
    const EnergyLayer &la = a.layers[l], &lb = b.layers[l];
    if (!same(la.energyMeV, lb.energyMeV) || la.spots.size() != lb.spots.size()) return false;
    for (std::size_t s = 0; s < la.spots.size(); ++s)
      if (!same(la.spots[s].x, lb.spots[s].x) || !same(la.spots[s].y, lb.spots[s].y)) return false;
  }
  return true;
}

struct Entry {
  std::weak_ptr<const ProtonMachine> machine;
  ProtonBeam beam;  ///< the key's geometry and spots (its weights are those of the first call)
  Grid doseGrid;
  BevSampling sampling;
  BeamLayout layout;
  std::shared_ptr<const PreparedBeam> prepared;  ///< null until a call prepared the beam
  std::uint64_t lastUse = 0;
};

struct BeamCache {
  std::mutex mutex;
  std::vector<Entry> entries;
  std::uint64_t clock = 0;

  /// The entry of this key, or null. Call with the mutex held.
  Entry* find(const ProtonBeam& beam, const Grid& doseGrid,
              const std::shared_ptr<const ProtonMachine>& machine, const BevSampling& sampling) {
    for (Entry& e : entries) {
      if (e.machine.expired() || e.machine.owner_before(machine) || machine.owner_before(e.machine))
        continue;
      if (sameSampling(e.sampling, sampling) && identicalGrid(e.doseGrid, doseGrid) &&
          sameGeometryAndSpots(e.beam, beam)) {
        e.lastUse = ++clock;
        return &e;
      }
    }
    return nullptr;
  }

  /// Adds an entry for a key that is not there, dropping the least recently used (and those of
  /// freed machines) beyond kBeamCacheEntries. Call with the mutex held.
  Entry& insert(const ProtonBeam& beam, const Grid& doseGrid,
                const std::shared_ptr<const ProtonMachine>& machine, const BevSampling& sampling,
                BeamLayout layout) {
    entries.erase(std::remove_if(entries.begin(), entries.end(),
                                 [](const Entry& e) { return e.machine.expired(); }),
                  entries.end());
    if (entries.size() >= kBeamCacheEntries)
      entries.erase(std::min_element(entries.begin(), entries.end(),
                                     [](const Entry& a, const Entry& b) { return a.lastUse < b.lastUse; }));
    Entry e;
    e.machine = machine;
    e.beam = beam;
    e.doseGrid = doseGrid;
    e.sampling = sampling;
    e.layout = std::move(layout);
    e.lastUse = ++clock;
    entries.push_back(std::move(e));
    return entries.back();
  }
};

BeamCache& beamCache() {
  static BeamCache cache;
  return cache;
}

}  // namespace

bool identicalGrid(const Grid& a, const Grid& b) {
  if (a.dims != b.dims) return false;
  for (int i = 0; i < 3; ++i) {
    if (!same(a.spacing[i], b.spacing[i]) || !same(a.origin[i], b.origin[i])) return false;
    for (int j = 0; j < 3; ++j)
      if (!same(a.direction.m[i][j], b.direction.m[i][j])) return false;
  }
  return true;
}

BeamLayout cachedLayoutBeam(const ProtonBeam& beam, const Grid& doseGrid,
                            const std::shared_ptr<const ProtonMachine>& machine,
                            const BevSampling& sampling) {
  BeamCache& c = beamCache();
  {
    const std::lock_guard<std::mutex> lock(c.mutex);
    if (const Entry* e = c.find(beam, doseGrid, machine, sampling)) return e->layout;
  }
  // Outside the lock: layoutBeam() may take a while and may throw (nothing is cached then).
  BeamLayout layout = layoutBeam(beam, doseGrid, *machine, sampling);
  const std::lock_guard<std::mutex> lock(c.mutex);
  if (!c.find(beam, doseGrid, machine, sampling))  // another thread may have added it
    c.insert(beam, doseGrid, machine, sampling, layout);
  return layout;
}

PreparedBeam cachedPrepareBeam(const ProtonBeam& beam, const Grid& doseGrid,
                               const std::shared_ptr<const ProtonMachine>& machine,
                               const BevSampling& sampling, std::size_t firstGlobalSpot,
                               bool* reused, TileLists lists) {
  BeamCache& c = beamCache();
  std::shared_ptr<const PreparedBeam> prepared;
  BeamLayout layout;
  bool haveLayout = false;
  {
    const std::lock_guard<std::mutex> lock(c.mutex);
    if (const Entry* e = c.find(beam, doseGrid, machine, sampling)) {
      // A beam prepared without lists serves only calls that leave them to the GPU.
      if (e->prepared && (lists == TileLists::OnDevice || e->prepared->tileListsOnHost ||
                          e->prepared->layout.empty))
        prepared = e->prepared;
      if (!prepared) {
        layout = e->layout;
        haveLayout = true;
      }
    }
  }
  if (reused) *reused = bool(prepared);
  if (!prepared) {
    if (!haveLayout) layout = layoutBeam(beam, doseGrid, *machine, sampling);
    auto made = std::make_shared<const PreparedBeam>(
        prepareBeam(beam, std::move(layout), *machine, firstGlobalSpot, lists));
    const std::lock_guard<std::mutex> lock(c.mutex);
    Entry* e = c.find(beam, doseGrid, machine, sampling);
    if (!e) e = &c.insert(beam, doseGrid, machine, sampling, made->layout);
    e->prepared = made;
    prepared = std::move(made);
  }
  // The cached beam with this call's weights (prepareBeam() copies weights in beam order); its
  // lists only where they are wanted (a copy of hn-2field's is ~0.25 MB a beam).
  PreparedBeam P;
  P.layout = prepared->layout;
  P.layers = prepared->layers;
  P.spotA = prepared->spotA;
  P.spotB = prepared->spotB;
  P.tileListsId = prepared->tileListsId;
  if (lists == TileLists::OnHost && prepared->tileListsOnHost) {
    P.tileLayerBegin = prepared->tileLayerBegin;
    P.tileSpots = prepared->tileSpots;
    P.tileListsOnHost = true;
  }
  P.firstGlobalSpot = firstGlobalSpot;
  P.spotW.reserve(prepared->spotA.size());
  for (const EnergyLayer& layer : beam.layers)
    for (const ProtonSpot& s : layer.spots) P.spotW.push_back(s.weight);
  return P;
}

void clearBeamCache() {
  BeamCache& c = beamCache();
  std::vector<Entry> old;
  {
    const std::lock_guard<std::mutex> lock(c.mutex);
    old.swap(c.entries);
  }
}

std::size_t beamCacheSize() {
  BeamCache& c = beamCache();
  const std::lock_guard<std::mutex> lock(c.mutex);
  return c.entries.size();
}

const CalibrationCurve& defaultHuToSprCurve() {
  // A function-local static: initialised once, thread-safe; a failed load throws and is tried
  // again by the next call.
  static const CalibrationCurve curve =
      CalibrationCurve::load(resourceDir() + "/calibration/hu_to_spr_matrad_default.csv");
  return curve;
}

}  // namespace penumbra::proton::detail
