// Matrix Market import/export of fp16 dose matrices (format notes in matrix_io.hpp).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>

#include "core/error.hpp"
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

template <typename T>
bool parseNumber(const char*& p, const char* end, T& out) {
  while (p < end && (*p == ' ' || *p == '\t')) ++p;
  const auto r = std::from_chars(p, end, out);
  if (r.ec != std::errc()) return false;
  p = r.ptr;
  return true;
}

}  // namespace

MatrixImport readMatrixMarket(const std::string& path) {
  std::ifstream in(path);
  if (!in) PENUMBRA_THROW(Io, "cannot open Matrix Market file '" + path + "'");
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
    if (line.empty() || line[0] == '%') continue;
    const char* p = line.data();
    const char* e = p + line.size();
    if (!parseNumber(p, e, rows) || !parseNumber(p, e, cols) || !parseNumber(p, e, nnz))
      formatError(path, lineNo, "expected 'rows cols entries'");
    break;
  }
  if (nnz < 0) formatError(path, lineNo, "no size line");
  if (rows < 0 || cols < 0 || cols > INT32_MAX || rows > INT32_MAX)
    formatError(path, lineNo, "matrix size out of range");
  if (rows > 0 && cols > 0 && double(nnz) > double(rows) * double(cols))
    formatError(path, lineNo, "more entries than the matrix has places");

  std::vector<Triplet> t;
  t.reserve(std::size_t(nnz));
  while (std::int64_t(t.size()) < nnz && std::getline(in, line)) {
    ++lineNo;
    if (line.empty() || line[0] == '%') continue;
    const char* p = line.data();
    const char* e = p + line.size();
    Triplet x{0, 0, 1.0, lineNo};
    if (!parseNumber(p, e, x.row) || !parseNumber(p, e, x.col) || (!pattern && !parseNumber(p, e, x.value)))
      formatError(path, lineNo, "expected 'row column" + std::string(pattern ? "'" : " value'"));
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
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) PENUMBRA_THROW(Io, "cannot write Matrix Market file '" + path + "'");
  std::fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n");
  std::fprintf(f, "%% dose-deposition matrix written by Penumbra: value = scale * fp16\n");
  std::fprintf(f, "%%penumbra scale %.17g\n", m.scale);
  std::fprintf(f, "%lld %lld %lld\n", (long long)m.rows, (long long)m.cols, (long long)m.nnz());
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (std::int64_t e = m.rowPtr[std::size_t(r)]; e < m.rowPtr[std::size_t(r) + 1]; ++e)
      std::fprintf(f, "%lld %d %.17g\n", (long long)(r + 1), m.colIdx[std::size_t(e)] + 1,
                   m.scale * double(spmv::halfBitsToFloat(m.values[std::size_t(e)])));
  const bool ok = std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok) PENUMBRA_THROW(Io, "error while writing '" + path + "'");
}

}  // namespace penumbra::io
