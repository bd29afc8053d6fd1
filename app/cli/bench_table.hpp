#pragma once
// One row per (case, variant) of `penumbra-cli bench`; printed as a table and written as
// JSON (docs/bench/<engine>-<device>-<date>.json, DESIGN.md section 6).
#include <string>
#include <vector>

#include "core/kernel_profile.hpp"

namespace penumbra::cli {

struct BenchRow {
  std::string suite;     ///< "import", "bandwidth", later "spmv", "proton", ...
  std::string caseName;  ///< e.g. "boxphantom", "liver-1"
  KernelProfile profile;
  std::string rate;  ///< human-readable rate, e.g. "3980 GB/s" or "412 slices/s"
  std::string note;
};

void printBenchTable(const std::vector<BenchRow>& rows);
std::string benchRowsToJson(const std::vector<BenchRow>& rows, const std::string& date);
std::string todayIso();

}  // namespace penumbra::cli
