// `penumbra-cli bench spmv` (issues 5 and 14): d = D w and g = D^T r on fp16 CSR dose matrices,
// the paper's warp-per-row kernel (baseline), csr_spmv_binned_delta16, csr_spmv_segmented_steps
// (StepCsr), csr_spmv_sliced_offset8 (SlicedOffset8) and cuSPARSE fp32 CSR side by side, against
// the multi-threaded CPU reference.
//
// Cases: synthetic liver-1 and prostate-1 (the paper's Table I sizes, structure documented in
// engines/spmv/synthetic.hpp, seed 2021), and the dose matrices the proton engine builds for
// BOXPHANTOM (proton-box) and the head-and-neck phantom at 2 mm (proton-hn).
// Measured per kernel: median and min of max(reps, 20) event-timed launches after 3 warm-ups;
// GB/s on the model (6 B per entry + 12 B per row + 8 B per column, the same for every
// kernel), % of the copy bandwidth measured in this run, GFLOP/s (2 per entry), speed-up over
// the baseline and over cuSPARSE, the bitwise repeat (last timed output == first) and the max
// |gpu - cpu| / max |cpu|. Besides, per kernel, the bytes it really moves (CudaSpmvMatrix::
// realBytes: every array of its layout read once, y written and x read once, 8 B per row and
// column; cuSPARSE: fp32 values and int32 columns, 4 B per row offset, 4 B per row and column of
// its fp32 vectors) per non-zero, and that traffic in % of the measured copy bandwidth. The real
// bytes of each layout are printed without a GPU too (the StepCsr and SlicedOffset8 encoded on
// the CPU).
// Environment (for scripts/spmv-tune): PENUMBRA_SPMV_CASES="prostate-1,liver-1,..." limits the
// cases; PENUMBRA_SPMV_VARIANTS="v8u1s32t4096,v8u1s16t4096" lists csr_spmv_binned_delta16
// configurations (entries per load, loads in flight, lanes per row, long-row threshold; default
// Delta16Config{}); PENUMBRA_SPMV_STEP_VARIANTS="s0t0l1,s8t256l2" lists csr_spmv_segmented_steps
// variants (StepCsr step bits 4 or 8 and groups per task, 0: the encoder's choice; lanes per
// group 1 or 2; default: both lane mappings on the encoder's choice);
// PENUMBRA_SPMV_OFFSET8_VARIANTS="c4,c8,c16b4,c8g0" lists csr_spmv_sliced_offset8 chunks (256
// entries) per warp task (c0: the encoder's choice) and optionally the kernel's blocks per SM (b4,
// the default, or b5), warps per block (k2, k8; without: the encoder's choice), the task order (g0,
// g32), the column offsets (w, n, o12; without: the engine's choice) and r0 (no row buffer);
// default "c0", the engine's layout.
#include "bench_spmv.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <random>
#include <sstream>
#include <thread>

#include "bench_table.hpp"
#include "core/bandwidth.hpp"
#include "core/device.hpp"
#include "proton/proton_phantoms.hpp"
#include "spmv/gather_lines.hpp"
#include "spmv/spmv.hpp"
#include "spmv/synthetic.hpp"

