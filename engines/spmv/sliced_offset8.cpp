// SlicedOffset8 encoder, decoder and CPU reference (layout: sliced_offset8.hpp).
#include "spmv/sliced_offset8.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "core/error.hpp"
#include "core/parallel_for.hpp"
#include "spmv/half_float.hpp"

namespace penumbra::spmv {

namespace {

using S8 = SlicedOffset8;

/// Cuts row r of m into slices: fn(first entry, entries, segment-start mask) for each, in order.
/// A slice takes up to 32 entries and ends early where a (maxSegments + 1)-th segment would
/// start; a segment starts where a column is `span` (256, 4096 or 65536) or more past the current
/// segment's first.
template <typename F>
void forEachSlice(const HalfCsr& m, std::int64_t r, std::int64_t span, int maxSegments, F&& fn) {
  const std::int64_t end = m.rowPtr[std::size_t(r) + 1];
  for (std::int64_t e = m.rowPtr[std::size_t(r)]; e < end;) {
    std::int64_t segBase = m.colIdx[std::size_t(e)];
    std::uint32_t mask = 0;
    int n = 1, segments = 1;
    for (; n < S8::kSlice && e + n < end; ++n) {
      const std::int64_t col = m.colIdx[std::size_t(e + n)];
      if (col - segBase < span) continue;
      if (segments == maxSegments) break;
      ++segments;
      segBase = col;
      mask |= 1u << n;
    }
    fn(e, n, mask);
    e += n;
  }
}

/// Words of a chunk's area in segs from its 8 slice masks (0 when no slice is segmented).
std::uint32_t areaWords(const std::uint32_t* masks) {
  std::uint32_t n = 0, any = 0;
  for (int j = 0; j < S8::kChunk; ++j) {
    n += std::uint32_t(std::popcount(masks[j]));
    any |= masks[j];
  }
  return any ? S8::kChunk + n : 0;
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
  PENUMBRA_REQUIRE(options.chunksPerTask >= 0 && options.chunksPerTask <= 4096, InvalidArgument,
                   "SlicedOffset8: chunks per task must be in 1..4096 (0: the encoder's choice)");
  PENUMBRA_REQUIRE(options.taskGroupRows >= -1, InvalidArgument,
                   "SlicedOffset8: task group rows must be -1 (the encoder's choice), 0 or more");
  PENUMBRA_REQUIRE(options.offsetBits == 0 || options.offsetBits == 8 || options.offsetBits == 12 ||
                       options.offsetBits == 16,
                   InvalidArgument,
                   "SlicedOffset8: column offsets of 8, 12 or 16 bits (0: the engine's choice), "
                   "not " +
                       std::to_string(options.offsetBits));
  PENUMBRA_REQUIRE(options.minBlocksPerSm == 4 || options.minBlocksPerSm == 5, InvalidArgument,
                   "SlicedOffset8: the kernel is compiled for 4 or 5 blocks per SM, not " +
                       std::to_string(options.minBlocksPerSm));
  PENUMBRA_REQUIRE(options.warpsPerBlock == 0 || options.warpsPerBlock == 2 ||
                       options.warpsPerBlock == 8,
                   InvalidArgument,
                   "SlicedOffset8: the kernel is launched with 2 or 8 warps per block (0: the "
                   "encoder's choice), not " + std::to_string(options.warpsPerBlock));
  const int threads = resolveThreads(options.threads);
  S8 s;
  s.rows = m.rows;
  s.cols = m.cols;
  s.nnz = m.nnz();
  s.scale = m.scale;
  s.minBlocksPerSm = options.minBlocksPerSm;
  s.offsetBits = options.offsetBits == 0 ? 8 : options.offsetBits;
  const std::int64_t span = S8::segmentSpan(s.offsetBits);
  // 12- and 16-bit offsets: no segments (a slice ends where a column is 4096 or 65536 past its
  // first), so that the kernel needs no variant with both.
  const int maxSegments = s.offsetBits == 8 ? S8::kMaxSegments : 1;
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
      forEachSlice(m, s.nonEmptyRow[std::size_t(o)], span, maxSegments,
                   [&](std::int64_t, int, std::uint32_t) { ++n; });
      firstSlice[std::size_t(o) + 1] = n;
    }
  });
  for (std::int64_t o = 0; o < nRows; ++o)
    firstSlice[std::size_t(o) + 1] += firstSlice[std::size_t(o)];
  s.nSlices = firstSlice.back();
  s.nChunks = (s.nSlices + S8::kChunk - 1) / S8::kChunk;
  PENUMBRA_REQUIRE(s.nChunks * S8::kChunk < (std::int64_t(1) << 32) - 4096, Unsupported,
                   "SlicedOffset8: more than 2^32 slices of 32 entries");

  // Pass 2: headers, values, offsets and each slice's segment mask (padding stays 0).
  // At 12 bits the offsets go to offsets16 first and are split after this pass: a chunk's high
  // nibbles share words across rows, which different threads encode.
  s.values.assign(std::size_t(s.nChunks * S8::kChunkEntries), 0);
  if (s.offsetBits != 8)
    s.offsets16.assign(std::size_t(s.nChunks * S8::kChunkEntries), 0);
  else
    s.offsetsLo.assign(std::size_t(s.nChunks * S8::kChunkEntries), 0);
  s.headers.assign(std::size_t(s.nChunks * S8::kChunk), 0);
  std::vector<std::uint32_t> masks(std::size_t(s.nChunks * S8::kChunk), 0);
  blocks(nRows, kRowBlock, threads, [&](std::int64_t o0, std::int64_t o1) {
    for (std::int64_t o = o0; o < o1; ++o) {
      std::int64_t slice = firstSlice[std::size_t(o)];
      const std::int64_t lastSlice = firstSlice[std::size_t(o) + 1] - 1;
      forEachSlice(m, s.nonEmptyRow[std::size_t(o)], span, maxSegments,
                   [&](std::int64_t e, int n, std::uint32_t mask) {
        std::uint32_t base = std::uint32_t(m.colIdx[std::size_t(e)]);
        s.headers[std::size_t(slice)] =
            base | (mask ? S8::kSegmented : 0u) | (slice == lastSlice ? S8::kLast : 0u);
        masks[std::size_t(slice)] = mask;
        for (int l = 0; l < n; ++l) {
          const std::size_t i = std::size_t(S8::at(slice, l));
          if ((mask >> l) & 1u) base = std::uint32_t(m.colIdx[std::size_t(e + l)]);
          s.values[i] = m.values[std::size_t(e + l)];
          const std::uint32_t off = std::uint32_t(m.colIdx[std::size_t(e + l)]) - base;
          if (s.offsetBits != 8)
            s.offsets16[i] = std::uint16_t(off);
          else
            s.offsetsLo[i] = std::uint8_t(off);
        }
        ++slice;
      });
    }
  });
  if (s.offsetBits == 12) {
    s.offsetsLo.assign(s.offsets16.size(), 0);
    s.offsetsHi.assign(std::size_t(s.nChunks * S8::kSlice), 0);
    const std::int64_t words = std::int64_t(s.offsetsHi.size());
    blocks(words, 1 << 16, threads, [&](std::int64_t w0, std::int64_t w1) {
      for (std::int64_t w = w0; w < w1; ++w)
        for (int j = 0; j < S8::kChunk; ++j) {
          const std::size_t i = std::size_t(w * S8::kChunk + j);
          s.offsetsLo[i] = std::uint8_t(s.offsets16[i] & 0xFFu);
          s.offsetsHi[std::size_t(w)] |= std::uint32_t(s.offsets16[i] >> 8) << (4 * j);
        }
    });
    s.offsets16 = {};
  }

  // Areas: where each chunk's starts, then its masks and the first columns of its segments.
  std::vector<std::uint64_t> areaStart(std::size_t(s.nChunks) + 1, 0);
  for (std::int64_t c = 0; c < s.nChunks; ++c) {
    const std::uint32_t n = areaWords(&masks[std::size_t(c * S8::kChunk)]);
    areaStart[std::size_t(c) + 1] = areaStart[std::size_t(c)] + n;
    s.segmentedChunks += n > 0;
    for (int j = 0; j < S8::kChunk; ++j) s.segmentedSlices += masks[std::size_t(c * S8::kChunk + j)] != 0;
  }
  PENUMBRA_REQUIRE(areaStart.back() < (std::uint64_t(1) << 32) - S8::kAreaWords, Unsupported,
                   "SlicedOffset8: 2^32 words of segment bases");
  s.segs.assign(std::size_t(areaStart.back()) + S8::kAreaWords, 0);
  blocks(nRows, kRowBlock, threads, [&](std::int64_t o0, std::int64_t o1) {
    for (std::int64_t o = o0; o < o1; ++o) {
      std::int64_t slice = firstSlice[std::size_t(o)];
      forEachSlice(m, s.nonEmptyRow[std::size_t(o)], span, maxSegments,
                   [&](std::int64_t e, int n, std::uint32_t mask) {
        const std::int64_t c = slice / S8::kChunk;
        if (mask) {
          const std::size_t area = std::size_t(areaStart[std::size_t(c)]);
          std::size_t at = area + S8::kChunk;
          for (std::int64_t k = c * S8::kChunk; k < slice; ++k)
            at += std::size_t(std::popcount(masks[std::size_t(k)]));
          s.segs[area + std::size_t(slice % S8::kChunk)] = mask;
          for (int l = 1; l < n; ++l)
            if ((mask >> l) & 1u) s.segs[at++] = std::uint32_t(m.colIdx[std::size_t(e + l)]);
        }
        ++slice;
      });
    }
  });

  // The launch: task order and block size (judged at 8 chunks a task when the encoder chooses
  // the length), the row buffer, then the task length.
  const std::int64_t groupChunks = options.chunksPerTask > 0 ? options.chunksPerTask : 8;
  s.taskGroupRows = options.taskGroupRows >= 0 ? options.taskGroupRows
                    : nRows > 0 && s.nnz >= 2 * groupChunks * S8::kChunkEntries * nRows ? 32
                                                                                          : 0;
  s.warpsPerBlock = options.warpsPerBlock != 0 ? options.warpsPerBlock
                    : s.taskGroupRows > 0         ? 8
                                                  : 2;
  // Not where slices are segmented: those tasks keep one butterfly a row (the kernel's variant
  // with segments), and the buffer would only take shared memory from the L1 that caches x
  // (proton-hn D w on an H100, 8-bit: 0.260 -> 0.263-0.265 ms with it); nor where x does not fit
  // in the L1 left beside the buffers (liver-1 D w, x 544 KB, on an H200: 1.372 -> 1.612 ms).
  s.rowBuffer = options.rowBuffer && s.warpsPerBlock == 2 && s.minBlocksPerSm == 4 &&
                        s.segmentedChunks == 0 && 8 * s.cols <= kRowBufferMaxXBytes
                    ? 1
                    : 0;
  // 12 chunks where rows go through the buffer or the tasks are ordered (long rows), else 8.
  s.chunksPerTask = options.chunksPerTask > 0                  ? options.chunksPerTask
                    : s.rowBuffer || s.taskGroupRows > 0 ? 12
                                                         : 8;

  // Tasks of chunksPerTask chunks, and the rows cut between them.
  const std::int64_t taskSlices = std::int64_t(s.chunksPerTask) * S8::kChunk;
  const std::int64_t nTasks = (s.nChunks + s.chunksPerTask - 1) / s.chunksPerTask;
  s.tasks.resize(std::size_t(nTasks));
  std::int64_t ord = 0;
  for (std::int64_t t = 0; t < nTasks; ++t) {
    const std::int64_t first = t * taskSlices;
    while (firstSlice[std::size_t(ord) + 1] <= first) ++ord;
    s.tasks[std::size_t(t)] = {std::uint32_t(ord), firstSlice[std::size_t(ord)] < first ? 1u : 0u,
                               std::uint32_t(areaStart[std::size_t(t * s.chunksPerTask)])};
  }
  for (std::int64_t o = 0; o < nRows; ++o) {
    const std::int64_t t0 = firstSlice[std::size_t(o)] / taskSlices,
                       t1 = (firstSlice[std::size_t(o) + 1] - 1) / taskSlices;
    if (t1 > t0)
      s.splitRows.push_back({s.nonEmptyRow[std::size_t(o)], std::uint32_t(t0), std::uint32_t(t1)});
  }

  // Task order: within each group of G rows, by the column the task starts at.
  if (s.taskGroupRows > 0 && nTasks > 1) {
    s.taskOrder.resize(std::size_t(nTasks));
    for (std::int64_t t = 0; t < nTasks; ++t) s.taskOrder[std::size_t(t)] = std::uint32_t(t);
    auto key = [&](std::uint32_t t) {
      return std::pair(s.tasks[t].ordBegin / std::uint32_t(s.taskGroupRows),
                       s.headers[std::size_t(std::int64_t(t) * taskSlices)] & S8::kBaseMask);
    };
    std::stable_sort(s.taskOrder.begin(), s.taskOrder.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
  }
  return s;
}

