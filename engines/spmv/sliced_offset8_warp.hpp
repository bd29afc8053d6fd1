#pragma once
/// The warp algorithm of csr_spmv_sliced_offset8 on a SlicedOffset8 (sliced_offset8.hpp), written
/// once for the GPU (cuda/csr_spmv_sliced_offset8.cu gives it the warp intrinsics and streaming
/// loads) and for the CPU emulation of a warp (tests/spmv/warp_emulator.hpp), so that the CPU
/// tests run the kernel's own logic and the GPU tests can ask for the emulation's result bit for
/// bit.
///
/// One warp per task (chunksPerTask chunks of 8 slices of 32 entries):
/// - Streams: per chunk lane l loads 16 B of values and 8 B of low offsets (position l of the 8
///   slices) and the header of slice l % 8; the next chunk's loads are issued before the current
///   chunk is used (software pipelining: two chunks, 6 KB per warp, in flight).
/// - Columns: col = base + lo (+ hi << 8 in wide slices): no scan. One ballot gives the chunk's
///   wide and row-end masks (lanes 0..7 and 8..15 hold the 8 headers); a wide slice's high part
///   is number chunkWideBase[c] + (wide slices before it in the chunk) of the high stream.
/// - Gathers: slice j's gather is one instruction over 32 consecutive entries of one row (the
///   delta16 kernel's spanned 32 V entries: ~8.4 L1 wavefronts per gather, ncu).
/// - Sums: one double per lane, fma in slice order; at a slice flagged "last" a fixed xor tree
///   sums the warp, lane 0 writes y[nonEmptyRow[ord]] = sum * scale, the accumulator restarts.
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
  const std::uint16_t* high = nullptr;
  const std::uint32_t* chunkWideBase = nullptr;
  const std::int32_t* nonEmptyRow = nullptr;
  const Offset8Task* tasks = nullptr;
  const EmptyRun* emptyRuns = nullptr;
  const SplitRow* splitRows = nullptr;
  double* partials = nullptr;  ///< 2 per task
  std::uint32_t nTasks = 0, nEmpty = 0, nSplit = 0, chunksPerTask = 1;
  std::uint32_t minBlocksPerSm = 4;  ///< which compiled kernel the launch picks (4 or 5)
  std::uint64_t nSlices = 0, nChunks = 0;
  double scale = 1;
};

