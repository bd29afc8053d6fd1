#pragma once
/// RT Plan export (DCMTK dcmrt DRTPlanIOD, SOP class 1.2.840.10008.5.1.4.1.1.481.5) for photon
/// beams: per beam a static field with asymmetric jaws (ASYMX, ASYMY), the conformal aperture
/// (if any) as APERTURE blocks, IEC 61217 gantry, collimator and patient-support angles, the
/// isocentre and the source-axis distance, two control points (cumulative meterset weight 0
/// and 1); the fraction group gives each beam's MU. Patient, study, series, frame of reference,
/// equipment, RT General Plan, RT Prescription and RT Patient Setup are written as for the RT
/// Ion Plan (rt_plan_modules.hpp); no tolerance table is written (the module is optional).
/// Written atomically like the RT Ion Plan (temporary file in the same folder, then rename).
///
/// Coordinates: jaws and BlockData are in the IEC BEAM LIMITING DEVICE frame projected onto the
/// isocentre plane (mm), which is PhotonBeam's (u, v) after the collimator rotation;
/// IsocenterPosition is patient LPS mm.
#include <string>
#include <vector>

#include "photon/photon_dose.hpp"

namespace penumbra::io {

struct RtPlanWriteOptions {
  std::string patientName = "Anonymous", patientId = "PENUMBRA";
  std::string patientBirthDate, patientSex;
  std::string studyInstanceUid;  ///< empty: a new study
  std::string studyId, studyDescription;
  std::string frameOfReferenceUid;  ///< of the CT; empty: a new one (warning)
  std::string seriesInstanceUid;    ///< empty: a new series
  std::string seriesDescription = "Penumbra photon plan";
  int seriesNumber = 1;
  std::string planLabel = "Penumbra";  ///< VR SH: at most 16 characters
  std::string planName, planDescription;
  /// The RT Structure Set the plan was made on. Empty: not referenced, and RTPlanGeometry is
  /// written as TREATMENT_DEVICE (with a warning), since PATIENT requires the reference.
  std::string referencedStructureSetSopInstanceUid;
  std::string targetName;        ///< prescription target (dose reference description)
  double dosePerFractionGy = 0;  ///< 0: no target prescription dose written
  int fractions = 1;
  std::string treatmentMachineName = "Penumbra 6 MV";  ///< VR SH: at most 16 characters
  /// NominalBeamEnergy [MV]: the engine's beam model is the 6 MV one.
  double nominalBeamEnergyMV = 6;
  /// Aperture blocks. BlockData is projected to the isocentre plane, so these describe the
  /// block for the machine, not the field. Defaults: a divergent Lipowitz-metal (Cerrobend)
  /// cutout 75 mm thick, the thickness textbooks give for megavoltage photon blocks (about
  /// 5 half-value layers; Khan, The Physics of Radiation Therapy, chapter on field shaping),
  /// on a tray 650 mm from the source, a plausible linac accessory-mount position: set the
  /// machine's own value. The dose engine treats the aperture as opaque, so no transmission
  /// is written.
  std::string blockMaterialId = "CERROBEND";  ///< VR SH: at most 16 characters
  double blockThicknessMm = 75;
  double sourceToBlockTrayDistanceMm = 650;
};

struct RtPlanWriteResult {
  std::string sopInstanceUid, seriesInstanceUid, studyInstanceUid, frameOfReferenceUid;
  std::vector<std::string> warnings;
};

/// Writes the photon `beams` to `path`. Angles are written in [0, 360) degrees (e.g. a couch at
/// -10 as 350); BlockData is rounded to 0.001 mm (the aperture is traced on 0.25-1 mm pixels).
/// One APERTURE block per aperture polygon (their union is the opening, as in the engine); more
/// than one gives a warning, since some systems accept one aperture block per beam. Throws
/// penumbra::Error: InvalidArgument (nothing written) for an empty plan, non-finite angles,
/// isocentres, jaws, SAD or MU, jaws with x1 >= x2 or y1 >= y2, MU <= 0, an aperture polygon with
/// fewer than 3 points or non-finite points, one too long for BlockData (a DS element holds at most
/// 65 534 characters), or texts longer than their DICOM VR allows (SH 16, LO 64); Io when the file
/// cannot be written (an existing file is left untouched).
RtPlanWriteResult writeRtPlan(const std::string& path, const std::vector<photon::PhotonBeam>& beams,
                              const RtPlanWriteOptions& options = {});

}  // namespace penumbra::io
