// The robustness table (robustness.hpp): per target D98, D95 and Dmean, per other structure
// D2, Dmax and Dmean, each with its nominal, worst and best value over the scenarios and the
// scenario that gave the worst, flagged against the structure's limit.
#include <cmath>
#include <functional>

#include "robust/robust_reduce.hpp"

namespace penumbra::robust::detail {

std::vector<RobustnessRow> robustnessTable(const RobustnessResult& out,
                                           const std::vector<RobustStructure>& structures) {
  struct Metric {
    const char* name;
    std::function<double(const ScenarioDvh&)> value;
    double limit;
  };
  std::vector<RobustnessRow> rows;
  for (std::size_t s = 0; s < out.structures.size() && s < structures.size(); ++s) {
    const StructureRobustness& sr = out.structures[s];
    if (sr.voxels == 0 || sr.scenarios.empty()) continue;
    const RobustStructure& rs = structures[s];
    // Targets lose dose in their worst scenario, every other structure gains it.
    const bool target = sr.kind == StructureKind::Target;
    const double nan = std::nan("");
    std::vector<Metric> metrics;
    if (target) {
      metrics = {{"D98", [](const ScenarioDvh& d) { return d.d98Gy; }, rs.minGy},
                 {"D95", [](const ScenarioDvh& d) { return d.d95Gy; }, rs.minGy},
                 {"Dmean", [](const ScenarioDvh& d) { return d.meanGy; }, nan}};
    } else {
      metrics = {{"D2", [](const ScenarioDvh& d) { return d.d2Gy; }, rs.maxGy},
                 {"Dmax", [](const ScenarioDvh& d) { return d.maxGy; }, rs.maxGy},
                 {"Dmean", [](const ScenarioDvh& d) { return d.meanGy; }, rs.meanGy}};
    }
    for (const Metric& m : metrics) {
      RobustnessRow row;
      row.structure = sr.name;
      row.metric = m.name;
      row.nominalGy = m.value(sr.scenarios[0]);
      row.worstGy = row.bestGy = row.nominalGy;
      row.worstScenario = 0;
      for (std::size_t k = 1; k < sr.scenarios.size(); ++k) {
        const double v = m.value(sr.scenarios[k]);
        const bool worse = target ? v < row.worstGy : v > row.worstGy;  // ties: the earlier
        if (worse) {
          row.worstGy = v;
          row.worstScenario = int(k);
        }
        row.bestGy = target ? std::max(row.bestGy, v) : std::min(row.bestGy, v);
      }
      row.limitGy = m.limit;
      row.violated = std::isfinite(m.limit) &&
                     (target ? row.worstGy < m.limit : row.worstGy > m.limit);
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace penumbra::robust::detail
