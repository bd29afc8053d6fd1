#include "proton/proton_phantoms.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/calibration.hpp"
#include "core/error.hpp"
#include "proton/beam_geometry.hpp"
#include "proton/proton_dose.hpp"
#include "proton/physics/bragg_kleeman.hpp"
#include "proton/proton_tables.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra::proton {

Grid makeAxisGrid(std::array<int, 3> dims, Vec3 spacing, Vec3 origin) {
  Grid g;
  g.dims = dims;
  g.spacing = spacing;
  g.origin = origin;
  return g;
}

Volume<float> sprOfCt(const CtVolume& ct) {
  const CalibrationCurve c =
      CalibrationCurve::load(resourceDir() + "/calibration/hu_to_spr_matrad_default.csv");
  Volume<float> spr(ct.grid);
  for (std::size_t v = 0; v < spr.data.size(); ++v) spr.data[v] = float(c(double(ct.data[v])));
  return spr;
}

ProtonBeam planBeamOnSphere(const Volume<float>& spr, std::string name, double gantryDeg,
                            double couchDeg, Vec3 c, double radius, int layers,
                            double spotSpacing, double margin, double sad) {
  PENUMBRA_REQUIRE(layers >= 1 && spotSpacing > 0 && radius > 0, InvalidArgument,
                   "planBeamOnSphere: bad layer count, spot spacing or radius");
  ProtonBeam beam;
  beam.name = std::move(name);
  beam.gantryDeg = gantryDeg;
  beam.couchDeg = couchDeg;
  beam.isocenter = c;
  beam.virtualSourceDistanceMm = sad;
  const BeamFrame f = makeBeamFrame(beam);
  std::vector<ProtonSpot> spots;
  double wMin = 1e300, wMax = 0;
  const double reach = radius + margin;
  const int n = int(std::floor(reach / spotSpacing));
  for (int jb = -n; jb <= n; ++jb)
    for (int ia = -n; ia <= n; ++ia) {
      const double a = ia * spotSpacing, b = jb * spotSpacing;
      if (a * a + b * b > reach * reach) continue;
      spots.push_back({a, b, 1.0});
      // Chord of the ray through the sphere (clamped to the sphere's edge for margin spots).
      const Vec3 dir = normalized(f.isocenter + a * f.u + b * f.v - f.source);
      const Vec3 oc = f.source - c;
      const double bq = dot(oc, dir), cq = dot(oc, oc) - radius * radius;
      const double disc = std::max(0.0, bq * bq - cq);
      const double t1 = -bq - std::sqrt(disc), t2 = -bq + std::sqrt(disc);
      const double w1 = radiologicalPath(spr, Ray{f.source, dir, t1}, DdaVariant::BranchFree);
      const double w2 = radiologicalPath(spr, Ray{f.source, dir, t2}, DdaVariant::BranchFree);
      wMin = std::min(wMin, w1);
      wMax = std::max(wMax, w2);
    }
  for (int l = 0; l < layers; ++l) {
    const double wepl = layers == 1 ? wMax : wMax - (wMax - wMin) * double(l) / double(layers - 1);
    EnergyLayer layer;
    layer.energyMeV = std::clamp(energyForRange(std::max(wepl, 1.0) / 10.0), 50.0, 250.0);
    layer.spots = spots;
    beam.layers.push_back(std::move(layer));
  }
  return beam;
}

ProtonPhantomCase makeWaterPhantomCase() {
  ProtonPhantomCase pc;
  pc.name = "water";
  // 200 x 300 x 200 mm (x, y = depth for gantry 0, z), 2 mm voxels, water from y = -100 mm.
  pc.ct = CtVolume(makeAxisGrid({100, 160, 100}, {2, 2, 2}, {-99, -119, -99}), -1000);
  for (int k = 0; k < 100; ++k)
    for (int j = 0; j < 160; ++j)
      for (int i = 0; i < 100; ++i)
        if (pc.ct.grid.indexToWorld(Vec3{double(i), double(j), double(k)}).y > -100)
          pc.ct.at(i, j, k) = 0;
  pc.targetCenter = {0, 0, 0};
  pc.targetRadiusMm = 30;
  pc.beams.push_back(planBeamOnSphere(sprOfCt(pc.ct), "AP", 0, 0, pc.targetCenter, 30, 10, 6));
  pc.doseGrid = pc.ct.grid;
  return pc;
}

ProtonPhantomCase makeBoxPhantomCase() {
  ProtonPhantomCase pc;
  pc.name = "boxphantom";
  pc.ct = CtVolume(makeAxisGrid({160, 160, 160}, {3, 3, 3}, {-240, -240, -240}), -1024);
  for (int k = 39; k <= 119; ++k)
    for (int j = 39; j <= 119; ++j)
      for (int i = 39; i <= 119; ++i) pc.ct.at(i, j, k) = 0;
  pc.targetCenter = {-3, -3, -3};      // voxel 79
  pc.targetRadiusMm = 31.5;            // the 63-mm cube's inscribed sphere
  const Volume<float> spr = sprOfCt(pc.ct);
  pc.beams.push_back(planBeamOnSphere(spr, "G0", 0, 0, pc.targetCenter, 31.5, 5, 6));
  pc.beams.push_back(planBeamOnSphere(spr, "G90", 90, 0, pc.targetCenter, 31.5, 5, 6));
  pc.doseGrid = pc.ct.grid;
  return pc;
}

