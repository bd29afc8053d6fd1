#pragma once
/// Case files: one JSON document that saves and restores a planning session (DESIGN.md section 4):
/// where the data is (DICOM folder, CT series, structure set), the prescription, the beams with
/// their energy layers and spots, the spot-generation options, the engine settings, the GUI's
/// display settings (opaque here), and the dose sets exported so far.
///
/// Built only when nlohmann_json is found (PENUMBRA_HAVE_CASE_FILES=1); this header itself does
/// not include it, so callers need no JSON library.
///
/// The document (version 1; every unit named once in "units"):
///   { "format": "penumbra-case", "version": 1, "units": "...",
///     "data": { "dicomFolder": "...", "seriesKey": "", "structureSetFile": "" },
///     "prescription": { "target": "PTV", "dosePerFraction": 2.0, "fractions": 30 },
///     "beams": [ { "name": "G0", "modality": "proton", "gantry": 0, "couch": 0,
///                  "isocenter": [x, y, z], "virtualSourceDistance": 2000,
///                  "layers": [ { "energy": 150.0, "spots": [[x, y, weight], ...] } ] },
///                { "name": "X G90", "modality": "photon", "gantry": 90, "couch": 0,
///                  "collimator": 0, "isocenter": [x, y, z], "sad": 1000,
///                  "jaws": [x1, x2, y1, y2], "monitorUnits": 100,
///                  "aperture": { "target": "PTV", "margin": 5,
///                                "polygons": [ [[u, v], ...], ... ] } } ],
///     "spotGeneration": { "spotSpacing": 5, "lateralMargin": 5, "layerSpacing": 3,
///                         "proximalMargin": 3, "distalMargin": 3, "pattern": "hexagonal",
///                         "weighting": "uniform", "depthWeightExponent": 3, "raySpacing": 0 },
///     "engine": { "backend": "auto", "variant": "dda-nc", "doseGridSpacing": 0,
///                 "photon": { "polarCones": 8, "azimuthalCones": 12, "deposit": "atomic-free" } },
///     "optimisation": {
///       "objectives": [ { "structure": "PTV", "role": "target",
///                         "terms": [ { "type": "uniform", "level": 2.0, "weight": 1 },
///                                    { "type": "min", "level": 1.94, "weight": 20 } ] },
///                       { "structure": "Cord", "role": "organ-at-risk",
///                         "terms": [ { "type": "max", "level": 1.0, "weight": 1 },
///                                    { "type": "mean", "weight": 0.5 } ] } ],
///       "options": { "matrixCutoff": 0.001, "maxIterations": 150,
///                    "robustMode": "composite-worst-case" } },
///     "robustness": { "rangeError": 3.5, "setupError": 3, "shiftPattern": "sphere",
///                     "sphereDirections": 26, "combine": true, "doseGridSpacing": 0 },
///     "display": { ... whatever the GUI stores ... },
///     "doseSets": [ { "name": "run 1", "file": "dose1.mhd" } ] }
/// Only "version", "data.dicomFolder" and "beams" are required; the other sections and fields
/// take the defaults of the structs below ("modality" defaults to "proton", so files written
/// before photon beams existed read unchanged; a photon beam's "aperture" is optional: without
/// it the jaws alone shape the field; without "optimisation" the GUI and the CLI build their
/// default objectives, as before objectives were saved). Objectives name their structure and
/// hold no voxels: those come from the structure's mask on the dose grid when the case is
/// loaded. Term types are "uniform", "min", "max" and "mean" (optimise/objective.hpp; "level"
/// may be left out of "mean" terms), roles "target" and "organ-at-risk". "robustMode" is "none"
/// (the nominal plan), "expected-value" or "composite-worst-case" (optimise/robust_mode.hpp);
/// absent: "none" (and "none" is not written). "robustness" holds the error scenarios of the robustness evaluation and of
/// robust optimisation (robust/scenario_options.hpp): range error [%] and setup error [mm] as
/// magnitudes, "shiftPattern" "axes" (+-L, +-P, +-S) or "sphere" (then "sphereDirections" is
/// required, and only then allowed), "combine" (every range error with every shift, or each
/// alone) and the evaluation's dose grid spacing [mm] (0: the plan's); the other keys may be
/// left out (the scenario model's defaults), and without the section the programs use their
/// defaults, as before it was saved. Unknown keys are errors (a misspelt key must not silently
/// fall back to a default), except inside "display", which is the GUI's.
///
/// Paths inside the file may be relative: they are relative to the case file's folder
/// (resolveCasePath), so a case travels with its data.
#include <optional>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "optimise/objective.hpp"
#include "optimise/robust_mode.hpp"
#include "photon/photon_dose.hpp"
#include "proton/proton_plan.hpp"
#include "proton/spot_generation.hpp"
#include "raytrace/dda_traversal.hpp"
#include "robust/scenario_options.hpp"

