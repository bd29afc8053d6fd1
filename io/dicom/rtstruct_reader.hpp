#pragma once
// RT Structure Set reading through DCMTK's typed dcmrt classes (DRTStructureSetIOD).
// Internal to io/dicom.
#include <string>

#include "core/structure.hpp"
#include "dicom/dicom_import.hpp"

class DcmDataset;

namespace penumbra::io {

struct RtStructContents {
  StructureSetInfo info;  ///< header: label, frame of reference, references, ROI names
  StructureSet set;       ///< ROIs with contours (masks empty); filled when withContours
};

/// Parses the RT Structure Set in `dataset` (read from `file`). With `withContours` false only
/// the header information is collected (folder scan). Problems go to `messages` as warnings
/// naming the file; returns false (and adds an error) when it is not a usable structure set.
/// A structure set that parses but is refused (two ROIs with one ROI number) still fills
/// `out.info`, with usable false and the reason in info.problems, but no structures.
bool readRtStruct(DcmDataset& dataset, const std::string& file, bool withContours,
                  RtStructContents& out, ImportMessages& messages);

/// The structure set that importPatient() loads with `series` by default: most of its
/// referenced images in the series, then a reference to the series, then a shared frame of
/// reference; null when none matches. A tie is a warning in `messages`.
const StructureSetInfo* chooseStructureSet(const DicomScan& scan, const SeriesInfo& series,
                                           ImportMessages& messages);

/// Loads `file` from disk and parses it with contours.
bool readRtStructFile(const std::string& file, RtStructContents& out, ImportMessages& messages);

}  // namespace penumbra::io
