#include "dicom/synthetic_phantom.hpp"

#include <dcmtk/dcmdata/dcuid.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "dicom/dcmtk_util.hpp"

namespace fs = std::filesystem;

namespace penumbra::io {

namespace {

using Shape = SyntheticStructureSpec::Shape;

std::string newUid(const char* root) {
  char buf[100];
  dcmGenerateUniqueIdentifier(buf, root);
  return buf;
}

std::string joinDs(const std::vector<double>& v) {
  std::string s;
  char buf[32];
  for (std::size_t i = 0; i < v.size(); ++i) {
    // %.10g keeps 16 characters or fewer (the DS limit) for the values we write.
    std::snprintf(buf, sizeof buf, "%.10g", v[i]);
    s += (i ? "\\" : "") + std::string(buf);
  }
  return s;
}

void put(DcmItem& item, const DcmTagKey& tag, const std::string& value) {
  const OFCondition c = item.putAndInsertString(tag, value.c_str());
  if (c.bad())
    PENUMBRA_THROW(Internal, "synthetic phantom: cannot set " +
                                 std::string(DcmTag(tag).getTagName()) + ": " + c.text());
}

DcmItem& newItem(DcmItem& parent, const DcmTagKey& seq) {
  DcmItem* item = nullptr;
  const OFCondition c = parent.findOrCreateSequenceItem(seq, item, -2);  // -2: append
  if (c.bad() || !item)
    PENUMBRA_THROW(Internal,
                   "synthetic phantom: cannot create a sequence item: " + std::string(c.text()));
  return *item;
}

void save(DcmFileFormat& ff, const std::string& path) {
  const OFCondition c = ff.saveFile(path.c_str(), EXS_LittleEndianExplicit);
  if (c.bad()) PENUMBRA_THROW(Io, "cannot write " + path + ": " + c.text());
}

bool insideBox(const Vec3& p, const Vec3& c, const Vec3& h) {
  return std::abs(p.x - c.x) <= h.x && std::abs(p.y - c.y) <= h.y && std::abs(p.z - c.z) <= h.z;
}

bool inside(const SyntheticStructureSpec& s, const Vec3& p) {
  switch (s.shape) {
    case Shape::Box:
      return insideBox(p, s.center, s.halfSize);
    case Shape::Sphere:
      return norm(p - s.center) <= s.radius;
    case Shape::BoxWithHole:
      return insideBox(p, s.center, s.halfSize) && !insideBox(p, s.center, s.holeHalfSize);
  }
  return false;
}

// In-plane polygons (u, v) of a structure on the plane at local height w.
std::vector<std::vector<std::array<double, 2>>> polygonsAt(const SyntheticStructureSpec& s,
                                                           double w) {
  auto rect = [](double cu, double cv, double hu, double hv) {
    return std::vector<std::array<double, 2>>{
        {cu - hu, cv - hv}, {cu + hu, cv - hv}, {cu + hu, cv + hv}, {cu - hu, cv + hv}};
  };
  std::vector<std::vector<std::array<double, 2>>> out;
  const double dz = w - s.center.z;
  constexpr double eps = 1e-9;
  if (s.shape == Shape::Sphere) {
    if (std::abs(dz) >= s.radius) return out;
    const double r = std::sqrt(s.radius * s.radius - dz * dz);
    std::vector<std::array<double, 2>> poly;
    for (int a = 0; a < 72; ++a) {
      const double t = 2 * M_PI * a / 72.0;
      poly.push_back({s.center.x + r * std::cos(t), s.center.y + r * std::sin(t)});
    }
    out.push_back(std::move(poly));
    return out;
  }
  if (std::abs(dz) > s.halfSize.z + eps) return out;
  out.push_back(rect(s.center.x, s.center.y, s.halfSize.x, s.halfSize.y));
  if (s.shape == Shape::BoxWithHole && std::abs(dz) <= s.holeHalfSize.z + eps)
    out.push_back(rect(s.center.x, s.center.y, s.holeHalfSize.x, s.holeHalfSize.y));
  return out;
}

struct Frame {
  Vec3 row, col, normal, origin;
  double sliceSpacing, tan;
  Vec3 sliceOrigin(int k) const {
    return origin + normal * (k * sliceSpacing) + col * (k * sliceSpacing * tan);
  }
};

void putPatientStudy(DcmDataset& ds, const SyntheticPhantomSpec& spec, const std::string& study,
                     const std::string& forUid) {
  put(ds, DCM_PatientName, spec.patientName);
  put(ds, DCM_PatientID, spec.patientId);
  put(ds, DCM_PatientBirthDate, "");
  put(ds, DCM_PatientSex, "O");
  put(ds, DCM_StudyInstanceUID, study);
  put(ds, DCM_StudyDate, "20260101");
  put(ds, DCM_StudyTime, "120000");
  put(ds, DCM_StudyID, "1");
  put(ds, DCM_AccessionNumber, "");
  put(ds, DCM_ReferringPhysicianName, "");
  put(ds, DCM_FrameOfReferenceUID, forUid);
  put(ds, DCM_Manufacturer, "Penumbra synthetic phantom");
}

}  // namespace

std::vector<SyntheticStructureSpec> defaultSyntheticStructures(const SyntheticPhantomSpec& spec) {
  const Vec3 extent{(spec.columns - 1) * spec.pixelSpacing[1],
                    (spec.rows - 1) * spec.pixelSpacing[0], (spec.slices - 1) * spec.sliceSpacing};
  const Vec3 centre = extent * 0.5;
  SyntheticStructureSpec body{"BODY", "EXTERNAL",    {0, 255, 0}, Shape::Box,
                              centre, extent * 0.35, 0,           {}};
  SyntheticStructureSpec ptv{"PTV", "PTV", {255, 0, 0}, Shape::Box, centre, extent * 0.12, 0, {}};
  return {body, ptv};
}

SyntheticPhantomFiles writeSyntheticPhantom(const std::string& dir,
                                            const SyntheticPhantomSpec& spec) {
  PENUMBRA_REQUIRE(spec.rows > 0 && spec.columns > 0 && spec.slices > 0, InvalidArgument,
                   "synthetic phantom: rows, columns and slices must be positive");
  PENUMBRA_REQUIRE(spec.pixelSpacing[0] > 0 && spec.pixelSpacing[1] > 0 && spec.sliceSpacing > 0,
                   InvalidArgument, "synthetic phantom: spacings must be positive");
  dcm::initialiseDcmtk();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) PENUMBRA_THROW(Io, "cannot create folder " + dir + ": " + ec.message());

