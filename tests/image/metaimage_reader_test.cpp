// readMetaImage (io/image): round trips through writeMetaImage, the element types and header
// forms it accepts, and a refusal naming the file and the field for everything else.
#include "image/metaimage_reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "image/metaimage_writer.hpp"

namespace {

namespace fs = std::filesystem;
using penumbra::Error;
using penumbra::ErrorCode;
using penumbra::Grid;
using penumbra::Volume;
using penumbra::io::readMetaImage;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("penumbra-mhd-" + std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string sub(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

template <typename T>
std::string rawOf(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

/// A valid header of a 2 x 3 x 4 volume (the data file name and type may be replaced).
std::string header(const std::string& type = "MET_FLOAT", const std::string& data = "v.raw") {
  return "ObjectType = Image\nNDims = 3\nBinaryData = True\nBinaryDataByteOrderMSB = False\n"
         "DimSize = 2 3 4\nElementSpacing = 1.5 2 2.5\nOffset = -10 20 30.5\n"
         "ElementType = " +
         type + "\nElementDataFile = " + data + "\n";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

/// The Error of reading `path`; fails the test when nothing is thrown.
Error readError(const std::string& path) {
  try {
    readMetaImage(path);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << path << " was read";
  return Error(ErrorCode::Internal, "");
}

}  // namespace

TEST(MetaImageReader, RoundTripsTheWritersRotatedGrid) {
  TempDir dir;
  Grid g;
  g.dims = {3, 4, 5};
  g.spacing = {1.25, 2, 3};
  g.origin = {-12.5, 7, 101.25};
  // Columns: i along +y, j along -x, k along +z (a 90 degree rotation about z).
  g.direction = penumbra::Mat3::fromColumns({0, 1, 0}, {-1, 0, 0}, {0, 0, 1});
  Volume<float> v(g, -1.0f);
  for (std::size_t n = 0; n < v.data.size(); ++n) v.data[n] = 0.25f * float(n) - 3;
  penumbra::io::writeMetaImage(dir.sub("dose.mhd"), v, "Gy; round trip");
  const auto m = readMetaImage(dir.sub("dose.mhd"));
  EXPECT_EQ(m.volume.grid.dims, g.dims);
  EXPECT_TRUE(m.volume.grid.sameGeometry(g, 1e-9));
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(m.volume.grid.direction.m[r][c], g.direction.m[r][c]);
  EXPECT_EQ(m.volume.data, v.data);
  EXPECT_EQ(m.elementType, "MET_FLOAT");
  EXPECT_EQ(m.comment, "Gy; round trip");
  EXPECT_EQ(m.dataFile, dir.sub("dose.raw"));
}

TEST(MetaImageReader, ReadsShortUshortDoubleAndDefaultsToTheIdentity) {
  TempDir dir;
  fs::create_directories(dir.sub("data"));
  std::vector<std::int16_t> s(24);
  std::vector<std::uint16_t> u(24);
  std::vector<double> d(24);
  for (int n = 0; n < 24; ++n) {
    s[std::size_t(n)] = std::int16_t(-1000 + 97 * n);
    u[std::size_t(n)] = std::uint16_t(60000 + n);
    d[std::size_t(n)] = 0.5 * n;
  }
  // Data names relative to the header's folder (not to the working directory).
  writeBytes(dir.sub("data/s.raw"), rawOf(s));
  writeBytes(dir.sub("data/u.raw"), rawOf(u));
  writeBytes(dir.sub("data/d.raw"), rawOf(d));
  writeBytes(dir.sub("s.mhd"), header("MET_SHORT", "data/s.raw"));
  writeBytes(dir.sub("u.mhd"), header("MET_USHORT", "data/u.raw"));
  writeBytes(dir.sub("d.mhd"), header("MET_DOUBLE", "data/d.raw"));
  const auto ms = readMetaImage(dir.sub("s.mhd"));
  const auto mu = readMetaImage(dir.sub("u.mhd"));
  const auto md = readMetaImage(dir.sub("d.mhd"));
  for (std::size_t n = 0; n < 24; ++n) {
    EXPECT_EQ(ms.volume.data[n], float(s[n]));
    EXPECT_EQ(mu.volume.data[n], float(u[n]));
    EXPECT_EQ(md.volume.data[n], float(d[n]));
  }
  const Grid& g = ms.volume.grid;
  EXPECT_EQ(g.dims, (std::array<int, 3>{2, 3, 4}));
  EXPECT_EQ(g.spacing.x, 1.5);
  EXPECT_EQ(g.spacing.z, 2.5);
  EXPECT_EQ(g.origin.z, 30.5);
  EXPECT_TRUE(g.isAxisAligned(0));
  EXPECT_EQ(ms.elementType, "MET_SHORT");
}

TEST(MetaImageReader, ReadsLocalDataAfterTheHeader) {
  TempDir dir;
  std::vector<float> f(24);
  for (int n = 0; n < 24; ++n) f[std::size_t(n)] = float(n) + 0.5f;
  writeBytes(dir.sub("v.mha"),
             replaced(header("MET_FLOAT", "LOCAL"), "Offset", "Comment = x\nOrigin") + rawOf(f));
  const auto m = readMetaImage(dir.sub("v.mha"));
  EXPECT_TRUE(std::equal(m.volume.data.begin(), m.volume.data.end(), f.begin(), f.end()));
  EXPECT_EQ(m.volume.grid.origin.x, -10);
  EXPECT_EQ(m.comment, "x");
}

TEST(MetaImageReader, RefusesWhatItDoesNotReadNamingTheFileAndTheField) {
  TempDir dir;
  const std::string raw24(24 * 4, '\0');
  writeBytes(dir.sub("v.raw"), raw24);
  const std::string ok = header();
  struct Case {
    std::string header, message;
  };
  const std::vector<Case> cases = {
      {replaced(ok, "NDims = 3", "NDims = 2"), "NDims: 2 is not supported"},
      {replaced(ok, "NDims = 3\n", ""), "NDims: missing"},
      {replaced(ok, "DimSize = 2 3 4", "DimSize = 2 3 5"),
       "DimSize: 2 3 5 needs 120 bytes of MET_FLOAT in '" + dir.sub("v.raw") + "', which has 96"},
      {replaced(ok, "DimSize = 2 3 4", "DimSize = 2 3"), "DimSize: expected 3 numbers, got '2 3'"},
      {replaced(ok, "DimSize = 2 3 4", "DimSize = 2 0 4"), "DimSize: expected 3 positive integers"},
      {replaced(ok, "DimSize = 2 3 4", "DimSize = 2 3.5 4"),
       "DimSize: expected 3 positive integers"},
      {replaced(ok, "DimSize = 2 3 4", "DimSize = 2000000000 2000000000 2000000000"),
       "DimSize: 2000000000 2000000000 2000000000 is too large"},
      {replaced(ok, "ElementSpacing = 1.5 2 2.5", "ElementSpacing = 1.5 -2 2.5"),
       "ElementSpacing: must be positive"},
      {replaced(ok, "Offset = -10 20 30.5", "Offset = nan 20 30.5"),
       "Offset: expected 3 finite numbers"},
      {replaced(ok, "Offset = -10 20 30.5\n", ""), "Offset: missing"},
      {replaced(ok, "Offset", "TransformMatrix = 1 0 0 0 1 0 0 0 2\nOffset"),
       "TransformMatrix: its columns are not orthonormal"},
      {replaced(ok, "Offset", "TransformMatrix = 1 0 0 0 1 0 0 0\nOffset"),
       "TransformMatrix: expected 9 numbers"},
      {replaced(ok, "MET_FLOAT", "MET_UCHAR"), "ElementType: MET_UCHAR is not supported"},
      {replaced(ok, "MSB = False", "MSB = True"), "BinaryDataByteOrderMSB: True is not supported"},
      {replaced(ok, "MSB = False", "MSB = maybe"),
       "BinaryDataByteOrderMSB: expected True or False"},
      {replaced(ok, "NDims", "CompressedData = True\nNDims"),
       "CompressedData: True is not supported"},
      {replaced(ok, "NDims", "ElementNumberOfChannels = 3\nNDims"), "ElementNumberOfChannels: 3"},
      {replaced(ok, "NDims", "HeaderSize = -1\nNDims"), "HeaderSize: -1 is not supported"},
      {replaced(ok, "ElementDataFile = v.raw", "ElementDataFile = LIST"),
       "ElementDataFile: 'LIST'"},
      {replaced(ok, "ElementDataFile = v.raw", "ElementDataFile = s%03d.raw 1 4 1"),
       "lists and patterns of slice files are not supported"},
      {replaced(ok, "ElementDataFile = v.raw\n", ""), "no ElementDataFile line"},
      {replaced(ok, "NDims = 3", "NDims = 3\nNDims = 3"), "NDims: appears twice (lines 2 and 3)"},
      {replaced(ok, "ElementSpacing", "ElementSize = 1 1 1\nElementSpacing"),
       "ElementSpacing: and its synonym ElementSize are both given"},
      {std::string("\x7f"
                   "ELF\x02\x01\x01\0\0\0",
                   10) +
           ok,
       "line 1 is not 'Key = Value'"},
      {"", "no ElementDataFile line in the first 0 bytes"},
  };
  for (const Case& c : cases) {
    writeBytes(dir.sub("bad.mhd"), c.header);
    const Error e = readError(dir.sub("bad.mhd"));
    EXPECT_EQ(e.code(), ErrorCode::Format) << c.message << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find("MetaImage '" + dir.sub("bad.mhd") + "': "),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
        << "expected '" << c.message << "' in: " << e.what();
  }
  // Files that cannot be opened are I/O errors naming them.
  writeBytes(dir.sub("nodata.mhd"), replaced(ok, "v.raw", "missing.raw"));
  Error e = readError(dir.sub("nodata.mhd"));
  EXPECT_EQ(e.code(), ErrorCode::Io);
  EXPECT_NE(std::string(e.what()).find("cannot read its data file '" + dir.sub("missing.raw")),
            std::string::npos)
      << e.what();
  e = readError(dir.sub("absent.mhd"));
  EXPECT_EQ(e.code(), ErrorCode::Io);
  EXPECT_NE(std::string(e.what()).find("absent.mhd': cannot open"), std::string::npos) << e.what();
  // The good header reads (the cases above fail for their change, not for the template).
  writeBytes(dir.sub("good.mhd"), ok);
  EXPECT_EQ(readMetaImage(dir.sub("good.mhd")).volume.data.size(), 24u);
}

TEST(MetaImageReader, DamagedHeadersAreRefusedWithoutACrash) {
  // Seeded byte damage of a valid header: every outcome is a read volume or a penumbra::Error,
  // never another exception, a crash or a read past the data (ASan builds check the last).
  TempDir dir;
  writeBytes(dir.sub("v.raw"), std::string(24 * 4, '\0'));
  const std::string ok = header();
  std::mt19937 rng(13);
  int refused = 0, read = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    std::string text = ok;
    const int edits = 1 + int(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      const std::size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text[at] = char(rng() % 256);
          break;
        case 1:
          text.erase(at, 1 + rng() % 8);
          break;
        default:
          text.insert(text.begin() + std::ptrdiff_t(at), "0123456789 -.e=\n"[rng() % 16]);
      }
      if (text.empty()) text.push_back('x');
    }
    writeBytes(dir.sub("damaged.mhd"), text);
    try {
      const auto m = readMetaImage(dir.sub("damaged.mhd"));
      m.volume.validate();
      ++read;
    } catch (const Error&) {
      ++refused;
    }
  }
  EXPECT_GT(refused, 500) << read;
  EXPECT_GT(read, 0) << refused;
}
