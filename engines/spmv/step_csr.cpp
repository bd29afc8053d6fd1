// StepCsr encoder, decoder and CPU reference (layout: step_csr.hpp).
#include "spmv/step_csr.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "spmv/half_float.hpp"

namespace penumbra::spmv {

namespace {

constexpr std::uint32_t kChainStart = 0xFFFFFFFFu;  // column "before" a piece that starts mid-row

/// Visits the entries of task t in stream order: fn(group, k, entry index in m, row ordinal), with
/// k the entry's place in its group (0 at a row start).
template <typename F>
void forEachEntry(const HalfCsr& m, const StepCsr& s, const StepTask& t, F&& fn) {
  for (std::uint32_t ord = t.ordBegin; s.rowFirstGroup[ord] < t.groupEnd; ++ord) {
    const std::int64_t first = s.rowFirstGroup[ord], next = s.rowFirstGroup[ord + 1];
    const std::int64_t gb = std::max<std::int64_t>(first, t.groupBegin);
    const std::int64_t ge = std::min<std::int64_t>(next, t.groupEnd);
    const std::int64_t rowBegin = m.rowPtr[std::size_t(s.rowIndex[ord])];
    const std::int64_t rowLen = m.rowPtr[std::size_t(s.rowIndex[ord]) + 1] - rowBegin;
    for (std::int64_t i = (gb - first) * StepCsr::kGroup;
         i < std::min(rowLen, (ge - first) * StepCsr::kGroup); ++i)
      fn(first + i / StepCsr::kGroup, int(i % StepCsr::kGroup), rowBegin + i, ord);
  }
}

/// Cuts the group stream into tasks (step_csr.hpp): rows are packed into a task while they fit
/// in `taskGroups`; a longer row starts its own tasks, cut into near-equal pieces.
void planTasks(StepCsr& s) {
  const std::int64_t T = s.taskGroups;
  const std::int64_t nRows = s.nonEmptyRows();
  std::int64_t begin = 0, ordOfBegin = 0;
  auto close = [&](std::int64_t end) {
    if (end > begin)
      s.tasks.push_back({std::uint32_t(begin), std::uint32_t(end), 0, std::uint32_t(ordOfBegin)});
    begin = end;
  };
  for (std::int64_t ord = 0; ord < nRows; ++ord) {
    const std::int64_t first = s.rowFirstGroup[std::size_t(ord)],
                       len = s.rowFirstGroup[std::size_t(ord) + 1] - first;
    if (first - begin + len > T) close(first);
    if (begin == first) ordOfBegin = ord;
    if (len <= T) continue;
    const std::int64_t pieces = (len + T - 1) / T;
    s.splitRows.push_back({s.rowIndex[std::size_t(ord)], std::uint32_t(s.tasks.size()),
                           std::uint32_t(s.tasks.size() + std::size_t(pieces) - 1)});
    for (std::int64_t p = 1; p <= pieces; ++p) {
      ordOfBegin = ord;
      close(first + len * p / pieces);
    }
  }
  close(s.groups);
}

}  // namespace

StepCsr encodeStepCsr(const HalfCsr& m, const StepCsrOptions& options) {
  PENUMBRA_REQUIRE(m.rows <= INT32_MAX, Unsupported, "StepCsr: more than 2^31 rows");
  PENUMBRA_REQUIRE(options.stepBits == 0 || options.stepBits == 4 || options.stepBits == 8,
                   InvalidArgument, "StepCsr: step width must be 4 or 8 bits");
  constexpr int G = StepCsr::kGroup;
  StepCsr s;
  s.rows = m.rows;
  s.cols = m.cols;
  s.nnz = m.nnz();
  s.scale = m.scale;
  // Rows: first group of every non-empty row, runs of empty rows.
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const std::int64_t len = m.rowPtr[std::size_t(r) + 1] - m.rowPtr[std::size_t(r)];
    if (len > 0) {
      s.rowFirstGroup.push_back(std::uint32_t(s.groups));
      s.rowFirstCol.push_back(std::uint32_t(m.colIdx[std::size_t(m.rowPtr[std::size_t(r)])]));
      s.rowIndex.push_back(std::int32_t(r));
      s.groups += (len + G - 1) / G;
      PENUMBRA_REQUIRE(s.groups < (std::int64_t(1) << 32) - 4096, Unsupported,
                       "StepCsr: more than 2^32 groups of 8 entries");
      continue;
    }
    appendEmptyRow(s.emptyRuns, std::int32_t(r));
  }
  s.rowFirstGroup.insert(s.rowFirstGroup.end(), StepCsr::kSentinels, std::uint32_t(s.groups));
  s.rowFirstCol.insert(s.rowFirstCol.end(), StepCsr::kSentinels, 0u);
  s.rowIndex.insert(s.rowIndex.end(), StepCsr::kSentinels, -1);
  s.taskGroups = options.taskGroups > 0
                     ? options.taskGroups
                     : std::clamp<std::int64_t>((s.groups / 65536 + 31) / 32 * 32, 32, 1024);
  planTasks(s);

