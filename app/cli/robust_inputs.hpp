#pragma once
// What `penumbra-cli robust` and `bench robust` evaluate: a plan and its structures' masks on
// the dose grid with their limits, from a built-in phantom (no DICOM needed: the GPU machine
// builds without it) or from a case file.
#include <string>
#include <vector>

#include "robust/robustness.hpp"

namespace penumbra::cli {

struct RobustInputs {
  std::string description;  ///< one line for the output
  proton::ProtonDoseRequest plan;
  std::vector<robust::RobustStructure> structures;
  /// Phantom plans have unit spot weights and no prescription: their targets' limits are set
  /// after the evaluation, at this fraction of the nominal target Dmean (0: the limits are
  /// already in `structures`).
  double targetLimitOfNominalMean = 0;
  std::vector<std::string> notes;  ///< import warnings, skipped structures
};

/// Isotropic grid of spacing h [mm] over `g`'s extent, centred on it (same direction cosines).
Grid isotropicDoseGrid(const Grid& g, double h);

/// "hn" (hn-2field: Target sphere, Cord sphere just distal of it, Body), "box" (BOXPHANTOM:
/// the OuterTarget cube, Body) or "water" (Target sphere, Body). doseGridMm > 0: that dose
/// grid spacing (hn is built at it, the others resampled), else the phantom's own. Throws
/// InvalidArgument for another name.
RobustInputs phantomRobustInputs(const std::string& name, double doseGridMm);

/// A case file's CT, beams and structures (needs DICOM and case-file support: Unsupported
/// otherwise). Masks are resampled onto the dose grid (the case's, or doseGridMm > 0);
/// structures: targets, organs at risk, the external and any the objectives name. Limits:
/// targets the objective's min level, else 95 % of the prescription (for targets); organs at
/// risk their max-dose objective's level.
RobustInputs caseRobustInputs(const std::string& caseFile, double doseGridMm);

/// Sets the limit of every target row to `fraction` of the target's nominal Dmean and flags it.
void limitTargetsAtNominalMean(robust::RobustnessResult& result, double fraction);

}  // namespace penumbra::cli
