#pragma once
// Doses and structure sets named on penumbra-cli's command line (compare, dvh): an RT Dose, a
// MetaImage volume or a case file's dose set, and an RT Structure Set; refused with a message
// naming the file and the reason (Error), never half-read.
#include <memory>
#include <string>
#include <vector>

#include "core/dose_volume.hpp"
#include "core/structure.hpp"

namespace penumbra::cli {

struct DoseInput {
  std::string file;                        ///< the file the dose was read from
  std::string kind;                        ///< "RT Dose", "MetaImage MET_FLOAT", ...
  std::shared_ptr<const DoseVolume> dose;  ///< Gy
  std::string frameOfReference;            ///< DICOM FrameOfReferenceUID; empty when not known
  std::vector<std::string> notes;          ///< import warnings, for the user
};

/// Reads the dose `arg` given as `role` ("REF", "EVAL", "RD.dcm"):
///  - FILE.mhd / FILE.mha: MetaImage, values taken as Gy;
///  - CASE.json or CASE.json#NAME: the case file's dose set NAME (the only exported one when
///    NAME is left out), itself a MetaImage or an RT Dose (needs case-file support);
///  - anything else: an RT Dose (needs DICOM support); DoseUnits must be GY.
/// Throws Error (Io, Format, InvalidArgument, Unsupported) naming `role`, the file and why.
DoseInput readDoseInput(const std::string& arg, const std::string& role);

struct StructureSetInput {
  std::string file;
  StructureSet set;  ///< contours only (no masks)
  std::vector<std::string> notes;
};

/// Reads an RT Structure Set with its contours (needs DICOM support). Throws Error naming the
/// file and why.
StructureSetInput readStructureSetInput(const std::string& file);

/// True when a structure has a contour of three or more points (a DVH and a mask can be made
/// of it; point ROIs such as ISOCENTER cannot).
bool hasAreaContours(const Structure& s);

/// The names in a comma-separated list ("BRAIN STEM,PTV_ALL"), trimmed, empty ones dropped.
std::vector<std::string> splitNames(const std::string& list);

}  // namespace penumbra::cli
