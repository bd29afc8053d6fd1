// Pure geometry analysis: sorting, spacing, missing slices, tilt, oblique. No files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "dicom/series_geometry.hpp"
#include "io_test_util.hpp"

using namespace penumbra;
using namespace penumbra::io;
using penumbra::test::anyContains;
using penumbra::test::joined;

namespace {

std::vector<SliceHeader> axialSeries(int n, double dz, double z0 = -10) {
  std::vector<SliceHeader> v;
  for (int k = 0; k < n; ++k) {
    SliceHeader h;
    h.file = "slice";
    h.file += std::to_string(k);
    h.position = {-50, -40, z0 + k * dz};
    h.orientation = {1, 0, 0, 0, 1, 0};
    h.rowSpacing = 0.5;
    h.columnSpacing = 1.25;
    h.rows = 20;
    h.columns = 30;
    h.sliceThickness = dz;
    v.push_back(h);
  }
  return v;
}

}  // namespace

TEST(IoSeriesGeometry, SortsAlongNormalAndMapsPixelSpacing) {
  auto s = axialSeries(6, 2.0);
  std::reverse(s.begin(), s.end());
  std::swap(s[1], s[4]);
  const SeriesGeometry g = analyzeSeriesGeometry(s);
  ASSERT_TRUE(g.errors.empty()) << joined(g.errors);
  EXPECT_TRUE(g.warnings.empty()) << joined(g.warnings);
  for (std::size_t i = 1; i < g.positions.size(); ++i)
    EXPECT_NEAR(g.positions[i] - g.positions[i - 1], 2.0, 1e-9);
  EXPECT_EQ(g.grid.dims, (std::array<int, 3>{30, 20, 6}));
  EXPECT_DOUBLE_EQ(g.grid.spacing.x, 1.25);  // PixelSpacing[1]: between columns
  EXPECT_DOUBLE_EQ(g.grid.spacing.y, 0.5);   // PixelSpacing[0]: between rows
  EXPECT_NEAR(g.grid.spacing.z, 2.0, 1e-9);
  EXPECT_NEAR(g.grid.origin.z, -10, 1e-9);
  EXPECT_TRUE(g.grid.isAxisAligned());
}

TEST(IoSeriesGeometry, FeetFirstOrientationKeepsDirectionCosines) {
  auto s = axialSeries(3, 3.0);
  for (auto& h : s) h.orientation = {-1, 0, 0, 0, 1, 0};  // normal = (0,0,-1)
  const SeriesGeometry g = analyzeSeriesGeometry(s);
  ASSERT_TRUE(g.errors.empty()) << joined(g.errors);
  EXPECT_DOUBLE_EQ(g.grid.direction.column(0).x, -1);
  EXPECT_DOUBLE_EQ(g.grid.direction.column(2).z, -1);
  // Sorted along the normal: first slice is the highest z.
  EXPECT_NEAR(g.grid.origin.z, -4, 1e-9);
  const Vec3 last = g.grid.indexToWorld({0, 0, 2});
  EXPECT_NEAR(last.z, -10, 1e-9);
}

TEST(IoSeriesGeometry, MissingSliceIsReportedAndLatticeKept) {
  auto s = axialSeries(8, 2.5);
  s.erase(s.begin() + 4);
  const SeriesGeometry g = analyzeSeriesGeometry(s);
  ASSERT_TRUE(g.errors.empty()) << joined(g.errors);
  EXPECT_TRUE(g.missingSlices);
  EXPECT_TRUE(anyContains(g.warnings, "missing slice"));
  EXPECT_EQ(g.grid.dims[2], 8);
  EXPECT_EQ(g.missingLatticeIndices, std::vector<int>{4});
  EXPECT_NEAR(g.grid.spacing.z, 2.5, 1e-9);
}

TEST(IoSeriesGeometry, IrregularSpacingIsRefused) {
  auto s = axialSeries(5, 2.0);
  s[3].position.z += 0.7;
  const SeriesGeometry g = analyzeSeriesGeometry(s);
  EXPECT_TRUE(anyContains(g.errors, "non-uniform slice spacing")) << joined(g.errors);
}

