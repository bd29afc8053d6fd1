// Acceptance tests on the shared real data (skipped when absent): matRad BOXPHANTOM, the
// Nelms DVH phantom (two CT series sharing one SeriesInstanceUID), dicompyler-core's example
// (1 of 98 referenced CT slices present) and pydicom's meta-less rtstruct.dcm.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "dicom/dicom_import.hpp"
#include "io_test_util.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::io;
using penumbra::test::anyContains;
using penumbra::test::dataPath;
using penumbra::test::joined;
using penumbra::test::maskCount;

namespace {

std::string readText(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Minimal extraction from phantom.json (no JSON library in the stack): the text of the
// structure entry whose "name" is `name`, up to the next entry.
std::string jsonStructure(const std::string& json, const std::string& name) {
  const auto at = json.find("\"name\": \"" + name + "\"", json.find("\"structures\""));
  if (at == std::string::npos) return {};
  return json.substr(at, json.find("\"roi_number\"", at) - at);
}

std::string jsonString(const std::string& entry, const std::string& key) {
  const auto k = entry.find("\"" + key + "\": \"");
  if (k == std::string::npos) return {};
  const auto b = k + key.size() + 5;
  return entry.substr(b, entry.find('"', b) - b);
}

std::array<int, 3> jsonColour(const std::string& entry) {
  std::array<int, 3> c{-1, -1, -1};
  const auto k = entry.find("\"display_color_rgb255\"");
  if (k == std::string::npos) return c;
  std::string s = entry.substr(entry.find('[', k) + 1);
  std::replace(s.begin(), s.end(), ',', ' ');
  std::istringstream in(s);
  in >> c[0] >> c[1] >> c[2];
  return c;
}

double analyticalVolumeCc(const std::string& structure, const std::string& ctSpacing) {
  std::ifstream f(dataPath("patients/nelms-dvh-phantom/reference/analytical_dvh_points.csv"));
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(structure + "," + ctSpacing + ",", 0) == 0) {
      // structure,ct_slice_spacing,structure_shift,dose_voxel_mm,gradient,volume_cc,...
      std::vector<std::string> cols;
      std::string cell;
      std::istringstream in(line);
      while (std::getline(in, cell, ',')) cols.push_back(cell);
      return std::stod(cols.at(5));
    }
  return -1;
}

}  // namespace

