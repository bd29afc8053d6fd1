#include "core/beam_geometry.hpp"

#include <cmath>

#include "core/error.hpp"

namespace penumbra {

namespace {
constexpr double kPi = 3.14159265358979323846;

/// cos/sin of degrees exact at multiples of 90 deg, so the unit tests' source positions and the
/// beam axes of orthogonal fields have exact zeros (no 6e-17 leaking into voxel traversal).
void cosSinDeg(double deg, double& c, double& s) {
  const double r = std::fmod(deg, 360.0);
  const double q = (r < 0 ? r + 360.0 : r);
  if (q == 0) { c = 1; s = 0; return; }
  if (q == 90) { c = 0; s = 1; return; }
  if (q == 180) { c = -1; s = 0; return; }
  if (q == 270) { c = 0; s = -1; return; }
  c = std::cos(q * kPi / 180.0);
  s = std::sin(q * kPi / 180.0);
}
}  // namespace

Vec3 iecFixedToLps(Vec3 iec) { return {iec.x, -iec.z, iec.y}; }

BeamFrame makeBeamFrame(double gantryDeg, double couchDeg, Vec3 isocenter, double sadMm) {
  PENUMBRA_REQUIRE(std::isfinite(gantryDeg) && std::isfinite(couchDeg), InvalidArgument,
                   "beam angles must be finite");
  PENUMBRA_REQUIRE(std::isfinite(sadMm) && sadMm > 0, InvalidArgument,
                   "virtual source distance must be positive");
  double cg, sg, cc, sc;
  cosSinDeg(gantryDeg, cg, sg);
  cosSinDeg(couchDeg, cc, sc);
  // Gantry axes in the fixed system.
  const Vec3 zg{sg, 0, cg};   // towards the source
  const Vec3 xg{cg, 0, -sg};  // beam-limiting device X at collimator 0
  const Vec3 yg{0, 1, 0};
  // Into patient-support coordinates: R_z(-phi), the inverse of the couch's counter-clockwise
  // rotation (with cosSinDeg's exact values at multiples of 90 degrees).
  auto toSupport = [&](Vec3 v) { return Vec3{cc * v.x + sc * v.y, -sc * v.x + cc * v.y, v.z}; };
  BeamFrame f;
  f.sad = sadMm;
  f.isocenter = isocenter;
  const Vec3 zs = iecFixedToLps(toSupport(zg));
  f.u = iecFixedToLps(toSupport(xg));
  f.v = iecFixedToLps(toSupport(yg));
  f.w = -1.0 * zs;
  f.source = isocenter + sadMm * zs;
  return f;
}

}  // namespace penumbra
