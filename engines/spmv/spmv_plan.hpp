#pragma once
/// Host-side preparation of a HalfCsr for the optimised CUDA kernel (csr_spmv_binned_delta16).
/// Plain C++ so the CPU tests check it exactly (decodeColumn() == colIdx for every entry).
///
/// 1. Column indices as 16-bit deltas per slice of 256 consecutive entries (slices are aligned to
///    the global entry index, not to rows): col = slice.base + delta, base = the slice's smallest
///    column. A slice whose columns span 65536 or more is "wide": it also stores the high 16 bits
///    of (col - base) in `wideHigh`, so decoding stays exact for any matrix. Bytes per entry: 2
///    (value) + 2 (delta) + 8/256 (slice record) + 2 only in wide slices, instead of 2 + 4: a
///    third fewer bytes than the paper's fp16 + int32 CSR on a product that is bound by them.
/// 2. Rows in three bins, each kept in row order (neighbouring rows share columns, so warps
///    working on neighbouring rows at the same time hit the same x in L1):
///    long rows (> longThreshold entries): one 256-thread block per row, split with a fixed-order
///    tree reduction; other non-empty rows: one warp per row; empty rows: runs of at most
///    kEmptyRunMax rows written as zeros by one warp each (they cost only the write of d).
///    Each row task carries its offset and length, so a warp needs one 16-byte load to start.
#include <cstdint>
#include <vector>

#include "spmv/half_csr.hpp"

namespace penumbra::spmv {

struct SliceRecord {
  std::int32_t base = 0;  ///< smallest column of the slice
  std::int32_t wide = -1; ///< -1, or index w: high halves at wideHigh[w * 256 + (e % 256)]
};
struct RowTask {
  std::int64_t begin = 0;  ///< first entry
  std::int32_t length = 0; ///< entries
  std::int32_t row = 0;
};
struct EmptyRun {
  std::int32_t first = 0, count = 0;
};

struct Delta16Columns {
  static constexpr int kSlice = 256;
  std::int64_t paddedNnz = 0;         ///< nnz rounded up to whole slices (+ one spare slice)
  std::vector<std::uint16_t> delta;   ///< paddedNnz entries (0 in the padding)
  std::vector<SliceRecord> slices;    ///< paddedNnz / kSlice
  std::vector<std::uint16_t> wideHigh;
  std::int64_t wideSlices() const { return std::int64_t(wideHigh.size()) / kSlice; }
};

struct RowBins {
  static constexpr int kEmptyRunMax = 1024;
  std::int64_t longThreshold = 0;
  std::vector<RowTask> longRows;   ///< length > longThreshold, row order
  std::vector<RowTask> warpRows;   ///< 1..longThreshold, row order
  std::vector<EmptyRun> emptyRuns; ///< runs of empty rows, row order
};

/// The HalfCsr of entries visited in row order (the compact layouts' decoders): visit(emit) calls
/// emit(row, column, fp16 bits) for each of the nnz entries, rows ascending and each row's
/// entries in column order; rows it never names are empty.
template <class Visit>
HalfCsr csrFromRowOrder(std::int64_t rows, std::int64_t cols, double scale, std::int64_t nnz,
                        Visit&& visit) {
  HalfCsr m;
  m.rows = rows;
  m.cols = cols;
  m.scale = scale;
  m.colIdx.reserve(std::size_t(nnz));
  m.values.reserve(std::size_t(nnz));
  std::vector<std::int64_t> count(std::size_t(rows) + 1, 0);
  visit([&](std::int64_t row, std::uint32_t col, std::uint16_t v) {
    ++count[std::size_t(row) + 1];
    m.colIdx.push_back(std::int32_t(col));
    m.values.push_back(v);
  });
  m.rowPtr.resize(std::size_t(rows) + 1);
  for (std::int64_t r = 0; r < rows; ++r)
    m.rowPtr[std::size_t(r) + 1] = m.rowPtr[std::size_t(r)] + count[std::size_t(r) + 1];
  return m;
}

/// Appends empty row r (rows visited in order) to runs: the last run grows when r follows it and
/// holds fewer than kEmptyRunMax rows, else a new run starts. Every layout's empty rows are such
/// runs (one warp writes a run's zeros).
inline void appendEmptyRow(std::vector<EmptyRun>& runs, std::int32_t r) {
  if (!runs.empty()) {
    EmptyRun& last = runs.back();
    if (last.first + last.count == r && last.count < RowBins::kEmptyRunMax) {
      ++last.count;
      return;
    }
  }
  runs.push_back({r, 1});
}

/// Bytes one product with csr_spmv_binned_delta16 really moves: values and deltas (2 + 2 B per
/// entry), 8 B per slice record, the high halves of wide slices (512 B each), a 16-byte RowTask
/// per non-empty row, 8 B per run of empty rows, y written and x read once (8 B per row and per
/// column, the vectors as the model counts them).
double delta16RealBytes(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::int64_t slices,
                        std::int64_t wideSlices, std::int64_t rowTasks, std::int64_t emptyRuns);
/// The same from the matrix alone (the slice spans and the row bins counted, nothing stored).
double delta16RealBytes(const HalfCsr& m);

/// Builds the delta columns (multi-threaded; threads <= 0: all hardware threads).
Delta16Columns buildDelta16Columns(const HalfCsr& m, int threads = 0);
RowBins buildRowBins(const HalfCsr& m, std::int64_t longThreshold);
/// The same from the row offsets alone (rows + 1 of them).
RowBins buildRowBins(const std::int64_t* rowPtr, std::int64_t rows, std::int64_t longThreshold);

/// Exact column of entry e (for tests and the CPU check of the layout).
inline std::int32_t decodeColumn(const Delta16Columns& c, std::int64_t e) {
  const SliceRecord& s = c.slices[std::size_t(e / Delta16Columns::kSlice)];
  std::uint32_t d = c.delta[std::size_t(e)];
  if (s.wide >= 0)
    d |= std::uint32_t(c.wideHigh[std::size_t(s.wide) * Delta16Columns::kSlice +
                                  std::size_t(e % Delta16Columns::kSlice)]) << 16;
  return std::int32_t(std::uint32_t(s.base) + d);
}

}  // namespace penumbra::spmv