  // Pass 1: escapes of every task at both widths (a step escapes when it is at least the escape
  // code, or 0, which cannot happen inside a row).
  const int threads = resolveThreads(options.threads);
  const std::size_t nTasks = s.tasks.size(), chunk = 64;
  std::vector<std::uint32_t> esc4(nTasks), esc8(nTasks);
  parallelFor((nTasks + chunk - 1) / chunk, threads, {}, [&](std::size_t c, int) {
    for (std::size_t t = c * chunk; t < std::min(nTasks, (c + 1) * chunk); ++t) {
      std::uint32_t prev = kChainStart, n4 = 0, n8 = 0;
      forEachEntry(m, s, s.tasks[t], [&](std::int64_t g, int k, std::int64_t e, std::uint32_t ord) {
        if (g == s.rowFirstGroup[ord] && k == 0) prev = s.rowFirstCol[ord] - 1;
        const std::uint32_t step = std::uint32_t(m.colIdx[std::size_t(e)]) - prev;
        prev = std::uint32_t(m.colIdx[std::size_t(e)]);
        n4 += step == 0 || step >= 15;
        n8 += step == 0 || step >= 255;
      });
      esc4[t] = n4;
      esc8[t] = n8;
    }
  });
  double total4 = 0, total8 = 0;
  for (std::size_t t = 0; t < nTasks; ++t) {
    total4 += esc4[t];
    total8 += esc8[t];
  }
  const double bytes4 = 4.0 * double(s.groups) + 4.0 * total4,
               bytes8 = 8.0 * double(s.groups) + 4.0 * total8;
  s.stepBits = options.stepBits ? options.stepBits : (bytes4 <= bytes8 ? 4 : 8);
  const std::vector<std::uint32_t>& escOf = s.stepBits == 4 ? esc4 : esc8;
  std::uint64_t nEsc = 0;
  for (std::size_t t = 0; t < nTasks; ++t) {
    s.tasks[t].escBegin = std::uint32_t(nEsc);
    nEsc += escOf[t];
  }
  PENUMBRA_REQUIRE(nEsc < (std::uint64_t(1) << 32) - 64, Unsupported,
                   "StepCsr: more than 2^32 escapes");

  // Pass 2: values, codes and escapes.
  const std::int64_t stored = s.groups + StepCsr::kSlackGroups;
  s.values.assign(std::size_t(stored * G), 0);
  s.steps.assign(std::size_t(stored * s.stepBits), 0);
  s.escapes.assign(std::size_t(nEsc), 0);
  const std::uint32_t E = std::uint32_t(s.escapeCode());
  parallelFor((nTasks + chunk - 1) / chunk, threads, {}, [&](std::size_t c, int) {
    for (std::size_t t = c * chunk; t < std::min(nTasks, (c + 1) * chunk); ++t) {
      std::uint32_t prev = kChainStart, next = s.tasks[t].escBegin;
      forEachEntry(m, s, s.tasks[t], [&](std::int64_t g, int k, std::int64_t e, std::uint32_t ord) {
        if (g == s.rowFirstGroup[ord] && k == 0) prev = s.rowFirstCol[ord] - 1;
        const std::uint32_t step = std::uint32_t(m.colIdx[std::size_t(e)]) - prev;
        prev = std::uint32_t(m.colIdx[std::size_t(e)]);
        std::uint32_t code = step;
        if (step == 0 || step >= E) {
          s.escapes[next++] = step;
          code = E;
        }
        s.values[std::size_t(g * G + k)] = m.values[std::size_t(e)];
        if (s.stepBits == 8)
          s.steps[std::size_t(g * 8 + k)] = std::uint8_t(code);
        else
          s.steps[std::size_t(g * 4 + k / 2)] |= std::uint8_t(code << (4 * (k & 1)));
      });
    }
  });
  return s;
}

