#pragma once
/// Proton pencil-beam-scanning plan as the dose engine sees it: beams (IEC 61217 gantry and
/// couch angles, isocentre, virtual source distance), their energy layers and spots.
///
/// Spot weights are in units of kProtonsPerWeightUnit = 1e9 protons: a spot of weight 1 delivers
/// 10^9 protons, and the engine's dose is in Gy for the weights given (so "Gy per unit weight" is
/// the dose of 10^9 protons). For scale: 10^9 protons of 100 MeV in a 5 mm sigma spot give
/// ~0.5 Gy on the axis in the plateau.
#include <cstddef>
#include <string>
#include <vector>

#include "core/vec3.hpp"

namespace penumbra::proton {

/// Protons per unit spot weight.
inline constexpr double kProtonsPerWeightUnit = 1e9;
/// Largest spot weight the engine and case files accept: 1e6 units = 10^15 protons, a thousand
/// times a whole treatment course (~10^11-10^12 protons). Larger weights are input errors, and
/// near 1e38 they overflow the single-precision dose to infinity.
inline constexpr double kMaxSpotWeight = 1e6;
/// Virtual source-axis distances accepted [mm]: 500 mm (closer puts the source into a patient
/// at the isocentre) to 100 m (scanning magnets sit 2-3 m upstream; 10^4-10^5 mm is how
/// matRad-style plans spell "parallel").
inline constexpr double kMinVirtualSourceDistanceMm = 500;
inline constexpr double kMaxVirtualSourceDistanceMm = 1e5;
/// 1 MeV/g in Gy (J/kg): 1.602176634e-13 J / 1e-3 kg.
inline constexpr double kGyPerMeVPerGram = 1.602176634e-10;

/// One scanned spot.
struct ProtonSpot {
  double x = 0;       ///< mm at the isocentre plane, along IEC beam-limiting-device X (u axis)
  double y = 0;       ///< mm at the isocentre plane, along IEC beam-limiting-device Y (v axis)
  double weight = 1;  ///< units of kProtonsPerWeightUnit protons, in [0, kMaxSpotWeight]
};

/// One energy layer: all its spots share the nominal energy.
struct EnergyLayer {
  double energyMeV = 0;  ///< nominal kinetic energy at the nozzle [MeV]
  std::vector<ProtonSpot> spots;
};

/// One treatment field. Patient position is head-first supine (see core/beam_geometry.hpp).
struct ProtonBeam {
  std::string name;
  double gantryDeg = 0;                   ///< IEC 61217 gantry angle [deg]
  double couchDeg = 0;                    ///< IEC 61217 patient-support angle [deg]
  Vec3 isocenter;                         ///< patient LPS [mm]
  /// Virtual source to isocentre [mm] (SAD), in [kMinVirtualSourceDistanceMm,
  /// kMaxVirtualSourceDistanceMm].
  double virtualSourceDistanceMm = 2000;
  std::vector<EnergyLayer> layers;

  std::size_t spotCount() const {
    std::size_t n = 0;
    for (const auto& l : layers) n += l.spots.size();
    return n;
  }
};

/// Total spots of a plan; the dose-deposition matrix numbers its columns in this order (beam,
/// then layer, then spot).
inline std::size_t totalSpotCount(const std::vector<ProtonBeam>& beams) {
  std::size_t n = 0;
  for (const auto& b : beams) n += b.spotCount();
  return n;
}

}  // namespace penumbra::proton