// Reproduced with fuzz_dicom_ct: a gap of more than 2^31 lattice steps (a 1e10 mm position, or
// 900 mm after two slices 0.05 mm apart: 18 000 steps) was converted with int() (undefined behaviour). Positions
// beyond 1 km are refused as such; a huge step count within that is a spacing error.
TEST(IoSeriesGeometry, HugeOrNonFiniteGapsAreRefused) {
  for (const double z : {1e10, 1e300, std::nan(""), HUGE_VAL}) {
    auto s = axialSeries(3, 2.0);
    s[2].position.z = z;
    const SeriesGeometry g = analyzeSeriesGeometry(s);
    EXPECT_TRUE(anyContains(g.errors, "is not a finite position within 1 km"))
        << z << ": " << joined(g.errors);
  }
  auto s = axialSeries(3, 2.0);
  s[1].position.z = s[0].position.z + 0.05;
  s[2].position.z = s[0].position.z + 900.0;
  const SeriesGeometry g = analyzeSeriesGeometry(s);
  EXPECT_TRUE(anyContains(g.errors, "non-uniform slice spacing")) << joined(g.errors);
}

TEST(IoSeriesGeometry, DuplicatePositionsAreRefused) {
  auto s = axialSeries(4, 2.0);
  s.push_back(s[1]);
  const SeriesGeometry g = analyzeSeriesGeometry(s);
  EXPECT_TRUE(anyContains(g.errors, "share one position")) << joined(g.errors);
}

TEST(IoSeriesGeometry, GantryTiltIsRefused) {
  auto s = axialSeries(6, 2.0);
  const double t = std::tan(15.0 * M_PI / 180.0);
  for (int k = 0; k < 6; ++k) s[k].position.y += k * 2.0 * t;
  const SeriesGeometry g = analyzeSeriesGeometry(s);
  ASSERT_TRUE(g.tilted);
  EXPECT_NEAR(g.tiltDegrees, 15.0, 0.1);
  EXPECT_TRUE(anyContains(g.errors, "tilt")) << joined(g.errors);
}

TEST(IoSeriesGeometry, ObliqueOrientationIsRefused) {
  auto s = axialSeries(3, 2.0);
  const double c = std::cos(0.2), sn = std::sin(0.2);
  for (auto& h : s) h.orientation = {c, sn, 0, -sn, c, 0};
  const SeriesGeometry g = analyzeSeriesGeometry(s);
  EXPECT_TRUE(g.oblique);
  EXPECT_TRUE(anyContains(g.errors, "oblique")) << joined(g.errors);
}

TEST(IoSeriesGeometry, SingleSliceTakesSliceThickness) {
  auto s = axialSeries(1, 2.0);
  s[0].sliceThickness = 3.0;
  const SeriesGeometry g = analyzeSeriesGeometry(s);
  ASSERT_TRUE(g.errors.empty());
  EXPECT_DOUBLE_EQ(g.grid.spacing.z, 3.0);
  EXPECT_TRUE(anyContains(g.warnings, "SliceThickness"));
}

TEST(IoSeriesGeometry, MismatchedSliceSizeIsAnError) {
  auto s = axialSeries(3, 2.0);
  s[2].rows = 21;
  EXPECT_FALSE(analyzeSeriesGeometry(s).errors.empty());
}

// A NaN position sorted, gapped and indexed as if it were a number: the lattice index became
// garbage and decodeSlice wrote far outside the volume (SIGSEGV). Every value is checked first.
TEST(IoSeriesGeometry, NonFiniteOrNonPositiveValuesAreErrorsNamingTheFile) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* what;
    void (*spoil)(SliceHeader&, double nan, double inf);
  };
  const Case cases[] = {
      {"ImagePositionPatient", [](SliceHeader& h, double n, double) { h.position.z = n; }},
      {"ImagePositionPatient", [](SliceHeader& h, double, double i) { h.position.x = -i; }},
      {"ImageOrientationPatient", [](SliceHeader& h, double n, double) { h.orientation[4] = n; }},
      {"PixelSpacing", [](SliceHeader& h, double n, double) { h.rowSpacing = n; }},
      {"PixelSpacing", [](SliceHeader& h, double, double i) { h.columnSpacing = i; }},
      {"PixelSpacing", [](SliceHeader& h, double, double) { h.columnSpacing = -1; }},
      {"Rows", [](SliceHeader& h, double, double) { h.rows = 0; }},
  };
  for (const auto& c : cases) {
    auto s = axialSeries(6, 2.0);
    c.spoil(s[2], nan, inf);
    const SeriesGeometry g = analyzeSeriesGeometry(s);
    EXPECT_TRUE(anyContains(g.errors, "slice2")) << c.what << ": " << joined(g.errors);
    EXPECT_TRUE(anyContains(g.errors, c.what)) << c.what << ": " << joined(g.errors);
  }
}
