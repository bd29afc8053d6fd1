#pragma once
/// Dose-deposition matrices on disk (DESIGN.md section 4): Matrix Market text for exchange and
/// a compact binary format for large matrices. Both hold a spmv::HalfCsr (fp16 values).
///
/// Matrix Market (.mtx): "coordinate real general" (also integer and pattern), 1-based, any
/// entry order. Values are stored as fp16 times one scale: unless the file carries a
/// "%penumbra scale S" comment (Penumbra writes one), the scale is the power of two that puts
/// the largest |value| in [2^14, 2^15), which keeps every value in fp16's normal range when the
/// entries span less than 2^28; scaling by a power of two adds no rounding. Each value is then
/// rounded once to the nearest fp16 (ties to even); the import counts the values this changed
/// and those that became 0, and says so in its warnings. Duplicates and out-of-range indices
/// are errors naming the file and line, and so are numbers that are not whole tokens ("1.0xyz"),
/// extra tokens on a line, and entries past the count the size line declares. The declared
/// entry count is checked against the file's size, and the memory the import needs against the
/// host's, before anything is allocated.
///
/// Binary (.pcsr), little-endian, version 1: a 64-byte header
///   0 "PNMBRCSR"  8 u32 version (1)  12 u32 header bytes (64)  16 i64 rows  24 i64 cols
///   32 i64 nnz  40 f64 scale  48 u32 value type (1 = binary16)  52 u32 index bytes (4)
///   56 u32 offset bytes (8)  60 u32 reserved (0)
/// then rows + 1 int64 offsets, nnz int32 columns, nnz uint16 values. The reader checks the
/// header, that the file size is exactly what the header implies, and the content (offsets
/// non-decreasing from 0 to nnz, columns in range and ascending per row, values finite: fp16
/// infinity and NaN are refused); every error names the file and the byte offset where the data
/// went wrong. The arrays are allocated only after the size checks and a host-memory check.
#include <string>

#include "import_messages.hpp"
#include "spmv/half_csr.hpp"

namespace penumbra::io {

struct MatrixImport {
  spmv::HalfCsr matrix;
  ImportMessages messages;        ///< warnings about rounding; errors are thrown (Format)
  std::int64_t roundedValues = 0; ///< values fp16 could not hold exactly
  std::int64_t flushedToZero = 0; ///< non-zero values that became 0
  double maxRelativeRounding = 0; ///< largest |fp16 - value| / |value| over the entries
};

/// Most rows a Matrix Market file may declare: its size line alone makes the reader allocate the
/// row offsets (8 bytes a row). Larger matrices go through the binary format, whose offsets are
/// in the file.
inline constexpr std::int64_t kMaxMatrixMarketRows = std::int64_t(1) << 26;

/// Throws Io (cannot open) or Format (malformed; message names the file and line).
MatrixImport readMatrixMarket(const std::string& path);
/// Writes every entry as scale * fp16 value with 17 significant digits and a scale comment, so
/// readMatrixMarket() gives back the same bits. Both writers go through io::AtomicFile: a write
/// that fails leaves no truncated file and an existing one untouched.
void writeMatrixMarket(const spmv::HalfCsr& m, const std::string& path);

/// Throws Io or Format (message names the file and byte offset).
spmv::HalfCsr readBinaryCsr(const std::string& path);
void writeBinaryCsr(const spmv::HalfCsr& m, const std::string& path);

/// fp16 bits nearest to a double (ties to even), rounding once (not through float).
std::uint16_t doubleToHalfBits(double v);

}  // namespace penumbra::io
