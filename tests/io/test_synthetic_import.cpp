// Synthetic DICOM written with DCMTK (io/dicom/synthetic_phantom), then scanned and imported:
// non-square pixels, holes, tilt, oblique, missing slice, the demo phantom.
#include <dcmtk/dcmdata/dctk.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <cmath>

#include "dicom/dicom_import.hpp"
#include "dicom/synthetic_phantom.hpp"
#include "io_test_util.hpp"

using namespace penumbra;
using namespace penumbra::io;
using Shape = SyntheticStructureSpec::Shape;
using penumbra::test::anyContains;
using penumbra::test::joined;
using penumbra::test::maskCount;
using penumbra::test::TempDir;

namespace {

// 8 slices of 20 rows x 30 columns, PixelSpacing "0.5\1.25": rows 0.5 mm apart, columns
// 1.25 mm apart, so the image is 37.5 mm wide (x) and 10 mm high (y).
SyntheticPhantomSpec nonSquareSpec() {
  SyntheticPhantomSpec spec;
  spec.rows = 20;
  spec.columns = 30;
  spec.slices = 8;
  spec.pixelSpacing = {0.5, 1.25};
  spec.sliceSpacing = 2.0;
  spec.origin = {-10, -3, 5};
  return spec;
}

// A box whose edges lie on voxel edges: columns 2..11 and rows 3..12 (10 x 10 voxels).
SyntheticStructureSpec voxelEdgeBox(const SyntheticPhantomSpec& spec, const std::string& name) {
  SyntheticStructureSpec s;
  s.name = name;
  s.interpretedType = "PTV";
  s.shape = Shape::Box;
  const double dx = spec.pixelSpacing[1], dy = spec.pixelSpacing[0];
  s.center = {6.5 * dx, 7.5 * dy, 0.5 * (spec.slices - 1) * spec.sliceSpacing};
  s.halfSize = {5 * dx, 5 * dy, 100};
  return s;
}

// Rewrites Rows and Columns of a slice, leaving its pixel data as it was (a lying header).
void setRowsColumns(const std::string& file, Uint16 rows, Uint16 columns) {
  DcmFileFormat ff;
  ASSERT_TRUE(ff.loadFile(file.c_str()).good()) << file;
  ASSERT_TRUE(ff.getDataset()->putAndInsertUint16(DCM_Rows, rows).good());
  ASSERT_TRUE(ff.getDataset()->putAndInsertUint16(DCM_Columns, columns).good());
  ASSERT_TRUE(ff.saveFile(file.c_str(), EXS_LittleEndianExplicit).good()) << file;
}

long peakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

PatientImportResult scanAndImport(const std::string& dir, DicomScan* scanOut = nullptr) {
  DicomScan scan = scanDicomFolder(dir);
  if (scanOut) *scanOut = scan;
  return importPatient(scan, "");
}

}  // namespace