namespace penumbra::cli {

namespace {

using namespace spmv;
using spmvbench::KernelRun;

double secondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

Delta16Config parseConfig(const std::string& s) {  // "v8u1s32t4096"
  Delta16Config c;
  long long t = 0;
  if (std::sscanf(s.c_str(), "v%du%ds%dt%lld", &c.entriesPerLoad, &c.loadsInFlight, &c.lanesPerRow,
                  &t) != 4)
    PENUMBRA_THROW(InvalidArgument,
                   "bench spmv: bad variant '" + s + "' (expected e.g. v4u2s8t4096b6)");
  c.longThreshold = t;
  c.minBlocksPerSm = s.size() > 2 && s.compare(s.size() - 2, 2, "b6") == 0 ? 6 : 0;
  return c;
}

StepCsrOptions parseStepVariant(const std::string& s) {  // "s4t256l2"
  StepCsrOptions o;
  long long t = 0;
  if (std::sscanf(s.c_str(), "s%dt%lldl%d", &o.stepBits, &t, &o.lanesPerGroup) != 3)
    PENUMBRA_THROW(InvalidArgument,
                   "bench spmv: bad step variant '" + s + "' (expected e.g. s0t0l1 or s4t256l2)");
  o.taskGroups = t;
  return o;
}

/// "c8", "c8b4", "c8k2" (blocks of 2 warps; k8: of 8; without: the encoder's choice), "c0" (the
/// encoder's task length: 12 chunks with the row buffer, else 8), "c8g0"
/// (tasks in index order), "c8g8" (tasks of 8 rows by column), "c8b4k8g8";
/// a final "w" or "n": 16-bit or 8-bit column offsets ("c8w", "c8b4g8n"), or "o8", "o12", "o16";
/// without, the engine chooses by the device and the matrix (chooseOffsetBits) and the name says
/// "w" when it took 16, "o12" when it took 12; then "r0": rows summed by butterflies, not through
/// the shared-memory buffer that 2-warp blocks take by default ("c8r0", "c8o12r0"; the name ends
/// in "r" where the buffer was used).
SlicedOffset8Options parseOffset8Variant(const std::string& s) {
  SlicedOffset8Options o;
  char tail[16] = {0};
  int n = std::sscanf(s.c_str(), "c%d%15s", &o.chunksPerTask, tail);
  std::string rest = n == 2 ? tail : "";
  if (rest.size() > 1 && rest[0] == 'b') {
    std::size_t used = 0;
    o.minBlocksPerSm = std::stoi(rest.substr(1), &used);
    rest = rest.substr(1 + used);
  }
  if (rest.size() > 1 && rest[0] == 'k') {
    std::size_t used = 0;
    o.warpsPerBlock = std::stoi(rest.substr(1), &used);
    rest = rest.substr(1 + used);
  }
  if (rest.size() > 1 && rest[0] == 'g') {
    std::size_t used = 0;
    o.taskGroupRows = std::stoi(rest.substr(1), &used);
    rest = rest.substr(1 + used);
  }
  if (rest == "w" || rest == "n") {  // 16 or 8 offset bits; without: the engine's choice
    o.offsetBits = rest == "w" ? 16 : 8;
    rest.clear();
  } else if (rest.size() > 1 && rest[0] == 'o') {  // "o8", "o12", "o16"
    std::size_t used = 0;
    o.offsetBits = std::stoi(rest.substr(1), &used);
    rest = rest.substr(1 + used);
  }
  if (rest == "r0") {  // rows summed by butterflies of shuffles, not the shared-memory buffer
    o.rowBuffer = 0;
    rest.clear();
  }
  if (n < 1 || o.chunksPerTask < 0 || !rest.empty())
    PENUMBRA_THROW(
        InvalidArgument,
        "bench spmv: bad offset8 variant '" + s +
            "' (expected e.g. c0, c8, c8b4, c8k2, c8g0, c8b4k8g32, c8w, c8o12 or c12r0)");
  return o;
}

HalfCsr buildCase(const std::string& name) {
  if (name == "liver-1") return makeSyntheticDoseMatrix(liver1Spec());
  if (name == "prostate-1") return makeSyntheticDoseMatrix(prostate1Spec());
  if (name == "proton-box") return proton::phantomDoseMatrix(proton::makeBoxPhantomCase());
  if (name == "proton-hn") return proton::phantomDoseMatrix(proton::makeHeadNeckCase(2.0));
  PENUMBRA_THROW(InvalidArgument, "bench spmv: unknown case '" + name + "'");
}

std::string describeMatrix(const HalfCsr& m) {
  std::int64_t empty = 0, longest = 0;
  for (std::int64_t r = 0; r < m.rows; ++r) {
    const std::int64_t n = m.rowPtr[std::size_t(r) + 1] - m.rowPtr[std::size_t(r)];
    empty += n == 0;
    longest = std::max(longest, n);
  }
  return std::to_string(m.rows) + " x " + std::to_string(m.cols) + ", nnz " +
         std::to_string(m.nnz()) +
         fmt(", %.1f %% empty rows",
             100.0 * double(empty) / double(std::max<std::int64_t>(m.rows, 1))) +
         ", longest row " + std::to_string(longest) +
         fmt(", mean non-empty row %.0f",
             double(m.nnz()) / double(std::max<std::int64_t>(m.rows - empty, 1)));
}

struct SummaryLine {
  std::string text;
};

/// The real bytes per non-zero of each layout, from the matrix and its StepCsr (no GPU needed).
void printLayoutBytes(const std::string& name, const std::string& tag, const HalfCsr& a,
                      const StepCsr& s, double encodeS) {
  const double n = double(std::max<std::int64_t>(a.nnz(), 1)),
               vectors = 8.0 * double(a.rows + a.cols);
  const StepCsrBytes b = stepCsrBytes(s);
  std::printf(
      "spmv: %s %s real bytes per non-zero (y and x included): paper %.3f, delta16 %.3f, steps "
      "%.3f "
      "(%d-bit: values %.3f + steps %.3f + escapes %.3f + row starts %.3f + tasks %.3f + vectors "
      "%.3f; "
      "%.2f %% of entries escaped, %zu tasks of <= %lld groups, %zu rows cut; encoded in %.1f s)\n",
      name.c_str(), tag.c_str(), (6.0 * n + 8.0 * double(a.rows + 1) + vectors) / n,
      delta16RealBytes(a) / n, b.total() / n, s.stepBits, b.values / n, b.steps / n, b.escapes / n,
      b.rowInfo / n, b.tasks / n, b.vectors / n, 100.0 * double(s.escapes.size()) / n,
      s.tasks.size(), (long long)s.taskGroups, s.splitRows.size(), encodeS);
  std::fflush(stdout);
}

/// The same for the SlicedOffset8 (no GPU needed).
void printOffset8Bytes(const std::string& name, const std::string& tag, const HalfCsr& a,
                       const SlicedOffset8& s, double encodeS) {
  const double n = double(std::max<std::int64_t>(a.nnz(), 1));
  const SlicedOffset8Bytes b = slicedOffset8Bytes(s);
  std::printf(
      "spmv: %s %s real bytes per non-zero (y and x included): offset8 %.3f (values %.3f + offsets "
      "%.3f + segments %.3f + headers %.3f + rows %.3f + tasks %.3f + vectors %.3f; %lld slices, "
      "%.1f %% segmented, %.1f %% of chunks with an area, %.1f %% padding, %zu tasks of %d chunks "
      "(order: %s), %zu rows cut; encoded in %.1f s)\n",
      name.c_str(), tag.c_str(), b.total() / n, b.values / n, b.offsets / n, b.segments / n,
      b.headers / n, b.rows / n, b.tasks / n, b.vectors / n, (long long)s.nSlices,
      100.0 * double(s.segmentedSlices) / double(std::max<std::int64_t>(s.nSlices, 1)),
      100.0 * double(s.segmentedChunks) / double(std::max<std::int64_t>(s.nChunks, 1)),
      100.0 *
          (1.0 - n / double(std::max<std::int64_t>(s.nChunks * SlicedOffset8::kChunkEntries, 1))),
      s.tasks.size(), s.chunksPerTask,
      s.taskGroupRows > 0
          ? ("groups of " + std::to_string(s.taskGroupRows) + " rows by column").c_str()
          : "index",
      s.splitRows.size(), encodeS);
  std::fflush(stdout);
}

/// The lines and sectors of x behind the gathers (gather_lines.hpp): sliced_offset8's slices of
/// one row against slices of 2 and 4 neighbouring rows at one column window (no GPU needed).
void printGatherLines(const std::string& name, const std::string& tag, const HalfCsr& a) {
  const auto t0 = std::chrono::steady_clock::now();
  const GatherLines one = countGatherLines(a, 1), two = countGatherLines(a, 2),
                    four = countGatherLines(a, 4);
  std::printf(
      "spmv: %s %s x gathered per 32 entries, lines of 128 B (sectors of 32 B): one row a slice "
      "%.2f (%.2f); two rows a slice %.2f (%.2f), %.1f %% padding; four rows %.2f (%.2f), %.1f %% "
      "padding; counted in %.1f s\n",
      name.c_str(), tag.c_str(), one.linesPer32(), one.sectorsPer32(), two.linesPer32(),
      two.sectorsPer32(), 100.0 * (1.0 - two.fill()), four.linesPer32(), four.sectorsPer32(),
      100.0 * (1.0 - four.fill()), secondsSince(t0));
  std::fflush(stdout);
}

}  // namespace

std::vector<BenchRow> benchSpmv(int reps) {
  reps = std::max(reps, 20);
  std::vector<BenchRow> rows;
  const auto cases =
      splitList(std::getenv("PENUMBRA_SPMV_CASES"), "prostate-1,liver-1,proton-box,proton-hn");
  std::vector<Delta16Config> configs;
  for (const auto& v : splitList(std::getenv("PENUMBRA_SPMV_VARIANTS"), Delta16Config{}.name()))
    configs.push_back(parseConfig(v));
  std::vector<StepCsrOptions> stepVariants;
  for (const auto& v : splitList(std::getenv("PENUMBRA_SPMV_STEP_VARIANTS"), "s0t0l1,s0t0l2"))
    stepVariants.push_back(parseStepVariant(v));
  std::vector<SlicedOffset8Options> offset8Variants;
  for (const auto& v : splitList(std::getenv("PENUMBRA_SPMV_OFFSET8_VARIANTS"), "c0"))
    offset8Variants.push_back(parseOffset8Variant(v));
  std::string why;
  const bool gpu = !queryCudaDevices(&why).empty();
  if (!gpu)
    std::cout << "spmv: CUDA rows skipped, no usable GPU (" << why << "); CPU reference only\n";
  double peak = 0;
  if (gpu) {
    KernelProfile bw = measureCopyBandwidth(std::size_t(2) << 30, 20);
    peak = bw.gbPerS();
    rows.push_back({"spmv", "peak", bw, fmt("%.0f GB/s", peak),
                    "d2d copy 2 GiB, bytes read + written: the % of peak below"});
  }
  std::vector<SummaryLine> summary;
  for (const std::string& name : cases) {
    auto t0 = std::chrono::steady_clock::now();
    HalfCsr d = buildCase(name);
    const double buildS = secondsSince(t0);
    t0 = std::chrono::steady_clock::now();
    HalfCsr dt = transpose(d);
    const double transposeS = secondsSince(t0);
    std::cout << "spmv: " << name << ": " << describeMatrix(d) << fmt("; built in %.1f s", buildS)
              << fmt(", D^T in %.1f s", transposeS) << "\n";
    for (int prod = 0; prod < 2; ++prod) {
      const HalfCsr& a = prod == 0 ? d : dt;
      const std::string tag = prod == 0 ? "Dw" : "DTr";
      std::mt19937_64 rng(prod == 0 ? 7 : 8);
      std::uniform_real_distribution<double> u(prod == 0 ? 0.0 : -1.0, 1.0);  // w >= 0; r signed
      std::vector<double> x(std::size_t(a.cols)), ref(std::size_t(a.rows));
      for (double& v : x) v = u(rng);
      KernelProfile cpu = timeHost(
          "spmv_cpu_reference", tag + "/cpu", [&] { multiplyCpu(a, x.data(), ref.data()); }, 1, 0);
      cpu.device = "cpu (" + std::to_string(std::thread::hardware_concurrency()) + " threads)";
      cpu.bytes = 6.0 * double(a.nnz()) + 12.0 * double(a.rows) + 8.0 * double(a.cols);
      cpu.flops = 2.0 * double(a.nnz());
      rows.push_back({"spmv", name, cpu, fmt("%.0f GB/s", cpu.gbPerS()),
                      "double accumulation, row order, timed once"});
      t0 = std::chrono::steady_clock::now();
      const StepCsr encoded = encodeStepCsr(a, stepVariants.front());
      printLayoutBytes(name, tag, a, encoded, secondsSince(t0));
      {  // freed before the GPU runs: a SlicedOffset8 of liver-1 is ~4.8 GB on the host
        t0 = std::chrono::steady_clock::now();
        const SlicedOffset8 sliced = encodeSlicedOffset8(a, offset8Variants.front());
        printOffset8Bytes(name, tag, a, sliced, secondsSince(t0));
      }
      printGatherLines(name, tag, a);
      if (!gpu) continue;
      spmvbench::GpuVectors vec(x, a.rows);
      KernelRun base, cus;
      std::vector<std::pair<Delta16Config, KernelRun>> ours;
      std::int64_t wideSlices = 0;
      {  // paper, delta16 and cuSPARSE share the CSR arrays; freed before the StepCsr variants
        SpmvLayouts csrLayouts;
        csrLayouts.baseline = true;
        CudaSpmvMatrix dev(a, csrLayouts, configs.front());
        wideSlices = dev.wideSlices();
        base = spmvbench::runKernel(dev, SpmvKernel::WarpPerRow, vec, ref, reps);
        for (const auto& c : configs) {
          dev.reconfigure(c);
          ours.push_back({c, spmvbench::runKernel(dev, SpmvKernel::BinnedDelta16, vec, ref, reps)});
        }
        cus = spmvbench::runCusparse(a, dev, x, ref, reps);
      }
      std::vector<KernelRun> steps;
      for (const StepCsrOptions& o : stepVariants) {
        SpmvLayouts stepLayout;
        stepLayout.delta16 = false;
        stepLayout.steps = true;
        CudaSpmvMatrix dev(a, stepLayout, {}, o);
        steps.push_back(spmvbench::runKernel(dev, SpmvKernel::SegmentedSteps, vec, ref, reps));
      }
      std::vector<KernelRun> offset8;
      std::int64_t offset8Segmented = 0;
      for (const SlicedOffset8Options& o : offset8Variants) {
        SpmvLayouts layout;
        layout.delta16 = false;
        layout.offset8 = true;
        CudaSpmvMatrix dev(a, layout, {}, {}, 0, o);
        offset8Segmented = dev.offset8SegmentedSlices();
        offset8.push_back(spmvbench::runKernel(dev, SpmvKernel::SlicedOffset8, vec, ref, reps));
      }
      auto addRow = [&](KernelRun run, const std::string& extra) {
        KernelProfile p = run.profile;
        p.variant = tag + "/" + p.variant;
        p.peakBandwidthGBs = peak;
        const double vsBase = base.profile.medianMs / p.medianMs,
                     vsCus = cus.profile.medianMs / p.medianMs;
        const double realGBs = run.realBytes / (p.medianMs * 1e6),
                     realPct = peak > 0 ? 100 * realGBs / peak : 0.0;
        const double perNnz = run.realBytes / double(std::max<std::int64_t>(a.nnz(), 1));
        BenchRow r{"spmv", name, p, fmt("%.0f GB/s", p.gbPerS()),
                   fmt("%.1f GFLOP/s", p.gflopPerS()) + fmt(", x%.2f vs baseline", vsBase) +
                       fmt(", x%.2f vs cuSPARSE", vsCus) +
                       (run.bitwiseRepeat ? ", bitwise repeat" : ", NOT bitwise repeat") +
                       fmt(", rel err %.2g", run.relError) + fmt(", real %.3f B/nnz", perNnz) +
                       fmt(" = %.0f GB/s", realGBs) +
                       fmt(" = %.1f %% of the measured copy bandwidth", realPct) + extra};
        r.speedupVsBaseline = vsBase;
        r.speedupVsCpu = cpu.medianMs / p.medianMs;
        r.accuracy = run.relError;
        r.accuracyWhat = "max |gpu - cpu| / max |cpu|";
        rows.push_back(r);
        char line[320];
        std::snprintf(
            line, sizeof line,
            "%-10s %-3s %-24s %-12s %8.3f %7.0f %6.1f %6.3f %7.0f %6.1f %7.2f %7.2f %-3s %8.1e",
            name.c_str(), tag.c_str(), run.profile.kernel.c_str(), run.profile.variant.c_str(),
            p.medianMs, p.gbPerS(), peak > 0 ? 100 * p.gbPerS() / peak : 0.0, perNnz, realGBs,
            realPct, vsBase, vsCus, run.bitwiseRepeat ? "yes" : "NO", run.relError);
        summary.push_back({line});
      };
      addRow(base, ", the paper's kernel");
      for (const auto& [c, run] : ours)
        addRow(run, fmt(", %.0f regs", run.profile.registersPerThread) +
                        fmt(", occupancy %.0f %%", 100 * run.profile.theoreticalOccupancy) + ", " +
                        std::to_string(wideSlices) + " wide slices");
      for (const KernelRun& run : steps)
        addRow(run, fmt(", %.0f regs", run.profile.registersPerThread) +
                        fmt(", occupancy %.0f %%", 100 * run.profile.theoreticalOccupancy));
      for (const KernelRun& run : offset8)
        addRow(run, fmt(", %.0f regs", run.profile.registersPerThread) +
                        fmt(", occupancy %.0f %%", 100 * run.profile.theoreticalOccupancy) + ", " +
                        std::to_string(offset8Segmented) + " segmented slices");
      addRow(cus, ", fp32 values and vectors (8 B per entry moved)");
    }
  }
  if (!summary.empty()) {
    std::printf(
        "\nSpMV side by side (GB/s and %%peak on the issue's 6 B/nnz + 12 B/row + 8 B/col; B/nnz, "
        "real GB/s and "
        "%%BW on the bytes each kernel really moves; %%peak and %%BW of the %.0f GB/s copy "
        "measured now)\n",
        peak);
    std::printf("%-10s %-3s %-24s %-12s %8s %7s %6s %6s %7s %6s %7s %7s %-3s %8s\n", "case", "op",
                "kernel", "variant", "ms", "GB/s", "%peak", "B/nnz", "realGB/s", "%BW", "x base",
                "x cuSP", "bit", "rel err");
    for (const auto& s : summary) std::printf("%s\n", s.text.c_str());
    std::fflush(stdout);
  }
  return rows;
}

}  // namespace penumbra::cli
