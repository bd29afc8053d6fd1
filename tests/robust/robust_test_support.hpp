#pragma once
// Shared helpers of the robustness tests: a small seeded random phantom with a target, an organ
// at risk and the body as masks on its dose grid, and geometric masks.
#include <functional>
#include <memory>
#include <string>

#include "core/device.hpp"
#include "proton/proton_phantoms.hpp"
#include "robust/robustness.hpp"

namespace penumbra::robust::test {

#define ROBUST_REQUIRE_GPU()                                                              \
  do {                                                                                    \
    std::string why_;                                                                     \
    if (queryCudaDevices(&why_).empty()) GTEST_SKIP() << "no usable CUDA device: " << why_; \
  } while (0)

/// The mask on `grid` of the voxel centres where inside(p) holds (p: patient mm).
inline std::shared_ptr<Mask> maskWhere(const Grid& grid, const std::function<bool(Vec3)>& inside) {
  auto m = std::make_shared<Mask>(grid, std::uint8_t(0));
  for (int k = 0; k < grid.dims[2]; ++k)
    for (int j = 0; j < grid.dims[1]; ++j)
      for (int i = 0; i < grid.dims[0]; ++i)
        m->at(i, j, k) = inside(grid.indexToWorld(Vec3{double(i), double(j), double(k)})) ? 1 : 0;
  return m;
}

inline RobustStructure structureOf(std::string name, StructureKind kind, std::shared_ptr<Mask> mask) {
  RobustStructure s;
  s.name = std::move(name);
  s.kind = kind;
  s.mask = std::move(mask);
  return s;
}

/// proton::makeRandomPhantomCase(seed, dims) as a robustness request on the CPU: Target (the
/// phantom's target sphere), Organ (a sphere of the target's radius 3 mm beside it, organ at risk) and Body
/// (HU > -500, external); the scenarios are left empty (the default 21).
inline RobustnessRequest randomRequest(std::uint32_t seed, int dims = 24) {
  const proton::ProtonPhantomCase pc = proton::makeRandomPhantomCase(seed, dims);
  RobustnessRequest r;
  r.plan.ct = std::make_shared<CtVolume>(pc.ct);
  r.plan.beams = pc.beams;
  r.plan.doseGrid = pc.doseGrid;
  r.plan.backend = Backend::Cpu;
  const Grid& g = pc.doseGrid;
  const Vec3 c = pc.targetCenter;
  const double rad = pc.targetRadiusMm;
  r.structures.push_back(structureOf("Target", StructureKind::Target,
                                     maskWhere(g, [&](Vec3 p) { return norm(p - c) <= rad; })));
  const Vec3 organ = c + Vec3{2 * rad + 3, 0, 0};
  r.structures.push_back(structureOf("Organ", StructureKind::OrganAtRisk,
                                     maskWhere(g, [&](Vec3 p) { return norm(p - organ) <= rad; })));
  const CtVolume& ct = pc.ct;
  r.structures.push_back(structureOf("Body", StructureKind::External, maskWhere(g, [&](Vec3 p) {
                                       std::array<int, 3> q{};
                                       return ct.grid.worldToNearestIndex(p, q) && ct.at(q[0], q[1], q[2]) > -500;
                                     })));
  return r;
}

}  // namespace penumbra::robust::test
