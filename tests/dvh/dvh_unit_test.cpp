// Hand-checkable DVH cases: boxes and cylinders in uniform and linear doses, holes, end caps,
// dose outside the grid, the mask method, the O(1) histogram deposits, cancel.
#include <gtest/gtest.h>

#include <cmath>

#include "dvh/dose_histogram.hpp"
#include "dvh/dvh.hpp"

using namespace penumbra;
using namespace penumbra::dvh;

namespace {

// Dose grid of n^3 voxels of `s` mm centred on the origin, dose = a + b . x (Gy, x in mm).
DoseVolume linearDose(int n, double s, double a, Vec3 b) {
  Grid g;
  g.dims = {n, n, n};
  g.spacing = {s, s, s};
  g.origin = {-(n - 1) * s / 2, -(n - 1) * s / 2, -(n - 1) * s / 2};
  DoseVolume d;
  d.dose = Volume<float>(g, 0.0f);
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const Vec3 p = g.indexToWorld({double(i), double(j), double(k)});
        d.dose.at(i, j, k) = float(a + dot(b, p));
      }
  return d;
}

Contour square(double cx, double cy, double half, double z, bool clockwise = false) {
  Contour c;
  c.points = {{cx - half, cy - half, z}, {cx + half, cy - half, z}, {cx + half, cy + half, z},
              {cx - half, cy + half, z}};
  if (clockwise) std::swap(c.points[1], c.points[3]);
  return c;
}

Contour circle(double r, double z, int n = 720) {
  Contour c;
  for (int i = 0; i < n; ++i) {
    const double t = 2 * M_PI * i / n;
    c.points.push_back({r * std::cos(t), r * std::sin(t), z});
  }
  return c;
}

// Box of half size `half` in x, y with contour planes z = z0, z0 + dz, ..., n planes.
Structure boxStructure(double half, double z0, double dz, int n) {
  Structure s;
  s.name = "box";
  for (int i = 0; i < n; ++i) s.contours.push_back(square(0, 0, half, z0 + i * dz));
  return s;
}

}  // namespace

TEST(DvhHistogram, UniformDepositIsExactAtEveryEdge) {
  detail::DoseHistogram h(0.5, 10);
  h.addUniform(1.2, 2.2, 4.0);  // 4 mm^3 spread over [1.2, 2.2] Gy
  h.addPoint(3.0, 1.0);
  const auto c = h.cumulativeAtEdges();
  EXPECT_NEAR(c[0], 5.0, 1e-12);
  EXPECT_NEAR(c[2], 5.0, 1e-12);             // >= 1.0 Gy
  EXPECT_NEAR(c[3], 1.0 + 4.0 * 0.7, 1e-12); // >= 1.5 Gy
  EXPECT_NEAR(c[4], 1.0 + 4.0 * 0.2, 1e-12); // >= 2.0 Gy
  EXPECT_NEAR(c[5], 1.0, 1e-12);             // >= 2.5 Gy
  EXPECT_NEAR(c[6], 1.0, 1e-12);             // >= 3.0 Gy: the point at 3.0 counts
  EXPECT_NEAR(c[7], 0.0, 1e-12);
}

TEST(DvhContour, BoxInUniformDoseHasExactVolumeAndDoses) {
  const DoseVolume dose = linearDose(40, 2.0, 10.0, {0, 0, 0});
  // 20 x 20 mm square on 11 planes 2 mm apart: slabs 11 x 2 mm with the end caps.
  const Structure s = boxStructure(10, -10, 2, 11);
  DvhOptions o;
  o.prescriptionGy = 10;
  const DvhResult r = computeContourDvh(s, dose, o);
  EXPECT_NEAR(r.stats.volumeCc, 20 * 20 * 22 / 1000.0, 1e-9);
  EXPECT_NEAR(r.stats.meanGy, 10.0, 1e-5);
  EXPECT_NEAR(r.stats.minGy, 10.0, 1e-5);
  EXPECT_NEAR(r.stats.maxGy, 10.0, 1e-5);
  EXPECT_NEAR(r.stats.d50Gy, 10.0, 1e-5);
  EXPECT_NEAR(r.stats.d98Gy, 10.0, 1e-5);
  EXPECT_NEAR(r.stats.v95Percent, 100.0, 1e-6);
  EXPECT_NEAR(r.stats.v107Percent, 0.0, 1e-6);
  EXPECT_TRUE(r.warnings.empty());
  EXPECT_EQ(r.contourPlanes, 11);
}

