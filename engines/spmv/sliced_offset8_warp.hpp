#pragma once
/// The warp algorithm of csr_spmv_sliced_offset8 on a SlicedOffset8 (sliced_offset8.hpp), written
/// once for the GPU (cuda/csr_spmv_sliced_offset8.cu gives it the warp intrinsics and streaming
/// loads) and for the CPU emulation of a warp (tests/spmv/warp_emulator.hpp), so that the CPU
/// tests run the kernel's own logic and the GPU tests can ask for the emulation's result bit for
/// bit.
///
/// One warp per task (chunksPerTask chunks of 8 slices of 32 entries):
/// - Streams: per chunk lane l loads 16 B of values and 8 B of 8-bit offsets (16 B of 16-bit
///   offsets in a layout with offsetBits 16; at 12 bits 8 B of low bytes and 4 B of high
///   nibbles; neither has segments; position l of the 8 slices), the header of slice l % 8 and
///   word l of the chunk's area in segs; the next chunk's loads are issued before the current
///   chunk is used (software pipelining: two chunks, 6 KB per warp, in flight). The area's
///   position runs on from the task's segBegin by each chunk's area length (8 + the masks'
///   popcounts).
/// - Columns: col = segment base + lo: no scan. One ballot gives the chunk's segmented and
///   row-end masks (lanes 0..7 and 8..15 hold the 8 headers). In a chunk with a segmented slice,
///   lane l of slice j counts the segment starts at or before it in mask j (popcount); k > 0
///   takes base number k of the slice from the area, held one word a lane (a shuffle).
/// - Gathers: slice j's gather is one instruction over 32 consecutive entries of one row (the
///   delta16 kernel's spanned 32 V entries: ~8.4 L1 wavefronts per gather, ncu).
/// - Sums: one double per lane, fma in slice order; at a slice flagged "last" a fixed xor tree
///   sums the warp, lane 0 writes y[nonEmptyRow[ord]] = sum * scale, the accumulator restarts.
///   Without segmented slices the rows are summed two at a time (sumPair: the same bits, half the
///   shuffles): a knockout on one H200 (2026-11-27) put the row-end warp sums at 12 % of
///   prostate-1's D w, whose rows end in 55 % of its chunks; paired, D w took 5 % less there and
///   on an H100. The segmented path keeps one tree a row: its two more registers made D^T 3-5 %
///   slower. With the row buffer (kRowBuffer, SlicedOffset8::rowBuffer: short rows, x in L1)
///   a finished row's lane sums go to shared memory instead and flushRows() sums up to 8 rows
///   with two shuffles (2026-11-28: prostate-1 D w 8-10 % faster on an H200 and an H100).
///   Rows cut between tasks leave their tree sums unscaled in `partials` (slot 2t: the row that
///   started before task t and ends in it; 2t + 1: the row still open at the end of task t, also
///   when it started before) and finishSplitRow() adds them in task order. No atomics: bitwise
///   reproducible.
#include <cstdint>

#include "spmv/sliced_offset8.hpp"
#include "spmv/spmv_warp_common.hpp"

