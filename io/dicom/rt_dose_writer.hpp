#pragma once
/// RT Dose export through DCMTK's typed dcmrt class DRTDoseIOD: patient, general study, RT
/// series, frame of reference, general equipment, general image, image plane, image pixel,
/// multi-frame, RT dose and SOP common modules. Pixels are 32-bit unsigned (16 on request)
/// with DoseGridScaling = max dose / (2^bits - 1): a step of ~1e-8 of the maximum at 32 bits.
/// The file is written atomically: to a temporary file in the same folder, then renamed over
/// the target, so a failure (disk full, cancelled) never damages an existing file.
#include <string>
#include <vector>

#include "core/dose_volume.hpp"

namespace penumbra::io {

struct RtDoseWriteOptions {
  std::string patientName = "Anonymous", patientId = "PENUMBRA";
  std::string patientBirthDate, patientSex;   ///< type 2: written empty when unknown
  std::string studyInstanceUid;               ///< empty: a new study
  std::string studyId, studyDescription;
  std::string frameOfReferenceUid;            ///< empty: a new frame of reference (warning)
  std::string seriesInstanceUid;              ///< empty: a new series
  std::string seriesDescription = "Penumbra dose";
  std::string referencedPlanSopInstanceUid;   ///< RT Plan / RT Ion Plan the dose belongs to
  std::string referencedPlanSopClassUid;      ///< empty: RT Ion Plan Storage
  std::string doseType = "PHYSICAL";          ///< PHYSICAL or EFFECTIVE (RBE-weighted)
  /// PLAN, FRACTION, BEAM, ...; these need a referenced plan. RECORD-free doses without a plan
  /// are written as PLAN with a warning, since the IOD then requires the reference.
  std::string doseSummationType = "PLAN";
  std::string doseComment;
  int seriesNumber = 1, instanceNumber = 1;
  /// 32 (default: quantisation ~1e-8 of the maximum) or 16 (~1.5e-5; for tools that cannot
  /// read 32-bit pixels, such as Debian 12's dciodvfy, which asserts on them).
  int bitsAllocated = 32;
};

struct RtDoseWriteResult {
  std::string sopInstanceUid, seriesInstanceUid, studyInstanceUid, frameOfReferenceUid;
  double doseGridScaling = 0;  ///< Gy per stored value
  std::vector<std::string> warnings;
};

/// Writes `dose` (unit "Gy"; "%" is written as DoseUnits RELATIVE) to `path`. Throws
/// penumbra::Error: InvalidArgument for an empty or non-orthonormal dose, Io when the file
/// cannot be written (the previous file at `path`, if any, is left untouched).
RtDoseWriteResult writeRtDose(const std::string& path, const DoseVolume& dose,
                              const RtDoseWriteOptions& options = {});

}  // namespace penumbra::io
