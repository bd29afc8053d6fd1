// RT Dose export with DRTDoseIOD (dcmrt), every OFCondition checked, atomic file replace.
#include "dicom/rt_dose_writer.hpp"

#include <dcmtk/dcmdata/dcuid.h>
#include <dcmtk/dcmrt/drtdose.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "dicom/dcmtk_util.hpp"

namespace penumbra::io {

namespace {

constexpr const char* kContext = "RT Dose export";

void check(const OFCondition& c, const char* what) { dcm::check(c, kContext, what); }
std::string ds(double v) { return dcm::decimalString(v); }

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

  res.studyInstanceUid = o.studyInstanceUid.empty() ? dcm::newUid() : o.studyInstanceUid;
  res.seriesInstanceUid = o.seriesInstanceUid.empty() ? dcm::newUid() : o.seriesInstanceUid;
  res.sopInstanceUid = dcm::newUid();
  res.frameOfReferenceUid = o.frameOfReferenceUid;
  if (res.frameOfReferenceUid.empty()) {
    res.frameOfReferenceUid = dcm::newUid();
    res.warnings.push_back("no frame of reference given: a new one was created, so the dose "
                           "will not register with the CT in other systems");
  }
  const dcm::DateTime when = dcm::now();

  DRTDoseIOD rt;
  dcm::setCommonModules(rt, dcm::commonModulesOf(o, res, "RTDOSE"), when, kContext);
  check(rt.setInstanceNumber(std::to_string(o.instanceNumber).c_str()), "InstanceNumber");
  check(rt.setContentDate(when.date.c_str()), "ContentDate");
  check(rt.setContentTime(when.time.c_str()), "ContentTime");

  // Image plane: i along the row direction, j along the column direction, frames along k.
  const Vec3 r = g.direction.column(0), c = g.direction.column(1), k = g.direction.column(2);
  const Vec3 first = g.indexToWorld({0, 0, 0});
  check(rt.setImageOrientationPatient(dcm::decimalStrings({r.x, r.y, r.z, c.x, c.y, c.z}).c_str()),
        "ImageOrientationPatient");
  check(rt.setImagePositionPatient(dcm::decimalStrings({first.x, first.y, first.z}).c_str()),
        "ImagePositionPatient");
  check(rt.setPixelSpacing(dcm::decimalStrings({g.spacing.y, g.spacing.x}).c_str()),
        "PixelSpacing");
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

  dcm::saveFileAtomically(file, path);
  return res;
}

}  // namespace penumbra::io