  const auto structures =
      spec.structures.empty() ? defaultSyntheticStructures(spec) : spec.structures;
  const SyntheticStructureSpec* body = nullptr;
  for (const auto& s : structures)
    if (s.interpretedType == "EXTERNAL") {
      body = &s;
      break;
    }
  Frame f;
  f.row = normalized({spec.orientation[0], spec.orientation[1], spec.orientation[2]});
  f.col = normalized({spec.orientation[3], spec.orientation[4], spec.orientation[5]});
  f.normal = normalized(cross(f.row, f.col));
  f.origin = spec.origin;
  f.sliceSpacing = spec.sliceSpacing;
  f.tan = std::tan(spec.tiltDegrees * M_PI / 180.0);

  SyntheticPhantomFiles out;
  const std::string study = newUid(SITE_STUDY_UID_ROOT);
  out.seriesInstanceUid = newUid(SITE_SERIES_UID_ROOT);
  out.frameOfReferenceUid = newUid(SITE_UID_ROOT);
  const std::set<int> omit(spec.omitSlices.begin(), spec.omitSlices.end());
  std::vector<std::string> sopUids(spec.slices);
  std::vector<Uint16> pixels(std::size_t(spec.rows) * spec.columns);

  for (int k = 0; k < spec.slices; ++k) {
    if (omit.count(k)) continue;
    sopUids[k] = newUid(SITE_INSTANCE_UID_ROOT);
    DcmFileFormat ff;
    DcmDataset& ds = *ff.getDataset();
    put(ds, DCM_SOPClassUID, UID_CTImageStorage);
    put(ds, DCM_SOPInstanceUID, sopUids[k]);
    put(ds, DCM_Modality, "CT");
    putPatientStudy(ds, spec, study, out.frameOfReferenceUid);
    put(ds, DCM_SeriesInstanceUID, out.seriesInstanceUid);
    put(ds, DCM_SeriesNumber, "1");
    put(ds, DCM_SeriesDescription, spec.seriesDescription);
    put(ds, DCM_InstanceNumber, std::to_string(k + 1));
    put(ds, DCM_ImageType, "ORIGINAL\\PRIMARY\\AXIAL");
    put(ds, DCM_PatientPosition, "HFS");
    const Vec3 o = f.sliceOrigin(k);
    put(ds, DCM_ImagePositionPatient, joinDs({o.x, o.y, o.z}));
    put(ds, DCM_ImageOrientationPatient,
        joinDs({spec.orientation.begin(), spec.orientation.end()}));
    put(ds, DCM_PixelSpacing, joinDs({spec.pixelSpacing[0], spec.pixelSpacing[1]}));
    put(ds, DCM_SliceThickness, joinDs({spec.sliceSpacing}));
    put(ds, DCM_GantryDetectorTilt, joinDs({spec.tiltDegrees}));
    put(ds, DCM_SamplesPerPixel, "1");
    put(ds, DCM_PhotometricInterpretation, "MONOCHROME2");
    put(ds, DCM_Rows, std::to_string(spec.rows));
    put(ds, DCM_Columns, std::to_string(spec.columns));
    put(ds, DCM_BitsAllocated, "16");
    put(ds, DCM_BitsStored, "16");
    put(ds, DCM_HighBit, "15");
    put(ds, DCM_PixelRepresentation, "0");
    // Unsigned storage with intercept -1024, as most scanners write, so import must rescale.
    put(ds, DCM_RescaleIntercept, "-1024");
    put(ds, DCM_RescaleSlope, "1");
    put(ds, DCM_RescaleType, "HU");
    put(ds, DCM_KVP, "120");
    for (int j = 0; j < spec.rows; ++j)
      for (int i = 0; i < spec.columns; ++i) {
        const Vec3 p{i * spec.pixelSpacing[1], j * spec.pixelSpacing[0], k * spec.sliceSpacing};
        const int hu = (!body || inside(*body, p)) ? spec.insideHu : spec.outsideHu;
        pixels[std::size_t(j) * spec.columns + i] = Uint16(std::clamp(hu + 1024, 0, 65535));
      }
    const OFCondition c =
        ds.putAndInsertUint16Array(DCM_PixelData, pixels.data(), (unsigned long)pixels.size());
    if (c.bad())
      PENUMBRA_THROW(Internal,
                     "synthetic phantom: cannot set pixel data: " + std::string(c.text()));
    char name[32];
    std::snprintf(name, sizeof name, "CT_%04d.dcm", k + 1);
    const std::string path = (fs::path(dir) / name).string();
    save(ff, path);
    out.ctFiles.push_back(path);
  }
  if (!spec.writeStructureSet) return out;