TEST(IoSyntheticImport, NonSquarePixelsGiveCorrectSpacingAndArea) {
  TempDir dir("nonsquare");
  SyntheticPhantomSpec spec = nonSquareSpec();
  spec.structures = {voxelEdgeBox(spec, "RECT")};
  const auto files = writeSyntheticPhantom(dir.str(), spec);
  ASSERT_EQ(files.ctFiles.size(), 8u);

  const auto r = scanAndImport(dir.str());
  ASSERT_TRUE(r.ok()) << joined(r.messages.errors);
  const Grid& g = r.patient.ct.grid;
  EXPECT_EQ(g.dims, (std::array<int, 3>{30, 20, 8}));
  EXPECT_DOUBLE_EQ(g.spacing.x, 1.25);
  EXPECT_DOUBLE_EQ(g.spacing.y, 0.5);
  EXPECT_NEAR(g.spacing.z, 2.0, 1e-9);
  EXPECT_NEAR(g.origin.x, -10, 1e-9);
  EXPECT_NEAR(g.origin.y, -3, 1e-9);
  EXPECT_NEAR(g.origin.z, 5, 1e-9);
  // No EXTERNAL structure: the whole CT is "inside" water, stored 1024 - 1024 = 0 HU.
  EXPECT_EQ(*std::max_element(r.patient.ct.data.begin(), r.patient.ct.data.end()), 0);
  EXPECT_EQ(*std::min_element(r.patient.ct.data.begin(), r.patient.ct.data.end()), 0);

  const Structure* rect = r.patient.structures.find("RECT");
  ASSERT_NE(rect, nullptr);
  const double areaMm2 = (10 * 1.25) * (10 * 0.5);
  const double expectedMm3 = areaMm2 * spec.sliceSpacing * spec.slices;
  EXPECT_EQ(maskCount(rect->mask), 800u);
  EXPECT_NEAR(double(maskCount(rect->mask)) * g.voxelVolumeMm3(), expectedMm3, 1e-6);
  // The box covers columns 2..11, rows 3..12: a swap of the spacings would move it.
  EXPECT_EQ(rect->mask.at(2, 3, 0), 1);
  EXPECT_EQ(rect->mask.at(11, 12, 7), 1);
  EXPECT_EQ(rect->mask.at(12, 3, 0), 0);
  EXPECT_EQ(rect->mask.at(2, 13, 0), 0);
}

TEST(IoSyntheticImport, HoleContourIsSubtracted) {
  TempDir dir("hole");
  SyntheticPhantomSpec spec = nonSquareSpec();
  SyntheticStructureSpec ring = voxelEdgeBox(spec, "RING");
  ring.shape = Shape::BoxWithHole;
  // Inner square: columns 5..8, rows 6..9 (4 x 4 voxels), on every slice.
  ring.holeHalfSize = {2 * spec.pixelSpacing[1], 2 * spec.pixelSpacing[0], 100};
  spec.structures = {ring};
  writeSyntheticPhantom(dir.str(), spec);
  const auto r = scanAndImport(dir.str());
  ASSERT_TRUE(r.ok()) << joined(r.messages.errors);
  const Structure* s = r.patient.structures.find("RING");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->contours.size(), 16u);  // outer + inner on 8 slices
  EXPECT_EQ(maskCount(s->mask), std::size_t((100 - 16) * 8));
  EXPECT_EQ(s->mask.at(6, 7, 3), 0);  // inside the hole
  EXPECT_EQ(s->mask.at(2, 3, 3), 1);  // in the ring
}

// Found by fuzz_rtstruct: a structure set with a contour at x = 1e300 mm (a valid decimal
// string) crashed the rasteriser under UBSan; the CT and the other structures still import.
TEST(IoSyntheticImport, ContourFarOutsideTheGridIsSkippedWithAWarning) {
  TempDir dir("farcontour");
  SyntheticPhantomSpec spec = nonSquareSpec();
  SyntheticStructureSpec far = voxelEdgeBox(spec, "FAR");
  far.center.x = 1e300;
  spec.structures = {voxelEdgeBox(spec, "RECT"), far};
  writeSyntheticPhantom(dir.str(), spec);
  const PatientImportResult r = scanAndImport(dir.str());
  ASSERT_TRUE(r.ok()) << joined(r.messages.errors);
  const Structure* rect = r.patient.structures.find("RECT");
  const Structure* f = r.patient.structures.find("FAR");
  ASSERT_NE(rect, nullptr);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(maskCount(rect->mask), std::size_t(100 * 8));
  EXPECT_EQ(maskCount(f->mask), 0u);
  EXPECT_TRUE(anyContains(r.messages.warnings, "structure 'FAR': 8 contour(s) have points that"))
      << joined(r.messages.warnings);
}

