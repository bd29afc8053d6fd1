// The scenario model (robust/scenario.hpp): the default and optional sets, their names and
// validation, the request of one scenario, and the scaled stopping power of a range error.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "core/error.hpp"
#include "proton/proton_phantoms.hpp"
#include "robust/scenario.hpp"

namespace penumbra::robust {
namespace {

std::set<std::string> namesOf(const std::vector<Scenario>& list) {
  std::set<std::string> names;
  for (const Scenario& s : list) names.insert(s.name);
  return names;
}

TEST(RobustScenarios, DefaultSetIsThreeRangeValuesTimesSevenShiftsNominalFirst) {
  const std::vector<Scenario> list = makeScenarios();
  ASSERT_EQ(list.size(), 21u);
  EXPECT_EQ(list[0].name, "nominal");
  EXPECT_TRUE(list[0].isNominal());
  EXPECT_EQ(namesOf(list).size(), 21u) << "names must be unique";
  std::map<double, int> perRange;
  std::map<std::string, int> perShift;
  for (const Scenario& s : list) {
    ++perRange[s.rangeErrorPercent];
    const double len = norm(s.shiftMm);
    EXPECT_TRUE(len == 0 || std::fabs(len - 3.0) < 1e-12) << s.name;
    // Axis shifts: exactly one non-zero component.
    const int axes = (s.shiftMm.x != 0) + (s.shiftMm.y != 0) + (s.shiftMm.z != 0);
    EXPECT_LE(axes, 1) << s.name;
    ++perShift[std::to_string(s.shiftMm.x) + "," + std::to_string(s.shiftMm.y) + "," +
               std::to_string(s.shiftMm.z)];
  }
  EXPECT_EQ(perRange, (std::map<double, int>{{-3.5, 7}, {0.0, 7}, {3.5, 7}}));
  EXPECT_EQ(perShift.size(), 7u);
  for (const auto& [shift, count] : perShift) EXPECT_EQ(count, 3) << shift;
  const std::set<std::string> names = namesOf(list);
  for (const char* n : {"range +3.5%", "range -3.5%", "shift +3 mm S", "shift -3 mm L",
                        "shift +3 mm P", "range -3.5% shift -3 mm L", "range +3.5% shift +3 mm S"})
    EXPECT_TRUE(names.count(n)) << n;
  // The names say what the numbers are: +L is +x (LPS), -S is -z.
  for (const Scenario& s : list) {
    if (s.name == "shift +3 mm L") {
      EXPECT_EQ(s.shiftMm.x, 3.0);
    }
    if (s.name == "shift -3 mm S") {
      EXPECT_EQ(s.shiftMm.z, -3.0);
    }
    if (s.name == "range -3.5%") {
      EXPECT_EQ(s.rangeErrorPercent, -3.5);
    }
  }
  // Grouped by range value, so that an evaluation keeps one SPR on the GPU per group.
  for (std::size_t k = 1; k < list.size(); ++k) {
    if (list[k].rangeErrorPercent == list[k - 1].rangeErrorPercent) continue;
    for (std::size_t j = k + 1; j < list.size(); ++j)
      EXPECT_NE(list[j].rangeErrorPercent, list[k - 1].rangeErrorPercent) << list[j].name;
  }
}

TEST(RobustScenarios, SeparateSetAndZeroMagnitudes) {
  ScenarioOptions o;
  o.combine = false;
  const std::vector<Scenario> separate = makeScenarios(o);
  ASSERT_EQ(separate.size(), 9u);
  EXPECT_TRUE(separate[0].isNominal());
  for (std::size_t k = 1; k < separate.size(); ++k)
    EXPECT_TRUE((separate[k].rangeErrorPercent == 0) != (norm(separate[k].shiftMm) == 0))
        << separate[k].name << ": a range error or a shift, never both";
  o = {};
  o.rangePercent = 0;
  EXPECT_EQ(makeScenarios(o).size(), 7u);
  o = {};
  o.setupMm = 0;
  EXPECT_EQ(makeScenarios(o).size(), 3u);
  o.rangePercent = 0;
  const std::vector<Scenario> only = makeScenarios(o);
  ASSERT_EQ(only.size(), 1u);
  EXPECT_TRUE(only[0].isNominal());
}

TEST(RobustScenarios, SphereDirectionsAreEvenAndOfTheSetupLength) {
  ScenarioOptions o;
  o.setupMm = 2.5;
  o.sphereDirections = 26;
  const std::vector<Scenario> list = makeScenarios(o);
  ASSERT_EQ(list.size(), 3u * 27u);
  EXPECT_EQ(namesOf(list).size(), list.size());
  Vec3 sum{};
  double closest = 1e9;
  std::vector<Vec3> dirs;
  for (const Scenario& s : list)
    if (s.rangeErrorPercent == 0 && !s.isNominal()) {
      EXPECT_NEAR(norm(s.shiftMm), 2.5, 1e-12) << s.name;
      for (const Vec3& d : dirs) closest = std::min(closest, norm(d - s.shiftMm));
      dirs.push_back(s.shiftMm);
      sum = sum + s.shiftMm;
    }
  ASSERT_EQ(dirs.size(), 26u);
  // A Fibonacci lattice spreads evenly: no two directions closer than half the spacing of an
  // ideal covering (4 pi / N per point), and the mean direction near the centre.
  EXPECT_GT(closest, 0.5 * 2.5 * std::sqrt(4 * M_PI / 26.0));
  EXPECT_LT(norm(sum) / 26.0, 0.1 * 2.5);
}

TEST(RobustScenarios, RefusesBadOptions) {
  const auto refuses = [](ScenarioOptions o, const std::string& words) {
    try {
      (void)makeScenarios(o);
      ADD_FAILURE() << "accepted: " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
      EXPECT_NE(e.message().find(words), std::string::npos) << e.message();
    }
  };
  ScenarioOptions o;
  o.rangePercent = -1;
  refuses(o, "range error -1");
  o.rangePercent = 50;
  refuses(o, "range error 50");
  o.rangePercent = std::nan("");
  refuses(o, "range error");
  o = {};
  o.setupMm = 50.5;
  refuses(o, "setup error 50.5");
  o.setupMm = INFINITY;
  refuses(o, "setup error");
  o = {};
  o.sphereDirections = 1001;
  refuses(o, "1001 shift directions");
  o.sphereDirections = -2;
  refuses(o, "-2 shift directions");
}

proton::ProtonDoseRequest boxRequest() {
  const proton::ProtonPhantomCase pc = proton::makeRandomPhantomCase(7, 16);
  return proton::phantomRequest(pc);
}

TEST(RobustScenarios, ApplyScenarioMovesEveryIsocentreAndKeepsTheVolumeForShifts) {
  const proton::ProtonDoseRequest nominal = boxRequest();
  ASSERT_GE(nominal.beams.size(), 2u);
  const Scenario shift{"shift", 0, Vec3{1.5, -2, 0.25}};
  const proton::ProtonDoseRequest moved = applyScenario(nominal, shift);
  EXPECT_EQ(moved.ct, nominal.ct) << "the same shared_ptr: the GPU cache keeps the CT";
  EXPECT_EQ(moved.spr, nullptr);
  ASSERT_EQ(moved.beams.size(), nominal.beams.size());
  for (std::size_t b = 0; b < moved.beams.size(); ++b) {
    const Vec3 d = moved.beams[b].isocenter - nominal.beams[b].isocenter;
    EXPECT_EQ(d.x, 1.5);
    EXPECT_EQ(d.y, -2.0);
    EXPECT_EQ(d.z, 0.25);
    EXPECT_EQ(moved.beams[b].gantryDeg, nominal.beams[b].gantryDeg);
    EXPECT_EQ(moved.beams[b].spotCount(), nominal.beams[b].spotCount());
  }
  EXPECT_TRUE(moved.doseGrid.sameGeometry(nominal.doseGrid));

  const Scenario range{"range", 3.5, Vec3{}};
  const proton::ProtonDoseRequest scaled = applyScenario(nominal, range);
  EXPECT_EQ(scaled.ct, nullptr) << "the scaled SPR replaces the CT";
  ASSERT_NE(scaled.spr, nullptr);
  EXPECT_EQ(scaled.spr->grid.dims, nominal.ct->grid.dims);
  for (std::size_t b = 0; b < scaled.beams.size(); ++b)
    EXPECT_EQ(norm(scaled.beams[b].isocenter - nominal.beams[b].isocenter), 0.0);
  // A volume passed in is used as it is (the evaluation makes one per range value).
  const auto mine = scaledStoppingPower(nominal, 3.5);
  EXPECT_EQ(applyScenario(nominal, range, mine).spr, mine);
  // ... but not one of another grid.
  auto wrong = std::make_shared<Volume<float>>(proton::makeAxisGrid({4, 4, 4}, {1, 1, 1}, {0, 0, 0}), 1.0f);
  EXPECT_THROW((void)applyScenario(nominal, range, wrong), Error);
  EXPECT_THROW((void)applyScenario(nominal, Scenario{"bad", 0, Vec3{NAN, 0, 0}}), Error);
}

TEST(RobustScenarios, ScaledStoppingPowerIsTheEnginesSprTimesTheFactor) {
  const proton::ProtonDoseRequest nominal = boxRequest();
  const Volume<float> reference = proton::sprOfCt(*nominal.ct);
  // 0 %: the engine's own conversion, bit for bit (the CT path's HU -> SPR table in float).
  const auto same = scaledStoppingPower(nominal, 0);
  ASSERT_EQ(same->data.size(), reference.data.size());
  EXPECT_EQ(0, std::memcmp(same->data.data(), reference.data.data(), reference.data.size() * sizeof(float)));
  const auto up = scaledStoppingPower(nominal, 3.5), down = scaledStoppingPower(nominal, -3.5);
  bool anyTissue = false;
  for (std::size_t v = 0; v < reference.data.size(); ++v) {
    EXPECT_EQ(up->data[v], float(double(reference.data[v]) * 1.035)) << v;
    EXPECT_EQ(down->data[v], float(double(reference.data[v]) * 0.965)) << v;
    anyTissue |= reference.data[v] > 0.5f;
  }
  EXPECT_TRUE(anyTissue);
  // From an SPR volume too, and the same values as from the CT.
  proton::ProtonDoseRequest fromSpr = nominal;
  fromSpr.spr = std::make_shared<Volume<float>>(reference);
  fromSpr.ct = nullptr;
  const auto up2 = scaledStoppingPower(fromSpr, 3.5);
  EXPECT_EQ(0, std::memcmp(up2->data.data(), up->data.data(), up->data.size() * sizeof(float)));
  EXPECT_THROW((void)scaledStoppingPower(nominal, 60), Error);
  EXPECT_THROW((void)scaledStoppingPower(proton::ProtonDoseRequest{}, 1), Error);
}

}  // namespace
}  // namespace penumbra::robust
