#pragma once
/// SlicedOffset8: the dose matrix in slices of 32 entries of one row with 8-bit column offsets,
/// for csr_spmv_sliced_offset8 (issue 14 item 3, "SpMV at the floor"). Exact:
/// decodeSlicedOffset8() gives back the HalfCsr bit for bit, and multiplySlicedOffset8Cpu() equals
/// multiplyCpu() bit for bit.
///
/// Why (ncu on csr_spmv_binned_delta16, docs/spmv-notes.md): D w was bound by the L1 wavefronts of
/// the gathers of x (~8.4 per gather instruction, because lane l held V consecutive entries, so one
/// instruction spanned 32 V entries of a row), D^T r by DRAM bytes (~4.06 B per non-zero). StepCsr
/// (4-bit steps) cut the bytes but was bound by its decode (warp scans). Here one gather
/// instruction reads 32 consecutive entries of ONE row (lane l = position l of a slice), the
/// column is a segment base + an 8-bit offset with no scan, and an entry costs 2 B (fp16) + 1 B
/// (offset) + 1/8 B of slice header (+ a mask word a chunk and 4 B a segment where a slice jumps).
///
/// Layout (all of it is what the kernel reads):
/// - Segments: a slice's entries in runs whose columns lie less than 256 past the run's first
///   (greedy over the ascending columns); offset = column - first column of its segment. With
///   16 offset bits (SlicedOffset8Options::offsetBits) the offsets are in offsets16 (two bytes
///   an entry, interleaved as the values; offsetsLo is empty) and a slice has one segment: it
///   ends early where a column is 65536 or more past its first. With 12 offset bits the low byte
///   is in offsetsLo as at 8 and the high 4 bits in offsetsHi (one word a lane and chunk: nibble
///   j = slice j), one segment a slice, cut where a column is 4096 or more past its first. A slice
///   holds up to 32 consecutive entries of a row and at most kMaxSegments segments: it ends early
///   where a fifth segment would start. (Until 2026-11-27 a slice spanning 256 columns or more was
///   "wide" and carried 16 more bits per entry: 64 B a slice; a dose matrix's transpose has jumps
///   in most slices, so 69-75 % of its slices were wide, 4.6 B per non-zero.)
/// - Padding positions (after a row's last entry in its last slice) have value bits 0 (+0) and
///   offset 0: harmless for finite x (+0 * finite added to a sum leaves it bit for bit), so x must
///   be finite, as for the other kernels. A real entry at position l > 0 has offset > 0 or starts
///   a segment (columns ascend strictly), which is how the decoder tells padding apart.
/// - headers[s]: bits 0..29 the slice's first column (base of its first segment; matrices of 2^30
///   columns or more are refused), bit 30 "segmented" (two or more segments), bit 31 "last slice
///   of its row".
/// - Chunks of 8 slices (256 entries), interleaved so that lane l's one 16-byte load gets position
///   l of the 8 slices: values[c*256 + l*8 + j] = fp16 bits of slice 8c+j, position l; offsetsLo
///   likewise (8 bytes per lane). The last chunk is padded with empty slices (header 0); nSlices
///   says where the real ones end.
/// - segs: for each chunk with a segmented slice, in chunk order, its "area": 8 masks (mask j bit
///   l: position l of slice j starts a segment other than the first; 0 for other slices), then
///   the first columns of those segments, slice by slice (popcount of each mask). At most 8 + 8 * 3
///   = 32 words, so one 4-byte load a lane fetches a chunk's area; 32 zero words follow the last
///   area so that the load never leaves the array. Chunks without a segmented slice have none.
/// - Rows: nonEmptyRow[ord] = the ord-th non-empty row; a warp moves to the next ordinal after
///   every slice flagged "last". Empty rows are runs written as zeros.
/// - Tasks: chunksPerTask consecutive chunks each (one warp). A task records the ordinal of the row
///   of its first slice, whether that row started in an earlier task, and where its first chunk's
///   area starts in segs (the areas of its chunks follow). Rows cut between tasks are listed in
///   splitRows: the kernel leaves their piece sums in per-task slots and a second launch adds them
///   in task order.
/// - taskOrder (may be empty: tasks in index order): the order in which the warps of the grid take
///   the tasks. With rows that span many tasks (a transpose: a spot's row of voxels) neighbouring
///   rows touch nearly the same entries of x at the same fraction of their length, so the tasks of
///   each group of `taskGroupRows` rows (32) are listed by the column they start at: a block's 8
///   warps then gather the same lines of x, from L1, instead of 8 unrelated ones from L2, and the
///   blocks running at once work on fewer lines of x. The order changes no sum (each task writes
///   its own outputs).
#include <cstdint>
#include <string>
#include <vector>

