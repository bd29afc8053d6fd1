// Error scenarios of a proton plan (scenario.hpp): the scenario set, the changed request of one
// scenario, and the scaled stopping-power volume of a range error.
#include "robust/scenario.hpp"

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/parallel_for.hpp"
#include "proton/prepare_cache.hpp"
#include "proton/proton_backend.hpp"

namespace penumbra::robust {

namespace {

/// "+3.5" / "-3.5": the sign always written, so "range +3.5%" and "range -3.5%" read alike.
/// (One format, not "+" + formatG(v): GCC 12 warns falsely on "literal" + std::string.)
std::string signedG(double v) { return formatNumber("%+g", v); }

std::string rangeName(double r) { return "range " + signedG(r) + "%"; }

struct Shift {
  std::string name;  ///< "shift +3 mm S"
  Vec3 mm;
};

/// The setup shifts of `o` (without the zero shift): +-s along L, P, S, or N directions of a
/// Fibonacci lattice on the sphere (even spacing without clustering at the poles).
std::vector<Shift> setupShifts(const ScenarioOptions& o) {
  std::vector<Shift> out;
  const double s = o.setupMm;
  if (!(s > 0)) return out;
  if (o.sphereDirections == 0) {
    const char* axes[3] = {"L", "P", "S"};
    for (int a = 0; a < 3; ++a)
      for (double sign : {1.0, -1.0}) {
        Vec3 v{};
        v[a] = sign * s;
        out.push_back({"shift " + signedG(sign * s) + " mm " + axes[a], v});
      }
    return out;
  }
  const int n = o.sphereDirections;
  const double golden = M_PI * (3.0 - std::sqrt(5.0));  // golden angle [rad]
  for (int i = 0; i < n; ++i) {
    const double z = 1.0 - 2.0 * (double(i) + 0.5) / double(n);
    const double rho = std::sqrt(std::max(0.0, 1.0 - z * z));
    const double phi = golden * double(i);
    out.push_back(
        {"shift " + formatG(s) + " mm dir " + std::to_string(i + 1) + "/" + std::to_string(n),
         Vec3{s * rho * std::cos(phi), s * rho * std::sin(phi), s * z}});
  }
  return out;
}

}  // namespace

std::vector<Scenario> makeScenarios(const ScenarioOptions& o) {
  PENUMBRA_REQUIRE(std::isfinite(o.rangePercent) && o.rangePercent >= 0 &&
                       o.rangePercent < kMaxRangeErrorPercent,
                   InvalidArgument,
                   "scenarios: range error " + formatG(o.rangePercent) + " % is outside [0, " +
                       formatG(kMaxRangeErrorPercent) +
                       ") % (a magnitude: the set holds -r and +r)");
  PENUMBRA_REQUIRE(std::isfinite(o.setupMm) && o.setupMm >= 0 && o.setupMm <= kMaxSetupErrorMm,
                   InvalidArgument,
                   "scenarios: setup error " + formatG(o.setupMm) + " mm is outside [0, " +
                       formatG(kMaxSetupErrorMm) + "] mm (a magnitude: the set holds +s and -s)");
  PENUMBRA_REQUIRE(o.sphereDirections >= 0 && o.sphereDirections <= kMaxSphereDirections,
                   InvalidArgument,
                   "scenarios: " + std::to_string(o.sphereDirections) +
                       " shift directions on the sphere; expected 0 (the six axis directions) "
                       "to " + std::to_string(kMaxSphereDirections));
  std::vector<double> ranges{0};
  if (o.rangePercent > 0) ranges = {0, -o.rangePercent, o.rangePercent};
  const std::vector<Shift> shifts = setupShifts(o);

  std::vector<Scenario> out;
  out.push_back({"nominal", 0, Vec3{}});
  if (o.combine) {
    // Grouped by range value (nominal group first): the evaluation runs them in this order, so
    // the GPU cache holds one SPR per group.
    for (double r : ranges)
      for (std::size_t k = 0; k <= shifts.size(); ++k) {
        if (r == 0 && k == 0) continue;  // the nominal, already first
        Scenario s;
        s.rangeErrorPercent = r;
        if (k > 0) s.shiftMm = shifts[k - 1].mm;
        s.name = r == 0 ? shifts[k - 1].name
                        : k == 0 ? rangeName(r) : rangeName(r) + " " + shifts[k - 1].name;
        out.push_back(std::move(s));
      }
  } else {
    for (std::size_t i = 1; i < ranges.size(); ++i) out.push_back({rangeName(ranges[i]), ranges[i], Vec3{}});
    for (const Shift& sh : shifts) out.push_back({sh.name, 0, sh.mm});
  }
  return out;
}

std::shared_ptr<const Volume<float>> scaledStoppingPower(const proton::ProtonDoseRequest& nominal,
                                                        double rangeErrorPercent) {
  PENUMBRA_REQUIRE(nominal.spr || nominal.ct, InvalidArgument,
                   "range scenario: the plan has no CT or SPR volume");
  PENUMBRA_REQUIRE(
      std::isfinite(rangeErrorPercent) && std::fabs(rangeErrorPercent) < 50, InvalidArgument,
      "range scenario: range error " + formatG(rangeErrorPercent) + " % is outside (-50, 50) %");
  const double factor = 1.0 + rangeErrorPercent / 100.0;
  const Grid& grid = nominal.spr ? nominal.spr->grid : nominal.ct->grid;
  if (nominal.spr) nominal.spr->validate();
  else nominal.ct->validate();
  auto out = std::make_shared<Volume<float>>(grid);
  // A CT goes through the engine's own HU -> SPR table (float), so that a 0 % scaling gives the
  // SPR the engine itself would have used, bit for bit.
  std::shared_ptr<const std::vector<float>> table;
  if (!nominal.spr)
    table = proton::detail::makeSprLut(nominal.hlut.points().empty()
                                         ? proton::detail::defaultHuToSprCurve()
                                         : nominal.hlut);
  const float* lut = table ? table->data() : nullptr;
  const std::size_t n = out->data.size();
  const std::size_t chunk = std::size_t(1) << 18;
  float* dst = out->data.data();
  const float* spr = nominal.spr ? nominal.spr->data.data() : nullptr;
  const std::int16_t* hu = nominal.ct ? nominal.ct->data.data() : nullptr;
  parallelFor((n + chunk - 1) / chunk, resolveThreads(nominal.params.cpuThreads), JobControl{},
              [&](std::size_t c, int) {
                const std::size_t end = std::min(n, (c + 1) * chunk);
                for (std::size_t v = c * chunk; v < end; ++v) {
                  const float s = spr ? spr[v] : lut[std::size_t(int(hu[v]) + 32768)];
                  dst[v] = float(double(s) * factor);
                }
              });
  return out;
}

proton::ProtonDoseRequest applyScenario(const proton::ProtonDoseRequest& nominal,
                                        const Scenario& s,
                                        std::shared_ptr<const Volume<float>> scaledSpr) {
  PENUMBRA_REQUIRE(std::isfinite(s.shiftMm.x) && std::isfinite(s.shiftMm.y) &&
                       std::isfinite(s.shiftMm.z) && std::isfinite(s.rangeErrorPercent),
                   InvalidArgument, "scenario '" + s.name + "': non-finite range error or shift");
  proton::ProtonDoseRequest r = nominal;
  for (proton::ProtonBeam& b : r.beams) b.isocenter = b.isocenter + s.shiftMm;
  if (s.rangeErrorPercent != 0) {
    if (scaledSpr) {
      const Grid& g = nominal.spr ? nominal.spr->grid : nominal.ct ? nominal.ct->grid : Grid{};
      PENUMBRA_REQUIRE(scaledSpr->grid.sameGeometry(g) && scaledSpr->grid.dims == g.dims,
                       InvalidArgument,
                       "scenario '" + s.name + "': the scaled SPR is not on the plan's CT grid");
    } else {
      scaledSpr = scaledStoppingPower(nominal, s.rangeErrorPercent);
    }
    // An empty dose grid means "the CT grid": keep meaning the same grid now that the SPR
    // replaces the CT (it has the CT's grid).
    r.spr = std::move(scaledSpr);
    r.ct = nullptr;
  }
  return r;
}

}  // namespace penumbra::robust
