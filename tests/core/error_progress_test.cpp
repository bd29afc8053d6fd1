#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/progress.hpp"
#include "core/structure.hpp"

using namespace penumbra;

TEST(Error, CarriesCodeLocationAndDetail) {
  try {
    PENUMBRA_THROW(Unsupported, "gantry tilt of 12 degrees");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Unsupported);
    EXPECT_EQ(e.message(), "gantry tilt of 12 degrees");
    EXPECT_NE(e.file().find("error_progress_test.cpp"), std::string::npos);
    EXPECT_GT(e.line(), 0);
    EXPECT_NE(std::string(e.what()).find("unsupported"), std::string::npos);
  }
  const Error withDetail(ErrorCode::Cuda, "launch failed", "x.cu", 7, "cudaErrorInvalidValue");
  EXPECT_NE(std::string(withDetail.what()).find("cudaErrorInvalidValue"), std::string::npos);
}

namespace {
struct RecordingSink : ProgressSink {
  std::vector<double> fractions;
  void report(double f, std::string_view) override { fractions.push_back(f); }
};
}  // namespace

TEST(Progress, JobControlReportsAndCancels) {
  RecordingSink sink;
  CancelToken token;
  const JobControl job{&sink, &token};
  job.report(0.25, "a");
  EXPECT_NO_THROW(job.checkCancel());
  token.requestCancel();
  EXPECT_TRUE(job.cancelled());
  EXPECT_THROW(job.checkCancel(), CancelledError);
  ASSERT_EQ(sink.fractions.size(), 1u);
  EXPECT_DOUBLE_EQ(sink.fractions[0], 0.25);
  const JobControl none;
  EXPECT_FALSE(none.cancelled());
}

TEST(Structure, InterpretedTypeMapsToKind) {
  EXPECT_EQ(structureKindFromInterpretedType("EXTERNAL"), StructureKind::External);
  EXPECT_EQ(structureKindFromInterpretedType("ptv"), StructureKind::Target);
  EXPECT_EQ(structureKindFromInterpretedType("ORGAN"), StructureKind::OrganAtRisk);
  EXPECT_EQ(structureKindFromInterpretedType("MARKER"), StructureKind::Other);
}
