#pragma once
// One row per (case, variant) of `penumbra-cli bench`; printed as a table and written as
// JSON (docs/bench/<engine>-<device>-<date>.json, DESIGN.md section 6).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/format.hpp"
#include "core/kernel_profile.hpp"

namespace penumbra::cli {

struct BenchRow {
  BenchRow(std::string suite_, std::string case_, KernelProfile p, std::string rate_ = {},
           std::string note_ = {})
      : suite(std::move(suite_)), caseName(std::move(case_)), profile(std::move(p)),
        rate(std::move(rate_)), note(std::move(note_)) {}

  std::string suite;     ///< "import", "bandwidth", later "spmv", "proton", ...
  std::string caseName;  ///< e.g. "boxphantom", "liver-1"
  KernelProfile profile;
  std::string rate;  ///< human-readable rate, e.g. "3980 GB/s" or "412 slices/s"
  std::string note;
  /// DESIGN.md section 6 fields; NaN where they do not apply.
  double speedupVsBaseline = std::numeric_limits<double>::quiet_NaN();
  double speedupVsCpu = std::numeric_limits<double>::quiet_NaN();
  double accuracy = std::numeric_limits<double>::quiet_NaN();
  std::string accuracyWhat;  ///< e.g. "max |cuda-cpu| in % of max dose"
};

/// Sets peakBandwidthGBs of every CUDA row that has a traffic model to the bandwidth measured
/// in this run (so "% of peak" is against this GPU's measured limit, not a datasheet).
void applyMeasuredPeak(std::vector<BenchRow>& rows, double peakGBs);

/// One number through a printf format ("%.2f ms", ", occupancy %.0f %%"): the benches' short
/// name for penumbra::formatNumber, which nearly every rate and note they write goes through.
inline std::string fmt(const char* format, double v) { return formatNumber(format, v); }

void printBenchTable(const std::vector<BenchRow>& rows);
/// The comma-separated items of an environment variable's value (`env`, may be null), or of
/// `fallback` when it is unset or empty: the benches' case and variant selections
/// (PENUMBRA_SPMV_CASES, PENUMBRA_CCCS_CASES, ...). Empty items are dropped.
std::vector<std::string> splitList(const char* env, const std::string& fallback);

std::string benchRowsToJson(const std::vector<BenchRow>& rows, const std::string& date);
std::string todayIso();
/// A wall-clock row's profile: median and minimum of `ms` over its runs.
KernelProfile timedProfile(const std::string& kernel, const std::string& variant, Backend backend,
                           const std::string& device, const std::vector<double>& ms);

}  // namespace penumbra::cli
