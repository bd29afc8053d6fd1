// evaluateRobustness (robust/robustness.hpp) on the CPU: the invariants of its outputs on a
// seeded random heterogeneous phantom (voxel-wise order, worst case, bands around the nominal
// DVH, the table's worst/best against the scenarios' values), the scenario list it evaluates,
// validate() errors, cancel and the memory estimate.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "core/error.hpp"
#include "robust/robustness.hpp"
#include "robust_test_support.hpp"

namespace penumbra::robust {
namespace {

using test::randomRequest;

double metricOf(const RobustnessRow& row, const ScenarioDvh& d) {
  if (row.metric == "D98") return d.d98Gy;
  if (row.metric == "D95") return d.d95Gy;
  if (row.metric == "D2") return d.d2Gy;
  if (row.metric == "Dmax") return d.maxGy;
  if (row.metric == "Dmean") return d.meanGy;
  ADD_FAILURE() << "unknown metric " << row.metric;
  return NAN;
}

/// One evaluation of the default 21 scenarios, shared by the invariant tests (a few seconds).
const RobustnessResult& defaultEvaluation(RobustnessRequest* requestOut = nullptr) {
  static const RobustnessRequest request = randomRequest(1234);
  static const RobustnessResult result = evaluateRobustness(request);
  if (requestOut) *requestOut = request;
  return result;
}

TEST(RobustEvaluation, VoxelWiseVolumesAreOrderedAndTheWorstCaseIsTheRightEnd) {
  RobustnessRequest req;
  const RobustnessResult& r = defaultEvaluation(&req);
  ASSERT_EQ(r.scenarios.size(), 21u);
  EXPECT_TRUE(r.scenarios[0].isNominal());
  EXPECT_EQ(r.backend, Backend::Cpu);
  EXPECT_FALSE(r.device.empty());
  // The nominal is the engine's nominal dose, bit for bit.
  const proton::ProtonDoseResult direct = proton::computeProtonDose(req.plan);
  ASSERT_EQ(r.nominal.dose.data.size(), direct.dose.data.size());
  EXPECT_EQ(0, std::memcmp(r.nominal.dose.data.data(), direct.dose.data.data(),
                           direct.dose.data.size() * sizeof(float)));
  const std::size_t n = direct.dose.data.size();
  std::vector<bool> inTarget(n, false);
  for (const RobustStructure& s : req.structures)
    if (s.kind == StructureKind::Target)
      for (std::size_t v = 0; v < n; ++v) inTarget[v] = inTarget[v] || s.mask->data[v];
  float top = 0, widest = 0;
  for (std::size_t v = 0; v < n; ++v) {
    const float nom = r.nominal.dose.data[v], mn = r.minimum.dose.data[v], mx = r.maximum.dose.data[v];
    const float mean = r.mean.dose.data[v], worst = r.worstCase.dose.data[v], sp = r.spread.dose.data[v];
    ASSERT_TRUE(std::isfinite(mean) && std::isfinite(worst)) << v;
    ASSERT_LE(mn, nom) << v;
    ASSERT_LE(nom, mx) << v;
    ASSERT_LE(mn, mean) << v;
    ASSERT_LE(mean, mx) << v;
    ASSERT_EQ(sp, mx - mn) << v;
    ASSERT_GE(sp, 0.f) << v;
    ASSERT_EQ(worst, inTarget[v] ? mn : mx) << v;
    if (inTarget[v]) {
      ASSERT_LE(worst, nom) << v;
    } else {
      ASSERT_GE(worst, nom) << v;
    }
    top = std::max(top, nom);
    widest = std::max(widest, sp);
  }
  EXPECT_GT(top, 0.f);
  EXPECT_GT(widest, 0.01f * top) << "the scenarios must differ somewhere";
  EXPECT_EQ(r.worstCase.unit, "Gy");
  EXPECT_NE(r.worstCase.label.find("worst case"), std::string::npos);
  ASSERT_EQ(r.scenarioMs.size(), 21u);
  for (double ms : r.scenarioMs) EXPECT_GT(ms, 0);
  EXPECT_GE(r.elapsedMs, *std::max_element(r.scenarioMs.begin(), r.scenarioMs.end()));
}

TEST(RobustEvaluation, NominalDvhLiesInsideItsBandAndStatisticsAreExact) {
  RobustnessRequest req;
  const RobustnessResult& r = defaultEvaluation(&req);
  ASSERT_EQ(r.structures.size(), req.structures.size());
  for (std::size_t s = 0; s < r.structures.size(); ++s) {
    const StructureRobustness& sr = r.structures[s];
    EXPECT_EQ(sr.name, req.structures[s].name);
    EXPECT_EQ(sr.kind, req.structures[s].kind);
    std::vector<double> d;
    for (std::size_t v = 0; v < req.structures[s].mask->data.size(); ++v)
      if (req.structures[s].mask->data[v]) d.push_back(r.nominal.dose.data[v]);
    ASSERT_EQ(sr.voxels, std::int64_t(d.size())) << sr.name;
    ASSERT_GT(d.size(), 0u) << sr.name;
    ASSERT_EQ(sr.scenarios.size(), 21u);
    const std::vector<double>& nominal = sr.scenarios[0].volumePercent;
    ASSERT_EQ(sr.bandLowPercent.size(), nominal.size());
    ASSERT_EQ(sr.bandHighPercent.size(), nominal.size());
    EXPECT_EQ(nominal.front(), 100.0);
    EXPECT_EQ(nominal.back(), 0.0);
    for (std::size_t b = 0; b < nominal.size(); ++b) {
      ASSERT_LE(sr.bandLowPercent[b], nominal[b]) << sr.name << " bin " << b;
      ASSERT_GE(sr.bandHighPercent[b], nominal[b]) << sr.name << " bin " << b;
      if (b > 0) {
        ASSERT_LE(nominal[b], nominal[b - 1]);
      }
      for (const ScenarioDvh& k : sr.scenarios) ASSERT_EQ(k.volumePercent.size(), nominal.size());
    }
    // The nominal's statistics from its voxels.
    std::sort(d.begin(), d.end(), std::greater<double>());
    double sum = 0;
    for (double x : d) sum += x;
    const ScenarioDvh& st = sr.scenarios[0];
    EXPECT_EQ(st.maxGy, d.front());
    EXPECT_EQ(st.minGy, d.back());
    EXPECT_NEAR(st.meanGy, sum / double(d.size()), 1e-9 * (1 + d.front()));
    const auto exact = [&](double f) { return d[std::size_t(std::max(0.0, std::ceil(f * double(d.size())) - 1))]; };
    EXPECT_LE(std::fabs(st.d95Gy - exact(0.95)), sr.binWidthGy) << sr.name;
    EXPECT_LE(std::fabs(st.d2Gy - exact(0.02)), sr.binWidthGy) << sr.name;
  }
}

TEST(RobustEvaluation, TableRowsAreTheScenariosWorstAndBest) {
  RobustnessRequest req;
  const RobustnessResult& r = defaultEvaluation(&req);
  ASSERT_EQ(r.table.size(), 3 * r.structures.size());
  for (const RobustnessRow& row : r.table) {
    const auto it = std::find_if(r.structures.begin(), r.structures.end(),
                                 [&](const StructureRobustness& s) { return s.name == row.structure; });
    ASSERT_NE(it, r.structures.end());
    const bool target = it->kind == StructureKind::Target;
    if (row.metric != "Dmean") {
      EXPECT_EQ(row.metric == "D98" || row.metric == "D95", target) << row.structure << " " << row.metric;
    }
    EXPECT_EQ(row.nominalGy, metricOf(row, it->scenarios[0]));
    ASSERT_GE(row.worstScenario, 0);
    ASSERT_LT(row.worstScenario, 21);
    EXPECT_EQ(row.worstGy, metricOf(row, it->scenarios[std::size_t(row.worstScenario)]));
    for (const ScenarioDvh& k : it->scenarios) {
      const double v = metricOf(row, k);
      const bool between = target ? row.worstGy <= v && v <= row.bestGy : row.bestGy <= v && v <= row.worstGy;
      EXPECT_TRUE(between) << row.structure << " " << row.metric;
    }
    EXPECT_TRUE(std::isnan(row.limitGy));
    EXPECT_FALSE(row.violated);
  }
}

TEST(RobustEvaluation, LimitsFlagTheWorstValue) {
  RobustnessRequest req = randomRequest(77, 16);
  ScenarioOptions o;
  o.combine = false;
  req.scenarios = makeScenarios(o);
  const RobustnessResult free = evaluateRobustness(req);
  const auto rowOf = [](const RobustnessResult& r, const std::string& s, const std::string& m) {
    for (const RobustnessRow& row : r.table)
      if (row.structure == s && row.metric == m) return row;
    ADD_FAILURE() << "no row " << s << " " << m;
    return RobustnessRow{};
  };
  const RobustnessRow d95 = rowOf(free, "Target", "D95"), dmax = rowOf(free, "Organ", "Dmax");
  ASSERT_LT(d95.worstGy, d95.nominalGy);
  // Target: a limit between the worst and the nominal D95 is broken by the worst only.
  req.structures[0].minGy = 0.5 * (d95.worstGy + d95.nominalGy);
  req.structures[1].maxGy = 2 * dmax.worstGy + 1;  // far above: kept
  const RobustnessResult limited = evaluateRobustness(req);
  EXPECT_TRUE(rowOf(limited, "Target", "D95").violated);
  EXPECT_EQ(rowOf(limited, "Target", "D95").limitGy, req.structures[0].minGy);
  EXPECT_TRUE(std::isnan(rowOf(limited, "Target", "Dmean").limitGy));
  EXPECT_FALSE(rowOf(limited, "Organ", "Dmax").violated);
  EXPECT_EQ(rowOf(limited, "Organ", "D2").limitGy, req.structures[1].maxGy);
  req.structures[1].maxGy = 0.5 * dmax.worstGy;
  EXPECT_TRUE(rowOf(evaluateRobustness(req), "Organ", "Dmax").violated);
}

TEST(RobustEvaluation, TheNominalIsAddedOrMovedFirstAndNoStructuresStillGiveVolumes) {
  RobustnessRequest req = randomRequest(5, 16);
  req.structures.clear();
  const Scenario a{"a shift", 0, Vec3{2, 0, 0}}, b{"a range", -2, Vec3{}};
  req.scenarios = {a, Scenario{"centre", 0, Vec3{}}, b};
  RobustnessResult r = evaluateRobustness(req);
  ASSERT_EQ(r.scenarios.size(), 3u);
  EXPECT_EQ(r.scenarios[0].name, "centre");
  EXPECT_EQ(r.scenarios[1].name, "a shift");
  EXPECT_EQ(r.scenarios[2].name, "a range");
  EXPECT_TRUE(r.table.empty());
  EXPECT_TRUE(r.structures.empty());
  ASSERT_EQ(r.worstCase.dose.data.size(), req.plan.doseGrid.voxelCount());
  // Without targets the worst case is the maximum everywhere.
  EXPECT_EQ(r.worstCase.dose.data, r.maximum.dose.data);
  req.scenarios = {a, b};
  r = evaluateRobustness(req);
  ASSERT_EQ(r.scenarios.size(), 3u);
  EXPECT_TRUE(r.scenarios[0].isNominal());
  EXPECT_EQ(r.scenarios[0].name, "nominal");
}

void expectInvalid(const RobustnessRequest& req, const std::string& words) {
  try {
    validate(req);
    ADD_FAILURE() << "accepted: " << words;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument) << e.message();
    EXPECT_NE(e.message().find(words), std::string::npos) << e.message();
  }
  EXPECT_THROW((void)evaluateRobustness(req), Error) << words;
}

TEST(RobustEvaluation, ValidateRefusesInconsistentRequests) {
  const RobustnessRequest good = randomRequest(3, 16);
  EXPECT_NO_THROW(validate(good));
  RobustnessRequest r = good;
  r.structures[1].mask = std::make_shared<Mask>(proton::makeAxisGrid({8, 8, 8}, {2.5, 2.5, 2.5}, {0, 0, 0}), 1);
  expectInvalid(r, "'Organ': its mask (8x8x8) is not on the dose grid (16x16x16)");
  r = good;
  auto moved = std::make_shared<Mask>(*good.structures[0].mask);
  moved->grid.origin = moved->grid.origin + Vec3{1, 0, 0};
  r.structures[0].mask = moved;
  expectInvalid(r, "'Target': its mask");
  r = good;
  r.structures[2].mask = nullptr;
  expectInvalid(r, "'Body' has no mask");
  r = good;
  r.scenarios = {Scenario{"nominal", 0, Vec3{}}, Scenario{"up", 1, Vec3{}}, Scenario{"up", 0, Vec3{1, 0, 0}}};
  expectInvalid(r, "two scenarios are named 'up'");
  r.scenarios = {Scenario{"", 1, Vec3{}}};
  expectInvalid(r, "a scenario has no name");
  r.scenarios = {Scenario{"far", 0, Vec3{0, 0, NAN}}};
  expectInvalid(r, "'far' has a non-finite shift");
  r.scenarios = {Scenario{"dense", 60, Vec3{}}};
  expectInvalid(r, "'dense' has range error 60");
  r = good;
  r.binWidthGy = NAN;
  expectInvalid(r, "bin width");
  r = good;
  r.doseScale = 0;
  expectInvalid(r, "dose scale 0");
  r = good;
  r.structures[0].minGy = INFINITY;
  expectInvalid(r, "infinite");
  r = good;
  r.plan.beams.clear();
  expectInvalid(r, "no beams");
}

class CancelAt : public ProgressSink {
public:
  CancelAt(CancelToken& token, double at) : token_(token), at_(at) {}
  void report(double fraction, std::string_view) override {
    highest = std::max(highest.load(), fraction);
    if (fraction >= at_) token_.requestCancel();
  }
  std::atomic<double> highest{0};

private:
  CancelToken& token_;
  double at_;
};

TEST(RobustEvaluation, CancelStopsWithCancelledError) {
  const RobustnessRequest req = randomRequest(8, 16);
  CancelToken token;
  token.requestCancel();
  EXPECT_THROW((void)evaluateRobustness(req, JobControl{nullptr, &token}), CancelledError);
  token.reset();
  CancelAt sink(token, 0.2);  // during the fifth of 21 scenarios
  EXPECT_THROW((void)evaluateRobustness(req, JobControl{&sink, &token}), CancelledError);
  EXPECT_GE(sink.highest.load(), 0.2);
  EXPECT_LT(sink.highest.load(), 0.35) << "scenarios went on after the cancel";
}

TEST(RobustEvaluation, WorkspaceBytesAreSane) {
  RobustnessRequest req = randomRequest(4, 16);
  const double n = double(req.plan.doseGrid.voxelCount());
  const RobustnessEstimate cpu = workspaceBytes(req);
  EXPECT_EQ(cpu.deviceBytes, 0u);
  EXPECT_GE(double(cpu.hostBytes), 6 * 4 * n) << "six volumes are kept";
  EXPECT_LT(double(cpu.hostBytes), 64e6) << cpu.breakdown;
  EXPECT_NE(cpu.breakdown.find("21 scenarios"), std::string::npos) << cpu.breakdown;
  req.plan.backend = Backend::Cuda;
  const RobustnessEstimate gpu = workspaceBytes(req);
  EXPECT_EQ(gpu.deviceBytes, proton::workspaceBytes(req.plan).deviceBytes);
  EXPECT_GT(gpu.deviceBytes, std::size_t(4 * n));
  // Without range errors no scaled SPR is made.
  ScenarioOptions o;
  o.rangePercent = 0;
  req.scenarios = makeScenarios(o);
  EXPECT_LT(workspaceBytes(req).hostBytes, gpu.hostBytes);
  req.doseScale = -1;
  EXPECT_THROW((void)workspaceBytes(req), Error);
}

}  // namespace
}  // namespace penumbra::robust