SliceCounts countSlices(const HalfCsr& m, int threads) {
  constexpr std::int64_t kRowBlock = 4096;
  const std::size_t nBlocks = std::size_t((m.rows + kRowBlock - 1) / kRowBlock);
  std::vector<SliceCounts> part(nBlocks);
  parallelFor(nBlocks, resolveThreads(threads), {}, [&](std::size_t b, int) {
    SliceCounts& c = part[b];
    const std::int64_t r1 = std::min(m.rows, std::int64_t(b + 1) * kRowBlock);
    for (std::int64_t r = std::int64_t(b) * kRowBlock; r < r1; ++r) {
      forEachSlice(m, r, S8::segmentSpan(8), S8::kMaxSegments,
                   [&](std::int64_t, int, std::uint32_t mask) {
                     ++c.slices8;
                     c.segmented8 += mask != 0;
                   });
      forEachSlice(m, r, S8::segmentSpan(12), 1,
                   [&](std::int64_t, int, std::uint32_t) { ++c.slices12; });
      forEachSlice(m, r, S8::segmentSpan(16), 1,
                   [&](std::int64_t, int, std::uint32_t) { ++c.slices16; });
    }
  });
  SliceCounts all;
  for (const SliceCounts& c : part) {
    all.slices8 += c.slices8;
    all.segmented8 += c.segmented8;
    all.slices12 += c.slices12;
    all.slices16 += c.slices16;
  }
  return all;
}

