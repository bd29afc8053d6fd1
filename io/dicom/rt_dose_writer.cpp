// RT Dose export with DRTDoseIOD (dcmrt), every OFCondition checked, atomic file replace.
#include "dicom/rt_dose_writer.hpp"

#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmrt/drtdose.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <random>

#include "core/error.hpp"
#include "dicom/dcmtk_util.hpp"

namespace fs = std::filesystem;

namespace penumbra::io {

namespace {

std::string newUid() {
  char buf[100];
  dcmGenerateUniqueIdentifier(buf, SITE_INSTANCE_UID_ROOT);
  return buf;
}

// Decimal string (VR DS, at most 16 characters) of a value.
std::string ds(double v) {
  char buf[64];
  for (int prec = 10; prec >= 4; --prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strlen(buf) <= 16) break;
  }
  return buf;
}

std::string dsList(std::initializer_list<double> values) {
  std::string s;
  for (double v : values) s += (s.empty() ? "" : "\\") + ds(v == 0.0 ? 0.0 : v);  // no "-0"
  return s;
}

// Every setter of DRTDoseIOD returns an OFCondition; one failure names the attribute.
void check(const OFCondition& c, const char* what) {
  if (c.bad())
    throw Error(ErrorCode::InvalidArgument, std::string("RT Dose export: cannot set ") + what +
                                                " (" + c.text() + ")",
                __FILE__, __LINE__);
}

}  // namespace

