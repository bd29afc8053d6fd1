// penumbra-cli robust: robustness evaluation of a proton plan (issue 16, item 5): the plan's dose
// under range and setup error scenarios, reduced to the robustness table (nominal, worst and
// best D98/D95/Dmean of the targets, D2/Dmax/Dmean of the other structures, flagged against
// their limits), the voxel-wise worst-case and spread doses, and the time it took.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli_args.hpp"
#include "cli_commands.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/kernel_profile.hpp"
#include "file/atomic_file.hpp"
#include "image/metaimage_writer.hpp"
#include "robust/robustness.hpp"
#include "robust_inputs.hpp"
#include "robust_options.hpp"

namespace penumbra::cli {

namespace {

using robust::RobustnessResult;
using robust::ScenarioOptions;

std::string flagOf(const robust::RobustnessRow& r) {
  if (!std::isfinite(r.limitGy)) return "-";
  return r.violated ? "VIOLATED" : "ok";
}

void printTable(const RobustnessResult& res) {
  std::size_t wName = 9, wScenario = 14;
  for (const auto& r : res.table) {
    wName = std::max(wName, r.structure.size());
    wScenario = std::max(wScenario, res.scenarios[std::size_t(r.worstScenario)].name.size());
  }
  std::printf("%-*s  %-6s %10s %10s %10s  %-*s %10s  %s\n", int(wName), "structure", "metric",
              "nominal", "worst", "best", int(wScenario), "worst scenario", "limit", "flag");
  for (const auto& r : res.table) {
    char limit[32] = "-";
    if (std::isfinite(r.limitGy)) std::snprintf(limit, sizeof limit, "%.4g", r.limitGy);
    std::printf("%-*s  %-6s %10.4g %10.4g %10.4g  %-*s %10s  %s\n", int(wName), r.structure.c_str(),
                r.metric.c_str(), r.nominalGy, r.worstGy, r.bestGy, int(wScenario),
                res.scenarios[std::size_t(r.worstScenario)].name.c_str(), limit,
                flagOf(r).c_str());
  }
  std::printf("(doses in Gy; worst: the lowest over the scenarios for targets, the highest for "
              "the other structures)\n");
}

std::string csvField(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string tableCsv(const RobustnessResult& res) {
  std::ostringstream o;
  o.precision(9);
  o << "structure,metric,nominal_gy,worst_gy,best_gy,worst_scenario,limit_gy,flag\n";
  for (const auto& r : res.table) {
    o << csvField(r.structure) << "," << r.metric << "," << r.nominalGy << "," << r.worstGy << ","
      << r.bestGy << "," << csvField(res.scenarios[std::size_t(r.worstScenario)].name) << ",";
    if (std::isfinite(r.limitGy)) o << r.limitGy;
    o << "," << flagOf(r) << "\n";
  }
  return o.str();
}

}  // namespace

int cmdRobust(Args args) {
  OptionParser options("robust", std::move(args));
  const std::string caseFile = options.text("--case");
  const std::string phantom = options.text("--phantom");
  // Taken in this order (as "--range --setup 3" must read), checked before the other options.
  const std::optional<std::string> rangeText = options.value("--range");
  const std::optional<std::string> setupText = options.value("--setup");
  ScenarioOptions so = scenarioOptionsOf(rangeText, setupText);
  const std::string sphereText = options.text("--sphere");
  const std::string countText = options.text("--scenarios");
  const std::string backendText = options.text("--backend");
  const double doseGridMm = options.number("--dose-grid", 0);
  const std::string csv = options.text("--csv");
  const std::string outWorst = options.text("--out-worst");
  const std::string outSpread = options.text("--out-spread");
  if (!options.allTaken(usageOf("robust"))) return 2;
  if (caseFile.empty() == phantom.empty()) {
    std::cerr << "penumbra-cli robust: give either --case CASE.json or --phantom hn|box|water\n"
              << usageOf("robust");
    return 2;
  }
  if (!sphereText.empty()) so.sphereDirections = parseOptionInteger(sphereText, "--sphere");
  PENUMBRA_REQUIRE(doseGridMm == 0 || (doseGridMm >= 0.5 && doseGridMm <= kMaxDoseGridSpacingMm),
                   InvalidArgument,
                   "--dose-grid: " + formatG(doseGridMm) + " mm is outside [0.5, " +
                       formatG(kMaxDoseGridSpacingMm) + "] mm");
  // Checked before anything is read or computed (cuda-strict fails here without a GPU).
  const std::optional<Backend> backend =
      backendText.empty() ? std::nullopt : std::optional<Backend>(parseBackendOption(backendText));
  robust::RobustnessRequest req;
  req.scenarios = scenarioSetOf(so, countText, !sphereText.empty());

  RobustInputs in = phantom.empty() ? caseRobustInputs(caseFile, doseGridMm)
                                    : phantomRobustInputs(phantom, doseGridMm);
  for (const std::string& n : in.notes) std::printf("%s\n", n.c_str());
  if (backend) in.plan.backend = *backend;
  req.plan = std::move(in.plan);
  req.structures = std::move(in.structures);
  std::printf("%s\n", in.description.c_str());
  std::printf("%zu scenarios (range +-%g %%, setup %g mm%s), %zu structures\n", req.scenarios.size(),
              so.rangePercent, so.setupMm,
              so.sphereDirections > 0 ? (", " + std::to_string(so.sphereDirections) + " directions").c_str() : "",
              req.structures.size());
  const robust::RobustnessEstimate est = robust::workspaceBytes(req);
  std::printf("memory: host %s, GPU %s\n", formatBytes(double(est.hostBytes)).c_str(),
              formatBytes(double(est.deviceBytes)).c_str());

  RobustnessResult res = robust::evaluateRobustness(req);
  if (in.targetLimitOfNominalMean > 0) {
    limitTargetsAtNominalMean(res, in.targetLimitOfNominalMean);
    std::printf("limits: target D98/D95 >= %g %% of the nominal target Dmean (a phantom plan has "
                "unit weights and no prescription)\n",
                100 * in.targetLimitOfNominalMean);
  }
  for (const std::string& m : res.messages) std::printf("note: %s\n", m.c_str());
  printTable(res);
  int violated = 0;
  for (const auto& r : res.table) violated += r.violated ? 1 : 0;
  std::printf("%d of %zu rows violate their limit\n", violated, res.table.size());
  std::printf("evaluated %zu scenarios in %.1f ms on %s (%s): per scenario median %.1f ms (dose "
              "and reductions, overlapped); DVH bin width %.4g Gy\n",
              res.scenarios.size(), res.elapsedMs, toString(res.backend), res.device.c_str(),
              medianOf(res.scenarioMs),
              res.structures.empty() ? 0.0 : res.structures.front().binWidthGy);

  if (!csv.empty()) {
    io::writeFileAtomically(csv, tableCsv(res), "robustness table");
    std::printf("wrote %s\n", csv.c_str());
  }
  const std::string comment = "proton dose in Gy, " + std::to_string(res.scenarios.size()) +
                              " error scenarios, DICOM LPS mm: ";
  if (!outWorst.empty()) {
    io::writeMetaImage(outWorst, res.worstCase.dose,
                       comment + "voxel-wise worst case (minimum in targets, maximum elsewhere)");
    std::printf("wrote %s (MetaImage, float32 Gy)\n", outWorst.c_str());
  }
  if (!outSpread.empty()) {
    io::writeMetaImage(outSpread, res.spread.dose, comment + "voxel-wise spread (maximum - minimum)");
    std::printf("wrote %s (MetaImage, float32 Gy)\n", outSpread.c_str());
  }
  return 0;
}

}  // namespace penumbra::cli