int chooseOffsetBits(double bytesPerSmClock, const SliceCounts& c) {
  if (bytesPerSmClock < kWideOffsetsBytesPerSmClock || 10 * c.segmented8 <= c.slices8) return 8;
  // The wide width with fewer bytes (3.5 B an entry at 12 bits, 4 at 16, slices padded alike),
  // unless it needs a quarter more slices than 8 bits (columns far apart: 8 bits packs four
  // segments a slice where the wide layouts cut one slice each).
  const bool twelve = 7 * c.slices12 <= 8 * c.slices16;
  const std::int64_t wide = twelve ? c.slices12 : c.slices16;
  if (4 * wide > 5 * c.slices8) return 8;
  return twelve ? 12 : 16;
}

namespace {

/// Decodes slices [s0, s1) (s0 at a chunk start), the first of which belongs to row ordinal
/// ord0 and whose first chunk's area starts at word area0 of segs, in stream order: entry(ord,
/// column, value bits) per entry, rowEnd(ord) after the last slice of each row.
template <typename E, typename R>
void decodeSlices(const S8& s, std::int64_t s0, std::int64_t s1, std::uint32_t ord0,
                  std::uint64_t area0, E&& entry, R&& rowEnd) {
  std::uint32_t ord = ord0;
  std::uint64_t area = area0, next = area0;  // this chunk's area, the next chunk's
  std::size_t at = 0;                        // next segment base of this chunk's area
  for (std::int64_t k = s0; k < s1; ++k) {
    const int j = int(k % S8::kChunk);
    if (j == 0) {
      area = next;
      bool any = false;
      for (int i = 0; i < S8::kChunk && k + i < std::int64_t(s.headers.size()); ++i)
        any |= (s.headers[std::size_t(k + i)] & S8::kSegmented) != 0;
      next = area + (any ? areaWords(&s.segs[std::size_t(area)]) : 0);
      at = std::size_t(area) + S8::kChunk;
    }
    const std::uint32_t h = s.headers[std::size_t(k)];
    const std::uint32_t mask = (h & S8::kSegmented) ? s.segs[std::size_t(area) + std::size_t(j)] : 0u;
    std::uint32_t base = h & S8::kBaseMask;
    for (int l = 0; l < S8::kSlice; ++l) {
      const std::size_t i = std::size_t(S8::at(k, l));
      const bool starts = (mask >> l) & 1u;
      if (starts) base = s.segs[at++];
      const std::uint32_t off = s.offsetAt(std::int64_t(i));
      if (l > 0 && !starts && off == 0) break;  // padding: see the layout
      entry(ord, base + off, s.values[i]);
    }
    if (h & S8::kLast) rowEnd(ord++);
  }
}

}  // namespace

