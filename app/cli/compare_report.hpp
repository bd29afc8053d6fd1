#pragma once
// The text penumbra-cli compare prints (and writes with --report): the two doses, the criteria,
// gamma and difference statistics, and per structure the pass rates and DVH differences.
#include <string>
#include <vector>

#include "compare/compare.hpp"
#include "dose_inputs.hpp"
#include "dvh/dvh.hpp"

namespace penumbra::cli {

/// One structure's DVH on the reference (A) and on the evaluated dose (B), each on its own grid.
struct StructureDvhPair {
  std::string name;
  dvh::DvhResult a, b;
  std::string error;  ///< non-empty when no DVH could be made (the reason)
};

struct CompareReport {
  const DoseInput* reference = nullptr;
  const DoseInput* evaluated = nullptr;
  const compare::CompareRequest* request = nullptr;
  const compare::CompareResult* result = nullptr;
  std::string structureSetFile;         ///< empty without --structures
  std::vector<std::string> emptyMasks;  ///< structures with no voxel on the reference grid
  std::vector<StructureDvhPair> dvhs;
  double dvhSeconds = 0;
  std::vector<std::string> notes;  ///< import and engine notes
};

/// The report as printed, lines ending in '\n'.
std::string formatCompareReport(const CompareReport& report);

/// The search radius the engine used (mm): --max-search, at most cap x DTA (its default).
double searchRadiusMm(const compare::GammaCriteria& c);
/// A gamma percentile as reported: read off the engine's histogram (within one bin, cap / 2000),
/// so never shown above the maximum.
double reportedPercentile(double percentile, const compare::GammaStatistics& s);

}  // namespace penumbra::cli