#include "spmv/half_csr.hpp"
#include "spmv/spmv_plan.hpp"
#include "spmv/step_csr.hpp"  // SplitRow

namespace penumbra::spmv {

struct Offset8Task {
  std::uint32_t ordBegin = 0;       ///< non-empty row of the task's first slice
  std::uint32_t startedBefore = 0;  ///< 1: that row started in an earlier task
  std::uint32_t segBegin = 0;       ///< word of segs where the task's first chunk's area starts
};

/// The largest x (8 B a column) for which the row buffer is taken: 2 KB of shared memory a warp
/// (67.6 KB at 32 warps an SM) leaves x this much of the L1 (256 KB with shared memory on
/// sm_90).
constexpr std::int64_t kRowBufferMaxXBytes = 128 * 1024;

struct SlicedOffset8Options {
  /// Chunks (of 256 entries) per warp task; 0 (default): 12 where the rows are summed through
  /// the row buffer (rowBuffer) or the tasks are ordered (taskGroupRows > 0: the transposes),
  /// else 8. 8 = 2048 entries: liver-1 gives ~7e5 tasks, plenty for 132 SMs x 64 warps; the
  /// bench sweeps 4 / 8 / 16. One H200, 2026-11-28, with the row buffer: prostate-1 D w
  /// 0.106-0.107 ms at 8, 0.104 at 12; proton-hn D w 0.214-0.215 / 0.208. Ordered (G = 32, 12-bit
  /// offsets; twenty-third session): prostate-1 D^T r 0.112 at 8, 0.107-0.108 at 12, 0.106-0.107
  /// at 16; proton-hn D^T r 0.209-0.211 / 0.205-0.207 / 0.206-0.209.
  int chunksPerTask = 0;
  int threads = 0;  ///< encoder threads; 0: all hardware threads
  /// Not part of the encoding: the kernel's __launch_bounds__ blocks per SM, 4 (62 registers, no
  /// spills) or 5 (48 registers, 48 B of spills), carried with the layout to the launch. One
  /// H200 (2026-11-27, c16): 4 faster everywhere, liver-1 D w 1.55 against 2.18 ms, D^T r 2.99
  /// against 3.51 ms (docs/spmv-notes.md).
  int minBlocksPerSm = 4;
  /// Task order: 0 tasks in index order; G > 0 the tasks of each G consecutive non-empty rows
  /// listed by the column of their first entry; -1 (default) G = 32 when the average non-empty
  /// row spans two tasks or more, else 0. A block's 8 warps take 8 neighbouring tasks of the
  /// order, so with G = 8 they gather the same lines of x from L1; groups of more rows also keep
  /// the blocks that run at once on fewer lines of x in L2. One H200, 2026-11-28 (c8, ms, G = 8 /
  /// 16 / 32): prostate-1 D^T r 0.114 / 0.111 / 0.110-0.112, proton-hn 0.212-0.214 /
  /// 0.207-0.209 / 0.206-0.208, liver-1 1.576 / 1.547 / 1.536.
  int taskGroupRows = -1;
  /// Bits of column offset an entry: 8 (segments where a column is 256 or more past the
  /// segment's first), 12 (offsetsLo and offsetsHi: 1.5 bytes an entry, no segments; a slice
  /// ends where a column is 4096 past its first) or 16 (offsets16: two bytes an entry, no
  /// segments). 12 bits: the transposes' and proton-hn D's slices nearly all span less than 4096
  /// columns (slices 1.001-1.06 x nnz / 32, counted 2026-11-27), so 12 bits store them in 0.5 B a
  /// non-zero less than 16 without segment bases. The transposes of
  /// prostate-1 and liver-1/16 segment 69-73 % of their slices at 8 bits, none at 16 (proton-hn's
  /// D and D^T 15-19 % and none; counted 2026-11-27): one more byte a non-zero for a gather path
  /// without segment bases (shuffles and popcounts).
  /// 0: CudaSpmvMatrix chooses by the device and the matrix (chooseOffsetBits); the encoder
  /// alone, knowing no device, takes 8.
  int offsetBits = 0;
  /// Not part of the encoding: warps per block of the launch, 8 or 2; 0 (default): 8 when the
  /// tasks have an order (a block's warps share the lines of x they gather: the transposes), else
  /// 2. A block keeps its SM slot until its slowest warp ends, so small blocks waste less where
  /// tasks end unevenly (rows ending in them); where the order puts 8 warps on the same lines
  /// of x, 8 keep them on one SM. One H200, 2026-11-27 (eighteenth session), ms: prostate-1 D w
  /// 0.121 (8) against 0.117-0.118 (2 or 1), proton-hn D w 0.246-0.248 against 0.234-0.235;
  /// prostate-1 D^T r 0.117-0.118 against 0.128 (2) and 0.144-0.145 (1).
  int warpsPerBlock = 0;
  /// Not part of the encoding: 1 (default) sums the rows of tasks without segmented slices
  /// through a buffer of 8 rows a warp in shared memory (sliced_offset8_warp.hpp, flushRows)
  /// instead of butterflies of shuffles, where the launch has blocks of 2 warps and 32 warps an
  /// SM, no slice is segmented and x takes at most kRowBufferMaxXBytes (SlicedOffset8::rowBuffer
  /// says where it was taken); 0 never. One H200, 2026-11-28 (8 chunks a task): prostate-1 D w
  /// 0.116 -> 0.106-0.107 ms, proton-hn D w (12-bit) 0.215-0.217 -> 0.214-0.215; an H100:
  /// prostate-1 D w 0.132-0.133 -> 0.124-0.125.
  int rowBuffer = 1;
};

struct SlicedOffset8 {
  static constexpr int kSlice = 32;  ///< entries per slice (one per lane)
  static constexpr int kChunk = 8;   ///< slices per chunk
  static constexpr int kChunkEntries = kSlice * kChunk;
  static constexpr std::uint32_t kBaseMask = (1u << 30) - 1, kSegmented = 1u << 30, kLast = 1u << 31;
  static constexpr int kMaxSegments = 4;  ///< per slice: a chunk's area fits 32 words
  static constexpr int kAreaWords = 32;   ///< words the kernel loads a chunk (one a lane)

