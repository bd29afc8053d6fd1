// The host reductions of the robustness evaluation (robust/robust_reduce.hpp) on seeded random
// doses and masks, against brute force in the test: mask runs, voxel-wise minimum / maximum /
// mean, worst case and spread, per-structure statistics and curves, bands, percentiles against
// sorted voxels, and the same results on 1 and 3 threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "core/error.hpp"
#include "proton/proton_phantoms.hpp"
#include "robust/robust_reduce.hpp"
#include "robust_test_support.hpp"

namespace penumbra::robust {
namespace {

using detail::ScenarioReducer;

const Grid kGrid = proton::makeAxisGrid({23, 17, 11}, {2, 2, 3}, {-20, -15, -10});

std::shared_ptr<Mask> randomMask(std::mt19937& rng, double fill) {
  auto m = std::make_shared<Mask>(kGrid, std::uint8_t(0));
  std::uniform_real_distribution<double> U(0, 1);
  for (auto& v : m->data) v = U(rng) < fill ? 1 : 0;
  return m;
}

/// K random doses: a smooth field (so structures see a spread of doses) with noise; a few
/// voxels exactly 0.
std::vector<Volume<float>> randomDoses(std::mt19937& rng, int k) {
  std::uniform_real_distribution<double> U(0, 1);
  std::vector<Volume<float>> out;
  for (int s = 0; s < k; ++s) {
    Volume<float> d(kGrid);
    for (std::size_t v = 0; v < d.data.size(); ++v)
      d.data[v] = U(rng) < 0.05 ? 0.f : float(2.0 * std::sin(0.01 * double(v)) * std::sin(0.01 * double(v)) + 0.3 * U(rng));
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<RobustStructure> randomStructures(std::mt19937& rng) {
  using test::structureOf;
  return {structureOf("T1", StructureKind::Target, randomMask(rng, 0.2)),
          structureOf("T2", StructureKind::Target, randomMask(rng, 0.1)),  // overlaps T1
          structureOf("Organ", StructureKind::OrganAtRisk, randomMask(rng, 0.3)),
          structureOf("Body", StructureKind::External, randomMask(rng, 0.9)),
          structureOf("Empty", StructureKind::OrganAtRisk, std::make_shared<Mask>(kGrid, std::uint8_t(0)))};
}

RobustnessResult reduce(const std::vector<Volume<float>>& doses,
                        const std::vector<RobustStructure>& structures, int threads, double scale = 1,
                        double binWidth = 0, std::vector<std::string>* messages = nullptr) {
  ScenarioReducer r(kGrid, structures, int(doses.size()), binWidth, scale, threads);
  for (std::size_t k = 0; k < doses.size(); ++k) {
    Volume<float> copy = doses[k];
    r.add(int(k), std::move(copy), {});
  }
  RobustnessResult out;
  r.finish(out, {});
  for (std::size_t s = 0; s < structures.size(); ++s) {
    out.structures[s].name = structures[s].name;
    out.structures[s].kind = structures[s].kind;
  }
  if (messages) *messages = r.messages();
  return out;
}

TEST(RobustReduce, MaskRunsCoverTheMaskExactly) {
  std::mt19937 rng(11);
  for (double fill : {0.0, 0.05, 0.5, 1.0}) {
    const auto mask = randomMask(rng, fill);
    const detail::MaskRuns runs = detail::maskRuns(*mask, 3);
    Mask back(kGrid, 0);
    std::int64_t voxels = 0;
    for (std::size_t q = 0; q < runs.start.size(); ++q) {
      ASSERT_GE(runs.length[q], 1u);
      // A run stays in its row and is maximal (the voxel after it is outside the mask).
      const std::uint64_t row = runs.start[q] / std::uint64_t(kGrid.dims[0]);
      ASSERT_EQ((runs.start[q] + runs.length[q] - 1) / std::uint64_t(kGrid.dims[0]), row);
      for (std::uint32_t v = 0; v < runs.length[q]; ++v) back.data[runs.start[q] + v] = 1;
      voxels += runs.length[q];
      if (q > 0) {
        EXPECT_GT(runs.start[q], runs.start[q - 1]);
      }
    }
    EXPECT_EQ(back.data, mask->data) << "fill " << fill;
    EXPECT_EQ(runs.voxels, voxels);
    ASSERT_FALSE(runs.chunkBegin.empty());
    EXPECT_EQ(runs.chunkBegin.back(), runs.start.size());
    for (std::size_t c = 1; c < runs.chunkBegin.size(); ++c)
      EXPECT_LT(runs.chunkBegin[c - 1], runs.chunkBegin[c]);
  }
}

TEST(RobustReduce, PercentilesFromTheHistogramAreWithinOneBinOfSortedVoxels) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> U(0, 1);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 1 + int(U(rng) * 3000);
    const double w = 0.01 + 0.05 * U(rng);
    std::vector<double> d(static_cast<std::size_t>(n));
    for (double& x : d) x = 3 * U(rng) * U(rng);
    std::vector<std::uint64_t> counts;
    for (double x : d) {
      const std::size_t b = std::size_t(x / w);
      if (b >= counts.size()) counts.resize(b + 1, 0);
      ++counts[b];
    }
    std::vector<double> sorted = d;
    std::sort(sorted.begin(), sorted.end(), std::greater<double>());
    const double mn = sorted.back(), mx = sorted.front();
    for (double f : {0.02, 0.5, 0.95, 0.98}) {
      // The highest dose that at least f of the voxels receive.
      const double exact = sorted[std::size_t(std::max(0.0, std::ceil(f * n) - 1))];
      const double got = detail::doseAtFraction(counts, n, w, f, mn, mx);
      EXPECT_LE(std::fabs(got - exact), w) << "n " << n << " f " << f;
      EXPECT_GE(got, mn);
      EXPECT_LE(got, mx);
    }
    EXPECT_EQ(detail::doseAtFraction(counts, n, w, 0, mn, mx), mx);
    EXPECT_EQ(detail::doseAtFraction(counts, n, w, 1, mn, mx), mn);
    const std::vector<double> curve = detail::cumulativePercent(counts, n, counts.size() + 3);
    ASSERT_EQ(curve.size(), counts.size() + 4);
    EXPECT_EQ(curve.front(), 100.0);
    EXPECT_EQ(curve.back(), 0.0);
    for (std::size_t b = 0; b < curve.size(); b += 7) {
      const double at = double(std::count_if(d.begin(), d.end(),
                                             [&](double x) { return std::size_t(x / w) >= b; }));
      EXPECT_DOUBLE_EQ(curve[b], 100.0 * at / n) << b;
    }
  }
}

TEST(RobustReduce, MatchesBruteForceAndDoesNotDependOnThreads) {
  std::mt19937 rng(2026);
  const std::vector<RobustStructure> structures = randomStructures(rng);
  const std::vector<Volume<float>> doses = randomDoses(rng, 6);
  std::vector<std::string> messages;
  const RobustnessResult one = reduce(doses, structures, 1, 1, 0, &messages);
  const RobustnessResult three = reduce(doses, structures, 3);
  const std::size_t n = kGrid.voxelCount();

  // Voxel-wise volumes against brute force.
  ASSERT_EQ(one.minimum.dose.data.size(), n);
  for (std::size_t v = 0; v < n; ++v) {
    float mn = doses[0].data[v], mx = mn;
    double sum = 0;
    for (const auto& d : doses) {
      mn = std::min(mn, d.data[v]);
      mx = std::max(mx, d.data[v]);
      sum += d.data[v];
    }
    ASSERT_EQ(one.minimum.dose.data[v], mn) << v;
    ASSERT_EQ(one.maximum.dose.data[v], mx) << v;
    ASSERT_EQ(one.nominal.dose.data[v], doses[0].data[v]) << v;
    ASSERT_NEAR(one.mean.dose.data[v], sum / double(doses.size()), 1e-6) << v;
    ASSERT_LE(one.minimum.dose.data[v], one.mean.dose.data[v]);
    ASSERT_LE(one.mean.dose.data[v], one.maximum.dose.data[v]);
    ASSERT_EQ(one.spread.dose.data[v], mx - mn);
    const bool inTarget = structures[0].mask->data[v] || structures[1].mask->data[v];
    ASSERT_EQ(one.worstCase.dose.data[v], inTarget ? mn : mx) << v;
  }

  // Per structure and scenario: exact statistics, curves that count voxels at or above each edge.
  ASSERT_EQ(one.structures.size(), structures.size());
  const double w = one.structures[0].binWidthGy;
  double nominalMax = 0;
  for (float x : doses[0].data) nominalMax = std::max(nominalMax, double(x));
  EXPECT_NEAR(w, nominalMax / 500, 1e-12);
  for (std::size_t s = 0; s < structures.size(); ++s) {
    const StructureRobustness& sr = one.structures[s];
    std::vector<std::size_t> voxels;
    for (std::size_t v = 0; v < n; ++v)
      if (structures[s].mask->data[v]) voxels.push_back(v);
    EXPECT_EQ(sr.voxels, std::int64_t(voxels.size()));
    if (voxels.empty()) {
      EXPECT_TRUE(sr.bandLowPercent.empty());
      EXPECT_FALSE(messages.empty()) << "an empty structure gets a message";
      continue;
    }
    ASSERT_EQ(sr.scenarios.size(), doses.size());
    for (std::size_t k = 0; k < doses.size(); ++k) {
      const ScenarioDvh& dvh = sr.scenarios[k];
      std::vector<double> d;
      double sum = 0;
      for (std::size_t v : voxels) d.push_back(doses[k].data[v]), sum += doses[k].data[v];
      std::sort(d.begin(), d.end(), std::greater<double>());
      EXPECT_EQ(dvh.maxGy, d.front());
      EXPECT_EQ(dvh.minGy, d.back());
      EXPECT_NEAR(dvh.meanGy, sum / double(d.size()), 1e-12);
      const auto exact = [&](double f) { return d[std::size_t(std::max(0.0, std::ceil(f * double(d.size())) - 1))]; };
      EXPECT_LE(std::fabs(dvh.d98Gy - exact(0.98)), w);
      EXPECT_LE(std::fabs(dvh.d95Gy - exact(0.95)), w);
      EXPECT_LE(std::fabs(dvh.d50Gy - exact(0.50)), w);
      EXPECT_LE(std::fabs(dvh.d2Gy - exact(0.02)), w);
      ASSERT_EQ(dvh.volumePercent.size(), sr.bandLowPercent.size());
      for (std::size_t b = 0; b < dvh.volumePercent.size(); b += 5) {
        // Doses within a float ulp of an edge may fall either side: allow one voxel.
        const double at = double(std::count_if(d.begin(), d.end(), [&](double x) { return x >= double(b) * w; }));
        EXPECT_NEAR(dvh.volumePercent[b], 100.0 * at / double(d.size()), 100.0 / double(d.size()) + 1e-9) << b;
        EXPECT_LE(sr.bandLowPercent[b], dvh.volumePercent[b]);
        EXPECT_GE(sr.bandHighPercent[b], dvh.volumePercent[b]);
      }
      EXPECT_EQ(dvh.volumePercent.back(), 0.0);
    }
  }

  // Three threads: the same numbers, bit for bit (fixed chunk order for sums).
  for (std::size_t s = 0; s < structures.size(); ++s)
    for (std::size_t k = 0; k < doses.size() && one.structures[s].voxels > 0; ++k) {
      const ScenarioDvh &a = one.structures[s].scenarios[k], &b = three.structures[s].scenarios[k];
      EXPECT_EQ(a.meanGy, b.meanGy);
      EXPECT_EQ(a.d95Gy, b.d95Gy);
      EXPECT_EQ(a.volumePercent, b.volumePercent);
    }
  EXPECT_EQ(one.worstCase.dose.data, three.worstCase.dose.data);
  EXPECT_EQ(one.mean.dose.data, three.mean.dose.data);
}

TEST(RobustReduce, DoseScaleMultipliesEveryDose) {
  std::mt19937 rng(9);
  const std::vector<RobustStructure> structures = randomStructures(rng);
  const std::vector<Volume<float>> doses = randomDoses(rng, 3);
  const RobustnessResult a = reduce(doses, structures, 2, 1);
  const RobustnessResult b = reduce(doses, structures, 2, 4);  // a power of two: exact in float
  for (std::size_t v = 0; v < a.nominal.dose.data.size(); ++v) {
    ASSERT_EQ(b.nominal.dose.data[v], 4 * a.nominal.dose.data[v]);
    ASSERT_EQ(b.worstCase.dose.data[v], 4 * a.worstCase.dose.data[v]);
  }
  EXPECT_DOUBLE_EQ(b.structures[0].binWidthGy, 4 * a.structures[0].binWidthGy);
  EXPECT_DOUBLE_EQ(b.structures[2].scenarios[1].d95Gy, 4 * a.structures[2].scenarios[1].d95Gy);
}

TEST(RobustReduce, RefusesATooFineBinWidthAndCountsOverflowInTheLastBin) {
  std::mt19937 rng(3);
  const std::vector<RobustStructure> structures = randomStructures(rng);
  std::vector<Volume<float>> doses = randomDoses(rng, 2);
  try {
    (void)reduce(doses, structures, 2, 1, 1e-6);
    ADD_FAILURE() << "a bin width of 1e-6 Gy was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find("bin width"), std::string::npos) << e.message();
  }
  // A scenario far hotter than the nominal: its top doses land in the last bin, with a message,
  // and its maximum stays exact.
  for (float& x : doses[1].data) x *= 100;
  std::vector<std::string> messages;
  const RobustnessResult r = reduce(doses, structures, 2, 1, 0, &messages);
  EXPECT_TRUE(std::any_of(messages.begin(), messages.end(),
                          [](const std::string& m) { return m.find("last bin") != std::string::npos; }));
  double hottest = 0;
  for (std::size_t v = 0; v < doses[1].data.size(); ++v)
    if (structures[3].mask->data[v]) hottest = std::max(hottest, double(doses[1].data[v]));
  EXPECT_EQ(r.structures[3].scenarios[1].maxGy, hottest);
}

}  // namespace
}  // namespace penumbra::robust
