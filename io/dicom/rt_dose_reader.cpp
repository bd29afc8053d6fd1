// RT Dose reading: header, geometry (orientation, frame offsets) and scaled pixel data.
#include "dicom/rt_dose_reader.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "dicom/dcmtk_util.hpp"

namespace penumbra::io {

namespace {

// RT attributes as text, also when a file stored them with VR UN (pydicom's RLE sample does,
// for DoseUnits, GridFrameOffsetVector and DoseGridScaling): UN bytes are the DS/CS text.
std::string rtText(DcmDataset& ds, const DcmTagKey& tag) {
  DcmElement* e = nullptr;
  if (ds.findAndGetElement(tag, e).bad() || !e) return {};
  if (e->ident() != EVR_UN) return dcm::getString(ds, tag);
  Uint8* bytes = nullptr;
  if (e->getUint8Array(bytes).bad() || !bytes) return {};
  std::string s(reinterpret_cast<const char*>(bytes), e->getLength());
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

std::vector<double> rtDoubles(DcmDataset& ds, const DcmTagKey& tag) {
  DcmElement* e = nullptr;
  if (ds.findAndGetElement(tag, e).bad() || !e) return {};
  if (e->ident() != EVR_UN) return dcm::getDoubles(ds, tag);
  std::vector<double> out;
  const std::string text = rtText(ds, tag);
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = std::min(text.find('\\', at), text.size());
    try {
      out.push_back(std::stod(text.substr(at, end - at)));
    } catch (...) {
      return {};
    }
    at = end + 1;
  }
  return out;
}

// Geometry of the frames: direction from ImageOrientationPatient, position of frame 0 and the
// spacing along the normal from GridFrameOffsetVector. Returns false with an error message.
bool readGeometry(DcmDataset& ds, int frames, const std::string& name, Grid& grid,
                  RtDoseInfo& info, ImportMessages& messages) {
  const auto iop = rtDoubles(ds, DCM_ImageOrientationPatient);
  const auto ipp = rtDoubles(ds, DCM_ImagePositionPatient);
  const auto ps = rtDoubles(ds, DCM_PixelSpacing);
  if (iop.size() != 6 || ipp.size() != 3 || ps.size() != 2) {
    messages.error(name + ": ImageOrientationPatient, ImagePositionPatient or PixelSpacing "
                          "missing or malformed; the dose cannot be placed");
    return false;
  }
  const Vec3 row{iop[0], iop[1], iop[2]}, col{iop[3], iop[4], iop[5]};
  if (std::abs(norm(row) - 1) > 1e-3 || std::abs(norm(col) - 1) > 1e-3 ||
      std::abs(dot(row, col)) > 1e-3) {
    messages.error(name + ": ImageOrientationPatient is not two orthonormal vectors");
    return false;
  }
  const Vec3 normal = cross(normalized(row), normalized(col));
  // PixelSpacing is (between rows, between columns): [1] is the step along a row (i).
  grid.spacing = {ps[1], ps[0], 1.0};
  Vec3 origin{ipp[0], ipp[1], ipp[2]};
  std::vector<double> offsets = rtDoubles(ds, DCM_GridFrameOffsetVector);
  if (frames > 1 && offsets.size() != std::size_t(frames)) {
    messages.error(name + ": GridFrameOffsetVector has " + std::to_string(offsets.size()) +
                   " values for " + std::to_string(frames) + " frames");
    return false;
  }
  if (offsets.empty()) offsets = {0.0};
  info.frameOffsetsRelative = offsets[0] == 0.0;
  if (!info.frameOffsetsRelative) {
    // Absolute form: positions along the normal; make them relative to frame 0's plane.
    const double w0 = dot(origin, normal);
    if (std::abs(offsets[0] - w0) > 1e-3)
      messages.warn(name + ": GridFrameOffsetVector starts at " + std::to_string(offsets[0]) +
                    " mm, not at 0 nor at the ImagePositionPatient plane; read as absolute "
                    "positions along the slice normal (PS3.3 C.8.8.3.2)");
    for (double& o : offsets) o -= w0;
  }
  double step = 0;
  if (frames > 1) {
    step = (offsets.back() - offsets.front()) / double(frames - 1);
    for (int k = 1; k < frames; ++k)
      if (std::abs(offsets[std::size_t(k)] - offsets[std::size_t(k - 1)] - step) >
          0.01 * std::abs(step) + 1e-4) {
        messages.error(name + ": GridFrameOffsetVector is not evenly spaced; unsupported");
        return false;
      }
    if (std::abs(step) < 1e-6) {
      messages.error(name + ": GridFrameOffsetVector has zero spacing");
      return false;
    }
  } else {
    step = dcm::getDouble(ds, DCM_SliceThickness).value_or(0);
    if (step <= 0) step = 1.0;
  }
  origin = origin + offsets[0] * normal;
  grid.origin = origin;
  // Frames may run against the normal: keep them in file order with a flipped k axis so
  // the spacing stays positive.
  grid.direction = Mat3::fromColumns(normalized(row), normalized(col), step > 0 ? normal : -1.0 * normal);
  grid.spacing.z = std::abs(step);
  return true;
}

}  // namespace

RtDoseImport readRtDose(const std::string& file) {
  RtDoseImport out;
  RtDoseInfo& info = out.info;
  info.file = file;
  const std::string name = dcm::shortName(file);
  std::string error;
  auto ff = dcm::loadFile(file, dcm::LoadDepth::Full, error);
  if (!ff) {
    out.messages.error(error);
    return out;
  }
  try {
    DcmDataset& ds = *ff->getDataset();
    const std::string modality = rtText(ds, DCM_Modality);
    if (modality != "RTDOSE" && dcm::getString(ds, DCM_SOPClassUID) != UID_RTDoseStorage) {
      out.messages.error(name + ": not an RT Dose (Modality '" + modality + "')");
      return out;
    }
    info.sopInstanceUid = dcm::getString(ds, DCM_SOPInstanceUID);
    info.seriesInstanceUid = dcm::getString(ds, DCM_SeriesInstanceUID);
    info.studyInstanceUid = dcm::getString(ds, DCM_StudyInstanceUID);
    info.frameOfReferenceUid = dcm::getString(ds, DCM_FrameOfReferenceUID);
    info.patientName = dcm::getString(ds, DCM_PatientName);
    info.patientId = dcm::getString(ds, DCM_PatientID);
    info.doseUnits = rtText(ds, DCM_DoseUnits);
    info.doseType = rtText(ds, DCM_DoseType);
    info.doseSummationType = rtText(ds, DCM_DoseSummationType);
    info.doseComment = dcm::getString(ds, DCM_DoseComment);
    info.seriesDescription = dcm::getString(ds, DCM_SeriesDescription);
    DcmItem* planRef = nullptr;
    if (ds.findAndGetSequenceItem(DCM_ReferencedRTPlanSequence, planRef, 0).good() && planRef)
      info.referencedPlanSopInstanceUid = dcm::getString(*planRef, DCM_ReferencedSOPInstanceUID);

    const long rows = dcm::getInt(ds, DCM_Rows).value_or(0);
    const long cols = dcm::getInt(ds, DCM_Columns).value_or(0);
    const long frames = dcm::getInt(ds, DCM_NumberOfFrames).value_or(1);
    const long bits = dcm::getInt(ds, DCM_BitsAllocated).value_or(0);
    const long signedPixels = dcm::getInt(ds, DCM_PixelRepresentation).value_or(0);
    const long samples = dcm::getInt(ds, DCM_SamplesPerPixel).value_or(1);
    info.bitsAllocated = int(bits);
    if (rows <= 0 || cols <= 0 || frames <= 0 || rows > 65535 || cols > 65535 || frames > 100000) {
      out.messages.error(name + ": Rows, Columns or NumberOfFrames missing or out of range");
      return out;
    }
    if ((bits != 16 && bits != 32) || samples != 1) {
      out.messages.error(name + ": " + std::to_string(bits) + "-bit, " + std::to_string(samples) +
                         "-sample pixels; RT Dose needs 16 or 32 bits, 1 sample");
      return out;
    }
    const auto scalingValues = rtDoubles(ds, DCM_DoseGridScaling);
    const std::optional<double> scaling =
        scalingValues.empty() ? std::nullopt : std::optional<double>(scalingValues[0]);
    if (!scaling || !(*scaling > 0)) {
      out.messages.warn(name + ": DoseGridScaling missing or not positive; 1 assumed");
      info.doseGridScaling = 1;
    } else {
      info.doseGridScaling = *scaling;
    }
    if (info.doseUnits != "GY" && info.doseUnits != "RELATIVE")
      out.messages.warn(name + ": DoseUnits '" + info.doseUnits + "' unknown; read as Gy");

    Grid grid;
    grid.dims = {int(cols), int(rows), int(frames)};
    if (!readGeometry(ds, int(frames), name, grid, info, out.messages)) return out;

    // Decompress (RLE, JPEG) and bring to little endian in memory.
    const E_TransferSyntax original = ds.getOriginalXfer();
    if (ds.chooseRepresentation(EXS_LittleEndianExplicit, nullptr).bad()) {
      out.messages.error(name + ": pixel data in " + dcm::transferSyntaxName(*ff) +
                         " cannot be decoded");
      return out;
    }
    DcmElement* px = nullptr;
    Uint8* bytes = nullptr;
    if (ds.findAndGetElement(DCM_PixelData, px).bad() || !px ||
        px->getUint8Array(bytes).bad() || !bytes) {
      out.messages.error(name + ": no Pixel Data");
      return out;
    }
    const std::size_t n = grid.voxelCount();
    const std::size_t bytesPer = std::size_t(bits / 8);
    if (px->getLength() < n * bytesPer) {
      out.messages.error(name + ": Pixel Data holds " + std::to_string(px->getLength()) +
                         " bytes, " + std::to_string(n * bytesPer) + " expected (truncated?)");
      return out;
    }
    // DCMTK swaps OW data in 16-bit words; 32-bit values of a big-endian file therefore arrive
    // with their two halves exchanged.
    const bool swapHalves = bits == 32 && DcmXfer(original).isBigEndian();
    out.dose.dose = Volume<float>(grid, 0.0f);
    auto& data = out.dose.dose.data;
    for (std::size_t i = 0; i < n; ++i) {
      double raw = 0;
      if (bits == 16) {
        Uint16 u;
        std::memcpy(&u, bytes + 2 * i, 2);
        raw = signedPixels ? double(Sint16(u)) : double(u);
      } else {
        Uint32 u;
        std::memcpy(&u, bytes + 4 * i, 4);
        if (swapHalves) u = (u << 16) | (u >> 16);
        raw = signedPixels ? double(Sint32(u)) : double(u);
      }
      data[i] = float(raw * info.doseGridScaling);
    }
    info.maxDose = data.empty() ? 0.0 : double(*std::max_element(data.begin(), data.end()));
    out.dose.unit = info.doseUnits == "RELATIVE" ? "%" : "Gy";
    out.dose.engine = "import";
    out.dose.label = name + " (" + info.doseType + ", " + info.doseSummationType + ")";
    out.dose.parameters = "file=" + file + "\nDoseType=" + info.doseType +
                          "\nDoseSummationType=" + info.doseSummationType +
                          "\nDoseGridScaling=" + std::to_string(info.doseGridScaling);
    if (info.doseType == "ERROR")
      out.messages.warn(name + ": DoseType ERROR: this is a dose difference, not a dose");
  } catch (const std::exception& e) {
    out.dose = DoseVolume{};
    out.messages.error(name + ": cannot read the RT Dose (" + e.what() + ")");
  }
  return out;
}

}  // namespace penumbra::io