  std::int64_t rows = 0, cols = 0, nnz = 0;
  double scale = 1;
  int chunksPerTask = 8;   ///< SlicedOffset8Options::chunksPerTask resolved
  int minBlocksPerSm = 4;  ///< from SlicedOffset8Options (the launch, not the layout)
  int warpsPerBlock = 8;   ///< from SlicedOffset8Options, resolved (the launch, not the layout)
  int rowBuffer = 0;       ///< from SlicedOffset8Options (the launch, not the layout)
  int taskGroupRows = 0;   ///< as encoded (SlicedOffset8Options::taskGroupRows resolved)
  int offsetBits = 8;      ///< 8, 12 or 16 (SlicedOffset8Options::offsetBits)
  std::int64_t nSlices = 0, nChunks = 0, segmentedSlices = 0, segmentedChunks = 0;
  std::vector<std::uint16_t> values;         ///< nChunks * 256, interleaved
  std::vector<std::uint8_t> offsetsLo;       ///< nChunks * 256, interleaved; empty at 16 bits
  /// nChunks * 32 at 12 bits (word 32 c + l: bits 4 j..4 j + 3 = offset >> 8 of position l of
  /// slice 8 c + j), else empty.
  std::vector<std::uint32_t> offsetsHi;
  std::vector<std::uint16_t> offsets16;      ///< nChunks * 256, interleaved; empty at 8 bits
  std::vector<std::uint32_t> headers;        ///< nChunks * 8
  std::vector<std::uint32_t> segs;           ///< areas of the segmented chunks, then 32 zeros
  std::vector<std::int32_t> nonEmptyRow;
  std::vector<Offset8Task> tasks;
  std::vector<std::uint32_t> taskOrder;      ///< empty or a permutation of the tasks
  std::vector<SplitRow> splitRows;
  std::vector<EmptyRun> emptyRuns;

