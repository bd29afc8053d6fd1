// Item 8 of issue 12: NaN, Inf, text and out-of-range geometry and rescale values in CT
// slices are refused (or, for a thickness the positions make redundant, warned about) with a
// message that names the file and the value as written. A NaN ImagePositionPatient crashed
// decodeSlice (SIGSEGV); a NaN or non-positive RescaleSlope and a NaN/Inf RescaleIntercept
// imported silently and changed the HU, and so the dose.
#include <dcmtk/dcmdata/dctk.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "bad_input_util.hpp"
#include "core/error.hpp"
#include "test_data.hpp"

using namespace penumbra;
using namespace penumbra::io;
using namespace penumbra::test;
namespace fs = std::filesystem;

struct BadValueCase {
  const char* name;
  DcmTagKey tag;
  const char* value;
  bool allSlices;  ///< false: only CT_0003.dcm
  std::vector<std::string> needles;
};

void PrintTo(const BadValueCase& c, std::ostream* os) { *os << c.name; }

class IoBadValue : public ::testing::TestWithParam<BadValueCase> {};

TEST_P(IoBadValue, IsRefusedNamingFileAndValue) {
  const BadValueCase& c = GetParam();
  TempDir dir(std::string("bad-") + c.name);
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  for (const auto& f : files.ctFiles)
    if (c.allSlices || fs::path(f).filename() == "CT_0003.dcm") setTag(f, c.tag, c.value);
  const Outcome o = scanAndImport(dir.str());
  std::vector<std::string> needles = c.needles;
  needles.push_back(c.allSlices ? "CT_0001.dcm" : "CT_0003.dcm");
  expectRefused(o, needles);
}

INSTANTIATE_TEST_SUITE_P(
    Item8, IoBadValue,
    ::testing::Values(
        // Geometry: a NaN position crashed decodeSlice (SIGSEGV); text or too few values
        // dropped the slice and interpolated it from its neighbours.
        BadValueCase{"IppNaN",
                     DCM_ImagePositionPatient,
                     "NaN\\-15\\4",
                     false,
                     {"ImagePositionPatient", "NaN\\-15\\4"}},
        BadValueCase{"IppInf",
                     DCM_ImagePositionPatient,
                     "-15\\1e999\\4",
                     false,
                     {"ImagePositionPatient", "1e999"}},
        BadValueCase{"IppText",
                     DCM_ImagePositionPatient,
                     "abc\\-15\\4",
                     false,
                     {"ImagePositionPatient", "abc\\-15\\4"}},
        BadValueCase{"IppTwoValues",
                     DCM_ImagePositionPatient,
                     "-15\\4",
                     false,
                     {"ImagePositionPatient", "-15\\4"}},
        BadValueCase{"IopNaN",
                     DCM_ImageOrientationPatient,
                     "1\\0\\0\\0\\NaN\\0",
                     true,
                     {"ImageOrientationPatient", "NaN"}},
        BadValueCase{"PixelSpacingZero", DCM_PixelSpacing, "0\\2", true, {"PixelSpacing", "0\\2"}},
        BadValueCase{
            "PixelSpacingNegative", DCM_PixelSpacing, "-2\\2", true, {"PixelSpacing", "-2\\2"}},
        BadValueCase{
            "PixelSpacingNaN", DCM_PixelSpacing, "2\\NaN", true, {"PixelSpacing", "2\\NaN"}},
        BadValueCase{"RowsZero", DCM_Rows, "0", true, {"Rows", "0"}},
        // One broken slice among good ones was split into a series of its own, and the
        // good ones imported with its plane interpolated.
        BadValueCase{"RowsZeroOneSlice", DCM_Rows, "0", false, {"Rows", "'0'"}},
        BadValueCase{"PixelSpacingNaNOneSlice",
                     DCM_PixelSpacing,
                     "NaN\\2",
                     false,
                     {"PixelSpacing", "NaN\\2"}},
        BadValueCase{"IopTextOneSlice",
                     DCM_ImageOrientationPatient,
                     "1\\0\\0\\0\\1\\zero",
                     false,
                     {"ImageOrientationPatient", "zero"}},
        // Rescale: a NaN, negative or zero slope or a NaN/Inf intercept imported silently
        // and changed the HU (and so the dose).
        BadValueCase{"SlopeNaN", DCM_RescaleSlope, "NaN", false, {"RescaleSlope", "NaN"}},
        BadValueCase{"SlopeNegative", DCM_RescaleSlope, "-1", false, {"RescaleSlope", "-1"}},
        BadValueCase{"SlopeZero", DCM_RescaleSlope, "0", false, {"RescaleSlope", "'0'"}},
        BadValueCase{"SlopeText", DCM_RescaleSlope, "one", false, {"RescaleSlope", "one"}},
        BadValueCase{
            "InterceptNaN", DCM_RescaleIntercept, "NaN", false, {"RescaleIntercept", "NaN"}},
        BadValueCase{
            "InterceptInf", DCM_RescaleIntercept, "-inf", false, {"RescaleIntercept", "-inf"}},
        BadValueCase{"InterceptText",
                     DCM_RescaleIntercept,
                     "-1024HU",
                     false,
                     {"RescaleIntercept", "-1024HU"}}),
    [](const ::testing::TestParamInfo<BadValueCase>& info) { return info.param.name; });

TEST(IoBadCtValue, NonFiniteSliceThicknessIsIgnoredWithAWarning) {
  TempDir dir("thickness");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  for (const auto& f : files.ctFiles) setTag(f, DCM_SliceThickness, "NaN");
  const Outcome o = scanAndImport(dir.str());
  ASSERT_TRUE(o.result.ok()) << joined(o.result.messages.errors);
  EXPECT_NEAR(o.result.patient.ct.grid.spacing.z, 2.0, 1e-9);  // from the positions
  EXPECT_TRUE(anyContains(o.result.messages.warnings, "SliceThickness 'NaN'"))
      << joined(o.result.messages.warnings);
  EXPECT_TRUE(anyContains(o.result.messages.warnings, "CT_0001.dcm"));
  EXPECT_NE(o.report.find("SliceThickness 'NaN'"), std::string::npos) << o.report;
}

TEST(IoBadCtValue, InfiniteThicknessOfASingleSliceIsNotUsedAsSpacing) {
  TempDir dir("thickness1");
  SyntheticPhantomSpec spec = smallSpec();
  spec.slices = 1;
  const auto files = writeSyntheticPhantom(dir.str(), spec);
  setTag(files.ctFiles[0], DCM_SliceThickness, "1e999");
  const Outcome o = scanAndImport(dir.str());
  ASSERT_TRUE(o.result.ok()) << joined(o.result.messages.errors);
  EXPECT_TRUE(std::isfinite(o.result.patient.ct.grid.spacing.z))
      << o.result.patient.ct.grid.spacing.z;
  EXPECT_TRUE(anyContains(o.result.messages.warnings, "SliceThickness '1e999'"))
      << joined(o.result.messages.warnings);
}
