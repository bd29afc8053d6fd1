// Item 10 of issue 12: the DICOM doctor and the import share one verdict (truncated files,
// JPEG 2000, MR-only series and short pixel data were "importable" to the doctor and then
// refused); messages shown to users carry no source locations and no DCMTK jargon, and a
// file given as a folder is called a file.
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

TEST(IoDoctorVerdict, PixelDataShorterThanRowsTimesColumnsIsNotImportable) {
  TempDir dir("columns");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  for (const auto& f : files.ctFiles) setTag(f, DCM_Columns, "4096");
  expectRefused(scanAndImport(dir.str()), {"CT_0001.dcm", "pixel data", "4096"});
}

TEST(IoDoctorVerdict, TruncatedSliceIsNotImportable) {
  TempDir dir("trunc");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  truncateTo(files.ctFiles[3], fs::file_size(files.ctFiles[3]) - 100);  // mid pixel data
  const Outcome o = scanAndImport(dir.str());
  expectRefused(o, {"CT_0004.dcm", "truncated"});
}

TEST(IoDoctorVerdict, FileCutInItsHeaderIsExplainedInPlainWords) {
  TempDir dir("trunchead");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  truncateTo(files.ctFiles[3], 300);
  const Outcome o = scanAndImport(dir.str());
  EXPECT_TRUE(anyContains(o.scan.messages.warnings, "CT_0004.dcm: the file is truncated"))
      << joined(o.scan.messages.warnings);
  EXPECT_TRUE(noJargon(o.report)) << o.report;
  EXPECT_TRUE(noJargon(joined(o.result.messages.errors) + joined(o.result.messages.warnings)));
}

TEST(IoDoctorVerdict, MrOnlySeriesIsNotImportable) {
  TempDir dir("mr");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  for (const auto& f : files.ctFiles) {
    setTag(f, DCM_Modality, "MR");
    setTag(f, DCM_SOPClassUID, UID_MRImageStorage);
  }
  expectRefused(scanAndImport(dir.str()), {"MR", "only CT"});
}

TEST(IoDoctorVerdict, Jpeg2000SeriesIsNotImportable) {
  PENUMBRA_REQUIRE_DATA("dicom-samples/693_J2KI.dcm");
  TempDir dir("j2k");
  fs::copy_file(dataPath("dicom-samples/693_J2KI.dcm"), dir.sub("693_J2KI.dcm"));
  expectRefused(scanAndImport(dir.str()), {"693_J2KI.dcm", "JPEG 2000"});
}

// One verdict: whatever the doctor calls importable imports, and what it does not, does not.
TEST(IoDoctorVerdict, DoctorVerdictMatchesImportForEverySample) {
  PENUMBRA_REQUIRE_DATA("dicom-samples");
  int series = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dataPath("dicom-samples"))) {
    if (!entry.is_regular_file()) continue;
    const DicomScan scan = scanDicomFiles({entry.path().string()});
    const std::string report = dicomDoctorReport(scan);
    EXPECT_TRUE(noJargon(report)) << report;
    for (const auto& s : scan.series) {
      ++series;
      const auto r = importPatient(scan, s.key);
      EXPECT_EQ(s.importable, r.ok())
          << entry.path() << ": doctor says " << (s.importable ? "" : "NOT ") << "importable\n"
          << report << "import:\n"
          << joined(r.messages.errors);
      EXPECT_TRUE(noJargon(joined(r.messages.errors))) << joined(r.messages.errors);
    }
  }
  EXPECT_GT(series, 20);
}

TEST(IoDoctorVerdict, FolderErrorsSayWhatThePathIsWithoutSourceLocations) {
  TempDir dir("notafolder");
  const auto files = writeSyntheticPhantom(dir.str(), smallSpec());
  try {
    scanDicomFolder(files.ctFiles[0]);
    FAIL() << "a file is not a folder";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("is a file, not a folder"), std::string::npos) << what;
    EXPECT_NE(what.find(files.ctFiles[0]), std::string::npos) << what;
    EXPECT_EQ(what.find("does not exist"), std::string::npos) << what;
    EXPECT_TRUE(noJargon(what)) << what;
    EXPECT_FALSE(e.file().empty()) << "the source location stays available for debugging";
  }
  try {
    scanDicomFolder(dir.sub("absent"));
    FAIL() << "an absent folder is an error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("does not exist"), std::string::npos) << what;
    EXPECT_TRUE(noJargon(what)) << what;
  }
}
