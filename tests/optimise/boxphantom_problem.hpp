#pragma once
// The matRad BOXPHANTOM equivalent built in code (no DICOM, so the GPU machine and CI without
// data run it): 160^3 CT voxels of 3 mm, HU 0 in the 81^3-voxel BODY (voxels 39..119), HU -1024
// outside, target = the 21^3-voxel cube at voxels 69..89 (63 mm, centre -3 mm). Two beams
// (gantry 0 and 90), spots from generateSpots on the target.
//
// Dose grid: 6 mm (80^3, voxel centres on every other CT voxel centre, so the BODY and target
// boundaries fall exactly on dose voxels: target = dose voxels 34..44, 11^3). The 3 mm grid
// makes D 8x larger and its CPU build takes minutes on 2 cores; 6 mm keeps the tests under a
// minute here while exercising the same engine, matrix and optimiser.
#include <memory>
#include <utility>
#include <vector>

#include "optimise/optimise.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "proton/spot_generation.hpp"

namespace penumbra::optimise::test {

struct BoxPhantomProblem {
  proton::ProtonDoseRequest request;  ///< the plan on the CPU engine, weights uniform
  Mask target, bodyOutsideTarget;     ///< on the dose grid
  spmv::HalfCsr matrix;               ///< D at the engine's default cut-off
  PlanObjective objective;
  double rx = 2.0;  ///< Gy
};

/// The CT's SPR and the two beams (the robust tests use them on other dose grids).
struct BoxPhantomPlan {
  std::shared_ptr<const Volume<float>> spr;
  std::vector<proton::ProtonBeam> beams;
};

inline BoxPhantomPlan boxPhantomPlan() {
  CtVolume ct(proton::makeAxisGrid({160, 160, 160}, {3, 3, 3}, {-240, -240, -240}), -1024);
  Mask targetCt(ct.grid, 0);
  for (int k = 39; k <= 119; ++k)
    for (int j = 39; j <= 119; ++j)
      for (int i = 39; i <= 119; ++i) {
        ct.at(i, j, k) = 0;
        if (i >= 69 && i <= 89 && j >= 69 && j <= 89 && k >= 69 && k <= 89)
          targetCt.at(i, j, k) = 1;
      }
  BoxPhantomPlan plan;
  plan.spr = std::make_shared<const Volume<float>>(proton::stoppingPowerRatio(ct));
  const Vec3 iso = proton::targetCentroid(targetCt);
  const proton::SpotGenerationOptions spotOptions;  // 5 mm hexagonal spots, 3 mm layers, uniform 1
  for (double gantry : {0.0, 90.0})
    plan.beams.push_back(proton::generateSpots(*plan.spr, targetCt,
                                               {gantry == 0 ? "G0" : "G90", gantry, 0, iso}, spotOptions)
                             .beam);
  return plan;
}

inline BoxPhantomProblem boxPhantomProblem() {
  BoxPhantomProblem p;
  BoxPhantomPlan plan = boxPhantomPlan();
  p.request.spr = std::move(plan.spr);
  p.request.beams = std::move(plan.beams);
  p.request.doseGrid = proton::makeAxisGrid({80, 80, 80}, {6, 6, 6}, {-237, -237, -237});
  p.target = Mask(p.request.doseGrid, 0);
  p.bodyOutsideTarget = Mask(p.request.doseGrid, 0);
  for (int k = 19; k <= 59; ++k)
    for (int j = 19; j <= 59; ++j)
      for (int i = 19; i <= 59; ++i) {
        const bool inTarget = i >= 34 && i <= 44 && j >= 34 && j <= 44 && k >= 34 && k <= 44;
        (inTarget ? p.target : p.bodyOutsideTarget).at(i, j, k) = 1;
      }
  p.request.backend = Backend::Cpu;
  p.request.params.computeDoseMatrix = true;
  proton::ProtonDoseResult built = proton::computeProtonDose(p.request);
  p.matrix = std::move(static_cast<spmv::HalfCsr&>(*built.matrix));
  p.objective = PlanObjective(
      {targetObjective("OuterTarget", voxelsOfMask(p.target), p.rx, 1.0, 0.97 * p.rx, 20.0,
                       1.04 * p.rx, 20.0),
       organAtRiskObjective("BODY-OuterTarget", voxelsOfMask(p.bodyOutsideTarget), 0.8 * p.rx,
                            1.0)});
  return p;
}

}  // namespace penumbra::optimise::test
