// io/matrix: Matrix Market and binary CSR round trips, fp16 rounding warnings, and clear errors
// (file name and line / byte offset) for malformed and truncated files.
#include "matrix/matrix_io.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <sys/resource.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "spmv_test_support.hpp"

namespace penumbra::io {
namespace {

namespace fs = std::filesystem;

/// A temporary file of this test and process: ctest runs the tests as parallel processes, and two
/// that shared "huge.mtx" once read each other's half-written file (GPU machine, 2026-11-27).
std::string tmpPath(const std::string& name) {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return (fs::temp_directory_path() /
          ("penumbra_spmv_" + test + "_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MatrixMarket, RoundTripKeepsEveryBit) {
  spmv::HalfCsr m = spmv::test::randomCsr(60, 45, 20, 4);
  m.scale = 0.0123;
  const std::string p = tmpPath("rt.mtx");
  writeMatrixMarket(m, p);
  const MatrixImport in = readMatrixMarket(p);
  EXPECT_EQ(in.matrix.rowPtr, m.rowPtr);
  EXPECT_EQ(in.matrix.colIdx, m.colIdx);
  EXPECT_EQ(in.matrix.values, m.values);
  EXPECT_EQ(in.matrix.scale, m.scale);
  EXPECT_EQ(in.roundedValues, 0);
  EXPECT_TRUE(in.messages.warnings.empty());
  fs::remove(p);
}

TEST(MatrixMarket, UnsortedEntriesAreSortedAndRoundingIsCounted) {
  const std::string p = tmpPath("round.mtx");
  writeText(p, "%%MatrixMarket matrix coordinate real general\n% comment\n3 4 4\n"
               "3 2 0.1\n1 4 2.0\n1 1 -1.5\n3 1 1e-12\n");
  const MatrixImport in = readMatrixMarket(p);
  const spmv::HalfCsr& m = in.matrix;
  m.validate();
  EXPECT_EQ(m.rowPtr, (std::vector<std::int64_t>{0, 2, 2, 4}));
  EXPECT_EQ(m.colIdx, (std::vector<std::int32_t>{0, 3, 0, 1}));
  // Scale: a power of two putting 2.0 at 2^14.
  EXPECT_EQ(m.scale, std::ldexp(1.0, -13));
  EXPECT_EQ(m.scale * spmv::halfBitsToFloat(m.values[1]), 2.0);
  EXPECT_EQ(in.roundedValues, 2);   // 0.1 and 1e-12
  EXPECT_EQ(in.flushedToZero, 1);   // 1e-12 / 2^-13 is below fp16's smallest subnormal
  EXPECT_EQ(in.messages.warnings.size(), 2u);
  fs::remove(p);
}

TEST(MatrixMarket, MalformedFilesNameFileAndLine) {
  const std::string p = tmpPath("bad.mtx");
  writeText(p, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n1 1 2.0\n");
  std::string e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(e.find("line 4"), std::string::npos) << e;
  EXPECT_NE(e.find("duplicate"), std::string::npos) << e;
  EXPECT_NE(e.find(p), std::string::npos) << e;
  writeText(p, "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n3 1 2.0\n");
  e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(e.find("line 4"), std::string::npos) << e;
  writeText(p, "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1.0\n");
  e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(e.find("1 of 3 entries"), std::string::npos) << e;
  writeText(p, "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 1 1.0\n");
  EXPECT_THROW((void)readMatrixMarket(p), Error);
  writeText(p, "hello\n");
  EXPECT_THROW((void)readMatrixMarket(p), Error);
  EXPECT_THROW((void)readMatrixMarket(tmpPath("does_not_exist.mtx")), Error);
  fs::remove(p);
}

TEST(MatrixMarket, EntriesPastTheDeclaredCountAreRefused) {
  // They used to be ignored silently: a file whose size line is wrong lost data.
  const std::string p = tmpPath("extra.mtx");
  writeText(p, "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n% note\n2 2 3.0\n");
  const std::string e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("line 5: an entry past the 1 declared in the size line"), std::string::npos)
      << e;
  // Trailing blank lines and comments are fine.
  writeText(p, "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1.0\n\n% end\n");
  EXPECT_EQ(readMatrixMarket(p).matrix.nnz(), 1);
  fs::remove(p);
}

TEST(MatrixMarket, NumbersAreWholeTokens) {
  // "1.0xyz" used to be read as 1.0.
  const std::string p = tmpPath("tokens.mtx");
  const std::string head = "%%MatrixMarket matrix coordinate real general\n";
  writeText(p, head + "2 2 1\n1 1 1.0xyz\n");
  std::string e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(e.find("line 3: '1.0xyz' is not a number"), std::string::npos) << e;
  writeText(p, head + "2 2 1\n1x 1 1.0\n");
  e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(e.find("line 3: '1x' is not an integer"), std::string::npos) << e;
  writeText(p, head + "2 2 1 7\n1 1 1.0\n");
  e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(e.find("line 2: unexpected '7' after 'rows cols entries'"), std::string::npos) << e;
  writeText(p, head + "2 2 1\n1 1 1.0 2.0\n");
  e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(e.find("line 3: unexpected '2.0' after 'row column value'"), std::string::npos) << e;
  // Tabs, trailing blanks and Windows line ends are whitespace.
  writeText(p, head + "2 2 1\r\n1\t1  2.5 \r\n");
  EXPECT_EQ(readMatrixMarket(p).matrix.nnz(), 1);
  fs::remove(p);
}

TEST(MatrixMarket, DeclaredSizesAreCheckedBeforeAllocating) {
  // 4e18 entries declared in a 70-byte file used to end in std::length_error / bad_alloc.
  const std::string p = tmpPath("huge.mtx");
  writeText(p,
            "%%MatrixMarket matrix coordinate real general\n60000000 2000000000 "
            "100000000000000000\n1 1 1\n");
  const std::string e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(
      e.find("line 2: 100000000000000000 entries declared, but the file has room for at most"),
      std::string::npos)
      << e;
  fs::remove(p);
}

// Reproduced with fuzz_matrix_market: the size line alone made the reader reserve memory for the
// claimed entries (4e16 in a matrix with 0 columns, which the places check skipped) and the row
// offsets (2^31 rows: 17 GB). Both are now Format errors naming the line.
TEST(MatrixMarket, SizeLineCannotClaimMoreThanTheReaderWillAllocate) {
  const std::string p = tmpPath("huge.mtx");
  const std::string head = "%%MatrixMarket matrix coordinate real general\n";
  writeText(p, head + "5 0 44444444444444444\n");
  std::string e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(e.find("line 2: more entries than the matrix has places"), std::string::npos) << e;
  writeText(p, head + "2147483647 1 0\n");
  e = errorOf([&] { (void)readMatrixMarket(p); });
  EXPECT_NE(e.find("line 2: 2147483647 rows: more than the 67108864"), std::string::npos) << e;
  writeText(p, head + "0 0 0\n");
  EXPECT_EQ(readMatrixMarket(p).matrix.rows, 0);
  fs::remove(p);
}

TEST(MatrixMarket, DoubleToHalfRoundsOnce) {
  // 1 + 2^-11 + 2^-40 lies just above the midpoint between 1 and 1 + 2^-10: through float it
  // would first round to the midpoint and then to even (1.0); rounding once gives 1 + 2^-10.
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3C01);
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(1.0, -11)), 0x3C00);  // tie: even
  EXPECT_EQ(doubleToHalfBits(-2.0), 0xC000);
  EXPECT_EQ(doubleToHalfBits(70000.0), 0x7C00);
}

TEST(BinaryCsr, RoundTripAndCheckedSizes) {
  spmv::HalfCsr m = spmv::test::randomCsr(300, 70, 30, 8);
  m.scale = 3.5;
  const std::string p = tmpPath("m.pcsr");
  writeBinaryCsr(m, p);
  const spmv::HalfCsr b = readBinaryCsr(p);
  EXPECT_EQ(b.rowPtr, m.rowPtr);
  EXPECT_EQ(b.colIdx, m.colIdx);
  EXPECT_EQ(b.values, m.values);
  EXPECT_EQ(b.scale, 3.5);
  EXPECT_EQ(fs::file_size(p), 64 + 8 * 301 + 6 * std::uint64_t(m.nnz()));

  // Truncated inside the column indices: the message names the file and where it ends.
  fs::resize_file(p, 64 + 8 * 301 + 10);
  std::string e = errorOf([&] { (void)readBinaryCsr(p); });
  EXPECT_NE(e.find(p), std::string::npos) << e;
  EXPECT_NE(e.find("truncated"), std::string::npos) << e;
  EXPECT_NE(e.find("column indices"), std::string::npos) << e;
  fs::resize_file(p, 20);
  e = errorOf([&] { (void)readBinaryCsr(p); });
  EXPECT_NE(e.find("header"), std::string::npos) << e;

  // A corrupted column index: the message gives its byte offset.
  writeBinaryCsr(m, p);
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(64 + 8 * 301 + 4 * 5);
    const std::int32_t badCol = 1000;
    f.write(reinterpret_cast<const char*>(&badCol), 4);
  }
  e = errorOf([&] { (void)readBinaryCsr(p); });
  EXPECT_NE(e.find("offset " + std::to_string(64 + 8 * 301 + 4 * 5)), std::string::npos) << e;
  // fp16 infinity and NaN (exponent all ones) used to be accepted and poisoned every product.
  for (const std::uint16_t bits :
       {std::uint16_t(0x7C00), std::uint16_t(0xFC00), std::uint16_t(0x7E00)}) {
    writeBinaryCsr(m, p);
    const std::uint64_t at = 64 + 8 * 301 + 4 * std::uint64_t(m.nnz()) + 2 * 7;
    {
      std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(std::streamoff(at));
      f.write(reinterpret_cast<const char*>(&bits), 2);
    }
    e = errorOf([&] { (void)readBinaryCsr(p); });
    EXPECT_NE(e.find("byte offset " + std::to_string(at) + ": value 7 is not finite (fp16 "),
              std::string::npos)
        << e;
  }
  // Wrong magic.
  writeText(p, std::string(64, 'x'));
  e = errorOf([&] { (void)readBinaryCsr(p); });
  EXPECT_NE(e.find("magic"), std::string::npos) << e;
  fs::remove(p);
}

