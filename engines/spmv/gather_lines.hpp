#pragma once
/// How many 128-byte lines and 32-byte sectors of x (doubles) the 32 lanes of one warp-wide gather
/// touch, counted on the CPU from a matrix's columns: the L1 wavefronts and L2 sectors behind the
/// gathers, which bound the transposes (ncu, prostate-1 D^T r on an H200, 2026-11-28: L1/TEX
/// throughput 83 %, DRAM 68 %). A slice of `rowsPerSlice` neighbouring rows (rows r0..r0 + R - 1,
/// r0 a multiple of R) holds up to 32 / R entries of each, all at or below one column bound: the
/// smallest (32 / R)-th next column of the rows still open. R = 1 is sliced_offset8's slice (32
/// consecutive entries of one row; its encoder also ends a slice early where the columns jump
/// too far for the offsets, which this count ignores); R = 2 or 4 a layout that gathers
/// neighbouring rows' entries at the same columns together (not built; the numbers say what it
/// would gain, and what its padding would cost).
#include <cstdint>

#include "spmv/half_csr.hpp"

namespace penumbra::spmv {

struct GatherLines {
  std::int64_t slices = 0, entries = 0;
  double lines = 0, sectors = 0;  ///< totals over the slices
  /// Per 32 entries gathered (what a layout moves per unit of work).
  double linesPer32() const { return entries ? 32.0 * lines / double(entries) : 0.0; }
  double sectorsPer32() const { return entries ? 32.0 * sectors / double(entries) : 0.0; }
  /// Entries per lane of the slices (1: no padding).
  double fill() const { return slices ? double(entries) / (32.0 * double(slices)) : 0.0; }
};

/// rowsPerSlice 1, 2, 4, 8, 16 or 32.
GatherLines countGatherLines(const HalfCsr& m, int rowsPerSlice, int threads = 0);

}  // namespace penumbra::spmv
