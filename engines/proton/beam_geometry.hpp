#pragma once
/// The IEC 61217 frame of a proton beam. The frame itself (BeamFrame, makeBeamFrame from the
/// angles, iecFixedToLps) is shared by every engine and lives in core/beam_geometry.hpp; the
/// using-declarations keep proton::BeamFrame and proton::makeBeamFrame naming it, and let the
/// ProtonBeam overload below sit beside the core one in namespace proton.
#include "core/beam_geometry.hpp"
#include "proton/proton_plan.hpp"

namespace penumbra::proton {

using penumbra::BeamFrame;
using penumbra::iecFixedToLps;
using penumbra::makeBeamFrame;

/// Frame of a proton beam from its gantry/couch angles, isocentre and virtual source distance.
inline BeamFrame makeBeamFrame(const ProtonBeam& beam) {
  return makeBeamFrame(beam.gantryDeg, beam.couchDeg, beam.isocenter,
                       beam.virtualSourceDistanceMm);
}

}  // namespace penumbra::proton
