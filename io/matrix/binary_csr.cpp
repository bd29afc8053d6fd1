// Compact binary fp16 CSR (.pcsr): header + raw little-endian arrays (layout in matrix_io.hpp).
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "file/atomic_file.hpp"
#include "matrix/matrix_io.hpp"

namespace penumbra::io {

static_assert(std::endian::native == std::endian::little,
              "the .pcsr format is little-endian; this reader writes raw arrays");

namespace {

constexpr char kMagic[8] = {'P', 'N', 'M', 'B', 'R', 'C', 'S', 'R'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kHeaderBytes = 64;

struct Header {
  char magic[8];
  std::uint32_t version, headerBytes;
  std::int64_t rows, cols, nnz;
  double scale;
  std::uint32_t valueType, indexBytes, offsetBytes, reserved;
};
static_assert(sizeof(Header) == kHeaderBytes);

[[noreturn]] void bad(const std::string& path, std::uint64_t offset, const std::string& what) {
  PENUMBRA_THROW(Format, "binary CSR file '" + path + "', byte offset " + std::to_string(offset) + ": " + what);
}

template <typename T>
void readArray(std::ifstream& in, const std::string& path, std::uint64_t offset, std::vector<T>& v) {
  char* p = reinterpret_cast<char*>(v.data());
  std::uint64_t left = v.size() * sizeof(T);
  while (left > 0) {
    const std::streamsize n = std::streamsize(std::min<std::uint64_t>(left, 1ull << 30));
    in.read(p, n);
    if (in.gcount() != n) bad(path, offset + std::uint64_t(p - reinterpret_cast<char*>(v.data())) + std::uint64_t(in.gcount()), "unexpected end of file");
    p += n;
    left -= std::uint64_t(n);
  }
}

}  // namespace

void writeBinaryCsr(const spmv::HalfCsr& m, const std::string& path) {
  AtomicFile out(path, "binary CSR file");  // a failed write leaves no truncated file
  Header h{};
  std::memcpy(h.magic, kMagic, 8);
  h.version = kVersion;
  h.headerBytes = kHeaderBytes;
  h.rows = m.rows;
  h.cols = m.cols;
  h.nnz = m.nnz();
  h.scale = m.scale;
  h.valueType = 1;
  h.indexBytes = 4;
  h.offsetBytes = 8;
  out.write(&h, sizeof h);
  out.write(m.rowPtr.data(), m.rowPtr.size() * 8);
  out.write(m.colIdx.data(), m.colIdx.size() * 4);
  out.write(m.values.data(), m.values.size() * 2);
  out.commit();
}

spmv::HalfCsr readBinaryCsr(const std::string& path) {
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) PENUMBRA_THROW(Io, "cannot open binary CSR file '" + path + "': " + ec.message());
  std::ifstream in(path, std::ios::binary);
  if (!in) PENUMBRA_THROW(Io, "cannot open binary CSR file '" + path + "'");
  Header h{};
  if (size < kHeaderBytes) bad(path, size, "file is shorter than the 64-byte header");
  in.read(reinterpret_cast<char*>(&h), sizeof h);
  if (std::memcmp(h.magic, kMagic, 8) != 0) bad(path, 0, "not a Penumbra binary CSR file (magic)");
  if (h.version != kVersion) bad(path, 8, "version " + std::to_string(h.version) + " is not supported (this build reads 1)");
  if (h.headerBytes != kHeaderBytes) bad(path, 12, "header size " + std::to_string(h.headerBytes) + " is not 64");
  if (h.rows < 0 || h.rows > (std::int64_t(1) << 40)) bad(path, 16, "row count out of range");
  if (h.cols < 0 || h.cols > INT32_MAX) bad(path, 24, "column count out of range");
  if (h.nnz < 0 || h.nnz > (std::int64_t(1) << 40)) bad(path, 32, "entry count out of range");
  if (!(h.scale > 0) || !std::isfinite(h.scale)) bad(path, 40, "scale must be positive and finite");
  if (h.valueType != 1 || h.indexBytes != 4 || h.offsetBytes != 8)
    bad(path, 48, "unsupported value type / index width / offset width");
  const std::uint64_t offRows = kHeaderBytes;
  const std::uint64_t offCols = offRows + 8 * std::uint64_t(h.rows + 1);
  const std::uint64_t offVals = offCols + 4 * std::uint64_t(h.nnz);
  const std::uint64_t expected = offVals + 2 * std::uint64_t(h.nnz);
  if (size < expected)
    bad(path, size, "truncated: the header promises " + std::to_string(expected) + " bytes (" +
                        std::to_string(h.rows) + " rows, " + std::to_string(h.nnz) + " entries), the file has " +
                        std::to_string(size) + (size < offCols ? " (inside the row offsets)" : size < offVals ? " (inside the column indices)" : " (inside the values)"));
  if (size > expected) bad(path, expected, std::to_string(size - expected) + " unexpected bytes after the values");

  // The file size bounds the arrays; the host must still hold them (+ the reader's own copy).
  refuseIfHostMemoryExceeded(
      double(expected), "reading binary CSR file '" + path + "'",
      std::to_string(h.rows) + " rows, " + std::to_string(h.nnz) + " entries");

  spmv::HalfCsr m;
  m.rows = h.rows;
  m.cols = h.cols;
  m.scale = h.scale;
  m.rowPtr.resize(std::size_t(h.rows) + 1);
  m.colIdx.resize(std::size_t(h.nnz));
  m.values.resize(std::size_t(h.nnz));
  readArray(in, path, offRows, m.rowPtr);
  readArray(in, path, offCols, m.colIdx);
  readArray(in, path, offVals, m.values);
  if (m.rowPtr[0] != 0) bad(path, offRows, "first row offset is " + std::to_string(m.rowPtr[0]) + ", not 0");
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const std::int64_t b = m.rowPtr[std::size_t(r)], e = m.rowPtr[std::size_t(r) + 1];
    if (e < b || e > h.nnz) bad(path, offRows + 8 * std::uint64_t(r + 1), "row offset " + std::to_string(e) + " of row " + std::to_string(r) + " is out of order or past the entries");
    for (std::int64_t k = b; k < e; ++k) {
      const std::int32_t c = m.colIdx[std::size_t(k)];
      if (c < 0 || c >= m.cols || (k > b && c <= m.colIdx[std::size_t(k) - 1]))
        bad(path, offCols + 4 * std::uint64_t(k), "column " + std::to_string(c) + " in row " + std::to_string(r) + " is out of range or not ascending");
    }
  }
  if (m.rowPtr.back() != h.nnz) bad(path, offCols - 8, "last row offset is not the entry count");
  // fp16 infinity and NaN (exponent bits all ones) would poison every product that reads them.
  for (std::int64_t k = 0; k < h.nnz; ++k) {
    const std::uint16_t v = m.values[std::size_t(k)];
    if ((v & 0x7C00) == 0x7C00) {
      char bits[16];
      std::snprintf(bits, sizeof bits, "0x%04x", unsigned(v));
      bad(path, offVals + 2 * std::uint64_t(k),
          "value " + std::to_string(k) + " is not finite (fp16 bits " + bits + ": " +
              ((v & 0x03FF) ? "NaN" : "infinity") + ")");
    }
  }
  return m;
}

}  // namespace penumbra::io
