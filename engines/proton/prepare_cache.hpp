#pragma once
/// Per-process caches of the host preparation that computeProtonDose() repeats on every call
/// (both backends): a beam's BEV layout and tile lists, and the default HU -> SPR curve.
///
/// Why: in an interactive session most edits keep a beam's geometry and spots and change only
/// weights (or change another beam). The layout (BEV grid, one pass over the spots to count
/// the tile lists) and the tile lists (another pass and a sort) cost 0.19 + 0.31 ms of CPU per
/// hn-2field beam on the development machine, and computeProtonDose() made the layout twice
/// (memory estimate, then preparation). With the cache a beam is laid out once and its tile
/// lists built once per geometry; a weights-only edit copies them and takes the new weights.
///
/// The CUDA dose backend builds the tile lists on the GPU (TileLists::OnDevice): for it a
/// geometry edit costs the layout only (a few microseconds with the lists' length bounded).
///
/// Key: everything the layout and tile lists depend on - the machine (its owner: a machine is
/// immutable once shared as const, as the engine's volumes are), the dose grid, the BEV
/// sampling, the beam's gantry, couch, isocentre and source distance, and every layer's energy
/// and spot positions - compared bit for bit. Spot weights and names are not part of it. The
/// cache holds the last kBeamCacheEntries beams (least recently used goes first); entries of a
/// freed machine never match again. Thread-safe.
#include <cstddef>
#include <memory>

#include "core/calibration.hpp"
#include "core/grid.hpp"
#include "proton/bev_grid.hpp"

namespace penumbra::proton::detail {

/// Beams kept: the fields of a few plans (a beam holds ~0.3 MB of tile lists for hn-2field).
inline constexpr std::size_t kBeamCacheEntries = 16;

/// layoutBeam(), from the cache when the beam's key is there.
BeamLayout cachedLayoutBeam(const ProtonBeam& beam, const Grid& doseGrid,
                            const std::shared_ptr<const ProtonMachine>& machine,
                            const BevSampling& sampling);

/// prepareBeam() with this beam's weights, firstGlobalSpot and `lists`; the layout and tile
/// lists come from the cache when the beam's key is there (*reused = true; a beam cached
/// without lists does not serve a call that wants them). Bit for bit what prepareBeam()
/// returns, but for tileListsId, which is the cached build's.
PreparedBeam cachedPrepareBeam(const ProtonBeam& beam, const Grid& doseGrid,
                               const std::shared_ptr<const ProtonMachine>& machine,
                               const BevSampling& sampling, std::size_t firstGlobalSpot,
                               bool* reused = nullptr, TileLists lists = TileLists::OnHost);

/// Empties the beam cache (tests, and the benchmark's cold runs).
void clearBeamCache();
/// Beams in the cache (tests).
std::size_t beamCacheSize();

/// resources/calibration/hu_to_spr_matrad_default.csv, read once per process (the file was
/// read and parsed on every CT dose before).
const CalibrationCurve& defaultHuToSprCurve();

/// True when two grids are equal bit for bit (dims, spacing, origin, direction).
bool identicalGrid(const Grid& a, const Grid& b);

}  // namespace penumbra::proton::detail
