#pragma once
/// Public entry points of the DICOM importer (DCMTK). The GUI and penumbra-cli use only this
/// header; the pieces behind it live in the other files of io/dicom/.
///
/// Flow: scanDicomFolder() lists the image series and RT objects of a folder (recursively);
/// the user picks a CT series when there are several; importPatient() reads it and the
/// structure set that references it, rasterising structures onto the CT grid.
#include <string>
#include <vector>

#include "core/patient.hpp"
#include "core/progress.hpp"
#include "import_messages.hpp"

namespace penumbra::io {

/// One image series as found on disk. Files that share a SeriesInstanceUID but not a geometry
/// (orientation, pixel spacing, rows/columns, or slice spacing: e.g. two folders of one
/// series at 2 and 3 mm) are split into separate entries with distinct keys, never merged.
struct SeriesInfo {
  std::string key;  ///< unique within a scan; pass to importPatient()
  std::string seriesInstanceUid;
  std::string modality;  ///< "CT", "MR", ...
  std::string description;  ///< one line for a list: modality, slices, size, spacing, folder
  std::string frameOfReferenceUid;
  std::string patientName, patientId;
  int slices = 0;
  int rows = 0, columns = 0;
  std::vector<std::string> files;
  std::vector<std::string> problems;  ///< why it is not importable, then warnings

  // Added by the importer (not in the original contract):
  std::string folder;                        ///< folder of the first file
  std::vector<std::string> sopInstanceUids;  ///< parallel to files
  double rowSpacing = 0, columnSpacing = 0;  ///< PixelSpacing [0] and [1], mm
  double sliceSpacing = 0;                   ///< mm along the slice normal (0: unknown)
  std::vector<double> orientation;           ///< ImageOrientationPatient (6 values)
  bool sharedUid = false;  ///< split from files that share its SeriesInstanceUID
  /// The import's own verdict from the headers (modality, every file's values, pixel data
  /// presence, length and compression, geometry, the structure set it would load): true means
  /// importPatient(scan, key) takes it; see problems. Only compressed pixel data that fails
  /// to decompress is found later, by the import itself.
  bool importable = false;
};

/// An RT Structure Set found on disk.
struct StructureSetInfo {
  std::string file;
  std::string label;
  std::string frameOfReferenceUid;
  std::string referencedSeriesUid;  ///< may be empty
  int roiCount = 0;

  // Added by the importer:
  std::string sopInstanceUid, seriesInstanceUid;
  std::string patientName, patientId;
  std::vector<std::string> referencedSeriesUids;       ///< all RTReferencedSeries UIDs
  std::vector<std::string> referencedSopInstanceUids;  ///< contour image references, unique
  std::vector<std::string> roiNames;
  /// What is wrong with it, each naming the file (shown by the DICOM doctor). With `usable`
  /// false the import refuses it (e.g. two ROIs share one ROI number).
  std::vector<std::string> problems;
  bool usable = true;
};

struct DicomScan {
  std::string folder;
  std::vector<SeriesInfo> series;  ///< image series (CT first)
  std::vector<StructureSetInfo> structureSets;
  std::vector<std::string> otherObjects;  ///< "RTPLAN file.dcm", "RTDOSE ..." (listed only)
  int filesSeen = 0;
  ImportMessages messages;  ///< unreadable files are warnings, not errors
  int unreadableFiles = 0;  ///< added: files that are not readable DICOM (see messages)
};

/// Recursively scans `folder`. Never throws for bad files (they become warnings); throws
/// penumbra::Error(Io) when the folder does not exist or is a file (the message says which:
/// a file is not taken for its folder), CancelledError when cancelled.
DicomScan scanDicomFolder(const std::string& folder, const JobControl& job = {});

/// Added: scans exactly these files (any name or extension; a folder scan skips obvious
/// non-DICOM extensions such as .txt/.csv/.json/.gz). Never throws for bad files.
DicomScan scanDicomFiles(const std::vector<std::string>& files, const JobControl& job = {});

/// "DICOM doctor" text report of a scan: series, modalities, frames of reference, referenced
/// UIDs that do not resolve, geometry problems. Shown by `penumbra-cli inspect` and the GUI.
std::string dicomDoctorReport(const DicomScan& scan);

struct PatientImportResult {
  Patient patient;
  ImportMessages messages;
  bool ok() const { return messages.ok() && !patient.ct.empty(); }
};

/// Imports the CT series `seriesKey` of `scan` (empty key: the only CT series; an error
/// message when there are several) and the structure set that references it (or shares its
/// frame of reference), with masks rasterised onto the CT grid. Errors (oblique or tilted
/// series, unreadable pixel data) come back in messages; does not throw except CancelledError.
PatientImportResult importPatient(const DicomScan& scan, const std::string& seriesKey,
                                  const JobControl& job = {});

/// Added: choices beyond the series.
struct ImportOptions {
  /// Path of the structure set to use (as in StructureSetInfo::file); empty: pick the one
  /// that references the series, else one in its frame of reference, else none.
  std::string structureSetFile;
  bool loadStructures = true;
};

PatientImportResult importPatient(const DicomScan& scan, const std::string& seriesKey,
                                  const ImportOptions& options, const JobControl& job = {});

}  // namespace penumbra::io
