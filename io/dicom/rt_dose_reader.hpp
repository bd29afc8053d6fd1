#pragma once
/// RT Dose import (DCMTK), and a dose-plus-structures import for folders without a CT.
///
/// readRtDose() honours DoseGridScaling, GridFrameOffsetVector in both of its forms (relative
/// to ImagePositionPatient when the first value is 0, else absolute positions along the
/// slice normal, as PS3.3 C.8.8.3.2 allows), single- and multi-frame files, 16- and 32-bit
/// pixels (signed for DoseType ERROR), any ImageOrientationPatient, compressed and big-endian
/// transfer syntaxes. Files are never merged or deduplicated by SOPInstanceUID: the Nelms
/// phantom's AP and SI doses share one UID but hold different doses.
#include <string>
#include <vector>

#include "core/dose_volume.hpp"
#include "core/progress.hpp"
#include "core/structure.hpp"
#include "dicom/dicom_import.hpp"
#include "import_messages.hpp"

namespace penumbra::io {

/// Header facts of an RT Dose, for lists and for the user.
struct RtDoseInfo {
  std::string file;
  std::string sopInstanceUid, seriesInstanceUid, studyInstanceUid, frameOfReferenceUid;
  std::string patientName, patientId;
  std::string doseUnits;          ///< DICOM DoseUnits: GY or RELATIVE
  std::string doseType;           ///< PHYSICAL, EFFECTIVE or ERROR
  std::string doseSummationType;  ///< PLAN, MULTI_PLAN, FRACTION, BEAM, BRACHY, ...
  std::string doseComment, seriesDescription;
  std::string referencedPlanSopInstanceUid;  ///< first ReferencedRTPlanSequence item
  double doseGridScaling = 1;     ///< Gy (or %) per stored pixel value
  int bitsAllocated = 0;
  bool frameOffsetsRelative = true;  ///< GridFrameOffsetVector started at 0
  double maxDose = 0;             ///< in the dose unit, after scaling
};

struct RtDoseImport {
  DoseVolume dose;  ///< Gy (unit "%" for RELATIVE); provenance engine "import"
  RtDoseInfo info;
  ImportMessages messages;
  bool ok() const { return messages.ok() && !dose.empty(); }
};

/// Reads one RT Dose file. Never throws for bad files: problems come back in messages (an
/// error and an empty dose when the file is not a usable RT Dose).
RtDoseImport readRtDose(const std::string& file);

/// Doses and a structure set imported together without (or regardless of) a CT: what a DVH
/// needs. Structures keep their contours (for the contour DVH) and get masks rasterised on
/// the grid of the first dose (for display and the mask DVH).
struct DoseStructuresImport {
  std::vector<RtDoseImport> doses;  ///< every RT Dose found, in file-name order
  StructureSet structures;
  StructureSetInfo structureSetInfo;  ///< file empty when no structure set was found
  bool hasCt = false;                 ///< a CT series is in the folder too
  ImportMessages messages;            ///< includes the note about the missing CT
  bool ok() const { return messages.ok() && !doses.empty(); }
};

/// Scans `folder` recursively and imports its RT Doses and one RT Structure Set (the one in
/// the doses' frame of reference; `structureSetFile` picks another). When the folder has no
/// CT, messages carry the note "no CT in this folder: structures and dose are shown without
/// anatomy". Does not throw except CancelledError (and Io for a missing folder).
DoseStructuresImport importDoseAndStructures(const std::string& folder,
                                             const std::string& structureSetFile = {},
                                             const JobControl& job = {});

/// Masks of `contours` on `grid` when contour planes and grid slices need not coincide (e.g.
/// 1 mm contours on a 3 mm dose grid): each slice takes the contour plane nearest to its
/// centre (within half a slice), never an even-odd mix of several planes.
Mask rasterizeNearestPlanes(const std::vector<Contour>& contours, const Grid& grid);

}  // namespace penumbra::io