  DcmFileFormat ff;
  DcmDataset& ds = *ff.getDataset();
  put(ds, DCM_SOPClassUID, UID_RTStructureSetStorage);
  put(ds, DCM_SOPInstanceUID, newUid(SITE_INSTANCE_UID_ROOT));
  put(ds, DCM_Modality, "RTSTRUCT");
  putPatientStudy(ds, spec, study, out.frameOfReferenceUid);
  put(ds, DCM_SeriesInstanceUID, newUid(SITE_SERIES_UID_ROOT));
  put(ds, DCM_SeriesNumber, "2");
  put(ds, DCM_InstanceNumber, "1");
  put(ds, DCM_StructureSetLabel, "SYNTHETIC");
  put(ds, DCM_StructureSetDate, "20260101");
  put(ds, DCM_StructureSetTime, "120000");
  DcmItem& rfor = newItem(ds, DCM_ReferencedFrameOfReferenceSequence);
  put(rfor, DCM_FrameOfReferenceUID, out.frameOfReferenceUid);
  DcmItem& rstudy = newItem(rfor, DCM_RTReferencedStudySequence);
  put(rstudy, DCM_ReferencedSOPClassUID, "1.2.840.10008.3.1.2.3.1");  // Detached Study Mgmt
  put(rstudy, DCM_ReferencedSOPInstanceUID, study);
  DcmItem& rseries = newItem(rstudy, DCM_RTReferencedSeriesSequence);
  put(rseries, DCM_SeriesInstanceUID, out.seriesInstanceUid);
  for (int k = 0; k < spec.slices; ++k) {
    if (sopUids[k].empty()) continue;
    DcmItem& img = newItem(rseries, DCM_ContourImageSequence);
    put(img, DCM_ReferencedSOPClassUID, UID_CTImageStorage);
    put(img, DCM_ReferencedSOPInstanceUID, sopUids[k]);
  }
  for (std::size_t r = 0; r < structures.size(); ++r) {
    const auto& s = structures[r];
    const std::string number = std::to_string(r + 1);
    DcmItem& roi = newItem(ds, DCM_StructureSetROISequence);
    put(roi, DCM_ROINumber, number);
    put(roi, DCM_ReferencedFrameOfReferenceUID, out.frameOfReferenceUid);
    put(roi, DCM_ROIName, s.name);
    put(roi, DCM_ROIGenerationAlgorithm, "MANUAL");
    DcmItem& rc = newItem(ds, DCM_ROIContourSequence);
    put(rc, DCM_ROIDisplayColor,
        std::to_string(s.color[0]) + "\\" + std::to_string(s.color[1]) + "\\" +
            std::to_string(s.color[2]));
    put(rc, DCM_ReferencedROINumber, number);
    // Contours on every written slice (drawn at the slice's own, possibly tilted, origin).
    for (int k = 0; k < spec.slices; ++k) {
      if (sopUids[k].empty()) continue;
      const Vec3 o = f.sliceOrigin(k);
      for (const auto& poly : polygonsAt(s, k * spec.sliceSpacing)) {
        DcmItem& c = newItem(rc, DCM_ContourSequence);
        DcmItem& img = newItem(c, DCM_ContourImageSequence);
        put(img, DCM_ReferencedSOPClassUID, UID_CTImageStorage);
        put(img, DCM_ReferencedSOPInstanceUID, sopUids[k]);
        put(c, DCM_ContourGeometricType, "CLOSED_PLANAR");
        put(c, DCM_NumberOfContourPoints, std::to_string(poly.size()));
        std::vector<double> data;
        for (const auto& uv : poly) {
          const Vec3 p = o + f.row * uv[0] + f.col * uv[1];
          data.insert(data.end(), {p.x, p.y, p.z});
        }
        put(c, DCM_ContourData, joinDs(data));
      }
    }
    DcmItem& obs = newItem(ds, DCM_RTROIObservationsSequence);
    put(obs, DCM_ObservationNumber, number);
    put(obs, DCM_ReferencedROINumber, number);
    put(obs, DCM_RTROIInterpretedType, s.interpretedType);
    put(obs, DCM_ROIInterpreter, "");
  }
  out.structureSetFile = (fs::path(dir) / "RS.dcm").string();
  save(ff, out.structureSetFile);
  return out;
}

}  // namespace penumbra::io