HalfCsr decodeSlicedOffset8(const SlicedOffset8& s) {
  return csrFromRowOrder(s.rows, s.cols, s.scale, s.nnz, [&](auto&& emit) {
    decodeSlices(
        s, 0, s.nSlices, 0, 0,
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
        s.tasks[cuts[c]].segBegin, [&](std::uint32_t, std::uint32_t col, std::uint16_t v) {
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
  b.offsets = entries * double(s.offsetBits) / 8.0;
  b.segments = 4.0 * double(s.segs.size() - S8::kAreaWords);
  b.headers = 4.0 * S8::kChunk * double(s.nChunks);
  b.rows = 4.0 * double(s.nonEmptyRows());
  // Task records and order, empty runs, split rows and their per-task sums (written, read back).
  b.tasks = double(sizeof(Offset8Task) + 4 * !s.taskOrder.empty()) * double(s.tasks.size()) +
            8.0 * double(s.emptyRuns.size()) + 12.0 * double(s.splitRows.size());
  for (const SplitRow& r : s.splitRows) b.tasks += 16.0 * double(r.lastTask - r.firstTask + 1);
  b.vectors = 8.0 * double(s.rows + s.cols);
  return b;
}

double slicedOffset8DeviceBytes(const SlicedOffset8& s) {
  return 2.0 * double(s.values.size()) + double(s.offsetsLo.size()) +
         2.0 * double(s.offsets16.size()) + 4.0 * double(s.offsetsHi.size()) +
         4.0 * double(s.headers.size() + s.segs.size() + s.nonEmptyRow.size() + s.taskOrder.size()) +
         double(sizeof(Offset8Task)) * double(s.tasks.size()) + 16.0 * double(s.tasks.size()) +
         12.0 * double(s.splitRows.size()) + 8.0 * double(s.emptyRuns.size());
}

}  // namespace penumbra::spmv