namespace sliced_offset8 {

using warp::fmaD;
using warp::warpSum;

/// One chunk as lane l holds it.
struct Chunk {
  std::uint32_t val[4];  ///< fp16 bits of position l of slices 0..7
  std::uint32_t lo[2];   ///< low offset bytes of position l of slices 0..7
  std::uint32_t hdr;     ///< header of slice l % 8
};

template <class W>
PENUMBRA_SPMV_HD void loadChunk(W& w, const Offset8KernelView& v, std::uint64_t c, Chunk& k) {
  const int lane = w.lane();
  const std::uint64_t i =
      c * SlicedOffset8::kChunkEntries + std::uint64_t(lane) * SlicedOffset8::kChunk;
  w.loadStream(v.values + i, k.val);
  w.loadStream(v.offsetsLo + i, k.lo);
  k.hdr = w.loadStream(v.headers + c * SlicedOffset8::kChunk + std::uint64_t(lane & 7));
}

/// Task t of v, by the 32 lanes of w (every lane must call it: the shuffles name all 32).
template <class W>
PENUMBRA_SPMV_HD void runTask(W& w, const Offset8KernelView& v, std::uint32_t t, const double* x,
                              double* y) {
  using S8 = SlicedOffset8;
  const int lane = w.lane();
  const Offset8Task task = v.tasks[t];
  const std::uint64_t c0 = std::uint64_t(t) * v.chunksPerTask,
                      c1 = c0 + v.chunksPerTask < v.nChunks ? c0 + v.chunksPerTask : v.nChunks;
  std::uint32_t ord = task.ordBegin;
  bool startedBefore = task.startedBefore != 0, open = false;
  double acc = 0.0;
  Chunk cur;
  loadChunk(w, v, c0, cur);
  for (std::uint64_t c = c0; c < c1; ++c) {
    Chunk next = cur;
    if (c + 1 < c1) loadChunk(w, v, c + 1, next);  // in flight while this chunk is summed
    // Lanes 0..7: wide bits, lanes 8..15: row-end bits of slices 0..7.
    const std::uint32_t hdrBit = lane < 8 ? S8::kWide : S8::kLast;
    const std::uint32_t bits = w.ballot(lane < 16 && (cur.hdr & hdrBit) != 0);
    const std::uint32_t wideBits = bits & 0xFFu, lastBits = (bits >> 8) & 0xFFu;
    const std::uint64_t left = v.nSlices - c * S8::kChunk;
    const int nValid = left < std::uint64_t(S8::kChunk) ? int(left) : S8::kChunk;
    double xv[S8::kChunk];
    if (wideBits == 0 && nValid == S8::kChunk) {
      // The common chunk (warp-uniform test): no high parts, every slice real. Kept apart from
      // the general path because ptxas turned that path's branches into predicated code, so
      // every chunk issued the high-part address arithmetic and loads of all 8 slices: ~240
      // instructions a chunk where this path needs ~110 (SASS, H200 build, 2026-11-27).
      PENUMBRA_SPMV_UNROLL
      for (int j = 0; j < S8::kChunk; ++j) {
        const std::uint32_t h = w.shfl(cur.hdr, j);
        xv[j] = w.gatherX(x, (h & S8::kBaseMask) + ((cur.lo[j >> 2] >> (8 * (j & 3))) & 0xFFu));
      }
    } else {
      // The lane's entry of the chunk's first wide slice; the next wide slice's is 32 further.
      // One 64-bit pointer a chunk and a 32-bit count: the 64-bit rank arithmetic of every
      // slice was most of the ~130 instructions this path added to a chunk (SASS, 2026-11-27).
      const std::uint16_t* high = v.high;
      if (wideBits)
        high += std::uint64_t(w.loadUniform(v.chunkWideBase + c)) * S8::kSlice + std::uint64_t(lane);
      std::uint32_t rank = 0;
      PENUMBRA_SPMV_UNROLL
      for (int j = 0; j < S8::kChunk; ++j) {
        const std::uint32_t h = w.shfl(cur.hdr, j);
        std::uint32_t col = (h & S8::kBaseMask) + ((cur.lo[j >> 2] >> (8 * (j & 3))) & 0xFFu);
        if ((wideBits >> j) & 1u) {
          col += std::uint32_t(w.loadStream(high + rank * std::uint32_t(S8::kSlice))) << 8;
          ++rank;
        }
        xv[j] = j < nValid ? w.gatherX(x, col) : 0.0;
      }
    }
    PENUMBRA_SPMV_UNROLL
    for (int j = 0; j < S8::kChunk; ++j) {
      if (j >= nValid) break;
      const double h = W::halfToDouble(std::uint16_t(cur.val[j >> 1] >> (16 * (j & 1))));
      acc = fmaD(h, xv[j], acc);
      open = true;
      if ((lastBits >> j) & 1u) {  // warp-uniform: the headers are the same for every lane
        const double s = warpSum(w, acc);
        if (lane == 0) {
          if (startedBefore)
            v.partials[2 * std::uint64_t(t)] = s;
          else
            y[v.nonEmptyRow[ord]] = s * v.scale;
        }
        startedBefore = false;
        open = false;
        acc = 0.0;
        ++ord;
      }
    }
    cur = next;
  }
  if (!open) return;
  const double s = warpSum(w, acc);  // the row goes on in the next task
  if (lane == 0) v.partials[2 * std::uint64_t(t) + 1] = s;
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
