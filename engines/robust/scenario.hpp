#pragma once
/// Error scenarios of a proton plan (issue 16, item 1): range errors as a relative scaling of
/// the stopping-power ratio, setup errors as rigid shifts of every beam's isocentre, and their
/// combinations. Every scenario is computed by the nominal engine path on a changed request
/// (applyScenario), so a shift scenario's dose IS the nominal dose of the plan with its
/// isocentres moved, bit for bit, and a range scenario's dose is the nominal dose on a scaled
/// SPR volume.
///
/// Conventions (those of matRad's scenario model, so numbers compare):
///  - rangeErrorPercent r scales every SPR by (1 + r / 100): r = +3.5 makes the patient 3.5 %
///    denser, so water-equivalent depths grow 3.5 % and every Bragg peak moves proximally
///    (undershoot: R80 in water shrinks by the factor 1 / 1.035);
///  - shiftMm s moves every beam's isocentre by s in patient LPS mm (the patient sits -s from
///    where the plan assumed it).
/// Default set (makeScenarios with default options): 3 range values {-r, 0, +r} x 7 setup
/// shifts {0, +-s along L, P, S}: 21 scenarios, the nominal first.
#include <string>
#include <vector>

#include "core/vec3.hpp"
#include "proton/proton_dose.hpp"
#include "robust/scenario_options.hpp"  // ScenarioOptions and its limits

namespace penumbra::robust {

struct Scenario {
  std::string name;              ///< "nominal", "range +3.5%", "shift +3 mm S", "range -3.5% shift -3 mm L"
  double rangeErrorPercent = 0;  ///< SPR scaled by (1 + rangeErrorPercent / 100)
  Vec3 shiftMm;                  ///< isocentre shift, patient LPS [mm]
  bool isNominal() const { return rangeErrorPercent == 0 && shiftMm.x == 0 && shiftMm.y == 0 && shiftMm.z == 0; }
};

/// The scenario set of `options`, the nominal first (names unique). Throws InvalidArgument for a
/// negative or non-finite magnitude, rangePercent >= kMaxRangeErrorPercent, setupMm >
/// kMaxSetupErrorMm or sphereDirections > kMaxSphereDirections.
std::vector<Scenario> makeScenarios(const ScenarioOptions& options = {});

/// The request whose nominal dose is `s`'s dose of `nominal`: isocentres moved by s.shiftMm,
/// and for a range error an SPR volume scaled by (1 + r / 100) (from nominal.spr, or from
/// nominal.ct through its HU -> SPR table). A scenario with r == 0 keeps nominal.spr / ct (the
/// same shared_ptr, so the engine's GPU cache keeps the volume); callers evaluating many
/// scenarios pass `scaledSpr` to reuse one scaled volume per range value.
proton::ProtonDoseRequest applyScenario(
    const proton::ProtonDoseRequest& nominal, const Scenario& s,
    std::shared_ptr<const Volume<float>> scaledSpr = nullptr);

/// The SPR of `nominal` (its spr, or its ct converted) scaled by (1 + rangeErrorPercent / 100).
std::shared_ptr<const Volume<float>> scaledStoppingPower(const proton::ProtonDoseRequest& nominal,
                                                        double rangeErrorPercent);

}  // namespace penumbra::robust
