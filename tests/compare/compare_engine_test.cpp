// The comparison engine's contract: what it refuses and why, which points it evaluates (cut-off,
// mask, overlap), per-structure pass rates, determinism across thread counts, cancel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compare_test_support.hpp"

namespace penumbra::compare {
namespace {

using namespace compare::test;

std::string errorOf(const CompareRequest& r) {
  try {
    (void)compareDoses(r);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

CompareRequest smallCase() {
  const Grid g = makeGrid(12, 10, 8, {2, 2, 2}, {0, 0, 0});
  auto f = randomSmoothDose(7, {0, 0, 0}, {22, 18, 14});
  return request(sample(g, f), sample(g, [&](Vec3 p) { return 1.05 * f(p + Vec3{2.5, 0, 1}); }), 2, 2);
}

TEST(CompareEngine, BadInputIsRefusedWithTheReason) {
  auto expectError = [](CompareRequest r, const std::string& text) {
    const std::string e = errorOf(r);
    EXPECT_NE(e.find(text), std::string::npos) << e;
  };
  CompareRequest r = smallCase();
  r.criteria.dosePercent = 0;
  expectError(r, "dose criterion 0 % must be in (0, 100]");
  r = smallCase();
  r.criteria.distanceMm = -1;
  expectError(r, "distance criterion -1 mm must be in (0, 100] mm");
  r = smallCase();
  r.criteria.gammaCap = 1;
  expectError(r, "gamma cap 1 must be in (1, 100]");
  r = smallCase();
  r.cudaTuning.stepBudget = -1;
  expectError(r, "CUDA gamma step budget -1 must be 0 (off) or positive");
  r = smallCase();
  r.cudaTuning.stackItems = 32;
  expectError(r, "CUDA gamma stack of 32 entries must be in [64, 4096]");
  r = smallCase();
  r.cudaTuning.skipLimit = -1;
  expectError(r, "CUDA gamma skip limit -1 must be in [0, 64]");
  r = smallCase();
  r.cudaTuning.slabPointsLog2 = 40;
  expectError(r, "CUDA gamma slab size 2^40 points must be in [2^10, 2^31]");
  r = smallCase();
  r.cudaTuning.laneGroup = 4;
  expectError(r, "CUDA gamma lane group of 4 must be 8, 16 or 32");
  r = smallCase();
  r.criteria.local = true;
  r.criteria.cutoffPercent = 0;
  expectError(r, "a local gamma needs a low-dose cut-off above 0 %");
  r = smallCase();
  r.criteria.normalisation = Normalisation::Prescription;
  expectError(r, "the prescription dose 0 Gy must be positive");

  r = smallCase();
  auto nanDose = std::make_shared<Volume<float>>(*r.evaluated);
  nanDose->at(3, 2, 1) = std::nanf("");
  nanDose->at(4, 2, 1) = INFINITY;
  r.evaluated = nanDose;
  expectError(r, "the evaluated dose has 2 NaN or infinite voxel(s), the first at (i, j, k) = (3, 2, 1)");

  r = smallCase();
  auto far = std::make_shared<Volume<float>>(*r.evaluated);
  far->grid.origin = {500, 0, 0};
  r.evaluated = far;
  expectError(r, "the doses do not overlap: reference x 0.0..22.0");

  r = smallCase();
  r.referenceFrame = "1.2.3";
  r.evaluatedFrame = "1.2.4";
  expectError(r, "different frames of reference (1.2.3 and 1.2.4)");

  r = smallCase();
  r.mask = std::make_shared<Mask>(r.reference->grid, 0);
  expectError(r, "the mask is empty (no voxel inside)");
  r = smallCase();
  r.mask = std::make_shared<Mask>(makeGrid(5, 5, 5, {2, 2, 2}, {0, 0, 0}), 1);
  expectError(r, "the mask is not on the reference dose's grid");

  r = smallCase();
  auto zero = std::make_shared<Volume<float>>(r.reference->grid, 0.0f);
  r.reference = zero;
  expectError(r, "the reference dose is zero everywhere");

  r = smallCase();
  r.reference = std::make_shared<Volume<float>>();
  expectError(r, "the reference dose is empty");
}

TEST(CompareEngine, CutoffMaskAndOverlapDecideWhichPointsAreEvaluated) {
  // Reference: a ramp 0..2 Gy along x on 20 voxels; evaluated covers only x < 25 mm.
  const Grid gr = makeGrid(20, 6, 6, {2, 2, 2}, {0, 0, 0});
  const Grid ge = makeGrid(26, 8, 8, {1, 2, 2}, {0, -2, -2});
  auto ramp = [](Vec3 p) { return 0.1 * p.x / 2 + 0.05; };
  CompareRequest r = request(sample(gr, ramp), sample(ge, ramp), 3, 3);
  r.criteria.cutoffPercent = 20;
  auto mask = std::make_shared<Mask>(gr, 0);
  for (int k = 0; k < 6; ++k)
    for (int j = 0; j < 3; ++j)
      for (int i = 0; i < 20; ++i) mask->at(i, j, k) = 1;
  r.mask = mask;
  auto upper = std::make_shared<Mask>(gr, 0);
  for (int k = 0; k < 6; ++k)
    for (int i = 0; i < 20; ++i) upper->at(i, 1, k) = 1;
  r.structures.push_back({"row1", upper});
  const CompareResult out = compareDoses(r);
  // x = 2 i mm; evaluated box x <= 25: i <= 12 inside. Dose 0.1 i + 0.05, maximum 1.95 Gy at
  // i = 19, cut-off 20 % = 0.39 Gy: evaluated from i = 4.
  const std::int64_t columns = 6 * 6;
  EXPECT_EQ(out.outsideEvaluated, 7 * columns);
  EXPECT_EQ(out.outsideMask, 13 * 3 * 6);
  EXPECT_EQ(out.belowCutoff, 4 * 3 * 6);
  EXPECT_EQ(out.gammaStats.evaluatedPoints, 9 * 3 * 6);
  EXPECT_EQ(out.gammaStats.passedPoints, out.gammaStats.evaluatedPoints);  // same dose
  EXPECT_NEAR(out.gammaStats.max, 0.0, 1e-3);
  EXPECT_TRUE(std::isnan(out.difference.at(15, 0, 0)));
  EXPECT_NEAR(out.difference.at(5, 4, 0), 0.0, 1e-6);  // outside the mask, still differenced
  EXPECT_TRUE(std::isnan(out.gamma.at(5, 4, 0)));
  ASSERT_EQ(out.structures.size(), 1u);
  EXPECT_EQ(out.structures[0].evaluatedPoints, 9 * 6);
  EXPECT_DOUBLE_EQ(out.structures[0].passRatePercent, 100.0);
  ASSERT_FALSE(out.messages.empty());
  EXPECT_NE(out.messages.back().find("252 reference voxel(s) lie outside the evaluated dose"),
            std::string::npos)
      << out.messages.back();
}

TEST(CompareEngine, ResultDoesNotDependOnTheThreadCount) {
  CompareRequest r = smallCase();
  r.cpuThreads = 1;
  const CompareResult one = compareDoses(r);
  r.cpuThreads = 3;
  const CompareResult three = compareDoses(r);
  ASSERT_EQ(one.gamma.data.size(), three.gamma.data.size());
  EXPECT_EQ(std::memcmp(one.gamma.data.data(), three.gamma.data.data(), one.gamma.data.size() * 4), 0);
  EXPECT_EQ(one.gammaStats.mean, three.gammaStats.mean);
  EXPECT_EQ(one.differenceStats.sdGy, three.differenceStats.sdGy);
  EXPECT_GT(one.gammaStats.evaluatedPoints, 0);
  EXPECT_LT(one.gammaStats.passRatePercent, 100.0);  // the case really differs somewhere
}

TEST(CompareEngine, OnOneGridTheDifferenceIsEachVoxelsOwn) {
  // Two doses on one grid: every reference point is an evaluated voxel centre, so A - B is the
  // two voxels' difference exactly, the last voxel of each axis included (there the
  // interpolation's a + 1 * (b - a) may miss b by a rounding; the same-grid path reads b).
  const Grid g = makeGrid(13, 11, 9, {2, 2, 2}, {-5, 3, 1});
  auto f = randomSmoothDose(11, {-5, 3, 1}, {19, 23, 17});
  auto ref = sample(g, f);
  auto eval = sample(g, [&](Vec3 p) { return 1.0 / 3.0 + 0.97 * f(p + Vec3{0.7, -0.3, 0.2}); });
  const CompareResult out = compareDoses(request(ref, eval, 2, 2));
  for (int k = 0; k < 9; ++k)
    for (int j = 0; j < 11; ++j)
      for (int i = 0; i < 13; ++i)
        ASSERT_EQ(out.difference.at(i, j, k),
                  float(double(ref->at(i, j, k)) - double(eval->at(i, j, k))))
            << i << " " << j << " " << k;
  EXPECT_GT(out.gammaStats.evaluatedPoints, 0);
}

TEST(CompareEngine, CancelStopsTheRun) {
  CompareRequest r = smallCase();
  CancelToken token;
  token.requestCancel();
  JobControl job;
  job.cancel = &token;
  EXPECT_THROW((void)compareDoses(r, job), CancelledError);
}

TEST(CompareEngine, LocalGammaUsesEachPointsDose) {
  // Evaluated = reference x 1.02 everywhere: local 3 % gives 2/3 at every point whatever its
  // dose, global 3 % of the maximum gives 0.02 D / (0.03 Dmax).
  const Grid g = makeGrid(16, 4, 4, {2, 2, 2}, {0, 0, 0});
  auto ramp = [](Vec3 p) { return 0.5 + p.x / 10; };
  CompareRequest r = request(sample(g, ramp), sample(g, [&](Vec3 p) { return 1.02 * ramp(p); }), 3, 3);
  r.criteria.local = true;
  const CompareResult local = compareDoses(r);
  // Moving along the ramp helps a little: the local value is at most 2/3.
  for (float v : local.gamma.data) {
    if (!std::isnan(v)) {
      EXPECT_LE(v, 2.0 / 3 + 1e-3);
    }
  }
  EXPECT_GT(local.gamma.at(0, 1, 1), 0.3);
  r.criteria.local = false;
  const CompareResult global = compareDoses(r);
  EXPECT_LT(global.gamma.at(0, 1, 1), local.gamma.at(0, 1, 1));
}

}  // namespace
}  // namespace penumbra::compare