RtDoseWriteResult writeRtDose(const std::string& path, const DoseVolume& dose,
                              const RtDoseWriteOptions& o) {
  dcm::initialiseDcmtk();
  PENUMBRA_REQUIRE(!dose.dose.empty(), InvalidArgument, "RT Dose export: the dose is empty");
  dose.dose.validate();
  const Grid& g = dose.dose.grid;
  PENUMBRA_REQUIRE(g.isOrthonormal(), InvalidArgument,
                   "RT Dose export: the dose grid is not orthonormal");
  PENUMBRA_REQUIRE(g.dims[0] <= 65535 && g.dims[1] <= 65535, InvalidArgument,
                   "RT Dose export: more than 65535 rows or columns");
  RtDoseWriteResult res;

  // Quantisation: 32-bit unsigned over [0, max]. The scaling is what the DS string says, so
  // that readers multiply by exactly the value we divided by.
  double maxDose = 0;
  std::size_t negative = 0;
  for (float d : dose.dose.data) {
    maxDose = std::max(maxDose, double(d));
    negative += d < 0;
  }
  if (negative > 0)
    res.warnings.push_back(std::to_string(negative) +
                           " negative dose values written as 0 (RT Dose pixels are unsigned)");
  PENUMBRA_REQUIRE(o.bitsAllocated == 16 || o.bitsAllocated == 32, InvalidArgument,
                   "RT Dose export: BitsAllocated must be 16 or 32");
  const bool wide = o.bitsAllocated == 32;
  const double maxRaw = wide ? 4294967295.0 : 65535.0;
  double scaling = maxDose > 0 ? maxDose / maxRaw : 1e-9;
  std::string scalingText = ds(scaling * (1 + 1e-8));  // round up: max / scaling <= maxRaw
  scaling = std::stod(scalingText);
  res.doseGridScaling = scaling;
  std::vector<Uint16> words(wide ? 2 * g.voxelCount() : g.voxelCount());
  for (std::size_t i = 0; i < g.voxelCount(); ++i) {
    const double q = std::round(std::max(0.0, double(dose.dose.data[i])) / scaling);
    const auto u = Uint32(std::min(q, maxRaw));
    if (!wide) {
      words[i] = Uint16(u);
      continue;
    }
    // Two 16-bit words, low first: DCMTK writes OW words little endian, giving a
    // little-endian 32-bit value on any host.
    words[2 * i] = Uint16(u & 0xffffu);
    words[2 * i + 1] = Uint16(u >> 16);
  }

  res.studyInstanceUid = o.studyInstanceUid.empty() ? newUid() : o.studyInstanceUid;
  res.seriesInstanceUid = o.seriesInstanceUid.empty() ? newUid() : o.seriesInstanceUid;
  res.sopInstanceUid = newUid();
  res.frameOfReferenceUid = o.frameOfReferenceUid;
  if (res.frameOfReferenceUid.empty()) {
    res.frameOfReferenceUid = newUid();
    res.warnings.push_back("no frame of reference given: a new one was created, so the dose "
                           "will not register with the CT in other systems");
  }
  char date[16], time[16];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(date, sizeof date, "%Y%m%d", &tm);
  std::strftime(time, sizeof time, "%H%M%S", &tm);

  DRTDoseIOD rt;
  check(rt.setSpecificCharacterSet("ISO_IR 192"), "SpecificCharacterSet");
  check(rt.setSOPInstanceUID(res.sopInstanceUid.c_str()), "SOPInstanceUID");
  check(rt.setInstanceCreationDate(date), "InstanceCreationDate");
  check(rt.setInstanceCreationTime(time), "InstanceCreationTime");
  check(rt.setPatientName(o.patientName.c_str()), "PatientName");
  check(rt.setPatientID(o.patientId.c_str()), "PatientID");
  check(rt.setPatientBirthDate(o.patientBirthDate.c_str()), "PatientBirthDate");
  check(rt.setPatientSex(o.patientSex.c_str()), "PatientSex");
  check(rt.setStudyInstanceUID(res.studyInstanceUid.c_str()), "StudyInstanceUID");
  check(rt.setStudyDate(date), "StudyDate");
  check(rt.setStudyTime(time), "StudyTime");
  check(rt.setReferringPhysicianName(""), "ReferringPhysicianName");
  check(rt.setStudyID(o.studyId.c_str()), "StudyID");
  check(rt.setAccessionNumber(""), "AccessionNumber");
  if (!o.studyDescription.empty()) check(rt.setStudyDescription(o.studyDescription.c_str()), "StudyDescription");
  check(rt.setModality("RTDOSE"), "Modality");
  check(rt.setSeriesInstanceUID(res.seriesInstanceUid.c_str()), "SeriesInstanceUID");
  check(rt.setSeriesNumber(std::to_string(o.seriesNumber).c_str()), "SeriesNumber");
  check(rt.setSeriesDescription(o.seriesDescription.c_str()), "SeriesDescription");
  check(rt.setOperatorsName(""), "OperatorsName");
  check(rt.setFrameOfReferenceUID(res.frameOfReferenceUid.c_str()), "FrameOfReferenceUID");
  check(rt.setPositionReferenceIndicator(""), "PositionReferenceIndicator");
  check(rt.setManufacturer("Penumbra"), "Manufacturer");
  check(rt.setSoftwareVersions("Penumbra"), "SoftwareVersions");
  check(rt.setInstanceNumber(std::to_string(o.instanceNumber).c_str()), "InstanceNumber");
  check(rt.setContentDate(date), "ContentDate");
  check(rt.setContentTime(time), "ContentTime");

  // Image plane: i along the row direction, j along the column direction, frames along k.
  const Vec3 r = g.direction.column(0), c = g.direction.column(1), k = g.direction.column(2);
  const Vec3 first = g.indexToWorld({0, 0, 0});
  check(rt.setImageOrientationPatient(dsList({r.x, r.y, r.z, c.x, c.y, c.z}).c_str()),
        "ImageOrientationPatient");
  check(rt.setImagePositionPatient(dsList({first.x, first.y, first.z}).c_str()),
        "ImagePositionPatient");
  check(rt.setPixelSpacing(dsList({g.spacing.y, g.spacing.x}).c_str()), "PixelSpacing");
  check(rt.setSliceThickness(g.dims[2] > 1 ? ds(g.spacing.z).c_str() : ""), "SliceThickness");
  // Relative offsets along the normal r x c; a left-handed grid (frames against the normal)
  // gets negative offsets rather than reordered frames.
  const double sign = dot(cross(r, c), k) >= 0 ? 1.0 : -1.0;
  std::string offsets;
  for (int f = 0; f < g.dims[2]; ++f)
    offsets += (f ? "\\" : "") + ds(sign * f * g.spacing.z);
  check(rt.setGridFrameOffsetVector(offsets.c_str()), "GridFrameOffsetVector");

  check(rt.setSamplesPerPixel(1), "SamplesPerPixel");
  check(rt.setPhotometricInterpretation("MONOCHROME2"), "PhotometricInterpretation");
  check(rt.setRows(Uint16(g.dims[1])), "Rows");
  check(rt.setColumns(Uint16(g.dims[0])), "Columns");
  check(rt.setBitsAllocated(Uint16(o.bitsAllocated)), "BitsAllocated");
  check(rt.setBitsStored(Uint16(o.bitsAllocated)), "BitsStored");
  check(rt.setHighBit(Uint16(o.bitsAllocated - 1)), "HighBit");
  check(rt.setPixelRepresentation(0), "PixelRepresentation");
  check(rt.setNumberOfFrames(std::to_string(g.dims[2]).c_str()), "NumberOfFrames");
  check(rt.setFrameIncrementPointer("(3004,000c)"), "FrameIncrementPointer");
  check(rt.getPixelData().putUint16Array(words.data(), static_cast<unsigned long>(words.size())),
        "PixelData");

  check(rt.setDoseUnits(dose.unit == "%" ? "RELATIVE" : "GY"), "DoseUnits");
  check(rt.setDoseType(o.doseType.c_str()), "DoseType");
  check(rt.setDoseSummationType(o.doseSummationType.c_str()), "DoseSummationType");
  check(rt.setDoseGridScaling(scalingText.c_str()), "DoseGridScaling");
  check(rt.setTissueHeterogeneityCorrection("IMAGE"), "TissueHeterogeneityCorrection");
  if (!o.doseComment.empty()) check(rt.setDoseComment(o.doseComment.c_str()), "DoseComment");
  if (!o.referencedPlanSopInstanceUid.empty()) {
    DRTReferencedRTPlanSequence::Item* item = nullptr;
    check(rt.getReferencedRTPlanSequence().addItem(item), "ReferencedRTPlanSequence");
    const std::string cls =
        o.referencedPlanSopClassUid.empty() ? UID_RTIonPlanStorage : o.referencedPlanSopClassUid;
    check(item->setReferencedSOPClassUID(cls.c_str()), "ReferencedSOPClassUID");
    check(item->setReferencedSOPInstanceUID(o.referencedPlanSopInstanceUid.c_str()),
          "ReferencedSOPInstanceUID");
  } else {
    res.warnings.push_back("no referenced RT Plan: the RT Dose IOD requires one for "
                           "DoseSummationType " + o.doseSummationType);
  }

  DcmFileFormat file;
  check(rt.write(*file.getDataset()), "the RT Dose dataset (a required attribute is missing)");

  // Atomic replace: temp file in the target's folder (same file system), then rename.
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::random_device rd;
  const fs::path tmp = dir / ("." + target.filename().string() + ".tmp" + std::to_string(rd()));
  const OFCondition saved =
      file.saveFile(tmp.string().c_str(), EXS_LittleEndianExplicit, EET_ExplicitLength,
                    EGL_recalcGL, EPD_noChange, 0, 0, EWM_fileformat);
  std::error_code ec;
  if (saved.bad()) {
    fs::remove(tmp, ec);
    throw Error(ErrorCode::Io, "cannot write " + path + " (" + saved.text() + ")", __FILE__,
                __LINE__);
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw Error(ErrorCode::Io, "cannot replace " + path + " (" + ec.message() + ")", __FILE__,
                __LINE__);
  }
  return res;
}

}  // namespace penumbra::io
