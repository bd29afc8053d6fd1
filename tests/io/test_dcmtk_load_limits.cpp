// Damaged DICOM that made the loader allocate or copy what the file does not hold, found by the
// fuzz harnesses (tests/fuzz, docs/fuzzing.md): an element claiming more bytes than its file,
// and a kilobyte-long value quoted into every message.
#include <dcmtk/dcmdata/dctk.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "dicom/dcmtk_util.hpp"
#include "dicom/dicom_import.hpp"
#include "io_test_util.hpp"

namespace penumbra::io {
namespace {

using test::TempDir;

long peakRssMiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;
}

// Found by fuzz_rtstruct: DCMTK reads values longer than its read limit on first access, and
// allocates the claimed length before reading. A 6 KB file whose element claimed 2.2 GB made the
// folder scan allocate 2.2 GB.
TEST(IoDcmtkLoadLimits, ElementLongerThanItsFileIsRefused) {
  TempDir dir("claims");
  const std::string file = dir.sub("claims.dcm");
  {
    DcmFileFormat ff;
    DcmDataset& ds = *ff.getDataset();
    ASSERT_TRUE(ds.putAndInsertString(DCM_SOPClassUID, UID_RTStructureSetStorage).good());
    ASSERT_TRUE(ds.putAndInsertString(DCM_SOPInstanceUID, "1.2.3.4").good());
    ASSERT_TRUE(ds.putAndInsertString(DCM_Modality, "RTSTRUCT").good());
    ASSERT_TRUE(ds.putAndInsertString(DCM_PatientComments, std::string(5000, 'A').c_str()).good());
    ASSERT_TRUE(ff.saveFile(file.c_str(), EXS_LittleEndianImplicit).good());
  }
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  in.close();
  // (0010,4000) with its implicit-VR 32-bit length 5000, set to 2^31.
  const char pattern[] = {0x10, 0x00, 0x00, 0x40, char(0x88), 0x13, 0x00, 0x00};
  auto at = std::search(bytes.begin(), bytes.end(), pattern, pattern + 8);
  ASSERT_NE(at, bytes.end());
  at[4] = 0;
  at[5] = 0;
  at[6] = 0;
  at[7] = char(0x80);
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(bytes.data(), std::streamsize(bytes.size()));

  // DCMTK sees the file end inside the value: a truncated file, which the scan still reads
  // for its header (truncated CT slices are reported, not dropped). The length check refuses it.
  std::string error;
  EXPECT_EQ(dcm::loadFile(file, dcm::LoadDepth::Full, error), nullptr);
  bool truncated = false;
  EXPECT_EQ(dcm::loadFile(file, dcm::LoadDepth::Full, error, &truncated), nullptr);
  EXPECT_NE(error.find("claims.dcm: the file is damaged: element (0010,4000) claims 2147483648 "
                       "bytes, more than the whole file"),
            std::string::npos)
      << error;
  const long before = peakRssMiB();
  const DicomScan scan = scanDicomFolder(dir.str());
  EXPECT_EQ(scan.unreadableFiles, 1);
  EXPECT_LT(peakRssMiB() - before, 256) << "the claimed 2 GiB was allocated";
}

// Found by fuzz_dicom_ct: verdict messages quoted a damaged value whole, and the series verdict
// copies every slice's messages; a long value is now cut to 64 characters.
TEST(IoDcmtkLoadLimits, MessagesQuoteAtMost64CharactersOfAValue) {
  DcmDataset ds;
  std::string longValue;
  for (int i = 0; i < 2000; ++i) longValue += "1.5\\";
  longValue += "1.5";
  ASSERT_TRUE(ds.putAndInsertString(DCM_ImagePositionPatient, longValue.c_str()).good());
  const std::string raw = dcm::rawValue(ds, DCM_ImagePositionPatient);
  EXPECT_EQ(raw.substr(0, 64), longValue.substr(0, 64));
  EXPECT_NE(raw.find("... (8003 characters)"), std::string::npos) << raw;
  EXPECT_LT(raw.size(), 100u);
  ASSERT_TRUE(ds.putAndInsertString(DCM_ImagePositionPatient, "1\\2\\3").good());
  EXPECT_EQ(dcm::rawValue(ds, DCM_ImagePositionPatient), "1\\2\\3");
}

}  // namespace
}  // namespace penumbra::io
