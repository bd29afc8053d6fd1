#pragma once
// Helpers of the bad-input tests (issue 12): synthetic DICOM from io/dicom/synthetic_phantom
// with one attribute broken by DCMTK, then scanned, reported by the DICOM doctor and imported.
#include <dcmtk/dcmdata/dctk.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "dicom/dicom_import.hpp"
#include "dicom/synthetic_phantom.hpp"
#include "io_test_util.hpp"

namespace penumbra::test {

using namespace penumbra::io;
namespace fs = std::filesystem;

// 6 slices of 16 x 16 with the default BODY (EXTERNAL) and PTV boxes.
inline SyntheticPhantomSpec smallSpec() {
  SyntheticPhantomSpec spec;
  spec.rows = spec.columns = 16;
  spec.slices = 6;
  spec.origin = {-15, -15, 0};
  return spec;
}

// The whole file in memory: DCMTK leaves values over 4 KB (pixel data) on disk until used,
// and saving over the same file would truncate them before they are read.
inline DcmFileFormat load(const std::string& file) {
  DcmFileFormat ff;
  EXPECT_TRUE(ff.loadFile(file.c_str()).good()) << file;
  EXPECT_TRUE(ff.loadAllDataIntoMemory().good()) << file;
  return ff;
}

inline void save(DcmFileFormat& ff, const std::string& file) {
  ASSERT_TRUE(ff.saveFile(file.c_str(), EXS_LittleEndianExplicit).good()) << file;
}

inline void setTag(const std::string& file, const DcmTagKey& tag, const std::string& value) {
  DcmFileFormat ff = load(file);
  ASSERT_TRUE(ff.getDataset()->putAndInsertString(tag, value.c_str()).good());
  save(ff, file);
}

// Keeps the first `bytes` bytes of a file (a copy interrupted mid-way).
inline void truncateTo(const std::string& file, std::uintmax_t bytes) {
  ASSERT_LT(bytes, fs::file_size(file));
  fs::resize_file(file, bytes);
}

struct Outcome {
  DicomScan scan;
  std::string report;
  PatientImportResult result;
};

// Scans `dir`, renders the doctor's report and imports the only series (by key, so that a
// non-CT series reaches the reader too).
inline Outcome scanAndImport(const std::string& dir) {
  Outcome o;
  o.scan = scanDicomFolder(dir);
  o.report = dicomDoctorReport(o.scan);
  o.result = importPatient(o.scan, o.scan.series.size() == 1 ? o.scan.series[0].key : "");
  return o;
}

inline bool noJargon(const std::string& text) {
  return text.find("I/O suspension") == std::string::npos &&
         text.find(".cpp") == std::string::npos && text.find(".hpp") == std::string::npos;
}

// The doctor says NOT importable, the import refuses with no CT, and both name `needles`.
inline void expectRefused(const Outcome& o, const std::vector<std::string>& needles) {
  ASSERT_EQ(o.scan.series.size(), 1u) << o.report;
  const SeriesInfo& s = o.scan.series[0];
  EXPECT_FALSE(s.importable) << o.report;
  EXPECT_NE(o.report.find("NOT importable"), std::string::npos) << o.report;
  EXPECT_FALSE(o.result.ok());
  EXPECT_TRUE(o.result.patient.ct.empty()) << "a refused import must not return a CT";
  for (const auto& n : needles) {
    EXPECT_TRUE(anyContains(s.problems, n)) << "doctor does not say '" << n << "':\n" << o.report;
    EXPECT_TRUE(anyContains(o.result.messages.errors, n)) << "import does not say '" << n << "':\n"
                                                          << joined(o.result.messages.errors);
  }
  EXPECT_TRUE(noJargon(o.report)) << o.report;
  EXPECT_TRUE(noJargon(joined(o.result.messages.errors))) << joined(o.result.messages.errors);
}

}  // namespace penumbra::test
