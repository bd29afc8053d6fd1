// Matrix Market import/export of fp16 dose matrices (format notes in matrix_io.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <string_view>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "core/host_memory.hpp"
#include "file/atomic_file.hpp"
#include "matrix/matrix_io.hpp"
#include "spmv/half_float.hpp"

namespace penumbra::io {

std::uint16_t doubleToHalfBits(double v) {
  if (std::isnan(v)) return 0x7E00;
  const std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (a >= 65520.0) return sign | 0x7C00;  // halfway between 65504 and 2^16 and above: inf
  // float(a) may be off by one fp16 step after double rounding; pick the nearest neighbour.
  const std::uint16_t h = spmv::floatToHalfBits(float(a));
  std::uint16_t best = h;
  double bestErr = std::fabs(double(spmv::halfBitsToFloat(h)) - a);
  for (int d : {-1, 1}) {
    const int c = int(h) + d;
    if (c < 0 || c >= 0x7C00) continue;
    const double err = std::fabs(double(spmv::halfBitsToFloat(std::uint16_t(c))) - a);
    if (err < bestErr || (err == bestErr && (c & 1) == 0)) {
      best = std::uint16_t(c);
      bestErr = err;
    }
  }
  return sign | best;
}

namespace {

struct Triplet {
  std::int64_t row, col;
  double value;
  std::int64_t line;
};

[[noreturn]] void formatError(const std::string& path, std::int64_t line, const std::string& what) {
  PENUMBRA_THROW(Format, "Matrix Market file '" + path + "', line " + std::to_string(line) + ": " + what);
}

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// The whitespace-separated tokens of a line (blanks, tabs, and the '\r' of Windows line ends).
std::vector<std::string_view> tokens(const std::string& line) {
  std::vector<std::string_view> out;
  const char* p = line.data();
  const char* end = p + line.size();
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; };
  while (p < end) {
    while (p < end && blank(*p)) ++p;
    const char* b = p;
    while (p < end && !blank(*p)) ++p;
    if (p > b) out.emplace_back(b, std::size_t(p - b));
  }
  return out;
}

/// All of `t` as a number of type T ("1.0xyz" is not 1.0); a leading '+' is allowed, as strtod
/// allows it.
template <typename T>
bool wholeToken(std::string_view t, T& out) {
  if (t.size() > 1 && t[0] == '+' && t[1] != '-') t.remove_prefix(1);
  const auto r = std::from_chars(t.data(), t.data() + t.size(), out);
  return r.ec == std::errc() && r.ptr == t.data() + t.size();
}

/// Token `i` of a line as T, or a Format error naming the line and the token.
template <typename T>
T tokenAs(const std::vector<std::string_view>& t, std::size_t i, const std::string& path,
          std::int64_t line) {
  T v{};
  if (!wholeToken(t[i], v))
    formatError(path, line,
                "'" + std::string(t[i]) + "' is not " +
                    (std::is_integral_v<T> ? "an integer" : "a number"));
  return v;
}

}  // namespace