TEST(DvhContour, LinearGradientAlongSlicesGivesLinearCurve) {
  // Dose 12 + 1 Gy/mm * z; box z in [-11, 11] (planes -10..10, caps 1 mm): uniform in z.
  const DoseVolume dose = linearDose(40, 2.0, 12.0, {0, 0, 1});
  const DvhResult r = computeContourDvh(boxStructure(10, -10, 2, 11), dose);
  EXPECT_NEAR(r.stats.meanGy, 12.0, 1e-4);
  EXPECT_NEAR(r.stats.minGy, 1.0, 1e-4);  // end-cap faces
  EXPECT_NEAR(r.stats.maxGy, 23.0, 1e-4);
  EXPECT_NEAR(r.stats.d50Gy, 12.0, 0.02);
  EXPECT_NEAR(r.stats.d95Gy, 23.0 - 0.95 * 22, 0.02);
  EXPECT_NEAR(r.stats.d5Gy, 23.0 - 0.05 * 22, 0.02);
  // Curve: V(>= d) = (23 - d) / 22 of the volume for d in [1, 23].
  for (double d : {2.0, 7.5, 13.25, 20.0})
    EXPECT_NEAR(volumeAtDoseCc(r.curve, d) / r.stats.volumeCc, (23 - d) / 22, 1e-3) << d;
}

TEST(DvhContour, InPlaneGradientAndCircleAreaWithinSampling) {
  const DoseVolume dose = linearDose(40, 2.0, 20.0, {0, 1, 0});
  Structure s;
  s.name = "cyl";
  for (int i = 0; i < 9; ++i) s.contours.push_back(circle(10, -8 + 2 * i));
  const DvhResult r = computeContourDvh(s, dose);
  const double exact = M_PI * 100 * 18 / 1000.0;
  EXPECT_NEAR(r.stats.volumeCc, exact, 1e-3 * exact);
  EXPECT_NEAR(r.stats.meanGy, 20.0, 0.01);
  EXPECT_NEAR(r.stats.minGy, 10.0, 0.01);  // contour vertex at y = -10
  EXPECT_NEAR(r.stats.maxGy, 30.0, 0.01);
  EXPECT_NEAR(r.stats.d50Gy, 20.0, 0.02);
}

TEST(DvhContour, HoleDrawnAsSecondContourIsEmpty) {
  const DoseVolume dose = linearDose(40, 2.0, 5.0, {0, 0, 0});
  Structure s;
  s.name = "ring";
  for (int i = 0; i < 5; ++i) {
    s.contours.push_back(square(0, 0, 10, 2.0 * i));
    s.contours.push_back(square(0, 0, 4, 2.0 * i, /*clockwise=*/true));
  }
  const DvhResult r = computeContourDvh(s, dose);
  EXPECT_NEAR(r.stats.volumeCc, (400 - 64) * 10 / 1000.0, 1e-9);
}

TEST(DvhContour, VolumeOutsideTheDoseGridIsReportedAndCountedAtZero) {
  const DoseVolume dose = linearDose(10, 2.0, 10.0, {0, 0, 0});  // covers [-10, 10] mm
  // Box x in [0, 20]: half of it beyond the grid's +x face.
  Structure s;
  s.name = "half-out";
  for (int i = 0; i < 5; ++i) s.contours.push_back(square(10, 0, 10, -4 + 2.0 * i));
  DvhResult r = computeContourDvh(s, dose);
  EXPECT_NEAR(r.outsideDoseGridFraction, 0.5, 1e-9);
  EXPECT_NEAR(r.stats.volumeCc, 4.0, 1e-9);
  EXPECT_NEAR(r.stats.meanGy, 5.0, 1e-5);
  EXPECT_NEAR(r.stats.minGy, 0.0, 1e-9);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("outside the dose grid"), std::string::npos);
  DvhOptions o;
  o.outside = OutsideDosePolicy::Exclude;
  r = computeContourDvh(s, dose, o);
  EXPECT_NEAR(r.stats.volumeCc, 2.0, 1e-9);
  EXPECT_NEAR(r.stats.meanGy, 10.0, 1e-5);
}

TEST(DvhMask, VoxelCountTimesVoxelVolume) {
  const DoseVolume dose = linearDose(20, 3.0, 2.0, {0, 0, 0});
  Mask m(dose.dose.grid, 0);
  int count = 0;
  for (int k = 3; k < 9; ++k)
    for (int j = 2; j < 7; ++j)
      for (int i = 5; i < 12; ++i, ++count) m.at(i, j, k) = 1;
  const DvhResult r = computeMaskDvh(m, dose, {}, {}, "m");
  EXPECT_DOUBLE_EQ(r.stats.volumeCc, count * 27.0 / 1000.0);
  EXPECT_FLOAT_EQ(float(r.stats.meanGy), 2.0f);
  EXPECT_FLOAT_EQ(float(r.stats.d2Gy), 2.0f);
  EXPECT_EQ(r.method, DvhMethod::Mask);
}

TEST(DvhContour, CancelThrows) {
  const DoseVolume dose = linearDose(20, 2.0, 1.0, {0, 0, 0});
  CancelToken token;
  token.requestCancel();
  JobControl job;
  job.cancel = &token;
  EXPECT_THROW(computeContourDvh(boxStructure(5, 0, 2, 3), dose, {}, job), CancelledError);
}

TEST(DvhContour, PointRoiIsRejected) {
  const DoseVolume dose = linearDose(10, 2.0, 1.0, {0, 0, 0});
  Structure s;
  s.name = "iso";
  s.contours.push_back(Contour{{{0, 0, 0}}});
  EXPECT_THROW(computeDvh(s, dose), Error);
}
