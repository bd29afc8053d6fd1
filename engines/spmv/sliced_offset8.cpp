// SlicedOffset8 encoder, decoder and CPU reference (layout: sliced_offset8.hpp).
#include "spmv/sliced_offset8.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "spmv/half_float.hpp"

namespace penumbra::spmv {

namespace {

using S8 = SlicedOffset8;

/// Cuts row r of m into slices: fn(first entry, entries) for each, in order. A slice takes up to
/// 32 entries and ends early where a column is kMaxSpan or more past the slice's first.
template <typename F>
void forEachSlice(const HalfCsr& m, std::int64_t r, F&& fn) {
  const std::int64_t end = m.rowPtr[std::size_t(r) + 1];
  for (std::int64_t e = m.rowPtr[std::size_t(r)]; e < end;) {
    const std::int64_t base = m.colIdx[std::size_t(e)];
    int n = 1;
    while (n < S8::kSlice && e + n < end && m.colIdx[std::size_t(e + n)] - base < S8::kMaxSpan) ++n;
    fn(e, n);
    e += n;
  }
}

/// Wide slices before slice `slice` (its index in `high` when it is wide itself).
std::int64_t wideIndexOf(const S8& s, std::int64_t slice) {
  const std::int64_t c = slice / S8::kChunk;
  std::int64_t w = s.chunkWideBase[std::size_t(c)];
  for (std::int64_t k = c * S8::kChunk; k < slice; ++k)
    w += (s.headers[std::size_t(k)] & S8::kWide) != 0;
  return w;
}

/// Runs fn(item range) over [0, n) in blocks of `block` on `threads` threads.
template <typename F>
void blocks(std::int64_t n, std::int64_t block, int threads, F&& fn) {
  parallelFor(std::size_t((n + block - 1) / block), threads, {}, [&](std::size_t b, int) {
    fn(std::int64_t(b) * block, std::min(n, std::int64_t(b + 1) * block));
  });
}

}  // namespace

SlicedOffset8 encodeSlicedOffset8(const HalfCsr& m, const SlicedOffset8Options& options) {
  PENUMBRA_REQUIRE(m.rows <= INT32_MAX, Unsupported, "SlicedOffset8: more than 2^31 rows");
  PENUMBRA_REQUIRE(m.cols < (std::int64_t(1) << 30), Unsupported,
                   "SlicedOffset8: " + std::to_string(m.cols) +
                       " columns; the slice header holds 30 bits of column (at most 2^30 - 1)");
  PENUMBRA_REQUIRE(options.chunksPerTask >= 1 && options.chunksPerTask <= 4096, InvalidArgument,
                   "SlicedOffset8: chunks per task must be in 1..4096");
  PENUMBRA_REQUIRE(options.minBlocksPerSm == 4 || options.minBlocksPerSm == 5, InvalidArgument,
                   "SlicedOffset8: the kernel is compiled for 4 or 5 blocks per SM, not " +
                       std::to_string(options.minBlocksPerSm));
  const int threads = resolveThreads(options.threads);
  S8 s;
  s.rows = m.rows;
  s.cols = m.cols;
  s.nnz = m.nnz();
  s.scale = m.scale;
  s.chunksPerTask = options.chunksPerTask;
  s.minBlocksPerSm = options.minBlocksPerSm;
  // Rows: non-empty rows in order, runs of empty rows.
  for (std::int64_t r = 0; r < m.rows; ++r) {
    if (m.rowPtr[std::size_t(r) + 1] > m.rowPtr[std::size_t(r)]) {
      s.nonEmptyRow.push_back(std::int32_t(r));
      continue;
    }
    appendEmptyRow(s.emptyRuns, std::int32_t(r));
  }
  const std::int64_t nRows = s.nonEmptyRows();
  constexpr std::int64_t kRowBlock = 4096;

  // Pass 1: slices per row, then each row's first slice.
  std::vector<std::int64_t> firstSlice(std::size_t(nRows) + 1, 0);
  blocks(nRows, kRowBlock, threads, [&](std::int64_t o0, std::int64_t o1) {
    for (std::int64_t o = o0; o < o1; ++o) {
      std::int64_t n = 0;
      forEachSlice(m, s.nonEmptyRow[std::size_t(o)], [&](std::int64_t, int) { ++n; });
      firstSlice[std::size_t(o) + 1] = n;
    }
  });
  for (std::int64_t o = 0; o < nRows; ++o)
    firstSlice[std::size_t(o) + 1] += firstSlice[std::size_t(o)];
  s.nSlices = firstSlice.back();
  s.nChunks = (s.nSlices + S8::kChunk - 1) / S8::kChunk;
  PENUMBRA_REQUIRE(s.nChunks * S8::kChunk < (std::int64_t(1) << 32) - 4096, Unsupported,
                   "SlicedOffset8: more than 2^32 slices of 32 entries");

  // Pass 2: headers, values and low offsets (padding stays 0).
  s.values.assign(std::size_t(s.nChunks * S8::kChunkEntries), 0);
  s.offsetsLo.assign(std::size_t(s.nChunks * S8::kChunkEntries), 0);
  s.headers.assign(std::size_t(s.nChunks * S8::kChunk), 0);
  blocks(nRows, kRowBlock, threads, [&](std::int64_t o0, std::int64_t o1) {
    for (std::int64_t o = o0; o < o1; ++o) {
      std::int64_t slice = firstSlice[std::size_t(o)];
      const std::int64_t lastSlice = firstSlice[std::size_t(o) + 1] - 1;
      forEachSlice(m, s.nonEmptyRow[std::size_t(o)], [&](std::int64_t e, int n) {
        const std::uint32_t base = std::uint32_t(m.colIdx[std::size_t(e)]);
        const std::uint32_t span = std::uint32_t(m.colIdx[std::size_t(e + n - 1)]) - base;
        s.headers[std::size_t(slice)] =
            base | (span >= 256 ? S8::kWide : 0u) | (slice == lastSlice ? S8::kLast : 0u);
        for (int l = 0; l < n; ++l) {
          const std::size_t i = std::size_t(S8::at(slice, l));
          s.values[i] = m.values[std::size_t(e + l)];
          s.offsetsLo[i] = std::uint8_t(std::uint32_t(m.colIdx[std::size_t(e + l)]) - base);
        }
        ++slice;
      });
    }
  });

  // Wide slices: their numbering per chunk, then the high bytes of their offsets.
  s.chunkWideBase.assign(std::size_t(s.nChunks), 0);
  for (std::int64_t c = 0; c < s.nChunks; ++c) {
    s.chunkWideBase[std::size_t(c)] = std::uint32_t(s.wideSlices);
    for (int j = 0; j < S8::kChunk; ++j)
      s.wideSlices += (s.headers[std::size_t(c * S8::kChunk + j)] & S8::kWide) != 0;
  }
  PENUMBRA_REQUIRE(s.wideSlices < (std::int64_t(1) << 32) - 64, Unsupported,
                   "SlicedOffset8: 2^32 wide slices");
  s.high.assign(std::size_t(s.wideSlices * S8::kSlice), 0);
  blocks(nRows, kRowBlock, threads, [&](std::int64_t o0, std::int64_t o1) {
    for (std::int64_t o = o0; o < o1; ++o) {
      std::int64_t slice = firstSlice[std::size_t(o)];
      forEachSlice(m, s.nonEmptyRow[std::size_t(o)], [&](std::int64_t e, int n) {
        if (s.headers[std::size_t(slice)] & S8::kWide) {
          const std::int64_t w = wideIndexOf(s, slice);
          const std::uint32_t base = std::uint32_t(m.colIdx[std::size_t(e)]);
          for (int l = 0; l < n; ++l)
            s.high[std::size_t(w * S8::kSlice + l)] =
                std::uint16_t((std::uint32_t(m.colIdx[std::size_t(e + l)]) - base) >> 8);
        }
        ++slice;
      });
    }
  });

  // Tasks of chunksPerTask chunks, and the rows cut between them.
  const std::int64_t taskSlices = std::int64_t(s.chunksPerTask) * S8::kChunk;
  const std::int64_t nTasks = (s.nChunks + s.chunksPerTask - 1) / s.chunksPerTask;
  s.tasks.resize(std::size_t(nTasks));
  std::int64_t ord = 0;
  for (std::int64_t t = 0; t < nTasks; ++t) {
    const std::int64_t first = t * taskSlices;
    while (firstSlice[std::size_t(ord) + 1] <= first) ++ord;
    s.tasks[std::size_t(t)] = {std::uint32_t(ord), firstSlice[std::size_t(ord)] < first ? 1u : 0u};
  }
  for (std::int64_t o = 0; o < nRows; ++o) {
    const std::int64_t t0 = firstSlice[std::size_t(o)] / taskSlices,
                       t1 = (firstSlice[std::size_t(o) + 1] - 1) / taskSlices;
    if (t1 > t0)
      s.splitRows.push_back({s.nonEmptyRow[std::size_t(o)], std::uint32_t(t0), std::uint32_t(t1)});
  }
  return s;
}

namespace {

/// Decodes slices [s0, s1), the first of which belongs to row ordinal ord0, in stream order:
/// entry(ord, column, value bits) per entry, rowEnd(ord) after the last slice of each row.
template <typename E, typename R>
void decodeSlices(const S8& s, std::int64_t s0, std::int64_t s1, std::uint32_t ord0, E&& entry,
                  R&& rowEnd) {
  std::uint32_t ord = ord0;
  std::int64_t wide = s0 < s1 ? wideIndexOf(s, s0) : 0;
  for (std::int64_t k = s0; k < s1; ++k) {
    const std::uint32_t h = s.headers[std::size_t(k)], base = h & S8::kBaseMask;
    const bool isWide = (h & S8::kWide) != 0;
    for (int l = 0; l < S8::kSlice; ++l) {
      const std::size_t i = std::size_t(S8::at(k, l));
      const std::uint32_t off =
          s.offsetsLo[i] +
          (isWide ? std::uint32_t(s.high[std::size_t(wide * S8::kSlice + l)]) << 8 : 0u);
      if (l > 0 && off == 0) break;  // padding: columns ascend strictly within a slice
      entry(ord, base + off, s.values[i]);
    }
    wide += isWide;
    if (h & S8::kLast) rowEnd(ord++);
  }
}

}  // namespace

HalfCsr decodeSlicedOffset8(const SlicedOffset8& s) {
  return csrFromRowOrder(s.rows, s.cols, s.scale, s.nnz, [&](auto&& emit) {
    decodeSlices(
        s, 0, s.nSlices, 0,
        [&](std::uint32_t ord, std::uint32_t col, std::uint16_t v) {
          emit(s.nonEmptyRow[ord], col, v);
        },
        [](std::uint32_t) {});
  });
}

void multiplySlicedOffset8Cpu(const SlicedOffset8& s, const double* x, double* y, int threads) {
  for (const EmptyRun& r : s.emptyRuns)
    for (int k = 0; k < r.count; ++k) y[r.first + k] = 0.0 * s.scale;  // as multiplyCpu
  // Ranges of tasks that start at a row start, so that every row is summed by one thread.
  std::vector<std::size_t> cuts;
  const std::size_t nTasks = s.tasks.size(), step = std::max<std::size_t>(1, nTasks / 256);
  for (std::size_t t = 0; t < nTasks; t += step) {
    while (t < nTasks && s.tasks[t].startedBefore) ++t;
    if (t < nTasks && (cuts.empty() || cuts.back() != t)) cuts.push_back(t);
  }
  cuts.push_back(nTasks);
  const std::int64_t taskSlices = std::int64_t(s.chunksPerTask) * S8::kChunk;
  parallelFor(cuts.size() - 1, resolveThreads(threads), {}, [&](std::size_t c, int) {
    double sum = 0;
    decodeSlices(
        s, std::int64_t(cuts[c]) * taskSlices,
        std::min(s.nSlices, std::int64_t(cuts[c + 1]) * taskSlices), s.tasks[cuts[c]].ordBegin,
        [&](std::uint32_t, std::uint32_t col, std::uint16_t v) {
          sum += double(halfBitsToFloat(v)) * x[col];
        },
        [&](std::uint32_t ord) {
          y[s.nonEmptyRow[ord]] = sum * s.scale;
          sum = 0;
        });
  });
}

SlicedOffset8Bytes slicedOffset8Bytes(const SlicedOffset8& s) {
  SlicedOffset8Bytes b;
  const double entries = double(s.nChunks) * S8::kChunkEntries;
  b.values = 2.0 * entries;
  b.offsets = entries;
  b.high = 2.0 * S8::kSlice * double(s.wideSlices);
  std::int64_t wideChunks = 0;
  for (std::int64_t c = 0; c < s.nChunks; ++c) {
    const std::uint32_t next =
        c + 1 < s.nChunks ? s.chunkWideBase[std::size_t(c) + 1] : std::uint32_t(s.wideSlices);
    wideChunks += next != s.chunkWideBase[std::size_t(c)];
  }
  b.headers = 4.0 * S8::kChunk * double(s.nChunks) + 4.0 * double(wideChunks);
  b.rows = 4.0 * double(s.nonEmptyRows());
  // Task records, empty runs, split rows and their per-task sums (written, then read back).
  b.tasks = double(sizeof(Offset8Task)) * double(s.tasks.size()) +
            8.0 * double(s.emptyRuns.size()) + 12.0 * double(s.splitRows.size());
  for (const SplitRow& r : s.splitRows) b.tasks += 16.0 * double(r.lastTask - r.firstTask + 1);
  b.vectors = 8.0 * double(s.rows + s.cols);
  return b;
}

double slicedOffset8DeviceBytes(const SlicedOffset8& s) {
  return 3.0 * double(s.values.size()) + 2.0 * double(s.high.size()) +
         4.0 * double(s.headers.size() + s.chunkWideBase.size() + s.nonEmptyRow.size()) +
         double(sizeof(Offset8Task)) * double(s.tasks.size()) + 16.0 * double(s.tasks.size()) +
         12.0 * double(s.splitRows.size()) + 8.0 * double(s.emptyRuns.size());
}

}  // namespace penumbra::spmv
