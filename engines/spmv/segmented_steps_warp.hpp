#pragma once
/// The warp algorithm of csr_spmv_segmented_steps on a StepCsr (step_csr.hpp), written once for
/// the GPU (cuda/csr_spmv_segmented_steps.cu instantiates it with the warp intrinsics) and for a
/// CPU emulation of a warp (tests/spmv/warp_emulator.hpp), so that the CPU tests run the kernel's
/// own logic and the GPU tests can ask for the emulation's result bit for bit.
///
/// One warp per task; the task's groups pass in blocks of 32, one group (8 entries) per lane (or
/// blocks of 16, a group per two lanes: runTask's LanesPerGroup):
/// - Streams: values (16 B per lane) and step codes (the block's 128 or 256 B, as 16-byte pieces)
///   are copied asynchronously (cp.async) kStages - 1 blocks ahead into this warp's part of
///   shared memory, so that each warp keeps ~2.4 KB of the matrix in flight without registers:
///   the delta16 kernel, which loads into registers one group ahead, moved 59 % of the copy
///   bandwidth in real bytes on liver-1 and was latency-bound (docs/spmv-notes.md).
/// - Rows: the next 32 row starts (first group, first column, row) are read once per block, one
///   per lane; a ballot and an OR-reduction give the mask of groups that start a row.
/// - Columns: a lane adds up its 8 steps (escapes come from a window of 32 escapes held one per
///   lane, loaded a block ahead); a warp scan of those sums that restarts at row starts (from the
///   row's first column - 1) gives the column before each group, and the chain carries from block
///   to block.
/// - Sums: a lane sums its group's products in entry order (fma, double). A lane keeps a running
///   sum for the row that is open at the end of the block, so a row spanning many blocks is
///   reduced across the warp once, when it ends; rows that start and end inside a block are
///   summed by a segmented scan. Fixed shuffle trees everywhere, no atomics: bitwise
///   reproducible. Rows cut between tasks leave their piece sums in `partials` (slot 2t for the
///   row that started before task t, 2t + 1 for the one that goes on after it) for
///   finishSplitRow().
#include <cstdint>
#include <cstring>

#include "spmv/step_csr.hpp"
#include "spmv/spmv_warp_common.hpp"

