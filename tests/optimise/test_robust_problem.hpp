#pragma once
// The robust-optimisation tests' plan: the BOXPHANTOM equivalent of boxphantom_problem.hpp
// (160^3 CT voxels of 3 mm, water BODY voxels 39..119, 63-mm cubic target at voxels 69..89,
// gantry 0 and 90, spots from generateSpots) without its matrix, on a dose grid of any spacing
// over the same 480-mm extent, so that a test can build per-scenario matrices (6 mm: target =
// dose voxels 34..44, as in boxphantom_problem.hpp) or only estimate them.
#include <cmath>
#include <memory>
#include <vector>

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
  CtVolume ct(proton::makeAxisGrid({160, 160, 160}, {3, 3, 3}, {-240, -240, -240}), -1024);
  Mask targetCt(ct.grid, 0);
  for (int k = 39; k <= 119; ++k)
    for (int j = 39; j <= 119; ++j)
      for (int i = 39; i <= 119; ++i) {
        ct.at(i, j, k) = 0;
        if (i >= 69 && i <= 89 && j >= 69 && j <= 89 && k >= 69 && k <= 89)
          targetCt.at(i, j, k) = 1;
      }
  auto spr = std::make_shared<const Volume<float>>(proton::stoppingPowerRatio(ct));
  const Vec3 iso = proton::targetCentroid(targetCt);
  p.plan.spr = spr;
  for (double gantry : {0.0, 90.0})
    p.plan.beams.push_back(
        proton::generateSpots(*spr, targetCt, {gantry == 0 ? "G0" : "G90", gantry, 0, iso}).beam);
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
