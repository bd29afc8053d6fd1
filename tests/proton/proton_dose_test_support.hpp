#pragma once
// Shared helpers of the proton dose-engine tests: slab phantoms in SPR, single-spot plans, and
// laterally integrated depth-dose curves measured from a 3D dose.
#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <vector>

#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"

namespace penumbra::proton::test {

/// Water phantom as SPR: lateral x, z in [-40, 40] mm at 2 mm, depth y from -120 to 200 mm at
/// 1 mm (voxel edges on whole mm); air (SPR 0.001) for y < -100 mm, water behind. The slab
/// [slabY0, slabY1) (mm, on voxel edges) gets SPR slabSpr.
inline std::shared_ptr<Volume<float>> slabPhantom(double slabY0 = 0, double slabY1 = 0,
                                                  float slabSpr = 1.0f) {
  auto v = std::make_shared<Volume<float>>(makeAxisGrid({41, 320, 41}, {2, 1, 2}, {-40, -119.5, -40}));
  for (int k = 0; k < 41; ++k)
    for (int j = 0; j < 320; ++j)
      for (int i = 0; i < 41; ++i) {
        const double y = -119.5 + j;
        float s = y < -100 ? 0.001f : 1.0f;
        if (y >= slabY0 && y < slabY1) s = slabSpr;
        v->at(i, j, k) = s;
      }
  return v;
}

/// The physics dose grid: the phantom's lateral grid, 0.5 mm along the depth.
inline Grid physicsDoseGrid() { return makeAxisGrid({41, 640, 41}, {2, 0.5, 2}, {-40, -119.75, -40}); }

/// One spot of weight 1 on the axis, gantry 0 (beam along +y), isocentre at the origin.
inline ProtonBeam singleSpotBeam(double energyMeV, double weight = 1.0) {
  ProtonBeam b;
  b.name = "spot";
  b.isocenter = {0, 0, 0};
  b.layers.push_back({energyMeV, {{0, 0, weight}}});
  return b;
}

inline ProtonDoseRequest physicsRequest(std::shared_ptr<Volume<float>> spr, ProtonBeam beam) {
  ProtonDoseRequest r;
  r.spr = std::move(spr);
  r.beams = {std::move(beam)};
  r.doseGrid = physicsDoseGrid();
  r.backend = Backend::Cpu;
  r.params.sampling.lateralSpacingMm = 1.0;
  r.params.sampling.depthStepMm = 0.5;
  return r;
}

/// Dose integrated over x-z planes of an axis-aligned dose grid, per y index [Gy mm^2].
inline std::vector<double> laterallyIntegrated(const Volume<float>& d) {
  std::vector<double> out(std::size_t(d.grid.dims[1]), 0.0);
  const double area = d.grid.spacing.x * d.grid.spacing.z;
  for (int k = 0; k < d.grid.dims[2]; ++k)
    for (int j = 0; j < d.grid.dims[1]; ++j)
      for (int i = 0; i < d.grid.dims[0]; ++i) out[std::size_t(j)] += d.at(i, j, k) * area;
  return out;
}

/// Position (mm, along y) beyond the maximum where the curve falls to `fraction` of it.
inline double distalFallPosition(const std::vector<double>& c, double y0, double dy,
                                 double fraction = 0.8) {
  const auto it = std::max_element(c.begin(), c.end());
  const double level = fraction * *it;
  for (std::size_t j = std::size_t(it - c.begin()); j + 1 < c.size(); ++j)
    if (c[j] >= level && c[j + 1] < level)
      return y0 + dy * (double(j) + (c[j] - level) / (c[j] - c[j + 1]));
  return NAN;
}

inline double maxOf(std::span<const float> v) {
  return v.empty() ? 0.0 : double(*std::max_element(v.begin(), v.end()));
}

}  // namespace penumbra::proton::test
