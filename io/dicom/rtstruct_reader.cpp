#include "dicom/rtstruct_reader.hpp"

#include <dcmtk/dcmrt/drtstrct.h>

#include <map>
#include <set>

#include "dicom/dcmtk_util.hpp"

namespace penumbra::io {

namespace {

std::string str(OFString s) {
  std::string r = s.c_str();
  while (!r.empty() && (r.back() == ' ' || r.back() == '\0')) r.pop_back();
  while (!r.empty() && r.front() == ' ') r.erase(r.begin());
  return r;
}

// Walks ReferencedFrameOfReference > RTReferencedStudy > RTReferencedSeries > ContourImage:
// the images the structure set says it was drawn on.
void collectReferences(DRTStructureSetIOD& rtss, StructureSetInfo& info,
                       std::set<std::string>& sops) {
  auto& rfor = rtss.getReferencedFrameOfReferenceSequence();
  for (size_t f = 0; f < rfor.getNumberOfItems(); ++f) {
    DRTReferencedFrameOfReferenceSequence::Item* fItem = nullptr;
    if (rfor.getItem(f, fItem).bad() || !fItem) continue;
    OFString forUid;
    if (fItem->getFrameOfReferenceUID(forUid).good() && info.frameOfReferenceUid.empty())
      info.frameOfReferenceUid = str(forUid);
    auto& studies = fItem->getRTReferencedStudySequence();
    for (size_t s = 0; s < studies.getNumberOfItems(); ++s) {
      DRTRTReferencedStudySequence::Item* sItem = nullptr;
      if (studies.getItem(s, sItem).bad() || !sItem) continue;
      auto& series = sItem->getRTReferencedSeriesSequence();
      for (size_t r = 0; r < series.getNumberOfItems(); ++r) {
        DRTRTReferencedSeriesSequence::Item* rItem = nullptr;
        if (series.getItem(r, rItem).bad() || !rItem) continue;
        OFString uid;
        if (rItem->getSeriesInstanceUID(uid).good() && !str(uid).empty())
          info.referencedSeriesUids.push_back(str(uid));
        auto& images = rItem->getContourImageSequence();
        for (size_t i = 0; i < images.getNumberOfItems(); ++i) {
          DRTContourImageSequence::Item* iItem = nullptr;
          OFString sop;
          if (images.getItem(i, iItem).good() && iItem &&
              iItem->getReferencedSOPInstanceUID(sop).good() && !str(sop).empty())
            sops.insert(str(sop));
        }
      }
    }
  }
  if (!info.referencedSeriesUids.empty()) info.referencedSeriesUid = info.referencedSeriesUids[0];
}

std::array<std::uint8_t, 3> parseColour(DRTROIContourSequence::Item& item, bool& ok) {
  std::array<std::uint8_t, 3> rgb{255, 0, 0};
  ok = true;
  for (unsigned long c = 0; c < 3; ++c) {
    Sint32 v = 0;
    if (item.getROIDisplayColor(v, c).bad()) {
      ok = false;
      return {255, 0, 0};
    }
    rgb[c] = std::uint8_t(std::clamp<Sint32>(v, 0, 255));
  }
  return rgb;
}

}  // namespace

bool readRtStruct(DcmDataset& dataset, const std::string& file, bool withContours,
                  RtStructContents& out, ImportMessages& messages) {
  const std::string name = dcm::shortName(file);
  DRTStructureSetIOD rtss;
  const OFCondition cond = rtss.read(dataset);
  if (cond.bad()) {
    messages.error(name + ": cannot read the RT Structure Set (" + cond.text() + ")");
    return false;
  }
  StructureSetInfo& info = out.info;
  info.file = file;
  OFString v;
  if (rtss.getStructureSetLabel(v).good()) info.label = str(v);
  if (rtss.getSOPInstanceUID(v).good()) info.sopInstanceUid = str(v);
  if (rtss.getSeriesInstanceUID(v).good()) info.seriesInstanceUid = str(v);
  if (rtss.getPatientName(v).good()) info.patientName = str(v);
  if (rtss.getPatientID(v).good()) info.patientId = str(v);
  // Top-level FrameOfReferenceUID is optional in RT Structure Sets (Pinnacle omits it);
  // the referenced frame of reference is the authoritative one.
  if (rtss.getFrameOfReferenceUID(v).good()) info.frameOfReferenceUid = str(v);
  std::set<std::string> sops;
  collectReferences(rtss, info, sops);

  // ROI number -> structure, in StructureSetROISequence order. A number used twice makes
  // every reference to it (contours, interpreted type) ambiguous: the later ROI used to take
  // the earlier one's contours, so a target could become the BODY. Such a file is refused.
  std::map<Sint32, std::size_t> byNumber;
  std::vector<std::string> duplicates;
  auto& rois = rtss.getStructureSetROISequence();
  for (size_t r = 0; r < rois.getNumberOfItems(); ++r) {
    DRTStructureSetROISequence::Item* item = nullptr;
    if (rois.getItem(r, item).bad() || !item) continue;
    Structure s;
    Sint32 number = 0;
    if (item->getROINumber(number).bad()) {
      messages.warn(name + ": ROI item " + std::to_string(r + 1) + " has no ROINumber; skipped");
      continue;
    }
    s.roiNumber = number;
    if (item->getROIName(v).good()) s.name = str(v);
    if (s.name.empty()) s.name = "ROI " + std::to_string(number);
    if (info.frameOfReferenceUid.empty() && item->getReferencedFrameOfReferenceUID(v).good())
      info.frameOfReferenceUid = str(v);
    info.roiNames.push_back(s.name);
    if (auto first = byNumber.find(number); first != byNumber.end()) {
      duplicates.push_back(name + ": ROI number " + std::to_string(number) +
                           " is used by two ROIs, '" + out.set.structures[first->second].name +
                           "' and '" + s.name +
                           "': their contours and types cannot be told apart, so the "
                           "structure set is refused (renumber the ROIs where it was made)");
      out.set.structures.push_back(std::move(s));
      continue;
    }
    byNumber[number] = out.set.structures.size();
    out.set.structures.push_back(std::move(s));
  }
  info.roiCount = int(out.set.structures.size());
  out.set.label = info.label;
  out.set.frameOfReferenceUid = info.frameOfReferenceUid;

  auto& observations = rtss.getRTROIObservationsSequence();
  for (size_t o = 0; o < observations.getNumberOfItems(); ++o) {
    DRTRTROIObservationsSequence::Item* item = nullptr;
    Sint32 ref = 0;
    if (observations.getItem(o, item).bad() || !item || item->getReferencedROINumber(ref).bad())
      continue;
    auto it = byNumber.find(ref);
    if (it == byNumber.end()) continue;
    Structure& s = out.set.structures[it->second];
    if (item->getRTROIInterpretedType(v).good()) s.interpretedType = str(v);
    s.kind = structureKindFromInterpretedType(s.interpretedType);
  }

  std::vector<std::size_t> contourItems(out.set.structures.size(), 0);
  auto& roiContours = rtss.getROIContourSequence();
  for (size_t c = 0; c < roiContours.getNumberOfItems(); ++c) {
    DRTROIContourSequence::Item* item = nullptr;
    Sint32 ref = 0;
    if (roiContours.getItem(c, item).bad() || !item || item->getReferencedROINumber(ref).bad())
      continue;
    auto it = byNumber.find(ref);
    if (it == byNumber.end()) {
      messages.warn(name + ": contours for ROI number " + std::to_string(ref) +
                    " which is not declared in StructureSetROISequence; skipped");
      continue;
    }
    Structure& s = out.set.structures[it->second];
    bool colourOk = true;
    s.color = parseColour(*item, colourOk);
    auto& contours = item->getContourSequence();
    contourItems[it->second] += contours.getNumberOfItems();
    int skippedType = 0, malformed = 0;
    std::string otherType;
    for (size_t k = 0; k < contours.getNumberOfItems(); ++k) {
      DRTContourSequence::Item* ci = nullptr;
      if (contours.getItem(k, ci).bad() || !ci) continue;
      auto& images = ci->getContourImageSequence();
      for (size_t i = 0; i < images.getNumberOfItems(); ++i) {
        DRTContourImageSequence::Item* ii = nullptr;
        if (images.getItem(i, ii).good() && ii && ii->getReferencedSOPInstanceUID(v).good() &&
            !str(v).empty())
          sops.insert(str(v));
      }
      if (!withContours) continue;
      if (ci->getContourGeometricType(v).bad() || str(v) != "CLOSED_PLANAR") {
        ++skippedType;
        otherType = str(v).empty() ? "(none)" : str(v);
        continue;
      }
      OFVector<Float64> data;
      if (ci->getContourData(data).bad() || data.size() < 9 || data.size() % 3 != 0) {
        ++malformed;
        continue;
      }
      Contour contour;
      contour.points.reserve(data.size() / 3);
      for (size_t p = 0; p + 2 < data.size(); p += 3)
        contour.points.push_back({data[p], data[p + 1], data[p + 2]});
      s.contours.push_back(std::move(contour));
    }
    if (skippedType > 0)
      messages.warn(name + ": ROI '" + s.name + "': " + std::to_string(skippedType) +
                    " contour(s) of type " + otherType +
                    " skipped (only CLOSED_PLANAR contours are rasterised)");
    if (malformed > 0)
      messages.warn(name + ": ROI '" + s.name + "': " + std::to_string(malformed) +
                    " contour(s) with missing or malformed ContourData skipped");
  }
  info.referencedSopInstanceUids.assign(sops.begin(), sops.end());
  // An ROI without a single contour (no ROIContourSequence item, or one with an empty
  // ContourSequence) has 0 cc: say so by name rather than let it be picked as a target.
  // Point ROIs (markers, isocentres) are exempt: they have no volume to lose. With repeated
  // ROI numbers the counts are meaningless (the refusal below says why).
  for (std::size_t i = 0; i < out.set.structures.size() && duplicates.empty(); ++i) {
    const Structure& s = out.set.structures[i];
    const bool point = s.interpretedType == "MARKER" || s.interpretedType == "ISOCENTER" ||
                       s.interpretedType == "REGISTRATION";
    if (contourItems[i] > 0 || point) continue;
    const std::string m = name + ": ROI '" + s.name + "' (ROI number " +
                          std::to_string(s.roiNumber) +
                          ") has no contours: its volume is 0 cc, so it can be neither a "
                          "target nor a DVH";
    info.problems.push_back(m);
    if (withContours) messages.warn(m);  // the import says it; the scan lists it in info
  }
  if (!duplicates.empty()) {
    for (const auto& d : duplicates) messages.error(d);
    info.problems.insert(info.problems.end(), duplicates.begin(), duplicates.end());
    info.usable = false;
    out.set.structures.clear();  // nothing ambiguous leaves this function
    return false;
  }
  return true;
}

bool readRtStructFile(const std::string& file, RtStructContents& out, ImportMessages& messages) {
  std::string error;
  auto ff = dcm::loadFile(file, dcm::LoadDepth::Full, error);
  if (!ff) {
    messages.error(error);
    return false;
  }
  try {
    return readRtStruct(*ff->getDataset(), file, true, out, messages);
  } catch (const std::exception& e) {
    messages.error(dcm::shortName(file) + ": cannot read the RT Structure Set (" + e.what() + ")");
    return false;
  }
}

}  // namespace penumbra::io
