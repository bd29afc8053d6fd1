#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "core/calibration.hpp"
#include "core/error.hpp"

using namespace penumbra;

TEST(Calibration, InterpolatesAndClamps) {
  CalibrationCurve c("t", {{-1000, 0.0}, {0, 1.0}, {1000, 1.5}});
  EXPECT_DOUBLE_EQ(c(-500), 0.5);
  EXPECT_DOUBLE_EQ(c(500), 1.25);
  EXPECT_DOUBLE_EQ(c(-3000), 0.0);
  EXPECT_DOUBLE_EQ(c(3000), 1.5);
  EXPECT_DOUBLE_EQ(c(0), 1.0);
}

TEST(Calibration, RejectsNonIncreasingHu) {
  EXPECT_THROW(CalibrationCurve("t", {{0, 1}, {0, 2}}), Error);
  EXPECT_THROW(CalibrationCurve("t", {}), Error);
}

TEST(Calibration, LoadsShippedMatradCurve) {
  const auto c = CalibrationCurve::load(std::string(PENUMBRA_SOURCE_DIR) +
                                        "/resources/calibration/hu_to_spr_matrad_default.csv");
  ASSERT_EQ(c.points().size(), 8u);
  EXPECT_DOUBLE_EQ(c(0), 1.0);
  EXPECT_DOUBLE_EQ(c(-1024), 0.001);
  EXPECT_NEAR(c(50), 1.0475, 1e-12);  // halfway between (0,1) and (100,1.095)
  EXPECT_DOUBLE_EQ(c(3000), 2.505);
}

TEST(Calibration, MalformedLineIsNamed) {
  const std::string path = testing::TempDir() + "bad_curve.csv";
  {
    std::ofstream f(path);
    f << "# comment\nHU,value\n-1000,0\n0,abc\n";
  }
  try {
    CalibrationCurve::load(path);
    FAIL() << "expected a format error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Format);
    EXPECT_NE(e.message().find(":4:"), std::string::npos) << e.message();
  }
  std::remove(path.c_str());
  EXPECT_THROW(CalibrationCurve::load(path), Error);  // now missing: Io error
}
