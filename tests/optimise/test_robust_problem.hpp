#pragma once
// The robust-optimisation tests' plan: boxphantom_problem.hpp's CT and beams (boxPhantomPlan)
// (160^3 CT voxels of 3 mm, water BODY voxels 39..119, 63-mm cubic target at voxels 69..89,
// gantry 0 and 90, spots from generateSpots) without its matrix, on a dose grid of any spacing
// over the same 480-mm extent, so that a test can build per-scenario matrices (6 mm: target =
// dose voxels 34..44, as in boxphantom_problem.hpp) or only estimate them.
#include <cmath>
#include <memory>
#include <vector>

#include "boxphantom_problem.hpp"
#include "optimise/objective.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "proton/spot_generation.hpp"

namespace penumbra::optimise::test {

struct RobustBoxProblem {
  proton::ProtonDoseRequest plan;                             ///< CPU backend, uniform weights
  std::vector<std::int64_t> targetVoxels, bodyOutsideTarget;  ///< dose-grid rows
  PlanObjective objective;
  double rx = 2.0;  ///< Gy
};

/// `doseSpacingMm`: the dose grid's spacing; voxels whose centre lies in the target / BODY count.
inline RobustBoxProblem robustBoxProblem(double doseSpacingMm = 6.0) {
  RobustBoxProblem p;
  BoxPhantomPlan box = boxPhantomPlan();
  p.plan.spr = std::move(box.spr);
  p.plan.beams = std::move(box.beams);
  const double h = doseSpacingMm;
  const int n = int(std::lround(480.0 / h));
  p.plan.doseGrid =
      proton::makeAxisGrid({n, n, n}, {h, h, h}, {-240 + h / 2, -240 + h / 2, -240 + h / 2});
  p.plan.backend = Backend::Cpu;
  // CT voxel edges: BODY [-124.5, 118.5) mm, target [-34.5, 28.5) mm on every axis.
  auto inside = [](double x, double lo, double hi) { return x >= lo && x < hi; };
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const Vec3 c = p.plan.doseGrid.indexToWorld(Vec3{double(i), double(j), double(k)});
        const bool body =
            inside(c.x, -124.5, 118.5) && inside(c.y, -124.5, 118.5) && inside(c.z, -124.5, 118.5);
        const bool target =
            inside(c.x, -34.5, 28.5) && inside(c.y, -34.5, 28.5) && inside(c.z, -34.5, 28.5);
        const auto row = std::int64_t(p.plan.doseGrid.linearIndex(i, j, k));
        if (target)
          p.targetVoxels.push_back(row);
        else if (body)
          p.bodyOutsideTarget.push_back(row);
      }
  p.objective = PlanObjective(
      {targetObjective("OuterTarget", p.targetVoxels, p.rx, 1.0, 0.97 * p.rx, 20.0, 1.04 * p.rx,
                       20.0),
       organAtRiskObjective("BODY-OuterTarget", p.bodyOutsideTarget, 0.8 * p.rx, 1.0)});
  return p;
}

}  // namespace penumbra::optimise::test