MatrixImport readMatrixMarket(const std::string& path) {
  std::ifstream in(path);
  if (!in) PENUMBRA_THROW(Io, "cannot open Matrix Market file '" + path + "'");
  std::error_code sizeError;
  const std::int64_t fileBytes = std::int64_t(std::filesystem::file_size(path, sizeError));
  if (sizeError)
    PENUMBRA_THROW(
        Io, "cannot read the size of Matrix Market file '" + path + "': " + sizeError.message());
  std::string line;
  std::int64_t lineNo = 1;
  if (!std::getline(in, line)) formatError(path, 1, "empty file");
  std::istringstream hs(lower(line));
  std::string banner, object, format, field, symmetry;
  hs >> banner >> object >> format >> field >> symmetry;
  if (banner != "%%matrixmarket" || object != "matrix")
    formatError(path, 1, "not a Matrix Market matrix (header '" + line + "')");
  if (format != "coordinate") PENUMBRA_THROW(Unsupported, "Matrix Market file '" + path + "': only coordinate (sparse) matrices are read, not '" + format + "'");
  if (field != "real" && field != "integer" && field != "pattern")
    PENUMBRA_THROW(Unsupported, "Matrix Market file '" + path + "': field '" + field + "' is not real, integer or pattern");
  if (symmetry != "general")
    PENUMBRA_THROW(Unsupported, "Matrix Market file '" + path + "': only general matrices are read, not '" + symmetry + "'");
  const bool pattern = field == "pattern";

  double fileScale = 0;  // from "%penumbra scale S"
  std::int64_t rows = -1, cols = -1, nnz = -1;
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.rfind("%penumbra scale ", 0) == 0) {
      fileScale = std::strtod(line.c_str() + 16, nullptr);
      if (!(fileScale > 0) || !std::isfinite(fileScale)) formatError(path, lineNo, "bad scale comment");
      continue;
    }
    if (!line.empty() && line[0] == '%') continue;
    const auto t = tokens(line);
    if (t.empty()) continue;
    if (t.size() < 3) formatError(path, lineNo, "expected 'rows cols entries'");
    if (t.size() > 3)
      formatError(path, lineNo, "unexpected '" + std::string(t[3]) + "' after 'rows cols entries'");
    rows = tokenAs<std::int64_t>(t, 0, path, lineNo);
    cols = tokenAs<std::int64_t>(t, 1, path, lineNo);
    nnz = tokenAs<std::int64_t>(t, 2, path, lineNo);
    if (nnz < 0) formatError(path, lineNo, "negative entry count");
    break;
  }
  if (nnz < 0) formatError(path, lineNo, "no size line");
  if (rows < 0 || cols < 0 || cols > INT32_MAX || rows > INT32_MAX)
    formatError(path, lineNo, "matrix size out of range");
  // The row offsets are allocated from the size line alone: 2^31 rows would take 17 GB for a
  // 60-byte file (found by fuzz_matrix_market). 2^26 rows is 22 times liver-1's voxel count.
  if (rows > kMaxMatrixMarketRows)
    formatError(path, lineNo, std::to_string(rows) + " rows: more than the " +
                                  std::to_string(kMaxMatrixMarketRows) +
                                  " a Matrix Market file may have here (use the binary format)");
  // Also for 0 rows or columns, which have no places at all.
  if (double(nnz) > double(rows) * double(cols))
    formatError(path, lineNo, "more entries than the matrix has places");
  // Declared sizes against the file before anything is allocated (4e18 entries in a 70-byte
  // file ended in std::length_error): an entry line takes at least "r c v\n" (6 bytes; 4 for a
  // pattern matrix); then the memory the triplets, the CSR and the row offsets need.
  const std::int64_t minEntryBytes = pattern ? 4 : 6;
  if (nnz > fileBytes / minEntryBytes)
    formatError(path, lineNo,
                std::to_string(nnz) + " entries declared, but the file has room for at most " +
                    std::to_string(fileBytes / minEntryBytes) + " (" + std::to_string(fileBytes) +
                    " bytes, at least " + std::to_string(minEntryBytes) + " per entry)");
  refuseIfHostMemoryExceeded(double(nnz) * double(sizeof(Triplet) + 6) + 8.0 * double(rows + 1),
                             "reading Matrix Market file '" + path + "'",
                             std::to_string(rows) + " x " + std::to_string(cols) + ", " +
                                 std::to_string(nnz) + " entries");

  const std::string entryShape = pattern ? "'row column'" : "'row column value'";
  const std::size_t entryTokens = pattern ? 2 : 3;
  std::vector<Triplet> t;
  // The entries grow as they are read: the size line alone must not reserve memory (a claimed
  // 4e16 entries in a 0-column matrix made ASan abort the reserve; found by fuzz_matrix_market).
  t.reserve(std::size_t(std::min<std::int64_t>(nnz, 1 << 20)));
  while (std::int64_t(t.size()) < nnz && std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line[0] == '%') continue;
    const auto tok = tokens(line);
    if (tok.empty()) continue;
    if (tok.size() < entryTokens) formatError(path, lineNo, "expected " + entryShape);
    if (tok.size() > entryTokens)
      formatError(path, lineNo,
                  "unexpected '" + std::string(tok[entryTokens]) + "' after " + entryShape);
    Triplet x{0, 0, 1.0, lineNo};
    x.row = tokenAs<std::int64_t>(tok, 0, path, lineNo);
    x.col = tokenAs<std::int64_t>(tok, 1, path, lineNo);
    if (!pattern) x.value = tokenAs<double>(tok, 2, path, lineNo);
    if (x.row < 1 || x.row > rows || x.col < 1 || x.col > cols)
      formatError(path, lineNo, "index (" + std::to_string(x.row) + ", " + std::to_string(x.col) + ") outside the " +
                                    std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
    if (!std::isfinite(x.value)) formatError(path, lineNo, "value is not finite");
    --x.row;
    --x.col;
    t.push_back(x);
  }
  if (std::int64_t(t.size()) < nnz)
    formatError(path, lineNo, "file ends after " + std::to_string(t.size()) + " of " + std::to_string(nnz) + " entries");
  // Anything after the declared entries but blank lines and comments is an error: entries past
  // the count used to be dropped silently.
  while (std::getline(in, line)) {
    ++lineNo;
    if ((!line.empty() && line[0] == '%') || tokens(line).empty()) continue;
    formatError(path, lineNo,
                "an entry past the " + std::to_string(nnz) + " declared in the size line");
  }

  MatrixImport out;
  spmv::HalfCsr& m = out.matrix;
  m.rows = rows;
  m.cols = cols;
  double maxAbs = 0;
  for (const Triplet& x : t) maxAbs = std::max(maxAbs, std::fabs(x.value));
  m.scale = fileScale > 0 ? fileScale : (maxAbs > 0 ? std::ldexp(1.0, std::ilogb(maxAbs) - 14) : 1.0);
  std::stable_sort(t.begin(), t.end(), [](const Triplet& a, const Triplet& b) {
    return a.row != b.row ? a.row < b.row : a.col < b.col;
  });
  m.rowPtr.assign(std::size_t(rows) + 1, 0);
  m.colIdx.reserve(t.size());
  m.values.reserve(t.size());
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (k > 0 && t[k].row == t[k - 1].row && t[k].col == t[k - 1].col)
      formatError(path, t[k].line, "duplicate entry (" + std::to_string(t[k].row + 1) + ", " +
                                       std::to_string(t[k].col + 1) + "), first at line " + std::to_string(t[k - 1].line));
    const double v = t[k].value / m.scale;
    const std::uint16_t h = doubleToHalfBits(v);
    const double back = double(spmv::halfBitsToFloat(h));
    if (std::isinf(back)) formatError(path, t[k].line, "value too large for fp16 with the file's scale");
    if (v != 0 && back == 0) ++out.flushedToZero;
    const double rel = v != 0 ? std::fabs(back - v) / std::fabs(v) : 0;
    if (rel > 0x1.0p-40) ++out.roundedValues;  // above double noise: fp16 changed the value
    out.maxRelativeRounding = std::max(out.maxRelativeRounding, rel);
    ++m.rowPtr[std::size_t(t[k].row) + 1];
    m.colIdx.push_back(std::int32_t(t[k].col));
    m.values.push_back(h);
  }
  std::partial_sum(m.rowPtr.begin(), m.rowPtr.end(), m.rowPtr.begin());
  if (out.roundedValues > 0) {
    char b[200];
    std::snprintf(b, sizeof b, "%s: %lld of %lld values rounded to fp16 (largest relative change %.3g)",
                  path.c_str(), (long long)out.roundedValues, (long long)nnz, out.maxRelativeRounding);
    out.messages.warn(b);
  }
  if (out.flushedToZero > 0)
    out.messages.warn(path + ": " + std::to_string(out.flushedToZero) +
                      " non-zero values are below fp16's range at this scale and became 0");
  return out;
}

