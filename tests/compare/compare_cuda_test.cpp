// The CUDA backend against the CPU reference on seeded random smooth doses on mismatched (and
// rotated) grids. "gpu" label: skips without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "compare/compare_internal.hpp"
#include "compare_test_support.hpp"
#include "gpu_test_support.hpp"

namespace penumbra::compare {
namespace {

using namespace compare::test;

struct Pair {
  CompareResult cpu, gpu;
};

Pair runBoth(CompareRequest r) {
  Pair p;
  r.backend = Backend::Cpu;
  p.cpu = compareDoses(r);
  r.backend = Backend::Cuda;
  p.gpu = compareDoses(r);
  return p;
}

void expectAgreement(const Pair& p, double tol) {
  EXPECT_EQ(p.gpu.backend, Backend::Cuda);
  ASSERT_EQ(p.cpu.gamma.data.size(), p.gpu.gamma.data.size());
  std::int64_t n = 0, bad = 0;
  double worst = 0;
  for (std::size_t i = 0; i < p.cpu.gamma.data.size(); ++i) {
    const float a = p.cpu.gamma.data[i], b = p.gpu.gamma.data[i];
    ASSERT_EQ(std::isnan(a), std::isnan(b)) << "voxel " << i;
    const float da = p.cpu.difference.data[i], db = p.gpu.difference.data[i];
    ASSERT_EQ(std::isnan(da), std::isnan(db)) << "voxel " << i;
    if (!std::isnan(da)) {
      EXPECT_NEAR(da, db, 2e-5) << "difference at voxel " << i;
    }
    if (std::isnan(a)) continue;
    ++n;
    worst = std::max(worst, double(std::fabs(a - b)));
    // Both are within the tolerance above the true value; float adds a little.
    if (std::fabs(a - b) > tol + 2e-4 && bad++ < 5)
      ADD_FAILURE() << "voxel " << i << ": cpu " << a << ", cuda " << b;
  }
  EXPECT_EQ(bad, 0) << "worst |cpu - cuda| " << worst;
  EXPECT_GT(n, 1000);
  EXPECT_EQ(p.cpu.gammaStats.evaluatedPoints, p.gpu.gammaStats.evaluatedPoints);
  // A point is flagged depth-limited only where a box reached the bisection limit undecided: as
  // rare on the GPU as on the CPU (boxes met in another order by the lane groups may differ).
  EXPECT_LE(p.gpu.gammaStats.depthLimitedPoints,
            p.cpu.gammaStats.depthLimitedPoints + std::max<std::int64_t>(2, n / 10000));
  // Pass/fail is exact in both; only points within float rounding of 1 may differ.
  EXPECT_LE(std::llabs(p.cpu.gammaStats.passedPoints - p.gpu.gammaStats.passedPoints),
            std::max<std::int64_t>(2, n / 10000));
  EXPECT_LT(p.cpu.gammaStats.passRatePercent, 100.0);  // the doses really differ
  EXPECT_GT(p.cpu.gammaStats.passRatePercent, 0.0);
}

TEST(CompareCuda, AgreesWithTheCpuOnRandomDosesOnMismatchedGrids) {
  REQUIRE_GPU();
  for (unsigned seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Grid gr = makeGrid(40, 36, 30, {2.5, 2.5, 2.5}, {0, 0, 0});
    const Grid ge = makeGrid(52, 47, 41, {2.1, 2.2, 1.9}, {-4, -3, -2});
    auto f = randomSmoothDose(seed, {10, 10, 10}, {90, 80, 65}, 8);
    auto ref = sample(gr, f);
    auto eval = sample(ge, [&](Vec3 p) { return 1.03 * f(p + Vec3{2.0, -1.5, 1.2}); });
    CompareRequest r = request(ref, eval, 2, 2);
    expectAgreement(runBoth(r), r.criteria.tolerance);
    r.criteria.local = true;
    r.criteria.dosePercent = 3;
    r.criteria.distanceMm = 3;
    expectAgreement(runBoth(r), r.criteria.tolerance);
  }
}

TEST(CompareCuda, AgreesWithTheCpuOnARotatedEvaluatedGridWithAMask) {
  REQUIRE_GPU();
  const Grid gr = makeGrid(36, 30, 24, {2, 2, 3}, {0, 0, 0});
  const double c = std::cos(0.3), s = std::sin(0.3);
  const Grid ge = makeGrid(50, 50, 40, {1.6, 1.6, 2}, {10, -15, -5},
                           Mat3::fromColumns({c, s, 0}, {-s, c, 0}, {0, 0, 1}));
  auto f = randomSmoothDose(11, {5, 5, 5}, {65, 55, 65}, 10);
  auto ref = sample(gr, f);
  auto eval = sample(ge, [&](Vec3 p) { return 0.98 * f(p + Vec3{-1.2, 0.4, 0.0}); });
  CompareRequest r = request(ref, eval, 2, 2);
  auto mask = std::make_shared<Mask>(gr, 0);
  for (std::size_t i = 0; i < mask->data.size(); i += 2) mask->data[i] = 1;
  r.mask = mask;
  const Pair p = runBoth(r);
  expectAgreement(p, r.criteria.tolerance);
  EXPECT_GT(p.gpu.outsideEvaluated, 0);
  EXPECT_EQ(p.cpu.outsideEvaluated, p.gpu.outsideEvaluated);
  EXPECT_EQ(p.cpu.outsideMask, p.gpu.outsideMask);
}

TEST(CompareCuda, UniformScaledDoseGivesEOverDdOnTheGpu) {
  REQUIRE_GPU();
  const Grid g = makeGrid(64, 64, 64, {2, 2, 2}, {0, 0, 0});
  auto ref = sample(g, [](Vec3) { return 2.0; });
  auto eval = sample(g, [](Vec3) { return 2.0 * 1.015; });
  CompareRequest r = request(ref, eval, 3, 3, Backend::Cuda);
  // The result volumes start at 0: a voxel the kernel did not write fails the range check.
  const CompareResult out = compareDoses(r);
  EXPECT_EQ(out.backend, Backend::Cuda);
  for (float v : out.gamma.data) ASSERT_TRUE(v >= 0.5f - 1e-5f && v <= 0.5f + 1.1e-3f) << v;
  EXPECT_DOUBLE_EQ(out.gammaStats.passRatePercent, 100.0);
  ASSERT_FALSE(out.profiles.empty());
  EXPECT_EQ(out.profiles[0].kernel, "gamma_search");
  EXPECT_GT(out.profiles[0].medianMs, 0.0);
}

bool hasProfile(const CompareResult& r, const std::string& kernel) {
  for (const KernelProfile& p : r.profiles)
    if (p.kernel == kernel) return true;
  return false;
}

/// A smooth dose on 220 x 220 x 180 voxels of 1.5 mm (8.7 M points, two slabs), 0 above
/// z = zEndMm; evaluated: shifted (1, 0, 0.5) mm and scaled by 1.01.
CompareRequest largeSmoothCase(double dd, double dta, double zEndMm) {
  const Grid g = makeGrid(220, 220, 180, {1.5, 1.5, 1.5}, {0, 0, 0});
  auto f = [zEndMm](Vec3 p) {
    if (p.z > zEndMm) return 0.0;
    return 1.2 + 0.5 * std::sin(p.x / 20) * std::cos(p.y / 25) + 0.3 * std::sin(p.z / 15);
  };
  auto ref = sample(g, f);
  auto eval = sample(g, [&](Vec3 p) { return 1.01 * f(p + Vec3{1.0, 0.0, 0.5}); });
  return request(ref, eval, dd, dta);
}

TEST(CompareCuda, ALargeComparisonSearchedInSeveralLaunchesAgreesWithTheCpu) {
  // 8.7 M reference points, all above the cut-off, in slabs of 43 slices (2^21 points): five
  // slabs on two streams, one search launch each, the host pausing for progress and cancel
  // before each launch from the second on and waiting for the one before from the third on.
  REQUIRE_GPU();
  CompareRequest r = largeSmoothCase(1, 1, 1e9);
  r.cudaTuning.slabPointsLog2 = 21;
  const Pair p = runBoth(r);
  expectAgreement(p, r.criteria.tolerance);
  EXPECT_GT(p.gpu.gammaStats.evaluatedPoints, 4 * (std::int64_t(1) << 21));
  // One grid: both backends take each voxel's difference as it is, bit for bit.
  ASSERT_EQ(p.gpu.difference.data.size(), p.cpu.difference.data.size());
  EXPECT_EQ(std::memcmp(p.gpu.difference.data.data(), p.cpu.difference.data.data(),
                        p.cpu.difference.data.size() * 4),
            0);
}

TEST(CompareCuda, OnlyTheBoxesOfEachSlabAreDownloadedTheRestIsZeroOrNaN) {
  // Two slabs (2^23 points each at most): both doses are 0 in the last 9 slices, so the second
  // slab (slices 173-179) lists no point and has no difference other than +0: neither of its
  // boxes is downloaded at all, and the first slab's boxes end early. Every voxel must still
  // agree with the CPU: NaN where it has NaN, +0 where it has +0.
  REQUIRE_GPU();
  CompareRequest r = largeSmoothCase(2, 2, 170 * 1.5);
  const Pair p = runBoth(r);
  expectAgreement(p, r.criteria.tolerance);
  const std::size_t slice = 220 * 220;
  for (std::size_t i = 171 * slice; i < p.gpu.gamma.data.size(); ++i)
    ASSERT_TRUE(std::isnan(p.gpu.gamma.data[i])) << "voxel " << i;
  for (std::size_t i = 171 * slice; i < p.gpu.difference.data.size(); ++i) {
    std::uint32_t bits = 1;
    std::memcpy(&bits, &p.gpu.difference.data[i], 4);
    ASSERT_EQ(bits, 0u) << "voxel " << i;  // +0, as on the CPU (0 - 0)
  }
  // Slices 171-179 (z > 255 mm) are below the cut-off, all of them and nothing else.
  EXPECT_EQ(p.gpu.belowCutoff, std::int64_t(9 * slice));
  EXPECT_EQ(p.cpu.belowCutoff, std::int64_t(9 * slice));
}

TEST(CompareCuda, GpuStatisticsEqualTheHostsOnTheSameVolumes) {
  // The statistics kernel against the host's sums of the volumes the GPU returned: counts and
  // histogram exactly, sums to rounding.
  REQUIRE_GPU();
  const Grid g = makeGrid(70, 64, 50, {2, 2, 2}, {0, 0, 0});
  const Grid ge = makeGrid(60, 60, 45, {2.2, 2.2, 2.2}, {10, 3, 4});  // part outside
  auto f = randomSmoothDose(21, {10, 10, 10}, {130, 120, 90}, 10);
  auto ref = sample(g, f);
  auto eval = sample(ge, [&](Vec3 p) { return 0.97 * f(p + Vec3{1.0, 2.0, -1.0}); });
  CompareRequest r = request(ref, eval, 3, 2, Backend::Cuda);
  auto mask = std::make_shared<Mask>(g, 0);
  for (std::size_t i = 0; i < mask->data.size(); ++i) mask->data[i] = (i / 7) % 3 != 0;
  r.mask = mask;
  const CompareResult gpu = compareDoses(r);
  ASSERT_EQ(gpu.backend, Backend::Cuda);
  ASSERT_TRUE(hasProfile(gpu, "statistics"));
  const PointSetup<double> setup = detail::makePointSetup(r, gpu.normalisationGy);
  detail::PointSummary host = detail::sumPoints(r, setup, 3, gpu);
  host.depthLimited = gpu.gammaStats.depthLimitedPoints;
  CompareResult check = gpu;
  detail::summarise(r, setup, host, check);
  EXPECT_GT(gpu.outsideEvaluated, 0);
  EXPECT_GT(gpu.outsideMask, 0);
  EXPECT_GT(gpu.belowCutoff, 0);
  EXPECT_EQ(check.outsideEvaluated, gpu.outsideEvaluated);
  EXPECT_EQ(check.outsideMask, gpu.outsideMask);
  EXPECT_EQ(check.belowCutoff, gpu.belowCutoff);
  EXPECT_EQ(check.gammaStats.evaluatedPoints, gpu.gammaStats.evaluatedPoints);
  EXPECT_EQ(check.gammaStats.passedPoints, gpu.gammaStats.passedPoints);
  EXPECT_EQ(check.gammaStats.histogram, gpu.gammaStats.histogram);
  EXPECT_EQ(check.gammaStats.max, gpu.gammaStats.max);
  EXPECT_EQ(check.gammaStats.p95, gpu.gammaStats.p95);
  EXPECT_NEAR(check.gammaStats.mean, gpu.gammaStats.mean, 1e-12 * check.gammaStats.mean);
  const DifferenceStatistics &a = check.differenceStats, &b = gpu.differenceStats;
  EXPECT_EQ(a.points, b.points);
  EXPECT_EQ(a.minGy, b.minGy);
  EXPECT_EQ(a.maxGy, b.maxGy);
  EXPECT_EQ(a.withinDosePercent, b.withinDosePercent);
  EXPECT_NEAR(a.meanGy, b.meanGy, 1e-12 * std::fabs(a.meanAbsGy));
  EXPECT_NEAR(a.sdGy, b.sdGy, 1e-9 * a.sdGy);
  EXPECT_NEAR(a.meanAbsGy, b.meanAbsGy, 1e-12 * a.meanAbsGy);
}

/// The variant of the result's "upload doses" profile row: "copy" or "cached on the GPU".
std::string uploadVariant(const CompareResult& r) {
  for (const KernelProfile& p : r.profiles)
    if (p.kernel == "upload doses") return p.variant;
  return "no upload row";
}

TEST(CompareCuda, CachedDosesGiveTheSameResultAndANewDoseIsUploaded) {
  REQUIRE_GPU();
  const Grid g = makeGrid(48, 40, 32, {2, 2, 2}, {0, 0, 0});
  auto f = randomSmoothDose(5, {10, 10, 10}, {80, 70, 55}, 8);
  auto ref = sample(g, f);
  auto eval = sample(g, [&](Vec3 p) { return 1.02 * f(p + Vec3{1.5, 0, 0}); });
  releaseCompareGpuCache();
  CompareRequest r = request(ref, eval, 2, 2, Backend::Cuda);
  const CompareResult first = compareDoses(r);
  const CompareResult again = compareDoses(r);
  EXPECT_EQ(uploadVariant(first), "copy");
  EXPECT_EQ(uploadVariant(again), "cached on the GPU");
  ASSERT_EQ(first.gamma.data.size(), again.gamma.data.size());
  EXPECT_EQ(
      std::memcmp(first.gamma.data.data(), again.gamma.data.data(), first.gamma.data.size() * 4),
      0);
  // A new evaluated dose (another volume) must be uploaded: same dose as the reference now.
  r.evaluated = sample(g, f);
  const CompareResult same = compareDoses(r);
  EXPECT_EQ(uploadVariant(same), "copy");
  EXPECT_DOUBLE_EQ(same.gammaStats.passRatePercent, 100.0);
  EXPECT_LT(first.gammaStats.passRatePercent, 100.0);
  releaseCompareGpuCache();
  const CompareResult cold = compareDoses(r);
  EXPECT_EQ(uploadVariant(cold), "copy");
}

TEST(CompareCuda, TheCachedBuffersAreCountedAsHeldAndNothingIsToGrowForTheSameDoses) {
  // compareDoses reads the GPU's free memory only when the backend must allocate beyond what it
  // keeps; what it keeps counts as free. Both numbers come from gpuCacheUse.
  REQUIRE_GPU();
  const Grid g = makeGrid(40, 36, 30, {2, 2, 2}, {0, 0, 0});
  auto f = randomSmoothDose(9, {10, 10, 10}, {70, 60, 50}, 6);
  CompareRequest r = request(sample(g, f), sample(g, [&](Vec3 p) { return 1.01 * f(p); }), 2, 2,
                             Backend::Cuda);
  const double n = double(g.voxelCount());
  releaseCompareGpuCache();
  const detail::GpuCacheUse before = detail::gpuCacheUse(r);
  EXPECT_EQ(before.held, 0.0);
  // reference, evaluated, gamma, difference, list and the lane groups' list: 6 floats a voxel.
  EXPECT_DOUBLE_EQ(before.toGrow, 6 * 4 * n);
  (void)compareDoses(r);
  const detail::GpuCacheUse after = detail::gpuCacheUse(r);
  EXPECT_GE(after.held, 6 * 4 * n);
  EXPECT_EQ(after.toGrow, 0.0);
  // A mask needs one more byte a voxel; a larger evaluated dose needs more than is held.
  CompareRequest masked = r;
  masked.mask = std::make_shared<Mask>(g, std::uint8_t(1));
  EXPECT_DOUBLE_EQ(detail::gpuCacheUse(masked).toGrow, n);
  CompareRequest larger = r;
  larger.evaluated = sample(makeGrid(80, 36, 30, {1, 2, 2}, {0, 0, 0}), f);
  EXPECT_DOUBLE_EQ(detail::gpuCacheUse(larger).toGrow, 4 * n);
  releaseCompareGpuCache();
  EXPECT_EQ(detail::gpuCacheUse(r).held, 0.0);
}

/// How many points the search profile says were handed to lane groups (-1: none handed on).
long long handedOn(const CompareResult& r) {
  for (const KernelProfile& p : r.profiles) {
    if (p.kernel != "gamma_search") continue;
    const std::size_t at = p.variant.find(", ");
    const std::size_t past = p.variant.find(" points past ");
    if (at == std::string::npos || past == std::string::npos) return -1;
    return std::stoll(p.variant.substr(at + 2, past - at - 2));
  }
  return -1;
}

TEST(CompareCuda, PointsFinishedByLaneGroupsAgreeWithTheCpu) {
  // The long searches of the CUDA backend go to groups of 8, 16 or 32 lanes with a shared stack
  // of boxes. Small budgets hand on nearly every point, and a 64-entry stack (room for 8 boxes'
  // children) sends many refined boxes down their lanes' own subtrees. The doses end at a cliff
  // (a body outline, as a planning system exports: no dose outside), where searches are longest.
  REQUIRE_GPU();
  const Grid gr = makeGrid(44, 40, 30, {2.0, 2.0, 2.0}, {0, 0, 0});
  const Grid ge = makeGrid(56, 50, 40, {1.7, 1.6, 1.5}, {-3, -2, -1});
  auto f = randomSmoothDose(21, {10, 10, 10}, {78, 70, 52}, 8);
  auto body = [&](Vec3 p, double scale) {
    const Vec3 q = p - Vec3{44, 40, 30};
    return q.x * q.x + q.y * q.y > 34.0 * 34.0 ? 0.0 : scale * f(p);
  };
  auto ref = sample(gr, [&](Vec3 p) { return body(p, 1.0); });
  auto eval = sample(ge, [&](Vec3 p) { return body(p + Vec3{1.0, -0.6, 0.4}, 1.02); });
  struct Schedule {
    int budget, group, stack;
  };
  for (const Schedule& c : {Schedule{1, 8, 64}, Schedule{4, 32, 64}, Schedule{2, 16, 64},
                            Schedule{24, 8, 256}, Schedule{24, 32, 1024}}) {
    const int budget = c.budget;
    SCOPED_TRACE("budget " + std::to_string(budget) + ", group " + std::to_string(c.group) +
                 ", stack " + std::to_string(c.stack));
    CompareRequest r = request(ref, eval, 2, 2);
    r.cudaTuning.stepBudget = budget;
    r.cudaTuning.laneGroup = c.group;
    r.cudaTuning.stackItems = c.stack;
    const Pair p = runBoth(r);
    expectAgreement(p, r.criteria.tolerance);
    EXPECT_GT(handedOn(p.gpu), budget == 1 ? p.gpu.gammaStats.evaluatedPoints / 2 : 10);
  }
  // Off: one lane a point to the end.
  CompareRequest r = request(ref, eval, 2, 2);
  r.cudaTuning.stepBudget = 0;
  const Pair p = runBoth(r);
  expectAgreement(p, r.criteria.tolerance);
  EXPECT_EQ(handedOn(p.gpu), -1);
}

}  // namespace
}  // namespace penumbra::compare