namespace penumbra::spmv {

/// What the kernel reads and writes besides x and y (device pointers on the GPU).
struct StepKernelView {
  const std::uint16_t* values = nullptr;
  const std::uint8_t* steps = nullptr;
  const std::uint32_t* escapes = nullptr;
  const std::uint32_t* rowFirstGroup = nullptr;
  const std::uint32_t* rowFirstCol = nullptr;
  const std::int32_t* rowIndex = nullptr;
  const StepTask* tasks = nullptr;
  const EmptyRun* emptyRuns = nullptr;
  const SplitRow* splitRows = nullptr;
  double* partials = nullptr;  ///< 2 per task
  std::uint32_t nTasks = 0, nEmpty = 0, nSplit = 0, nEscapes = 0;
  double scale = 1;
};

/// The view's counts and scale from s (the device upload and the CPU emulation set the pointers,
/// each to its own copy of the arrays).
inline void setStepCounts(StepKernelView& v, const StepCsr& s) {
  v.nTasks = std::uint32_t(s.tasks.size());
  v.nEmpty = std::uint32_t(s.emptyRuns.size());
  v.nSplit = std::uint32_t(s.splitRows.size());
  v.nEscapes = std::uint32_t(s.escapes.size());
  v.scale = s.scale;
}

namespace segmented_steps {

using warp::fmaD;
using warp::warpSum;

constexpr int kStages = 4;  ///< blocks in flight per warp: 3 ahead of the one in use
constexpr int kValueBytes = 32 * 16;
constexpr int kStageBytes =
    kValueBytes + 32 * 8 + 16;  ///< values + codes of 8-bit steps, unaligned

PENUMBRA_SPMV_HD int popc(std::uint32_t v) {
#ifdef __CUDA_ARCH__
  return __popc(v);
#else
  return __builtin_popcount(v);
#endif
}
/// Index of the highest set bit; v != 0.
PENUMBRA_SPMV_HD int topBit(std::uint32_t v) {
#ifdef __CUDA_ARCH__
  return 31 - __clz(v);
#else
  return 31 - __builtin_clz(v);
#endif
}
/// Index of the lowest set bit; v != 0.
PENUMBRA_SPMV_HD int lowBit(std::uint32_t v) {
#ifdef __CUDA_ARCH__
  return __ffs(int(v)) - 1;
#else
  return __builtin_ctz(v);
#endif
}
template <class W>
PENUMBRA_SPMV_HD std::uint32_t inclusiveScan(W& w, std::uint32_t v) {
  for (int o = 1; o < 32; o <<= 1) {
    const std::uint32_t t = w.shflUp(v, o);
    if (w.lane() >= o) v += t;
  }
  return v;
}

/// Starts the copies of block [g0, g0 + 32 / LanesPerGroup) of the task (groups >= gEnd are not
/// copied) into stage `stage`: lane i the values of group i, lanes 0.. the 16-byte pieces covering
/// the block's codes.
template <int Bits, int LanesPerGroup, class W>
PENUMBRA_SPMV_HD void issueBlock(W& w, const StepKernelView& v, std::uint32_t g0,
                                 std::uint32_t gEnd, int stage) {
  constexpr int G = 32 / LanesPerGroup;
  unsigned char* st = w.stage(stage);
  const int lane = w.lane();
  if (lane < G && g0 + std::uint32_t(lane) < gEnd)
    w.copyAsync16(st + 16 * lane, v.values + (std::uint64_t(g0) + lane) * 8);
  const std::uint64_t first = std::uint64_t(g0) * Bits, base = first & ~std::uint64_t(15);
  const int pieces = int((first + G * Bits - base + 15) / 16);
  if (lane < pieces)
    w.copyAsync16(st + kValueBytes + 16 * lane, v.steps + base + 16 * std::uint64_t(lane));
}

/// Writes a finished row: its sum scaled into y, or, for a row that started in an earlier task,
/// into the task's slot (finishSplitRow() adds the pieces).
PENUMBRA_SPMV_HD void writeRow(const StepKernelView& v, double* y, std::uint32_t t,
                               std::int32_t row, bool startedBefore, double sum) {
  if (startedBefore)
    v.partials[2 * std::uint64_t(t)] = sum;
  else
    y[row] = sum * v.scale;
}

/// Task t of v, by the 32 lanes of w (every lane must call it: the shuffles name all 32).
/// LanesPerGroup lanes share a group (1: 8 entries per lane, blocks of 32 groups; 2: 4 entries per
/// lane, blocks of 16 groups, so that one gather instruction spans 128 entries instead of 256 and
/// touches half the cache lines, for twice the per-block work).
template <int Bits, int LanesPerGroup, class W>
PENUMBRA_SPMV_HD void runTask(W& w, const StepKernelView& v, std::uint32_t t, const double* x,
                              double* y) {
  static_assert(LanesPerGroup == 1 || LanesPerGroup == 2, "one or two lanes per group");
  constexpr std::uint32_t E = (1u << Bits) - 1;
  constexpr int G = 32 / LanesPerGroup,
                EPL = 8 / LanesPerGroup;  // groups per block, entries per lane
  const int lane = w.lane(), grp = lane / LanesPerGroup, part = lane % LanesPerGroup;
  const StepTask task = v.tasks[t];
  const std::uint32_t gBegin = task.groupBegin, gEnd = task.groupEnd;
  const std::uint32_t nBlocks = (gEnd - gBegin + G - 1) / G;
  w.syncwarp();  // the stages may still be read by a lane finishing an earlier task
  for (int s = 0; s < kStages - 1; ++s) {
    if (std::uint32_t(s) < nBlocks)
      issueBlock<Bits, LanesPerGroup>(w, v, gBegin + G * std::uint32_t(s), gEnd, s);
    w.commit();  // one group per block, empty or not, so that the wait below counts blocks
  }
  std::uint32_t cursor = task.escBegin;
  std::uint32_t escWin = cursor + lane < v.nEscapes ? v.escapes[cursor + lane] : 0u;
  std::uint32_t ordNext = task.ordBegin;
  bool startedBefore = v.rowFirstGroup[ordNext] < gBegin;  // a piece of a row cut between tasks
  bool haveCarried = startedBefore;
  std::int32_t carriedRow = startedBefore ? v.rowIndex[ordNext] : -1;
  if (startedBefore) ++ordNext;
  std::uint32_t chain = 0xFFFFFFFFu;  // a piece's chain start (a row start resets it)
  double acc = 0.0;                   // this lane's share of the carried (open) row

  for (std::uint32_t b = 0; b < nBlocks; ++b) {
    w.syncwarp();  // all lanes are done with the stage that the next copy overwrites
    if (b + kStages - 1 < nBlocks)
      issueBlock<Bits, LanesPerGroup>(w, v, gBegin + G * (b + kStages - 1), gEnd,
                                      int((b + kStages - 1) % kStages));
    w.commit();
    const std::uint32_t g0 = gBegin + G * b,
                        blockEnd = gEnd - g0 < std::uint32_t(G) ? gEnd : g0 + G;
    const std::uint32_t fg = v.rowFirstGroup[ordNext + lane];  // window of the next 32 row starts
    const std::uint32_t fc = v.rowFirstCol[ordNext + lane];
    const std::int32_t ri = v.rowIndex[ordNext + lane];
    w.waitAllButNewest();
    w.syncwarp();  // other lanes' copies of the codes are complete and visible

    const bool valid = g0 + std::uint32_t(grp) < gEnd;
    const unsigned char* st = w.stage(int(b % kStages));
    std::uint32_t val[4] = {0, 0, 0, 0}, code[2] = {0, 0};
    if (valid) {
      w.readStage(st + 16 * grp, val);
      const unsigned char* c = st + kValueBytes + ((std::uint64_t(g0) * Bits) & 15) + Bits * grp;
      if constexpr (Bits == 8)
        w.readStage(c, code);
      else
        w.readStage(c, code[0]);
    }
    if constexpr (LanesPerGroup == 2) {  // my half of the group: entries 4 * part .. 4 * part + 3
      val[0] = part ? val[2] : val[0];
      val[1] = part ? val[3] : val[1];
      code[0] = Bits == 8 ? (part ? code[1] : code[0]) : code[0] >> (16 * part);
    }

    // Row starts in this block: window lanes 0..m-1 start a row at group fg - g0, at lane
    // LanesPerGroup x (fg - g0).
    const bool isHead = fg < blockEnd;  // fg >= g0: rows before ordNext have started already
    const std::uint32_t heads = w.ballot(isHead);
    const int m = popc(heads);
    const std::uint32_t headMask =
        heads ? w.reduceOr(isHead ? 1u << ((fg - g0) * LanesPerGroup) : 0u) : 0u;
    const std::uint32_t upTo = headMask & ((2u << lane) - 1u);  // row starts at or before my lane
    const int segStart = upTo ? topBit(upTo) : -1;              // my row's first lane here
    const int head = upTo ? popc(upTo) - 1 : 0;                 // its window lane
    const std::uint32_t firstCol = w.shfl(fc, head);

    std::uint32_t codes[EPL], steps[EPL];
    int escapesHere = 0;
    for (int k = 0; k < EPL; ++k) {
      codes[k] = Bits == 8 ? (code[k >> 2] >> (8 * (k & 3))) & 0xFFu : (code[0] >> (4 * k)) & 0xFu;
      escapesHere += codes[k] == E;
      steps[k] = codes[k];
    }
    if (w.any(escapesHere != 0)) {
      const std::uint32_t incl = inclusiveScan(w, std::uint32_t(escapesHere));
      std::uint32_t r = incl - std::uint32_t(escapesHere);  // this lane's first escape in the block
      for (int k = 0; k < EPL; ++k) {
        const std::uint32_t fromWindow = w.shfl(escWin, int(r & 31u));
        if (codes[k] == E) {
          steps[k] = r < 32 ? fromWindow : v.escapes[cursor + r];  // > 32 escapes: rare
          ++r;
        }
      }
      cursor += w.shfl(incl, 31);
      escWin = cursor + lane < v.nEscapes ? v.escapes[cursor + lane] : 0u;  // next block's window
    }
    // Column before my group: a scan of the step sums that restarts at every row start.
    std::uint32_t sum = 0;
    for (int k = 0; k < EPL; ++k) sum += steps[k];
    std::uint32_t c = (segStart == lane ? firstCol - 1u : 0u) + sum;
    const int low = segStart > 0 ? segStart : 0;
    for (int o = 1; o < 32; o <<= 1) {
      const std::uint32_t up = w.shflUp(c, o);
      if (lane - o >= low) c += up;
    }
    std::uint32_t col = c - sum + (segStart < 0 ? chain : 0u);
    chain = w.shfl(c, 31) + (headMask ? 0u : chain);
    double xv[EPL];
    for (int k = 0; k < EPL; ++k) {
      col += steps[k];
      xv[k] = codes[k] != 0 ? w.gatherX(x, col) : 0.0;
    }
    double gs = 0.0;  // this lane's products, in entry order
    for (int k = 0; k < EPL; ++k)
      if (codes[k] != 0)
        gs = fmaD(W::halfToDouble(std::uint16_t(val[k >> 1] >> (16 * (k & 1)))), xv[k], gs);

    if (m == 0) {  // the open row goes on through the whole block
      acc += gs;
      continue;
    }
    const int h0 = lowBit(headMask), hLast = topBit(headMask);
    if (haveCarried) {  // the open row ends before the first head
      const double total = warpSum(w, acc + (lane < h0 ? gs : 0.0));
      if (lane == 0) writeRow(v, y, t, carriedRow, startedBefore, total);
    }
    if (m >= 2) {  // rows that start and end in this block
      double s = lane >= h0 && lane < hLast ? gs : 0.0;
      for (int o = 1; o < 32; o <<= 1) {
        const double up = w.shflUp(s, o);
        if (lane - o >= low) s += up;
      }
      const std::int32_t segRow = w.shfl(ri, head);
      if (lane >= h0 && lane < hLast && ((headMask >> (lane + 1)) & 1u)) y[segRow] = s * v.scale;
    }
    acc = lane >= hLast ? gs : 0.0;  // the last row of the block stays open
    carriedRow = w.shfl(ri, m - 1);
    haveCarried = true;
    startedBefore = false;
    ordNext += std::uint32_t(m);
  }
  if (!haveCarried) return;
  const double total = warpSum(w, acc);
  if (lane != 0) return;
  if (startedBefore)
    v.partials[2 * std::uint64_t(t)] = total;
  else if (v.rowFirstGroup[ordNext] == gEnd)
    y[carriedRow] = total * v.scale;  // ends with the task
  else
    v.partials[2 * std::uint64_t(t) + 1] = total;
}

/// Empty-row run i: zeros (0 * scale, as the CPU reference writes them).
template <class W>
PENUMBRA_SPMV_HD void writeEmptyRun(W& w, const StepKernelView& v, std::uint32_t i, double* y) {
  const EmptyRun r = v.emptyRuns[i];
  for (int k = w.lane(); k < r.count; k += 32) y[r.first + k] = 0.0 * v.scale;
}

/// Split row i: its pieces added in task order, then scaled.
PENUMBRA_SPMV_HD void finishSplitRow(const StepKernelView& v, std::uint32_t i, double* y) {
  const SplitRow r = v.splitRows[i];
  double s = v.partials[2 * std::uint64_t(r.firstTask) + 1];
  for (std::uint32_t t = r.firstTask + 1; t <= r.lastTask; ++t)
    s += v.partials[2 * std::uint64_t(t)];
  y[r.row] = s * v.scale;
}

}  // namespace segmented_steps
}  // namespace penumbra::spmv
