#pragma once
// Thin helpers over DCMTK used by the importer: one place that silences DCMTK's logger,
// registers the decompression codecs, loads files whatever their encoding, and reads
// attributes with every OFCondition checked. Internal to io/dicom (DCMTK headers must not
// leak into the public API).
#include <dcmtk/dcmdata/dctk.h>

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace penumbra::io::dcm {

/// Silences DCMTK's logger (it would print "W: ..." / "E: ..." to stderr for every odd file;
/// we report problems through ImportMessages instead) and registers the RLE, JPEG and
/// JPEG-LS decoders. Idempotent and thread-safe; called by every entry point.
void initialiseDcmtk();

enum class LoadDepth {
  Headers,  ///< stop before PixelData (a truncated pixel data goes unnoticed)
  Full      ///< every attribute; values over 4 KB (pixel data) stay on disk until used, but
            ///< the file is read to its end, so one cut off mid-way is found
};

/// Loads a DICOM file with or without preamble / file meta (transfer syntax auto-detected).
/// Returns null and sets `error` (naming the file, in plain words) when DCMTK cannot parse
/// it. With `truncated` given, a file that ends early comes back with what could be read,
/// *truncated set and `error` saying so: its headers may still tell which series it was
/// meant to be part of.
std::unique_ptr<DcmFileFormat> loadFile(const std::string& path, LoadDepth depth,
                                        std::string& error, bool* truncated = nullptr);

/// A DCMTK condition in words for users ("I/O suspension or premature end of stream" is
/// "the file is truncated or not a complete DICOM file").
std::string plainWords(const OFCondition& condition);

/// Trimmed string value (component `pos` of a multi-valued attribute); empty when absent.
std::string getString(DcmItem& item, const DcmTagKey& tag, long pos = 0);
/// All values of a multi-valued decimal-string attribute ("a\b\c"); empty when absent or
/// when any component does not parse.
std::vector<double> getDoubles(DcmItem& item, const DcmTagKey& tag);
std::optional<double> getDouble(DcmItem& item, const DcmTagKey& tag);
/// All values of a numeric attribute, NaN for a component that is not a number ("abc"), so
/// that a present but broken value is never mistaken for an absent one. Empty when absent
/// or empty.
std::vector<double> getNumbers(DcmItem& item, const DcmTagKey& tag);
/// The value as written, components joined by '\' ("NaN\-15\4"), for messages; empty when
/// absent.
std::string rawValue(DcmItem& item, const DcmTagKey& tag);
std::optional<long> getInt(DcmItem& item, const DcmTagKey& tag);

/// Transfer syntax of the dataset as read, e.g. "JPEG 2000 Image Compression (1.2.840...)".
std::string transferSyntaxName(DcmFileFormat& file);

/// The file name for messages: the last two path components ("CT_2mm/CT.1.dcm").
std::string shortName(const std::string& path);

// ---- Writing (RT Dose, RT Plan, RT Ion Plan) ----

/// A new UID under DCMTK's site root.
std::string newUid();
/// Decimal string (VR DS, at most 16 characters) of a value; never "-0".
std::string decimalString(double v);
/// Backslash-separated decimal strings ("1\2.5\-3").
std::string decimalStrings(std::initializer_list<double> values);

/// Local date (YYYYMMDD) and time (HHMMSS) for the creation / content attributes.
struct DateTime {
  std::string date, time;
};
DateTime now();

/// Throws penumbra::Error(InvalidArgument) "<context>: cannot set <what> (<DCMTK text>)" when
/// `c` is bad: every setter of the dcmrt classes returns an OFCondition.
void check(const OFCondition& c, const char* context, const char* what);

/// Saves `file` (explicit VR little endian, with meta header) to a temporary file in the
/// target's folder, then renames it over `path`: a failure never damages an existing file
/// and leaves no temporary behind. Throws penumbra::Error(Io).
void saveFileAtomically(DcmFileFormat& file, const std::string& path);

/// Patient, general study, series and general equipment attributes shared by our exports.
struct CommonModules {
  std::string patientName, patientId, patientBirthDate, patientSex;
  std::string studyInstanceUid, studyId, studyDescription;
  std::string modality, seriesInstanceUid, seriesDescription;
  int seriesNumber = 1;
  std::string sopInstanceUid;
  std::string frameOfReferenceUid;  ///< empty: no frame of reference module
};

/// The common modules of an export from its write options (RtDoseWriteOptions,
/// RtPlanWriteOptions, RtIonPlanWriteOptions: same field names) and the UIDs the writer settled on.
template <class Options, class Result>
CommonModules commonModulesOf(const Options& o, const Result& res, const char* modality) {
  CommonModules m;
  m.patientName = o.patientName;
  m.patientId = o.patientId;
  m.patientBirthDate = o.patientBirthDate;
  m.patientSex = o.patientSex;
  m.studyInstanceUid = res.studyInstanceUid;
  m.studyId = o.studyId;
  m.studyDescription = o.studyDescription;
  m.modality = modality;
  m.seriesInstanceUid = res.seriesInstanceUid;
  m.seriesNumber = o.seriesNumber;
  m.seriesDescription = o.seriesDescription;
  m.sopInstanceUid = res.sopInstanceUid;
  m.frameOfReferenceUid = res.frameOfReferenceUid;
  return m;
}

/// Sets `m` on a dcmrt IOD (DRTDoseIOD, DRTPlanIOD, DRTIonPlanIOD: they share the setter
/// names).
template <class Iod>
void setCommonModules(Iod& rt, const CommonModules& m, const DateTime& when, const char* ctx) {
  check(rt.setSpecificCharacterSet("ISO_IR 192"), ctx, "SpecificCharacterSet");
  check(rt.setSOPInstanceUID(m.sopInstanceUid.c_str()), ctx, "SOPInstanceUID");
  check(rt.setInstanceCreationDate(when.date.c_str()), ctx, "InstanceCreationDate");
  check(rt.setInstanceCreationTime(when.time.c_str()), ctx, "InstanceCreationTime");
  check(rt.setPatientName(m.patientName.c_str()), ctx, "PatientName");
  check(rt.setPatientID(m.patientId.c_str()), ctx, "PatientID");
  check(rt.setPatientBirthDate(m.patientBirthDate.c_str()), ctx, "PatientBirthDate");
  check(rt.setPatientSex(m.patientSex.c_str()), ctx, "PatientSex");
  check(rt.setStudyInstanceUID(m.studyInstanceUid.c_str()), ctx, "StudyInstanceUID");
  check(rt.setStudyDate(when.date.c_str()), ctx, "StudyDate");
  check(rt.setStudyTime(when.time.c_str()), ctx, "StudyTime");
  check(rt.setReferringPhysicianName(""), ctx, "ReferringPhysicianName");
  check(rt.setStudyID(m.studyId.c_str()), ctx, "StudyID");
  check(rt.setAccessionNumber(""), ctx, "AccessionNumber");
  if (!m.studyDescription.empty())
    check(rt.setStudyDescription(m.studyDescription.c_str()), ctx, "StudyDescription");
  check(rt.setModality(m.modality.c_str()), ctx, "Modality");
  check(rt.setSeriesInstanceUID(m.seriesInstanceUid.c_str()), ctx, "SeriesInstanceUID");
  check(rt.setSeriesNumber(std::to_string(m.seriesNumber).c_str()), ctx, "SeriesNumber");
  check(rt.setSeriesDescription(m.seriesDescription.c_str()), ctx, "SeriesDescription");
  check(rt.setOperatorsName(""), ctx, "OperatorsName");
  if (!m.frameOfReferenceUid.empty()) {
    check(rt.setFrameOfReferenceUID(m.frameOfReferenceUid.c_str()), ctx, "FrameOfReferenceUID");
    check(rt.setPositionReferenceIndicator(""), ctx, "PositionReferenceIndicator");
  }
  check(rt.setManufacturer("Penumbra"), ctx, "Manufacturer");
  check(rt.setSoftwareVersions("Penumbra"), ctx, "SoftwareVersions");
}

}  // namespace penumbra::io::dcm
