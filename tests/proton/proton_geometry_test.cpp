// IEC 61217 beam geometry for a head-first-supine patient, the BEV mapping, and the host
// float -> half conversion of the dose-deposition matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/beam_geometry.hpp"
#include "spmv/half_float.hpp"
#include "proton/pencil_beam_math.hpp"

namespace penumbra::proton {
namespace {

using spmv::floatToHalfBits;
using spmv::bitsToFloat;
using spmv::floatBits;
using spmv::halfBitsToFloat;

void expectVec(Vec3 a, Vec3 b, double tol = 1e-9) {
  EXPECT_NEAR(a.x, b.x, tol);
  EXPECT_NEAR(a.y, b.y, tol);
  EXPECT_NEAR(a.z, b.z, tol);
}

TEST(BeamGeometry, SourcePositionsAtCardinalGantryAngles) {
  const Vec3 iso{10, -20, 30};
  const double sad = 2000;
  // LPS: +x left, +y posterior, +z superior.
  expectVec(makeBeamFrame(0, 0, iso, sad).source, iso + Vec3{0, -sad, 0});    // anterior
  expectVec(makeBeamFrame(90, 0, iso, sad).source, iso + Vec3{sad, 0, 0});    // patient left
  expectVec(makeBeamFrame(180, 0, iso, sad).source, iso + Vec3{0, sad, 0});   // posterior
  expectVec(makeBeamFrame(270, 0, iso, sad).source, iso + Vec3{-sad, 0, 0});  // patient right
  expectVec(makeBeamFrame(-90, 0, iso, sad).source, iso + Vec3{-sad, 0, 0});
}

TEST(BeamGeometry, CouchRotation) {
  const Vec3 iso{0, 0, 0};
  // Couch 90 (counter-clockwise from above): the patient's feet swing to the gantry-90 side,
  // so a gantry-90 beam enters from the feet (inferior, -z LPS).
  expectVec(makeBeamFrame(90, 90, iso, 1000).source, Vec3{0, 0, -1000});
  expectVec(makeBeamFrame(90, 270, iso, 1000).source, Vec3{0, 0, 1000});
  // Couch rotation is about the vertical axis: a gantry-0 beam stays anterior.
  expectVec(makeBeamFrame(0, 90, iso, 1000).source, Vec3{0, -1000, 0});
  expectVec(makeBeamFrame(0, 37, iso, 1000).source, Vec3{0, -1000, 0});
}

TEST(BeamGeometry, AxesAreOrthonormalAndPointFromSourceToIsocentre) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> ang(-360, 360);
  for (int t = 0; t < 200; ++t) {
    const Vec3 iso{ang(rng), ang(rng), ang(rng)};
    const BeamFrame f = makeBeamFrame(ang(rng), ang(rng), iso, 1500);
    EXPECT_NEAR(norm(f.u), 1, 1e-12);
    EXPECT_NEAR(norm(f.v), 1, 1e-12);
    EXPECT_NEAR(norm(f.w), 1, 1e-12);
    EXPECT_NEAR(dot(f.u, f.v), 0, 1e-12);
    EXPECT_NEAR(dot(f.u, f.w), 0, 1e-12);
    EXPECT_NEAR(dot(f.v, f.w), 0, 1e-12);
    expectVec(f.source + 1500 * f.w, iso, 1e-9);
    // BEV round trip.
    const Vec3 p = f.bevToPatient(12.5, -7.25, 1730);
    double a, b, d;
    f.patientToBev(p, a, b, d);
    EXPECT_NEAR(a, 12.5, 1e-9);
    EXPECT_NEAR(b, -7.25, 1e-9);
    EXPECT_NEAR(d, 1730, 1e-9);
  }
}

TEST(BeamGeometry, LateralAxesFollowIecBeamLimitingDevice) {
  // Gantry 0: X_b = IEC X = patient left (+x LPS), Y_b = IEC Y = superior (+z LPS).
  const BeamFrame f0 = makeBeamFrame(0, 0, {0, 0, 0}, 1000);
  expectVec(f0.u, {1, 0, 0});
  expectVec(f0.v, {0, 0, 1});
  expectVec(f0.w, {0, 1, 0});
  // Gantry 90: the source is on the left, X_b points down (posterior, +y LPS).
  const BeamFrame f90 = makeBeamFrame(90, 0, {0, 0, 0}, 1000);
  expectVec(f90.u, {0, 1, 0});
  expectVec(f90.w, {-1, 0, 0});
}

TEST(BevSampling, TrilinearIsExactForLinearFields) {
  const BeamFrame f = makeBeamFrame(30, 10, {1, 2, 3}, 2000);
  pb::BevGeometry g{};
  for (int a = 0; a < 3; ++a) {
    g.source[a] = f.source[a];
    g.u[a] = f.u[a];
    g.v[a] = f.v[a];
    g.w[a] = f.w[a];
  }
  g.sad = 2000;
  g.nA = 7; g.nB = 5; g.nD = 9;
  g.a0 = -3; g.b0 = -2; g.da = 1; g.db = 1; g.d0 = 1990; g.dd = 2.5;
  std::vector<double> field(std::size_t(g.nA * g.nB * g.nD));
  for (int k = 0; k < g.nD; ++k)
    for (int j = 0; j < g.nB; ++j)
      for (int i = 0; i < g.nA; ++i) field[std::size_t((k * g.nB + j) * g.nA + i)] = 1 + 2 * i - 3 * j + 0.5 * k;
  const Vec3 p = f.bevToPatient(-0.3, 0.7, 2001.2);
  const double v = pb::sampleBev(field.data(), g, p.x, p.y, p.z);
  EXPECT_NEAR(v, 1 + 2 * 2.7 - 3 * 2.7 + 0.5 * (11.2 / 2.5), 1e-9);
  long long idx[8];
  double wt[8];
  ASSERT_TRUE(pb::bevCorners(g, p.x, p.y, p.z, idx, wt));
  double s = 0, ws = 0;
  for (int c = 0; c < 8; ++c) {
    s += wt[c] * field[std::size_t(idx[c])];
    ws += wt[c];
  }
  EXPECT_NEAR(s, v, 1e-9);
  EXPECT_NEAR(ws, 1, 1e-12);
  const Vec3 outside = f.bevToPatient(10, 0, 2000);
  EXPECT_EQ(pb::sampleBev(field.data(), g, outside.x, outside.y, outside.z), 0.0);
}

TEST(HalfFloat, EveryHalfRoundTripsAndMidpointsRoundToEven) {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = std::uint16_t(h);
    const float f = halfBitsToFloat(bits);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(f))));
      continue;
    }
    ASSERT_EQ(floatToHalfBits(f), bits) << "half 0x" << std::hex << h;
    // Midpoint to the next half of the same sign (finite, below the largest).
    if ((h & 0x7FFF) < 0x7BFF) {
      const float next = halfBitsToFloat(std::uint16_t(h + 1));
      const double mid = (double(f) + double(next)) / 2;  // exact in float (12 significant bits)
      const std::uint16_t even = (h & 1) ? std::uint16_t(h + 1) : bits;
      ASSERT_EQ(floatToHalfBits(float(mid)), even) << "midpoint above 0x" << std::hex << h;
      // Just above / below the midpoint rounds up / down.
      ASSERT_EQ(floatToHalfBits(std::nextafter(float(mid), std::signbit(f) ? -1e30f : 1e30f)), std::uint16_t(h + 1));
      ASSERT_EQ(floatToHalfBits(std::nextafter(float(mid), 0.0f)), bits);
    }
  }
}

TEST(HalfFloat, OverflowUnderflowAndSpecials) {
  EXPECT_EQ(floatToHalfBits(65504.f), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(65519.99f), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(65520.f), 0x7C00);  // ties to even: up to inf
  EXPECT_EQ(floatToHalfBits(-1e10f), 0xFC00);
  EXPECT_EQ(floatToHalfBits(INFINITY), 0x7C00);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000);  // tie to even (0)
  EXPECT_EQ(floatToHalfBits(std::nextafter(std::ldexp(1.0f, -25), 1.f)), 0x0001);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalfBits(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalfBits(1.0f / 3.0f), 0x3555);
  EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(NAN))));
#if defined(__FLT16_MAX__)
  // Cross-check against the compiler's _Float16 conversion on random floats.
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int t = 0; t < 1000000; ++t) {
    const float f = bitsToFloat(bits(rng));
    if (std::isnan(f)) continue;
    const _Float16 h = static_cast<_Float16>(f);
    std::uint16_t hb;
    std::memcpy(&hb, &h, 2);
    ASSERT_EQ(floatToHalfBits(f), hb) << f;
  }
#endif
}

}  // namespace
}  // namespace penumbra::proton