TEST(MatrixFiles, FailedWritesLeaveNoPartialFile) {
  // A write that fails half way (the file-size limit binds root too; SIGXFSZ ignored so that
  // write() returns EFBIG) used to leave a truncated .pcsr / .mtx behind.
  const spmv::HalfCsr m = spmv::test::randomCsr(2000, 300, 40, 9);
  const fs::path dir = fs::temp_directory_path() / "penumbra_spmv_partial";
  fs::remove_all(dir);
  fs::create_directories(dir);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const std::string e1 = errorOf([&] { writeBinaryCsr(m, (dir / "m.pcsr").string()); });
  const std::string e2 = errorOf([&] { writeMatrixMarket(m, (dir / "m.mtx").string()); });
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, oldHandler);
  EXPECT_NE(e1.find((dir / "m.pcsr").string()), std::string::npos) << e1;
  EXPECT_NE(e2.find((dir / "m.mtx").string()), std::string::npos) << e2;
  EXPECT_TRUE(fs::is_empty(dir));
  // Without the limit both files are written and read back.
  writeBinaryCsr(m, (dir / "m.pcsr").string());
  writeMatrixMarket(m, (dir / "m.mtx").string());
  EXPECT_EQ(readBinaryCsr((dir / "m.pcsr").string()).values, m.values);
  EXPECT_EQ(readMatrixMarket((dir / "m.mtx").string()).matrix.colIdx, m.colIdx);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace penumbra::io