TEST(IoRealData, BoxPhantomImportsExactly) {
  PENUMBRA_REQUIRE_DATA("phantoms/BOXPHANTOM");
  const auto t0 = std::chrono::steady_clock::now();
  const DicomScan scan = scanDicomFolder(dataPath("phantoms/BOXPHANTOM"));
  const auto t1 = std::chrono::steady_clock::now();
  ASSERT_EQ(scan.series.size(), 1u) << dicomDoctorReport(scan);
  ASSERT_EQ(scan.structureSets.size(), 1u);
  EXPECT_EQ(scan.unreadableFiles, 0);
  EXPECT_EQ(scan.series[0].slices, 160);
  EXPECT_TRUE(scan.series[0].importable);
  const PatientImportResult r = importPatient(scan, "");
  const auto t2 = std::chrono::steady_clock::now();
  ASSERT_TRUE(r.ok()) << joined(r.messages.errors);
  EXPECT_TRUE(r.messages.warnings.empty()) << joined(r.messages.warnings);
  // Not an assertion (timing belongs in the benchmark): printed for the record.
  std::cout << "BOXPHANTOM scan " << std::chrono::duration<double, std::milli>(t1 - t0).count()
            << " ms, import " << std::chrono::duration<double, std::milli>(t2 - t1).count()
            << " ms\n";

  const CtVolume& ct = r.patient.ct;
  EXPECT_EQ(ct.grid.dims, (std::array<int, 3>{160, 160, 160}));
  EXPECT_NEAR(ct.grid.spacing.x, 3.0, 1e-9);
  EXPECT_NEAR(ct.grid.spacing.y, 3.0, 1e-9);
  EXPECT_NEAR(ct.grid.spacing.z, 3.0, 1e-9);
  const Vec3 first = ct.grid.indexToWorld({0, 0, 0});
  EXPECT_NEAR(first.x, -240, 1e-6);
  EXPECT_NEAR(first.y, -240, 1e-6);
  EXPECT_NEAR(first.z, -240, 1e-6);
  EXPECT_EQ(*std::min_element(ct.data.begin(), ct.data.end()), -1024);
  EXPECT_EQ(*std::max_element(ct.data.begin(), ct.data.end()), 0);
  EXPECT_NE(r.patient.name.find("BOXPHANTOM"), std::string::npos) << r.patient.name;
  EXPECT_FALSE(r.patient.frameOfReferenceUid.empty());

  const std::string json = readText(dataPath("phantoms/BOXPHANTOM/phantom.json"));
  const std::pair<const char*, std::size_t> expected[] = {{"BODY", 531441}, {"OuterTarget", 9261}};
  ASSERT_EQ(r.patient.structures.structures.size(), 2u);
  for (const auto& [name, count] : expected) {
    const Structure* s = r.patient.structures.find(name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(maskCount(s->mask), count) << name;
    const std::string entry = jsonStructure(json, name);
    ASSERT_FALSE(entry.empty()) << name;
    EXPECT_EQ(s->interpretedType, jsonString(entry, "dicom_rt_roi_interpreted_type")) << name;
    const auto colour = jsonColour(entry);
    EXPECT_EQ((std::array<int, 3>{s->color[0], s->color[1], s->color[2]}), colour) << name;
  }
  EXPECT_EQ(r.patient.structures.find("BODY")->kind, StructureKind::External);
  EXPECT_EQ(r.patient.structures.find("OuterTarget")->kind, StructureKind::Target);
}

TEST(IoRealData, NelmsSharedSeriesUidIsSplitIntoTwoSeries) {
  PENUMBRA_REQUIRE_DATA("patients/nelms-dvh-phantom");
  const DicomScan scan = scanDicomFolder(dataPath("patients/nelms-dvh-phantom"));
  std::vector<const SeriesInfo*> cts;
  for (const auto& s : scan.series)
    if (s.modality == "CT") cts.push_back(&s);
  ASSERT_EQ(cts.size(), 2u) << dicomDoctorReport(scan);
  EXPECT_EQ(cts[0]->seriesInstanceUid, cts[1]->seriesInstanceUid);
  EXPECT_NE(cts[0]->key, cts[1]->key);
  std::vector<int> slices{cts[0]->slices, cts[1]->slices};
  std::sort(slices.begin(), slices.end());
  EXPECT_EQ(slices, (std::vector<int>{20, 30}));
  for (const auto* s : cts) {
    EXPECT_TRUE(s->sharedUid);
    EXPECT_TRUE(s->importable) << joined(s->problems);
    EXPECT_TRUE(anyContains(s->problems, "shared by 2"));
  }
  EXPECT_TRUE(anyContains(scan.messages.warnings, "shared by 2"));
  EXPECT_EQ(scan.structureSets.size(), 30u);
  const std::string report = dicomDoctorReport(scan);
  EXPECT_NE(report.find("shared by 2"), std::string::npos);
  EXPECT_NE(report.find("RTDOSE"), std::string::npos);
  // Importing without a key must ask for one.
  EXPECT_FALSE(importPatient(scan, "").ok());
}

TEST(IoRealData, NelmsSphereVolumeIsPlausible) {
  PENUMBRA_REQUIRE_DATA("patients/nelms-dvh-phantom");
  const DicomScan scan = scanDicomFolder(dataPath("patients/nelms-dvh-phantom"));
  const SeriesInfo* ct2 = nullptr;
  for (const auto& s : scan.series)
    if (s.modality == "CT" && s.slices == 30) ct2 = &s;
  ASSERT_NE(ct2, nullptr);
  ImportOptions options;
  options.structureSetFile = dataPath("patients/nelms-dvh-phantom/RS_2mm/Sphere_20_0.dcm");
  const auto r = importPatient(scan, ct2->key, options);
  ASSERT_TRUE(r.ok()) << joined(r.messages.errors);
  const CtVolume& ct = r.patient.ct;
  EXPECT_EQ(ct.grid.dims, (std::array<int, 3>{512, 512, 30}));
  EXPECT_NEAR(ct.grid.spacing.z, 2.0, 1e-6);
  EXPECT_EQ(*std::min_element(ct.data.begin(), ct.data.end()), 0);  // uniform water
  EXPECT_EQ(*std::max_element(ct.data.begin(), ct.data.end()), 0);
  // Pick the sphere ROI (the file also holds POI_1, a marker without contours).
  const Structure* sphere = nullptr;
  for (const auto& s : r.patient.structures.structures)
    if (!s.contours.empty()) sphere = &s;
  ASSERT_NE(sphere, nullptr);
  const double volumeCc = double(maskCount(sphere->mask)) * ct.grid.voxelVolumeMm3() / 1000.0;
  const double analytical = analyticalVolumeCc("Sphere_20_0", "2mm");
  ASSERT_GT(analytical, 0);
  // Voxel-centre rasterisation without half-slice end caps (which the analytical volume
  // includes) is coarse: 10 % is what a 2 mm slice grid can promise for a 24 mm sphere.
  EXPECT_NEAR(volumeCc, analytical, 0.10 * analytical) << "rasterised " << volumeCc << " cc";
  std::cout << "Sphere_20_0: rasterised " << volumeCc << " cc, analytical " << analytical
            << " cc\n";
  // The automatic choice among 15 matching 2 mm structure sets warns; with the file given,
  // the 2 mm structure set must resolve all its image references.
  EXPECT_FALSE(anyContains(r.messages.warnings, "missing")) << joined(r.messages.warnings);
}

TEST(IoRealData, DicompylerExampleImportsTheOneSliceAndWarns) {
  PENUMBRA_REQUIRE_DATA("dicom-samples/dicompyler-core-example");
  const DicomScan scan = scanDicomFolder(dataPath("dicom-samples/dicompyler-core-example"));
  ASSERT_EQ(scan.series.size(), 1u) << dicomDoctorReport(scan);
  ASSERT_EQ(scan.structureSets.size(), 1u);
  EXPECT_EQ(scan.structureSets[0].roiCount, 10);
  EXPECT_TRUE(anyContains(scan.otherObjects, "RTPLAN"));
  EXPECT_NE(dicomDoctorReport(scan).find("97 MISSING"), std::string::npos)
      << dicomDoctorReport(scan);
  const auto r = importPatient(scan, "");
  ASSERT_TRUE(r.ok()) << joined(r.messages.errors);
  EXPECT_EQ(r.patient.ct.grid.dims, (std::array<int, 3>{512, 512, 1}));
  EXPECT_TRUE(anyContains(r.messages.warnings, "single-slice")) << joined(r.messages.warnings);
  EXPECT_TRUE(anyContains(r.messages.warnings, "references 98 CT images, 97 are missing"))
      << joined(r.messages.warnings);
  EXPECT_EQ(r.patient.structures.structures.size(), 10u);
  // The slice at z = 168.56 mm carries a BODY contour.
  const Structure* body = r.patient.structures.find("BODY");
  ASSERT_NE(body, nullptr);
  EXPECT_GT(maskCount(body->mask), 1000u);
}

TEST(IoRealData, RtStructWithoutFileMetaIsRead) {
  PENUMBRA_REQUIRE_DATA("dicom-samples/rtstruct.dcm");
  const DicomScan scan = scanDicomFiles({dataPath("dicom-samples/rtstruct.dcm")});
  ASSERT_EQ(scan.structureSets.size(), 1u) << joined(scan.messages.warnings);
  EXPECT_GT(scan.structureSets[0].roiCount, 0);
  EXPECT_FALSE(scan.structureSets[0].frameOfReferenceUid.empty());
}