  std::int64_t nonEmptyRows() const { return std::int64_t(nonEmptyRow.size()); }
  /// Columns a segment spans at most: 256 at 8 offset bits, 4096 at 12, 65536 at 16.
  static std::int64_t segmentSpan(int offsetBits) { return std::int64_t(1) << offsetBits; }
  /// The column offset stored at index i (of at()), 8-, 12- or 16-bit.
  std::uint32_t offsetAt(std::int64_t i) const {
    if (!offsets16.empty()) return std::uint32_t(offsets16[std::size_t(i)]);
    const std::uint32_t lo = offsetsLo[std::size_t(i)];
    if (offsetsHi.empty()) return lo;
    return lo | ((offsetsHi[std::size_t(i / kChunk)] >> (4 * (i % kChunk))) & 0xFu) << 8;
  }
  /// Index of position l of slice s in values / offsetsLo / offsets16.
  static std::int64_t at(std::int64_t s, int l) {
    return (s / kChunk) * kChunkEntries + std::int64_t(l) * kChunk + s % kChunk;
  }
};

/// Encodes a valid HalfCsr (HalfCsr::validate() holds). Multi-threaded; the result does not
/// depend on the thread count. Throws Unsupported for 2^30 columns or more, or past the 32-bit
/// limits (2^32 slices or words of segs, 2^31 rows).
SlicedOffset8 encodeSlicedOffset8(const HalfCsr& m, const SlicedOffset8Options& options = {});

/// The HalfCsr back, exactly (rows in order, entries in column order, same bits and scale).
HalfCsr decodeSlicedOffset8(const SlicedOffset8& s);

/// Slices of m at 8 offset bits (and how many of them segmented), at 12 and at 16: a pass over
/// the columns, no encoding.
struct SliceCounts {
  std::int64_t slices8 = 0, segmented8 = 0, slices12 = 0, slices16 = 0;
};
SliceCounts countSlices(const HalfCsr& m, int threads = 0);

/// Offset bits for m on a GPU that moves `bytesPerSmClock` of DRAM bandwidth per SM and clock
/// (theoretical): 8 where the GPU lacks the bandwidth to spare (< 16 B: an H100 SXM, 12.8; an
/// H200 has 18.4) or the 8-bit layout segments a tenth of the slices or fewer; else the wide
/// width that takes fewer bytes, 12 (3.5 B an entry) unless it cuts more slices than 8/7 of 16's
/// (4 B), and 8 after all where that width needs a quarter more slices than 8 bits (columns far
/// apart: 8 bits packs four segments a slice). Measured (docs/benchmarks.md, 2026-11-27 and
/// 2026-11-28): on an H200 12 bits took prostate-1 D^T r from 0.117-0.119 (16) to 0.113-0.115 ms
/// and proton-hn D w from 0.234 (8) to 0.216-0.218, 16 stays ahead on liver-1 D^T r (1.576
/// against 1.781 at 12), and 8 on both D w of voxel rows; on an H100 every product was 2-17 %
/// slower at 12 bits and 4-26 % at 16.
constexpr double kWideOffsetsBytesPerSmClock = 16.0;
int chooseOffsetBits(double bytesPerSmClock, const SliceCounts& counts);

/// The offset width in a variant's name (`penumbra-cli bench spmv`, the kernel profile): "" at 8
/// bits, "o12" at 12, "w" at 16.
inline std::string offsetBitsSuffix(int offsetBits) {
  return offsetBits == 16 ? "w" : offsetBits == 12 ? "o12" : "";
}

/// The CPU reference on the encoded matrix: every row summed left to right in double, then
/// scaled, as multiplyCpu() (so the two agree bit for bit).
void multiplySlicedOffset8Cpu(const SlicedOffset8& s, const double* x, double* y, int threads = 0);

/// Bytes one product moves with csr_spmv_sliced_offset8: what the kernel reads of the layout
/// (values and low offsets of every chunk, padding included; 32 B of headers per chunk; the
/// areas in segs; 4 B per non-empty row; task records and order, empty runs, split rows and their
/// per-task sums), y written once and x read once (8 B per row and per column, the model
/// of the vectors).
struct SlicedOffset8Bytes {
  double values = 0, offsets = 0, segments = 0, headers = 0, rows = 0, tasks = 0, vectors = 0;
  double matrix() const { return values + offsets + segments + headers + rows + tasks; }
  double total() const { return matrix() + vectors; }
};
SlicedOffset8Bytes slicedOffset8Bytes(const SlicedOffset8& s);

/// Device bytes of the layout (arrays as stored, plus the per-task sums).
double slicedOffset8DeviceBytes(const SlicedOffset8& s);

}  // namespace penumbra::spmv