// Reproduced with fuzz_dicom_ct: a 1 KB slice whose header claims 65535 x 65535 pixels made the
// importer allocate (and zero) 8.6 GB per slice, and DCMTK's RLE/JPEG decoders allocate the
// claimed image too. Such slices are now refused from their header.
TEST(IoSyntheticImport, SliceLargerThan8192IsRefusedFromItsHeader) {
  TempDir dir("huge-rows");
  SyntheticPhantomSpec spec = nonSquareSpec();
  spec.slices = 2;
  spec.writeStructureSet = false;
  const auto files = writeSyntheticPhantom(dir.str(), spec);
  for (const auto& f : files.ctFiles) setRowsColumns(f, 65535, 65535);
  DicomScan scan;
  const PatientImportResult r = scanAndImport(dir.str(), &scan);
  ASSERT_EQ(scan.series.size(), 1u);
  EXPECT_FALSE(scan.series[0].importable);
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(
      anyContains(r.messages.errors, "CT_0001.dcm: Rows '65535' is not an image size (1 to 8192)"))
      << joined(r.messages.errors);
}

// Same finding within the limit: 8000 x 8000 claimed, 600 pixels stored. The verdict compares
// the pixel data's length with the header before the volume (128 MB per slice) is allocated.
TEST(IoSyntheticImport, LyingRowsColumnsFailBeforeTheVolumeIsAllocated) {
  TempDir dir("lying-rows");
  SyntheticPhantomSpec spec = nonSquareSpec();
  spec.slices = 2;
  spec.writeStructureSet = false;
  const auto files = writeSyntheticPhantom(dir.str(), spec);
  for (const auto& f : files.ctFiles) setRowsColumns(f, 8000, 8000);
  const long before = peakRssMiB();
  const PatientImportResult r = scanAndImport(dir.str());
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(anyContains(r.messages.errors,
                          "CT_0001.dcm: the pixel data holds 1200 bytes, but Rows x Columns "
                          "(8000 x 8000) at 16 bits need 128000000"))
      << joined(r.messages.errors);
  EXPECT_LT(peakRssMiB() - before, 64) << "the 2 x 128 MB volume was allocated";
}

TEST(IoSyntheticImport, GantryTiltIsRefusedWithMessage) {
  TempDir dir("tilt");
  SyntheticPhantomSpec spec = nonSquareSpec();
  spec.tiltDegrees = 12;
  writeSyntheticPhantom(dir.str(), spec);
  DicomScan scan;
  const auto r = scanAndImport(dir.str(), &scan);
  ASSERT_EQ(scan.series.size(), 1u);
  EXPECT_FALSE(scan.series[0].importable);
  EXPECT_TRUE(anyContains(scan.series[0].problems, "tilt"));
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.patient.ct.empty());
  EXPECT_TRUE(anyContains(r.messages.errors, "tilt")) << joined(r.messages.errors);
  EXPECT_NE(dicomDoctorReport(scan).find("tilt"), std::string::npos);
}

TEST(IoSyntheticImport, ObliqueSeriesIsRefused) {
  TempDir dir("oblique");
  SyntheticPhantomSpec spec = nonSquareSpec();
  const double c = std::cos(M_PI / 9), s = std::sin(M_PI / 9);  // 20 degrees about z
  spec.orientation = {c, s, 0, -s, c, 0};
  writeSyntheticPhantom(dir.str(), spec);
  const auto r = scanAndImport(dir.str());
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(anyContains(r.messages.errors, "oblique")) << joined(r.messages.errors);
}