ProtonPhantomCase makeHeadNeckCase(double h) {
  PENUMBRA_REQUIRE(h > 0, InvalidArgument, "head-and-neck phantom: spacing must be positive");
  ProtonPhantomCase pc;
  pc.name = "hn-2field";
  const int nx = int(std::lround(200 / h)), ny = nx, nz = int(std::lround(150 / h));
  const Vec3 origin{-100 + h / 2, -100 + h / 2, -75 + h / 2};
  pc.ct = CtVolume(makeAxisGrid({nx, ny, nz}, {h, h, h}, origin), -1000);
  const Vec3 semi{75, 95, 70}, cavity{0, -55, 10};
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < ny; ++j)
      for (int i = 0; i < nx; ++i) {
        const Vec3 p = pc.ct.grid.indexToWorld(Vec3{double(i), double(j), double(k)});
        auto inside = [&](double shrink) {
          const double x = p.x / (semi.x - shrink), y = p.y / (semi.y - shrink),
                       z = p.z / (semi.z - shrink);
          return x * x + y * y + z * z <= 1.0;
        };
        std::int16_t hu = -1000;
        if (inside(0)) hu = inside(6) ? 40 : 1000;  // soft tissue inside a 6-mm bone shell
        if (norm(p - cavity) <= 15) hu = -1000;     // air cavity (sinus)
        pc.ct.at(i, j, k) = hu;
      }
  pc.targetCenter = {10, 5, 0};
  pc.targetRadiusMm = 30;
  const Volume<float> spr = sprOfCt(pc.ct);
  pc.beams.push_back(planBeamOnSphere(spr, "LAO", 45, 0, pc.targetCenter, 30, 50, 5.5));
  pc.beams.push_back(planBeamOnSphere(spr, "RAO", 315, 0, pc.targetCenter, 30, 50, 5.5));
  pc.doseGrid = pc.ct.grid;
  return pc;
}

ProtonPhantomCase makeRandomPhantomCase(std::uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> U(0, 1);
  ProtonPhantomCase pc;
  pc.name = "random-" + std::to_string(seed);
  const double h = 2.5;
  const Vec3 origin{-(n - 1) * h / 2, -(n - 1) * h / 2, -(n - 1) * h / 2};
  pc.ct = CtVolume(makeAxisGrid({n, n, n}, {h, h, h}, origin), -1000);
  const int lo = n / 8, hi = n - 1 - n / 8;
  for (int k = lo; k <= hi; ++k)
    for (int j = lo; j <= hi; ++j)
      for (int i = lo; i <= hi; ++i) pc.ct.at(i, j, k) = 0;
  for (int box = 0; box < 12; ++box) {
    int b0[3], b1[3];
    for (int a = 0; a < 3; ++a) {
      b0[a] = lo + int(U(rng) * (hi - lo));
      b1[a] = std::min(hi, b0[a] + 1 + int(U(rng) * n / 4));
    }
    const auto hu = std::int16_t(-1000 + int(U(rng) * 2500));
    for (int k = b0[2]; k <= b1[2]; ++k)
      for (int j = b0[1]; j <= b1[1]; ++j)
        for (int i = b0[0]; i <= b1[0]; ++i) pc.ct.at(i, j, k) = hu;
  }
  pc.targetCenter = {0, 0, 0};
  pc.targetRadiusMm = n * h / 8;
  const double half = (hi - lo) * h / 2;  // half the body's width
  for (int b = 0; b < 2; ++b) {
    ProtonBeam beam;
    beam.name = "random" + std::to_string(b);
    beam.gantryDeg = 360.0 * U(rng);
    beam.couchDeg = b == 1 ? 90.0 * (U(rng) - 0.5) : 0.0;
    beam.isocenter = {h * (U(rng) - 0.5), h * (U(rng) - 0.5), h * (U(rng) - 0.5)};
    beam.virtualSourceDistanceMm = 1500 + 1000 * U(rng);
    for (int l = 0; l < 3; ++l) {
      EnergyLayer layer;
      // Ranges from a third of the body to beyond it, so some peaks sit inside.
      layer.energyMeV = energyForRange((0.6 + 1.4 * U(rng)) * half / 10.0);
      layer.energyMeV = std::clamp(layer.energyMeV, 50.0, 250.0);
      const int spots = 5 + int(U(rng) * 20);
      for (int s = 0; s < spots; ++s)
        layer.spots.push_back({(U(rng) - 0.5) * half, (U(rng) - 0.5) * half, 0.1 + U(rng)});
      beam.layers.push_back(std::move(layer));
    }
    pc.beams.push_back(std::move(beam));
  }
  pc.doseGrid = pc.ct.grid;
  return pc;
}

ProtonDoseRequest phantomRequest(const ProtonPhantomCase& pc, Backend backend) {
  ProtonDoseRequest r;
  r.ct = std::make_shared<CtVolume>(pc.ct);
  r.beams = pc.beams;
  r.doseGrid = pc.doseGrid;
  r.backend = backend;
  return r;
}

spmv::HalfCsr phantomDoseMatrix(const ProtonPhantomCase& pc) {
  ProtonDoseRequest r = phantomRequest(pc, Backend::Cpu);
  r.params.computeDoseMatrix = true;
  ProtonDoseResult res = computeProtonDose(r);
  if (!res.matrix) PENUMBRA_THROW(Internal, "the proton engine returned no dose matrix for " + pc.name);
  return spmv::HalfCsr(std::move(static_cast<spmv::HalfCsr&>(*res.matrix)));
}

}  // namespace penumbra::proton
