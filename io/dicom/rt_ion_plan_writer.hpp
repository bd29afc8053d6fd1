#pragma once
/// RT Ion Plan export (DCMTK dcmrt DRTIonPlanIOD): a proton pencil-beam-scanning plan with its
/// beams (IEC 61217 gantry and patient-support angles, isocentre, virtual source axis
/// distances), control points per energy layer with ScanSpotPositionMap (mm at the isocentre
/// plane) and ScanSpotMetersetWeights, fraction group with the referenced beams, the
/// prescription as a dose reference, and the referenced structure set. Written atomically like
/// the RT Dose (temporary file in the same folder, then rename).
#include <string>
#include <vector>

#include "proton/proton_plan.hpp"

namespace penumbra::io {

struct RtIonPlanWriteOptions {
  std::string patientName = "Anonymous", patientId = "PENUMBRA";
  std::string patientBirthDate, patientSex;
  std::string studyInstanceUid;       ///< empty: a new study
  std::string studyId, studyDescription;
  std::string frameOfReferenceUid;    ///< of the CT; empty: a new one (warning)
  std::string seriesInstanceUid;      ///< empty: a new series
  std::string seriesDescription = "Penumbra ion plan";
  int seriesNumber = 1;
  std::string planLabel = "Penumbra";  ///< VR SH: at most 16 characters
  std::string planName, planDescription;
  /// The RT Structure Set the plan was made on. Empty: not referenced, and RTPlanGeometry is
  /// written as TREATMENT_DEVICE (with a warning), since PATIENT requires the reference.
  std::string referencedStructureSetSopInstanceUid;
  std::string targetName;             ///< prescription target (dose reference description)
  double dosePerFractionGy = 0;       ///< 0: no target prescription dose written
  int fractions = 1;
  std::string treatmentMachineName = "Penumbra PBS";  ///< VR SH: at most 16 characters
  /// ScanningSpotSize: in-air spot FWHM at the isocentre [mm], written on every energy layer
  /// for IEC GANTRY X and Y; 0: not written (the spot size is a property of the beam model).
  double scanningSpotFwhmMm = 0;
  /// Protons per unit spot weight (proton_plan.hpp); meterset weights are written in units of
  /// this many protons and the meterset type is "NP" (number of particles) per DICOM.
  double protonsPerWeightUnit = proton::kProtonsPerWeightUnit;
};

struct RtIonPlanWriteResult {
  std::string sopInstanceUid, seriesInstanceUid, studyInstanceUid, frameOfReferenceUid;
  std::vector<std::string> warnings;
};

/// Writes `beams` to `path`. Throws penumbra::Error: InvalidArgument for an empty plan,
/// negative weights or texts longer than their DICOM VR allows (SH 16, LO 64), Io when the file cannot be written (an existing file is left untouched).
RtIonPlanWriteResult writeRtIonPlan(const std::string& path,
                                    const std::vector<proton::ProtonBeam>& beams,
                                    const RtIonPlanWriteOptions& options = {});

/// Reads the beams back (energies, spot positions and weights, angles, isocentre) - used by the
/// round-trip test and to show plans made elsewhere. Returns warnings for parts it skips.
std::vector<proton::ProtonBeam> readRtIonPlan(const std::string& path,
                                              std::vector<std::string>* warnings = nullptr);

}  // namespace penumbra::io
