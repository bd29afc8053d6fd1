// penumbra-cli inspect / import on bad input (issue 12): non-zero exit, a message that names
// the file and the value, no source locations and no DCMTK jargon.
#include <dcmtk/dcmdata/dctk.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <memory>

#include "dicom/synthetic_phantom.hpp"
#include "io_test_util.hpp"

using namespace penumbra::io;
using penumbra::test::TempDir;
namespace fs = std::filesystem;

namespace {

struct CliRun {
  int exitCode = -1;
  std::string output;  ///< stdout and stderr together
};

CliRun cli(const std::string& arguments) {
  CliRun r;
  FILE* pipe = popen((std::string("'") + PENUMBRA_CLI + "' " + arguments + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe)) r.output += buf;
  const int status = pclose(pipe);
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

SyntheticPhantomSpec smallSpec() {
  SyntheticPhantomSpec spec;
  spec.rows = spec.columns = 16;
  spec.slices = 6;
  return spec;
}

void setTag(const std::string& file, const DcmTagKey& tag, const std::string& value) {
  DcmFileFormat ff;
  ASSERT_TRUE(ff.loadFile(file.c_str()).good());
  ASSERT_TRUE(ff.loadAllDataIntoMemory().good());  // saved over the same file below
  ASSERT_TRUE(ff.getDataset()->putAndInsertString(tag, value.c_str()).good());
  ASSERT_TRUE(ff.saveFile(file.c_str(), EXS_LittleEndianExplicit).good());
}

void expectClean(const CliRun& r) {
  EXPECT_EQ(r.output.find(".cpp"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("I/O suspension"), std::string::npos) << r.output;
}

}  // namespace

TEST(IoCli, NaNPositionFailsInspectAndImportNamingFileAndValue) {
  TempDir dir("cli-nan");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  setTag(files.ctFiles[2], DCM_ImagePositionPatient, "NaN\\-63\\4");
  for (const char* cmd : {"inspect", "import"}) {
    const CliRun r = cli(std::string(cmd) + " '" + dir.str() + "'");
    EXPECT_NE(r.exitCode, 0) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("CT_0003.dcm"), std::string::npos) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("ImagePositionPatient 'NaN\\-63\\4'"), std::string::npos) << cmd << "\n"
                                                                                      << r.output;
    expectClean(r);
  }
}

TEST(IoCli, NegativeRescaleSlopeFailsImport) {
  TempDir dir("cli-slope");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  setTag(files.ctFiles[1], DCM_RescaleSlope, "-1");
  const CliRun r = cli("import '" + dir.str() + "'");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("CT_0002.dcm: RescaleSlope '-1'"), std::string::npos) << r.output;
}

TEST(IoCli, DuplicateRoiNumbersFailImport) {
  TempDir dir("cli-duproi");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  DcmFileFormat ff;
  ASSERT_TRUE(ff.loadFile(files.structureSetFile.c_str()).good());
  ASSERT_TRUE(ff.loadAllDataIntoMemory().good());
  DcmItem* roi = nullptr;
  ASSERT_TRUE(ff.getDataset()->findAndGetSequenceItem(DCM_StructureSetROISequence, roi, 1).good());
  ASSERT_TRUE(roi->putAndInsertString(DCM_ROINumber, "1").good());
  ASSERT_TRUE(ff.saveFile(files.structureSetFile.c_str(), EXS_LittleEndianExplicit).good());
  const CliRun r = cli("import '" + dir.str() + "'");
  EXPECT_EQ(r.exitCode, 1) << r.output;
  EXPECT_NE(r.output.find("ROI number 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'BODY'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("'PTV'"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("structure PTV"), std::string::npos) << "nothing printed as imported";
}

TEST(IoCli, TruncatedSliceFailsInspectAndImportInPlainWords) {
  TempDir dir("cli-trunc");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  fs::resize_file(files.ctFiles[3], fs::file_size(files.ctFiles[3]) - 100);
  for (const char* cmd : {"inspect", "import"}) {
    const CliRun r = cli(std::string(cmd) + " '" + dir.str() + "'");
    EXPECT_NE(r.exitCode, 0) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find("CT_0004.dcm: the file is truncated"), std::string::npos) << cmd << "\n"
                                                                                      << r.output;
    expectClean(r);
  }
}

TEST(IoCli, InspectOfAFileSaysItIsAFile) {
  TempDir dir("cli-file");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  const CliRun r = cli("inspect '" + files.ctFiles[0] + "'");
  EXPECT_NE(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("is a file, not a folder"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("does not exist"), std::string::npos) << r.output;
  expectClean(r);
}

TEST(IoCli, GoodPhantomInspectsAndImports) {
  TempDir dir("cli-good");
  writeSyntheticPhantom(dir.str(), smallSpec());
  for (const char* cmd : {"inspect", "import"}) {
    const CliRun r = cli(std::string(cmd) + " '" + dir.str() + "'");
    EXPECT_EQ(r.exitCode, 0) << cmd << "\n" << r.output;
    expectClean(r);
  }
}