namespace penumbra::io {

/// The version this build writes and the only one it reads.
inline constexpr int kCaseFileVersion = 1;
/// Deepest nesting of arrays and objects a case file may have (the document object is level
/// 1). A case needs 7 (beams, layers, spots); the GUI's "display" section a few more. Deeper
/// documents are refused before parsing: 100 000 levels overflowed the stack (SIGSEGV).
inline constexpr int kMaxCaseNesting = 64;
/// Largest prescription dose per fraction [Gy] (single-fraction radiosurgery prescribes <= 30).
inline constexpr double kMaxDosePerFractionGy = 100;

struct CaseDataLocation {
  std::string dicomFolder;       ///< folder scanned for the CT and structure set
  std::string seriesKey;         ///< SeriesInfo::key of the CT; empty: the only CT series
  std::string structureSetFile;  ///< RT Structure Set file; empty: the one referencing the CT
};

struct CasePrescription {
  std::string target;             ///< structure name; empty: no prescription
  double dosePerFractionGy = 0;   ///< [Gy] (> 0 when target is set)
  int fractions = 0;              ///< (>= 1 when target is set)
};

/// The collapsed-cone engine's settings (photon::PhotonDoseParameters).
struct CasePhotonEngineSettings {
  int polarCones = 8;  ///< must divide 48
  int azimuthalCones = 12;
  photon::DepositStrategy deposit = photon::DepositStrategy::AtomicFree;
};

struct CaseEngineSettings {
  Backend backend = Backend::Auto;
  DdaVariant variant = DdaVariant::BranchFree;
  double doseGridSpacingMm = 0;  ///< isotropic dose grid spacing [mm]; 0: the CT grid
  CasePhotonEngineSettings photon;
};

/// A photon beam: the engine's beam (geometry, jaws, aperture polygons, MU) and the structure
/// its conformal aperture was grown from, so that a reopened case can regrow it when the
/// geometry changes. The polygons are kept as written either way.
struct CasePhotonBeam {
  photon::PhotonBeam beam;
  std::string apertureTarget;   ///< empty: open field (jaws), or polygons of unknown origin
  double apertureMarginMm = 0;  ///< [mm]
};

/// A computed dose kept with the case (file empty: not exported).
struct CaseDoseSet {
  std::string name;
  std::string file;  ///< exported dose (MetaImage or RT Dose); relative to the case folder
};

/// Largest objective dose level [Gy]. Levels are per-fraction doses like the prescription; ten
/// times kMaxDosePerFractionGy leaves room for any hot-spot limit while keeping (d - level)^2
/// far from overflow (a 1e300 Gy level made the objective infinite).
inline constexpr double kMaxObjectiveLevelGy = 10 * kMaxDosePerFractionGy;

/// One structure's optimisation objective as the user set it, by structure name: the voxels are
/// found again on the dose grid of the loaded case, so a case never carries voxel lists that a
/// changed dose grid or structure set would make stale. A name the loaded structure set lacks
/// is the loader's warning (the GUI and the CLI skip it), not a format error.
struct CaseObjective {
  std::string structure;  ///< non-empty; each structure at most once per case
  optimise::StructureRole role = optimise::StructureRole::Target;
  /// At least one; levels in [0, kMaxObjectiveLevelGy] Gy (unused by MeanDose), weights
  /// finite and >= 0.
  std::vector<optimise::ObjectiveTerm> terms;
};

/// The optimiser settings the GUI's Optimise panel exposes (gui::OptimiseSettings).
struct CaseOptimiserOptions {
  /// Dose-matrix entries below this fraction of their spot's maximum are dropped; [0, 1).
  double matrixCutoff = 1e-3;
  int maxIterations = 150;  ///< >= 1
  /// Robust optimisation over the case's scenarios (CaseFile::robustness); empty: the nominal
  /// plan only ("none").
  std::optional<optimise::RobustMode> robustMode;
};

struct CaseOptimisation {
  /// In the user's order; empty: none saved (defaults from the structure kinds and the
  /// prescription, as for cases written before objectives were saved).
  std::vector<CaseObjective> objectives;
  std::optional<CaseOptimiserOptions> options;  ///< absent: the program's own defaults
};

/// The error scenarios the user set (the GUI's Robustness panel; gui::RobustnessSettings),
/// used by the robustness evaluation and by robust optimisation.
struct CaseRobustness {
  /// rangePercent in [0, kMaxRangeErrorPercent) %, setupMm in [0, kMaxSetupErrorMm] mm,
  /// sphereDirections 0 (the axes) or 1 to kMaxSphereDirections (the sphere).
  robust::ScenarioOptions scenarios;
  /// Dose grid spacing of the evaluation [mm]; 0: the plan's dose grid, else within
  /// [kMinDoseGridSpacingMm, kMaxDoseGridSpacingMm].
  double doseGridSpacingMm = 0;
};

struct CaseFile {
  CaseDataLocation data;
  CasePrescription prescription;
  std::vector<proton::ProtonBeam> beams;  ///< modality "proton"
  /// Modality "photon". The document lists the proton beams first, then the photon beams (a
  /// plan that interleaves them reopens in that order).
  std::vector<CasePhotonBeam> photonBeams;
  proton::SpotGenerationOptions spotGeneration;
  CaseEngineSettings engine;
  /// The GUI's display settings as JSON object text (compact); "{}" when none. io keeps it
  /// opaque so that it does not depend on the GUI.
  std::string displayJson = "{}";
  std::vector<CaseDoseSet> doseSets;
  CaseOptimisation optimisation;
  std::optional<CaseRobustness> robustness;  ///< absent: the program's own defaults
};

/// Parses and validates a document. Throws Error(Format) whose message names the JSON path of
/// the first problem, e.g. "beams[1].layers[3].energy: expected a number", and
/// Error(Unsupported) for another format version. Values outside the engines' limits are errors
/// that name the path and the value ("beams[2].monitorUnits: 1e+308 MU is outside [0, 100000]"):
/// spot weights (proton::kMaxSpotWeight), virtual source distances, photon SAD and MU
/// (photon_dose.hpp), the dose grid spacing (kMin/kMaxDoseGridSpacingMm), the dose per
/// fraction (kMaxDosePerFractionGy), objective levels (kMaxObjectiveLevelGy) and the scenario
/// magnitudes ("robustness.rangeError: -1 % is negative: ..."). Errors inside
/// an objective also name its structure: "optimisation.objectives[1].terms[0].weight: -1 is
/// negative: term weights must be >= 0 (structure 'Cord')".
CaseFile parseCaseFile(const std::string& jsonText);
/// Reads `path` (Error(Io) when unreadable); errors are prefixed with the file name.
CaseFile readCaseFile(const std::string& path);

/// The JSON text of a case (2-space indent). Doubles are written with 17 significant digits, so
/// parse(format(c)) == c exactly. Throws InvalidArgument (naming the path) for values the
/// document cannot hold: non-finite numbers, negative weights or MU, a display text that is
/// not a JSON object, objectives or robustness settings parseCaseFile would refuse.
std::string formatCaseFile(const CaseFile& c);
/// Writes atomically: the text goes to a temporary file in the same folder, is flushed to disk,
/// then renamed over `path`; on any failure the temporary is removed and an existing `path` is
/// left untouched. Throws Error(Io) naming the file and the system's reason.
void writeCaseFile(const std::string& path, const CaseFile& c);

/// `path` as written in a case file, resolved against the case file's folder when relative.
std::string resolveCasePath(const std::string& caseFilePath, const std::string& path);
/// `path` for writing into the case file `caseFilePath`: relative to the case's folder when the
/// two share a folder below the file-system root, else absolute (so the case and its data can
/// move together without a case in /tmp pointing at "../../work/...").
std::string relativeToCase(const std::string& caseFilePath, const std::string& path);

}  // namespace penumbra::io
