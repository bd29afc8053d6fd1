#include "dicom/series_verdict.hpp"

#include <dcmtk/dcmdata/dccodec.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>

#include "dicom/dcmtk_util.hpp"

namespace penumbra::io {

namespace {

bool allFinite(const std::vector<double>& v) {
  for (double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// "CT_0003.dcm: ImagePositionPatient 'NaN\-15\4' is not ..." (the value as written).
std::string badValue(const std::string& name, DcmItem& ds, const DcmTagKey& tag,
                     const std::string& what) {
  const std::string raw = dcm::rawValue(ds, tag);
  return name + ": " + DcmTag(tag).getTagName() +
         (raw.empty() ? std::string(" is missing; it must be ") : " '" + raw + "' is not ") + what;
}

// Appends at most `shown` messages, then one line that counts the rest.
void appendCapped(std::vector<std::string>& out, const std::vector<std::string>& in,
                  const std::string& label, const char* kind) {
  constexpr std::size_t shown = 4;
  for (std::size_t i = 0; i < in.size() && i < shown; ++i) out.push_back(in[i]);
  if (in.size() > shown)
    out.push_back(label + ": " + std::to_string(in.size() - shown) + " more " + kind +
                  " in other files of this series");
}

// What the pixel reader (ct_series_reader.cpp) needs, checked here so that the scan knows
// it too: one greyscale frame of 8, 16 or 32 bits, uncompressed or in a compression whose
// decoder is registered (dcmtk_util: RLE, JPEG, JPEG-LS; free DCMTK has no JPEG 2000), and
// uncompressed pixel data at least Rows x Columns long.
void checkPixelData(DcmDataset& ds, const std::string& name, SliceHeader& h) {
  const E_TransferSyntax xfer = ds.getOriginalXfer();
  const DcmXfer x(xfer);
  if (x.isEncapsulated() && !DcmCodecList::canChangeCoding(xfer, EXS_LittleEndianExplicit))
    h.problems.push_back(name + ": the pixel data is compressed as " + x.getXferName() + " (" +
                         x.getXferID() +
                         "), which this build cannot decode; convert the series to an "
                         "uncompressed transfer syntax first");
  const long samples = dcm::getInt(ds, DCM_SamplesPerPixel).value_or(1);
  if (samples != 1)
    h.problems.push_back(name + ": SamplesPerPixel '" + dcm::rawValue(ds, DCM_SamplesPerPixel) +
                         "' makes it a colour image; a CT slice is greyscale (1)");
  const long frames = dcm::getInt(ds, DCM_NumberOfFrames).value_or(1);
  if (frames > 1)
    h.problems.push_back(name + ": NumberOfFrames '" + dcm::rawValue(ds, DCM_NumberOfFrames) +
                         "' makes it a multi-frame image; only single-frame CT slices "
                         "are supported");
  const long allocated = dcm::getInt(ds, DCM_BitsAllocated).value_or(0);
  const long stored = dcm::getInt(ds, DCM_BitsStored).value_or(allocated);
  if (allocated != 8 && allocated != 16 && allocated != 32) {
    h.problems.push_back(badValue(name, ds, DCM_BitsAllocated, "8, 16 or 32 bits"));
    return;
  }
  if (stored <= 0 || stored > allocated)
    h.problems.push_back(
        badValue(name, ds, DCM_BitsStored,
                 "between 1 and BitsAllocated (" + std::to_string(allocated) + ")"));
  DcmElement* pixels = nullptr;
  if (ds.findAndGetElement(DCM_PixelData, pixels).bad() || !pixels) {
    h.problems.push_back(name + ": the file has no pixel data");
    return;
  }
  if (x.isEncapsulated() || h.rows <= 0 || h.columns <= 0) return;
  const std::uint64_t needed =
      std::uint64_t(h.rows) * std::uint64_t(h.columns) * std::uint64_t(allocated / 8);
  const std::uint64_t held = pixels->getLength();
  if (held < needed)
    h.problems.push_back(name + ": the pixel data holds " + std::to_string(held) +
                         " bytes, but Rows x Columns (" + std::to_string(h.rows) + " x " +
                         std::to_string(h.columns) + ") at " + std::to_string(allocated) +
                         " bits need " + std::to_string(needed));
}

}  // namespace

bool readSliceHeader(DcmDataset& ds, const std::string& file, bool truncated, SliceHeader& h,
                     std::string& why) {
  h.file = file;
  h.sopInstanceUid = dcm::getString(ds, DCM_SOPInstanceUID);
  const std::string name = dcm::shortName(file);
  const auto ipp = dcm::getNumbers(ds, DCM_ImagePositionPatient);
  const auto iop = dcm::getNumbers(ds, DCM_ImageOrientationPatient);
  if (ipp.empty() || iop.empty()) {
    why = "no ImagePositionPatient/ImageOrientationPatient (a 2D image, not a volume slice)";
    return false;
  }
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  auto problem = [&](const DcmTagKey& tag, const std::string& what) {
    h.problems.push_back(badValue(name, ds, tag, what));
    h.geometryValid = false;
  };

  if (ipp.size() == 3 && allFinite(ipp)) {
    h.position = {ipp[0], ipp[1], ipp[2]};
  } else {
    problem(DCM_ImagePositionPatient, "a position (three finite numbers, mm)");
    h.position = {nan, nan, nan};
  }
  if (iop.size() == 6 && allFinite(iop)) {
    for (int i = 0; i < 6; ++i) h.orientation[i] = iop[i];
  } else {
    problem(DCM_ImageOrientationPatient, "a pair of direction cosines (six finite numbers)");
    h.orientation.fill(nan);
  }
  const auto ps = dcm::getNumbers(ds, DCM_PixelSpacing);
  if (ps.size() == 2 && allFinite(ps) && ps[0] > 0 && ps[1] > 0) {
    h.rowSpacing = ps[0];
    h.columnSpacing = ps[1];
  } else {
    problem(DCM_PixelSpacing, "two positive pixel spacings (mm)");
    h.rowSpacing = h.columnSpacing = nan;
  }
  // No CT slice comes near 8192 pixels a side. A header that claims more (65535 x 65535: 8.6 GB
  // of 16-bit pixels) is malformed, and DCMTK's RLE/JPEG decoders would allocate the whole image
  // before reading a byte of it (reproduced with fuzz_dicom_ct).
  constexpr double kMaxSide = 8192;
  for (const DcmTagKey& tag : {DCM_Rows, DCM_Columns}) {
    const auto v = dcm::getNumbers(ds, tag);
    const bool ok = v.size() == 1 && v[0] >= 1 && v[0] <= kMaxSide && v[0] == std::floor(v[0]);
    if (!ok) problem(tag, "an image size (1 to 8192)");
    (tag == DCM_Rows ? h.rows : h.columns) = ok ? int(v[0]) : 0;
  }

  // Thickness and spacing between slices only matter for a single slice (the positions give
  // the spacing otherwise): a broken value is ignored with a warning rather than refused.
  for (const DcmTagKey& tag : {DCM_SliceThickness, DCM_SpacingBetweenSlices}) {
    const auto v = dcm::getNumbers(ds, tag);
    double& out = tag == DCM_SliceThickness ? h.sliceThickness : h.spacingBetweenSlices;
    out = 0;
    if (v.empty()) continue;
    if (v.size() == 1 && std::isfinite(v[0])) {
      if (v[0] > 0) out = v[0];
      // SpacingBetweenSlices may be negative in some MR; a negative thickness is nonsense.
      if (tag == DCM_SliceThickness && v[0] < 0)
        h.warnings.push_back(badValue(name, ds, tag,
                                      "a thickness; ignored (the slice spacing "
                                      "comes from the slice positions)"));
    } else {
      h.warnings.push_back(
          badValue(name, ds, tag,
                   "a finite number of mm; ignored (the slice spacing comes from the "
                   "slice positions)"));
    }
  }
  // HU = stored value x RescaleSlope + RescaleIntercept. A NaN, zero or negative slope or a
  // non-finite intercept gives HU that are not the patient's, and so a wrong dose: refused,
  // never replaced by a default. Absent means the identity, as the standard says.
  const auto slope = dcm::getNumbers(ds, DCM_RescaleSlope);
  if (slope.empty())
    h.rescaleSlope = 1;
  else if (slope.size() == 1 && std::isfinite(slope[0]) && slope[0] > 0)
    h.rescaleSlope = slope[0];
  else
    h.problems.push_back(badValue(name, ds, DCM_RescaleSlope,
                                  "a rescale slope (a positive finite number: HU = stored "
                                  "value x RescaleSlope + RescaleIntercept)"));
  const auto intercept = dcm::getNumbers(ds, DCM_RescaleIntercept);
  if (intercept.empty())
    h.rescaleIntercept = 0;
  else if (intercept.size() == 1 && std::isfinite(intercept[0]))
    h.rescaleIntercept = intercept[0];
  else
    h.problems.push_back(
        badValue(name, ds, DCM_RescaleIntercept, "a rescale intercept (a finite number of HU)"));

  if (truncated)
    h.problems.push_back(name +
                         ": the file is truncated or not a complete DICOM file (its "
                         "data ends early)");
  else
    checkPixelData(ds, name, h);
  return true;
}

SeriesVerdict judgeSeries(const std::string& modality, const std::vector<SliceHeader>& slices,
                          const std::string& label) {
  SeriesVerdict v;
  if (modality != "CT")
    v.errors.push_back(label + ": modality " + (modality.empty() ? "(none)" : modality) +
                       "; only CT series (in HU) can be imported for planning");
  std::vector<std::string> problems, warnings;
  bool geometryValid = true;
  for (const auto& s : slices) {
    problems.insert(problems.end(), s.problems.begin(), s.problems.end());
    warnings.insert(warnings.end(), s.warnings.begin(), s.warnings.end());
    geometryValid = geometryValid && s.geometryValid;
  }
  appendCapped(v.errors, problems, label, "problem(s)");
  appendCapped(v.warnings, warnings, label, "warning(s)");
  // The series analysis needs every slice's geometry; with one broken it would only repeat
  // the problem above in other words.
  if (geometryValid) {
    v.geometry = analyzeSeriesGeometry(slices, label);
    v.errors.insert(v.errors.end(), v.geometry.errors.begin(), v.geometry.errors.end());
    v.warnings.insert(v.warnings.end(), v.geometry.warnings.begin(), v.geometry.warnings.end());
  }
  return v;
}

std::string seriesLabel(const std::string& modality, const std::string& folder) {
  return modality + " series in " + std::filesystem::path(folder).filename().string();
}

}  // namespace penumbra::io