TEST(IoSyntheticImport, MissingSliceIsReportedAndFilled) {
  TempDir dir("missing");
  SyntheticPhantomSpec spec = nonSquareSpec();
  spec.structures = {voxelEdgeBox(spec, "RECT")};
  spec.omitSlices = {4};
  writeSyntheticPhantom(dir.str(), spec);
  DicomScan scan;
  const auto r = scanAndImport(dir.str(), &scan);
  ASSERT_EQ(scan.series.size(), 1u);
  EXPECT_EQ(scan.series[0].slices, 7);
  EXPECT_TRUE(anyContains(scan.series[0].problems, "missing slice"))
      << joined(scan.series[0].problems);
  EXPECT_NE(dicomDoctorReport(scan).find("missing slice"), std::string::npos);
  ASSERT_TRUE(r.ok()) << joined(r.messages.errors);
  EXPECT_TRUE(anyContains(r.messages.warnings, "missing slice"));
  EXPECT_EQ(r.patient.ct.grid.dims[2], 8);
  // Slice 4 exists in the grid at its true position, filled from its neighbours (all 0 HU).
  EXPECT_EQ(r.patient.ct.at(15, 10, 4), 0);
  // The structure has no contour on the missing plane (none was written there).
  const Structure* rect = r.patient.structures.find("RECT");
  ASSERT_NE(rect, nullptr);
  EXPECT_EQ(maskCount(rect->mask), 700u);
}

TEST(IoSyntheticImport, DefaultDemoPhantomImports) {
  TempDir dir("demo");
  SyntheticPhantomSpec spec;  // 64 x 64 x 32, 2 mm, BODY + PTV
  const auto files = writeSyntheticPhantom(dir.str(), spec);
  EXPECT_FALSE(files.structureSetFile.empty());
  const auto r = scanAndImport(dir.str());
  ASSERT_TRUE(r.ok()) << joined(r.messages.errors);
  EXPECT_TRUE(r.messages.warnings.empty()) << joined(r.messages.warnings);
  EXPECT_EQ(r.patient.name, "Penumbra^Demo");
  EXPECT_EQ(r.patient.frameOfReferenceUid, files.frameOfReferenceUid);
  const auto& ct = r.patient.ct.data;
  EXPECT_EQ(*std::min_element(ct.begin(), ct.end()), -1000);
  EXPECT_EQ(*std::max_element(ct.begin(), ct.end()), 0);
  const Structure* body = r.patient.structures.find("BODY");
  const Structure* ptv = r.patient.structures.find("PTV");
  ASSERT_NE(body, nullptr);
  ASSERT_NE(ptv, nullptr);
  EXPECT_EQ(body->kind, StructureKind::External);
  EXPECT_EQ(ptv->kind, StructureKind::Target);
  EXPECT_GT(maskCount(ptv->mask), 0u);
  EXPECT_LT(maskCount(ptv->mask), maskCount(body->mask));
  // Every BODY voxel is water and every PTV voxel is inside BODY.
  for (std::size_t i = 0; i < ct.size(); ++i) {
    if (body->mask.data[i]) {
      ASSERT_EQ(ct[i], 0) << i;
    }
    if (ptv->mask.data[i]) {
      ASSERT_EQ(body->mask.data[i], 1) << i;
    }
  }
}

TEST(IoSyntheticImport, SeveralCtSeriesNeedAKey) {
  TempDir dir("two");
  writeSyntheticPhantom(dir.sub("a"), nonSquareSpec());
  writeSyntheticPhantom(dir.sub("b"), SyntheticPhantomSpec{});
  const DicomScan scan = scanDicomFolder(dir.str());
  ASSERT_EQ(scan.series.size(), 2u);
  ASSERT_EQ(scan.structureSets.size(), 2u);
  const auto none = importPatient(scan, "");
  EXPECT_FALSE(none.ok());
  EXPECT_TRUE(anyContains(none.messages.errors, "choose one"));
  // With a key, the structure set of that series (not the other one) is chosen.
  for (const auto& s : scan.series) {
    const auto r = importPatient(scan, s.key);
    ASSERT_TRUE(r.ok()) << joined(r.messages.errors);
    EXPECT_EQ(r.patient.ct.grid.dims[2], s.slices);
    EXPECT_EQ(r.patient.structures.structures.size(), 2u);
    EXPECT_TRUE(r.messages.warnings.empty()) << joined(r.messages.warnings);
  }
}

TEST(IoSyntheticImport, MissingFolderThrows) {
  EXPECT_THROW(scanDicomFolder("/nonexistent/penumbra/folder"), penumbra::Error);
}