namespace {

/// Decodes tasks [t0, t1) in stream order: fn(row ordinal, column, value bits) per entry.
template <typename F>
void decodeTasks(const StepCsr& s, std::size_t t0, std::size_t t1, F&& fn) {
  const std::uint32_t E = std::uint32_t(s.escapeCode());
  for (std::size_t t = t0; t < t1; ++t) {
    const StepTask& task = s.tasks[t];
    std::uint32_t col = kChainStart, esc = task.escBegin, ord = task.ordBegin;
    for (std::uint32_t g = task.groupBegin; g < task.groupEnd; ++g) {
      while (s.rowFirstGroup[ord + 1] <= g) ++ord;
      if (g == s.rowFirstGroup[ord]) col = s.rowFirstCol[ord] - 1;
      for (int k = 0; k < StepCsr::kGroup; ++k) {
        const std::uint32_t code =
            s.stepBits == 8
                ? s.steps[std::size_t(g) * 8 + std::size_t(k)]
                : (s.steps[std::size_t(g) * 4 + std::size_t(k / 2)] >> (4 * (k & 1))) & 15u;
        if (code == 0) continue;
        col += code == E ? s.escapes[esc++] : code;
        fn(ord, col, s.values[std::size_t(g) * StepCsr::kGroup + std::size_t(k)]);
      }
    }
  }
}

}  // namespace

HalfCsr decodeStepCsr(const StepCsr& s) {
  return csrFromRowOrder(s.rows, s.cols, s.scale, s.nnz, [&](auto&& emit) {
    decodeTasks(s, 0, s.tasks.size(), [&](std::uint32_t ord, std::uint32_t col, std::uint16_t v) {
      emit(s.rowIndex[ord], col, v);
    });
  });
}

void multiplyStepCsrCpu(const StepCsr& s, const double* x, double* y, int threads) {
  for (const EmptyRun& r : s.emptyRuns)
    for (int k = 0; k < r.count; ++k)
      y[r.first + k] = 0.0 * s.scale;  // as multiplyCpu: s = 0, then scaled
  // Chunks of tasks that start at a row start, so that every row is summed by one thread, left
  // to right across its pieces.
  std::vector<std::size_t> cuts;
  const std::size_t nTasks = s.tasks.size(), step = std::max<std::size_t>(1, nTasks / 256);
  for (std::size_t t = 0; t < nTasks; t += step) {
    while (t < nTasks && s.rowFirstGroup[s.tasks[t].ordBegin] != s.tasks[t].groupBegin) ++t;
    if (t < nTasks && (cuts.empty() || cuts.back() != t)) cuts.push_back(t);
  }
  cuts.push_back(nTasks);
  parallelFor(cuts.size() - 1, resolveThreads(threads), {}, [&](std::size_t c, int) {
    std::uint32_t current = 0;
    double sum = 0;
    bool open = false;
    decodeTasks(s, cuts[c], cuts[c + 1],
                [&](std::uint32_t ord, std::uint32_t col, std::uint16_t v) {
                  if (open && ord != current) y[s.rowIndex[current]] = sum * s.scale;
                  if (!open || ord != current) sum = 0;
                  open = true;
                  current = ord;
                  sum += double(halfBitsToFloat(v)) * x[col];
                });
    if (open) y[s.rowIndex[current]] = sum * s.scale;
  });
}

StepCsrBytes stepCsrBytes(const StepCsr& s) {
  StepCsrBytes b;
  b.values = 2.0 * StepCsr::kGroup * double(s.groups);
  b.steps = double(s.stepBits) * double(s.groups);
  b.escapes = 4.0 * double(s.escapes.size());
  b.rowInfo = 12.0 * double(s.nonEmptyRows());
  // Task records, empty runs, and the split rows' per-task sums (written, then read back).
  b.tasks = 16.0 * double(s.tasks.size()) + 8.0 * double(s.emptyRuns.size()) +
            12.0 * double(s.splitRows.size());
  for (const SplitRow& r : s.splitRows) b.tasks += 16.0 * double(r.lastTask - r.firstTask + 1);
  b.vectors = 8.0 * double(s.rows + s.cols);
  return b;
}

double stepCsrDeviceBytes(const StepCsr& s) {
  return 2.0 * double(s.values.size()) + double(s.steps.size()) + 4.0 * double(s.escapes.size()) +
         4.0 * double(s.rowFirstGroup.size() * 3) + 16.0 * double(s.tasks.size()) * 2 +
         12.0 * double(s.splitRows.size()) + 8.0 * double(s.emptyRuns.size());
}

}  // namespace penumbra::spmv