void writeMatrixMarket(const spmv::HalfCsr& m, const std::string& path) {
  AtomicFile out(path, "Matrix Market file");  // a failed write leaves no truncated file
  std::string text;
  char line[96];
  auto append = [&](int n) {
    text.append(line, std::size_t(n));
    if (text.size() >= (1u << 20)) {  // written in 1 MiB pieces
      out.write(text);
      text.clear();
    }
  };
  append(std::snprintf(line, sizeof line, "%%%%MatrixMarket matrix coordinate real general\n"));
  append(std::snprintf(line, sizeof line,
                       "%% dose-deposition matrix written by Penumbra: value = scale * fp16\n"));
  append(std::snprintf(line, sizeof line, "%%penumbra scale %.17g\n", m.scale));
  append(std::snprintf(line, sizeof line, "%lld %lld %lld\n", (long long)m.rows, (long long)m.cols,
                       (long long)m.nnz()));
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (std::int64_t e = m.rowPtr[std::size_t(r)]; e < m.rowPtr[std::size_t(r) + 1]; ++e)
      append(std::snprintf(line, sizeof line, "%lld %d %.17g\n", (long long)(r + 1),
                           m.colIdx[std::size_t(e)] + 1,
                           m.scale * double(spmv::halfBitsToFloat(m.values[std::size_t(e)]))));
  out.write(text);
  out.commit();
}

}  // namespace penumbra::io