namespace penumbra::spmv {

/// What the kernel reads and writes besides x and y (device pointers on the GPU).
struct Offset8KernelView {
  const std::uint16_t* values = nullptr;
  const std::uint8_t* offsetsLo = nullptr;
  const std::uint32_t* headers = nullptr;
  const std::uint32_t* segs = nullptr;       ///< areas; null when no slice is segmented
  const std::uint32_t* taskOrder = nullptr;  ///< null: warp i takes task i
  const std::int32_t* nonEmptyRow = nullptr;
  const Offset8Task* tasks = nullptr;
  const EmptyRun* emptyRuns = nullptr;
  const SplitRow* splitRows = nullptr;
  double* partials = nullptr;  ///< 2 per task
  std::uint32_t nTasks = 0, nEmpty = 0, nSplit = 0, chunksPerTask = 1;
  std::uint32_t minBlocksPerSm = 4;  ///< which compiled kernel the launch picks (4 or 5)
  std::uint32_t warpsPerBlock = 8;   ///< and with how many warps a block (2 or 8)
  std::uint64_t nSlices = 0, nChunks = 0;
  double scale = 1;
};

/// The view's counts, scale and launch choice from s (the device upload and the CPU emulation
/// set the pointers, each to its own copy of the arrays).
inline void setOffset8Counts(Offset8KernelView& v, const SlicedOffset8& s) {
  v.nTasks = std::uint32_t(s.tasks.size());
  v.nEmpty = std::uint32_t(s.emptyRuns.size());
  v.nSplit = std::uint32_t(s.splitRows.size());
  v.chunksPerTask = std::uint32_t(s.chunksPerTask);
  v.minBlocksPerSm = std::uint32_t(s.minBlocksPerSm);
  v.warpsPerBlock = std::uint32_t(s.warpsPerBlock);
  v.nSlices = std::uint64_t(s.nSlices);
  v.nChunks = std::uint64_t(s.nChunks);
  v.scale = s.scale;
}

namespace sliced_offset8 {

using warp::fmaD;
using warp::popc32;
using warp::warpSum;

/// One chunk as lane l holds it.
struct Chunk {
  std::uint32_t val[4];    ///< fp16 bits of position l of slices 0..7
  std::uint32_t lo[2];     ///< 8-bit offsets (low bytes) of position l of slices 0..7
  std::uint32_t hi;        ///< their high nibbles (12-bit layouts)
  std::uint32_t off16[4];  ///< 16-bit offsets of position l of slices 0..7 (16-bit layouts)
  std::uint32_t hdr;       ///< header of slice l % 8
  std::uint32_t area;      ///< word l of the chunk's area (when it has one)
};

/// Where the lane reads its next chunk in the three chunk streams, advanced one chunk at a time:
/// an add a stream instead of 64-bit index arithmetic from the chunk number (SASS, sm_90: ~20
/// instructions a chunk, 2026-11-27).
struct StreamCursor {
  const std::uint16_t* values;
  const std::uint8_t* offsetsLo;   ///< null at 16 bits
  const std::uint16_t* offsets16;  ///< null at 8 and 12 bits
  const std::uint32_t* offsetsHi;  ///< null at 8 and 16 bits
  const std::uint32_t* headers;
};

/// The offsets beyond a layout's low bytes, as the kernel takes them: `high` is
/// SlicedOffset8::offsets16 at kBits 16, offsetsHi at 12, unused at 8.
template <int kBits>
PENUMBRA_SPMV_HD const std::uint16_t* offsets16Of(const void* high) {
  return kBits == 16 ? static_cast<const std::uint16_t*>(high) : nullptr;
}
template <int kBits>
PENUMBRA_SPMV_HD const std::uint32_t* offsetsHiOf(const void* high) {
  return kBits == 12 ? static_cast<const std::uint32_t*>(high) : nullptr;
}

template <int kBits, class W>
PENUMBRA_SPMV_HD StreamCursor cursorAt(W& w, const Offset8KernelView& v, std::uint64_t c,
                                       const void* high) {
  const std::uint64_t i =
      c * SlicedOffset8::kChunkEntries + std::uint64_t(w.lane()) * SlicedOffset8::kChunk;
  const std::uint64_t word = c * SlicedOffset8::kSlice + std::uint64_t(w.lane());
  return {v.values + i, kBits == 16 ? nullptr : v.offsetsLo + i,
          kBits == 16 ? offsets16Of<kBits>(high) + i : nullptr,
          kBits == 12 ? offsetsHiOf<kBits>(high) + word : nullptr,
          v.headers + c * SlicedOffset8::kChunk + std::uint64_t(w.lane() & 7)};
}

template <int kBits, class W>
PENUMBRA_SPMV_HD void loadChunk(W& w, StreamCursor& at, Chunk& k) {
  w.loadStream(at.values, k.val);
  if constexpr (kBits == 16)
    w.loadStream(at.offsets16, k.off16);
  else
    w.loadStream(at.offsetsLo, k.lo);
  if constexpr (kBits == 12) k.hi = w.loadStream(at.offsetsHi);
  k.hdr = w.loadStream(at.headers);
  at.values += SlicedOffset8::kChunkEntries;
  if constexpr (kBits == 16)
    at.offsets16 += SlicedOffset8::kChunkEntries;
  else
    at.offsetsLo += SlicedOffset8::kChunkEntries;
  if constexpr (kBits == 12) at.offsetsHi += SlicedOffset8::kSlice;
  at.headers += SlicedOffset8::kChunk;
}

/// Gathers x at the lane's entry of the chunk's 8 slices; returns the words of the chunk's area
/// (0 without one). hdrBase: the base column of the header the lane holds (flags cleared once a
/// chunk, not after each shuffle). kSegmented: the chunk has an area: lane l of slice j takes
/// base k = (segment starts at or before l in mask j) from word 7 + (bases of slices 0..j-1) + k
/// of the area; k = 0: the header's. The running count replaced a 3-step warp scan whose
/// shuffles stalled every chunk (ncu source counters, H100, 2026-11-27). kPartial: slices
/// nValid..7 are padding (x taken as 0). kBits: offset bits (8, 12, 16).
template <int kBits, bool kSegmented, bool kPartial, class W>
PENUMBRA_SPMV_HD std::uint32_t gatherChunk(W& w, const Chunk& cur, std::uint32_t hdrBase,
                                           std::uint32_t atOrBelow, int nValid, const double* x,
                                           double (&xv)[SlicedOffset8::kChunk]) {
  std::uint32_t at = SlicedOffset8::kChunk - 1;
  PENUMBRA_SPMV_UNROLL
  for (int j = 0; j < SlicedOffset8::kChunk; ++j) {
    std::uint32_t base = w.shfl(hdrBase, j);
    if constexpr (kSegmented) {
      const std::uint32_t mask = w.shfl(cur.area, j);
      const std::uint32_t k = popc32(mask & atOrBelow);
      const std::uint32_t b = w.shfl(cur.area, int(at + k));
      if (k) base = b;
      at += popc32(mask);
    }
    std::uint32_t off;
    if constexpr (kBits == 16)
      off = (cur.off16[j >> 1] >> (16 * (j & 1))) & 0xFFFFu;
    else
      off = (cur.lo[j >> 2] >> (8 * (j & 3))) & 0xFFu;
    if constexpr (kBits == 12) off |= ((cur.hi >> (4 * j)) & 0xFu) << 8;
    const std::uint32_t col = base + off;
    if constexpr (kPartial)
      xv[j] = j < nValid ? w.gatherX(x, col) : 0.0;
    else
      xv[j] = w.gatherX(x, col);
  }
  return kSegmented ? at + 1 : 0u;
}

/// Where a row's warp sum goes: y[nonEmptyRow[d]] * scale for an ordinal d, or task t's slot for
/// the row that started before it (kHeadSlot) or goes on after it (kTailSlot), unscaled.
constexpr std::uint32_t kNoRow = 0xFFFFFFFFu, kHeadSlot = 0xFFFFFFFEu, kTailSlot = 0xFFFFFFFDu;

PENUMBRA_SPMV_HD void writeRowSum(const Offset8KernelView& v, std::uint32_t t, std::uint32_t d,
                                  double s, double* y, bool writer) {
  if (!writer) return;
  if (d == kHeadSlot)
    v.partials[2 * std::uint64_t(t)] = s;
  else if (d == kTailSlot)
    v.partials[2 * std::uint64_t(t) + 1] = s;
  else
    y[v.nonEmptyRow[d]] = s * v.scale;
}

/// The warp sums of two rows (lane sums a and b) in one butterfly: the first level adds a's upper
/// half into the lower lanes and b's lower half into the upper lanes, the next four stay within a
/// half. Lane 0 ends with warpSum(a) and lane 16 with warpSum(b), bit for bit: each level adds the
/// same two numbers as warpSum's (in either order, which does not change a sum).
template <class W>
PENUMBRA_SPMV_HD void sumPair(W& w, const Offset8KernelView& v, std::uint32_t t, double a,
                              std::uint32_t da, double b, std::uint32_t db, double* y) {
  const bool upper = (w.lane() & 16) != 0;
  double s = upper ? b : a;
  s += w.shflXor(upper ? a : b, 16);
  for (int o = 8; o > 0; o >>= 1) s += w.shflXor(s, o);
  writeRowSum(v, t, upper ? db : da, s, y, (w.lane() & 15) == 0);
}

/// The row buffer (kRowBuffer): a warp's lane sums of up to kRowSlots finished rows in shared
/// memory, slot k at rows[k * kRowStride + lane] (33 doubles a slot: the flush's reads below hit
/// every bank pair twice, the least for 256 B).
constexpr std::uint32_t kRowSlots = 8, kRowStride = 33;

/// The warp sums of the n buffered rows, rows first .. first + n - 1 (ordinals; the last is the
/// task's open row, its tail slot, when tailLast): lane l sums positions 8 (l & 3) .. + 7 of slot
/// l >> 2 in order, then two xor levels add the four quarters ((q0 + q1) + (q2 + q3), the same
/// bits in the four lanes), and lane 4 r writes row r. Two shuffles a lane for up to 8 rows where
/// paired butterflies take five a row.
template <class W>
PENUMBRA_SPMV_HD void flushRows(W& w, const Offset8KernelView& v, std::uint32_t t,
                                const Offset8Task& task, const double* rows, std::uint32_t first,
                                std::uint32_t n, bool tailLast, double* y) {
  w.syncwarp();  // every lane's stores of the slots before any lane reads them
  const std::uint32_t lane = std::uint32_t(w.lane()), r = lane >> 2;
  const double* p = rows + r * kRowStride + (lane & 3u) * 8u;
  double s = p[0];
  PENUMBRA_SPMV_UNROLL
  for (int i = 1; i < 8; ++i) s += p[i];
  s += w.shflXor(s, 1);
  s += w.shflXor(s, 2);
  const std::uint32_t ord = first + r;
  const std::uint32_t dest = tailLast && r + 1 == n                       ? kTailSlot
                             : task.startedBefore && ord == task.ordBegin ? kHeadSlot
                                                                          : ord;
  writeRowSum(v, t, dest, s, y, (lane & 3u) == 0 && r < n);
}

/// Task t of v, by the 32 lanes of w, for a layout with kBits offset bits (12, 16: the bits
/// beyond the low bytes at `high`, offsets16Of / offsetsHiOf), with (kSegs, 8 bits only) or
/// without segmented slices, and a task that holds the matrix's partial last chunk (kLastTask)
/// or not: all are the same for every lane, so the common case carries no test of any (the
/// offset width, the area loads, the partial chunk).
template <int kBits, bool kSegs, bool kLastTask, bool kRowBuffer, class W>
PENUMBRA_SPMV_HD void runTaskAs(W& w, const Offset8KernelView& v, std::uint32_t t,
                                const double* x, double* y, const void* high) {
  static_assert(!(kSegs && kRowBuffer), "the row buffer is for layouts without segments");
  using S8 = SlicedOffset8;
  const int lane = w.lane();
  const std::uint32_t atOrBelow = (2u << lane) - 1u;  // lanes 0..lane (lane 31: all)
  const Offset8Task task = v.tasks[t];
  const std::uint64_t c0 = std::uint64_t(t) * v.chunksPerTask;
  const std::uint32_t n =  // chunks of the task
      std::uint32_t(c0 + v.chunksPerTask < v.nChunks ? v.chunksPerTask : v.nChunks - c0);
  // Only the matrix's last chunk can hold fewer than 8 real slices.
  const int lastValid = kLastTask ? int(v.nSlices - (v.nChunks - 1) * S8::kChunk) : S8::kChunk;
  const std::uint32_t hdrBit = lane < 8 ? S8::kSegmented : S8::kLast;
  std::uint32_t ord = task.ordBegin;
  bool startedBefore = task.startedBefore != 0, open = false;
  double acc = 0.0;
  // A finished row whose warp sum waits for the next one, so that two rows share one butterfly.
  double pend = 0.0;
  std::uint32_t pendDest = kNoRow;
  // Or (kRowBuffer) the lane sums of nBuf finished rows in shared memory.
  double* const rows = kRowBuffer ? w.rowBuffer() : nullptr;
  std::uint32_t nBuf = 0;
  std::uint32_t areaAt = task.segBegin;
  StreamCursor at = cursorAt<kBits>(w, v, c0, high);
  // Chunk k of the task, whose loads were issued before; issues chunk k + 1's into `next` (two
  // chunks in flight; the caller alternates two Chunk variables, so nothing is copied).
  auto step = [&](std::uint32_t k, const Chunk& cur, Chunk& next) {
    const bool more = k + 1 < n;
    if (more) loadChunk<kBits>(w, at, next);
    // Lanes 0..7: segmented bits, lanes 8..15: row-end bits of slices 0..7.
    const std::uint32_t bits = w.ballot(lane < 16 && (cur.hdr & hdrBit) != 0);
    const std::uint32_t segBits = kSegs ? bits & 0xFFu : 0u, lastBits = (bits >> 8) & 0xFFu;
    const int nValid = kLastTask && !more ? lastValid : S8::kChunk;
    const std::uint32_t hdrBase = cur.hdr & S8::kBaseMask;
    // Warp-uniform choices, each path without the tests it does not need: ptxas turns uniform
    // branches inside one unrolled loop into predicated code that every chunk issues (SASS, H200
    // build, 2026-11-27).
    double xv[S8::kChunk];
    if (nValid == S8::kChunk) {
      if (segBits == 0)
        gatherChunk<kBits, false, false>(w, cur, hdrBase, atOrBelow, nValid, x, xv);
      else
        areaAt += gatherChunk<kBits, kSegs, false>(w, cur, hdrBase, atOrBelow, nValid, x, xv);
    } else if (segBits == 0) {
      gatherChunk<kBits, false, true>(w, cur, hdrBase, atOrBelow, nValid, x, xv);
    } else {
      areaAt += gatherChunk<kBits, kSegs, true>(w, cur, hdrBase, atOrBelow, nValid, x, xv);
    }
    if constexpr (kSegs) {
      if (more) next.area = w.loadStream(v.segs + areaAt + std::uint32_t(lane));
    }
    if (lastBits == 0 && nValid == S8::kChunk) {  // no row ends here (long rows: most chunks)
      PENUMBRA_SPMV_UNROLL
      for (int j = 0; j < S8::kChunk; j += 2) {
        double lo, hi;
        W::halvesToDouble(cur.val[j >> 1], lo, hi);
        acc = fmaD(lo, xv[j], acc);
        acc = fmaD(hi, xv[j + 1], acc);
      }
      open = true;
      return;
    }
    if constexpr (kRowBuffer) {  // room for this chunk's row ends
      if (nBuf + popc32(lastBits) > kRowSlots) {
        flushRows(w, v, t, task, rows, ord - nBuf, nBuf, false, y);
        nBuf = 0;
      }
    }
    PENUMBRA_SPMV_UNROLL
    for (int j = 0; j < S8::kChunk; ++j) {
      if (j >= nValid) break;
      const double h = W::halfToDouble(std::uint16_t(cur.val[j >> 1] >> (16 * (j & 1))));
      acc = fmaD(h, xv[j], acc);
      open = true;
      if ((lastBits >> j) & 1u) {  // warp-uniform: the headers are the same for every lane
        const std::uint32_t dest = startedBefore ? kHeadSlot : ord;
        if constexpr (kRowBuffer) {
          rows[nBuf * kRowStride + std::uint32_t(lane)] = acc;
          ++nBuf;
        } else if constexpr (kSegs) {  // a waiting row's registers slowed this path (the top)
          writeRowSum(v, t, dest, warpSum(w, acc), y, lane == 0);
        } else if (pendDest == kNoRow) {
          pend = acc;
          pendDest = dest;
        } else {
          sumPair(w, v, t, pend, pendDest, acc, dest, y);
          pendDest = kNoRow;
        }
        startedBefore = false;
        open = false;
        acc = 0.0;
        ++ord;
      }
    }
  };
  Chunk cur;
  cur.area = 0;
  loadChunk<kBits>(w, at, cur);
  if constexpr (kSegs) cur.area = w.loadStream(v.segs + areaAt + std::uint32_t(lane));
  for (std::uint32_t k = 0; k < n; ++k) {
    Chunk next = cur;
    step(k, cur, next);
    cur = next;
  }
  // The row still open goes on in the next task.
  if constexpr (kRowBuffer) {
    if (open && nBuf == kRowSlots) {
      flushRows(w, v, t, task, rows, ord - nBuf, nBuf, false, y);
      nBuf = 0;
    }
    const std::uint32_t first = ord - nBuf;
    if (open) {
      rows[nBuf * kRowStride + std::uint32_t(lane)] = acc;
      ++nBuf;
    }
    if (nBuf) flushRows(w, v, t, task, rows, first, nBuf, open, y);
  } else if (pendDest != kNoRow) {
    if (open)
      sumPair(w, v, t, pend, pendDest, acc, kTailSlot, y);
    else
      writeRowSum(v, t, pendDest, warpSum(w, pend), y, lane == 0);
  } else if (open) {
    writeRowSum(v, t, kTailSlot, warpSum(w, acc), y, lane == 0);
  }
}

/// Task t of v, by the 32 lanes of w (every lane must call it: the shuffles name all 32), for a
/// layout with kBits offset bits: 8 (high unused), 12 (high: SlicedOffset8::offsetsHi) or 16
/// (high: offsets16). The high parts are not in the view: a view one pointer longer made ptxas
/// spill in the 8-bit paths (sm_90, 2026-11-27), and the GPU compiles one kernel each.
template <int kBits, bool kRowBuffer = false, class W>
PENUMBRA_SPMV_HD void runTaskOf(W& w, const Offset8KernelView& v, std::uint32_t t, const double* x,
                                double* y, const void* high) {
  static_assert(kBits == 8 || kBits == 12 || kBits == 16, "offsets of 8, 12 or 16 bits");
  const bool lastTask = (std::uint64_t(t) + 1) * v.chunksPerTask >= v.nChunks &&
                        v.nSlices % SlicedOffset8::kChunk != 0;
  if constexpr (kBits != 8) {  // never segmented (the encoder)
    if (lastTask)
      runTaskAs<kBits, false, true, kRowBuffer>(w, v, t, x, y, high);
    else
      runTaskAs<kBits, false, false, kRowBuffer>(w, v, t, x, y, high);
  } else if (v.segs) {
    if (lastTask)
      runTaskAs<8, true, true, false>(w, v, t, x, y, high);
    else
      runTaskAs<8, true, false, false>(w, v, t, x, y, high);
  } else if (lastTask) {
    runTaskAs<8, false, true, kRowBuffer>(w, v, t, x, y, high);
  } else {
    runTaskAs<8, false, false, kRowBuffer>(w, v, t, x, y, high);
  }
}

/// Empty-row run i: zeros (0 * scale, as the CPU reference writes them).
template <class W>
PENUMBRA_SPMV_HD void writeEmptyRun(W& w, const Offset8KernelView& v, std::uint32_t i, double* y) {
  const EmptyRun r = v.emptyRuns[i];
  for (int k = w.lane(); k < r.count; k += 32) y[r.first + k] = 0.0 * v.scale;
}

/// Split row i: y = (tail[t0] + tail[t0 + 1] + ... + tail[t1 - 1] + head[t1]) * scale.
PENUMBRA_SPMV_HD void finishSplitRow(const Offset8KernelView& v, std::uint32_t i, double* y) {
  const SplitRow r = v.splitRows[i];
  double s = v.partials[2 * std::uint64_t(r.firstTask) + 1];
  for (std::uint32_t t = r.firstTask + 1; t < r.lastTask; ++t)
    s += v.partials[2 * std::uint64_t(t) + 1];
  s += v.partials[2 * std::uint64_t(r.lastTask)];
  y[r.row] = s * v.scale;
}

}  // namespace sliced_offset8
}  // namespace penumbra::spmv
