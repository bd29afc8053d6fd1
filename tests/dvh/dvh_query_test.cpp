// DVH queries typed in the DVH panel ("D0.03cc, V20Gy, D95%, V95%"): the parser (units,
// brackets, case, separators, errors) and the evaluation on a hand-made cumulative DVH: 10 cc
// spread uniformly between 0 and 10 Gy, so V(d) = 10 - d cc and every value is checkable by
// hand, including points between the 1 Gy bin edges (linear interpolation). Then on a real
// DVH from the engine: the queries that duplicate a statistic give exactly that statistic.
#include <gtest/gtest.h>

#include <cmath>

#include "dvh/dvh.hpp"
#include "dvh/dvh_query.hpp"

using namespace penumbra;
using namespace penumbra::dvh;

namespace {

DvhResult uniformTenGy() {
  DvhResult r;
  r.structureName = "box";
  r.curve.binWidthGy = 1.0;
  for (int k = 0; k <= 10; ++k) {
    r.curve.doseGy.push_back(k);
    r.curve.volumeCc.push_back(10.0 - k);
    r.curve.volumePercent.push_back(10.0 * (10.0 - k));
  }
  r.stats.volumeCc = 10;
  r.stats.minGy = 0;
  r.stats.maxGy = 10;
  r.stats.meanGy = 5;
  return r;
}

double eval(const std::string& text, const DvhResult& r, double rx) {
  const DvhQueryParse p = parseDvhQueries(text);
  EXPECT_TRUE(p.ok()) << text;
  EXPECT_EQ(p.queries.size(), 1u) << text;
  return p.queries.empty() ? std::nan("") : evaluateDvhQuery(p.queries.front(), r, rx);
}

}  // namespace

TEST(DvhQuery, ParsesTheClinicalNotation) {
  const DvhQueryParse p = parseDvhQueries("D0.03cc, V20Gy;D95%  v95% d2CC,Dmean, V107%[cc], D98%[%], dmax");
  ASSERT_TRUE(p.ok()) << p.errors.front();
  ASSERT_EQ(p.queries.size(), 9u);
  const char* labels[] = {"D0.03cc", "V20Gy", "D95%", "V95%", "D2cc", "Dmean", "V107%[cc]", "D98%[%]", "Dmax"};
  const char* units[] = {"Gy", "%", "Gy", "%", "Gy", "Gy", "cc", "% Rx", "Gy"};
  for (std::size_t i = 0; i < p.queries.size(); ++i) {
    EXPECT_EQ(p.queries[i].label(), labels[i]);
    EXPECT_EQ(p.queries[i].resultUnitLabel(), units[i]) << labels[i];
  }
  EXPECT_EQ(p.queries[0].kind, DvhQuery::Kind::DoseAtVolume);
  EXPECT_EQ(p.queries[0].argumentUnit, DvhQuery::Unit::Cc);
  EXPECT_DOUBLE_EQ(p.queries[0].value, 0.03);
  EXPECT_EQ(p.queries[1].kind, DvhQuery::Kind::VolumeAtDose);
  EXPECT_EQ(p.queries[1].argumentUnit, DvhQuery::Unit::Gy);
  EXPECT_EQ(p.queries[3].argumentUnit, DvhQuery::Unit::Percent);
  // Duplicates are kept once; an empty text is no query and no error.
  EXPECT_EQ(parseDvhQueries("D95%, d95%").queries.size(), 1u);
  EXPECT_TRUE(parseDvhQueries(" , ").queries.empty());
  EXPECT_TRUE(parseDvhQueries("").ok());
}

TEST(DvhQuery, RejectsWhatItCannotRead) {
  for (const char* bad : {"D95", "V20", "X20Gy", "D20Gy", "Vcc", "D-5%", "D120%", "V20Gy[Gy]", "D95%[cc]",
                          "V20Gy[", "Dmedian", "D%"}) {
    const DvhQueryParse p = parseDvhQueries(bad);
    EXPECT_FALSE(p.ok()) << bad;
    EXPECT_TRUE(p.queries.empty()) << bad;
  }
  const DvhQueryParse mixed = parseDvhQueries("D95%, nonsense, V20Gy");
  ASSERT_EQ(mixed.errors.size(), 1u);
  EXPECT_NE(mixed.errors.front().find("'nonsense'"), std::string::npos);
  EXPECT_EQ(mixed.queries.size(), 2u);
}

TEST(DvhQuery, EvaluatesByLinearInterpolationOnTheCumulativeCurve) {
  const DvhResult r = uniformTenGy();
  const double rx = 8.0;
  // Dose to a volume: V(d) = 10 - d cc.
  EXPECT_NEAR(eval("D50%", r, rx), 5.0, 1e-12);
  EXPECT_NEAR(eval("D25%", r, rx), 7.5, 1e-12);   // 2.5 cc: between the 7 and 8 Gy edges
  EXPECT_NEAR(eval("D2cc", r, rx), 8.0, 1e-12);
  EXPECT_NEAR(eval("D0.03cc", r, rx), 9.97, 1e-12);
  EXPECT_NEAR(eval("D95%[%]", r, rx), 100 * 0.5 / 8.0, 1e-12);
  EXPECT_TRUE(std::isnan(eval("D10.5cc", r, rx)));  // more than the structure holds
  // Volume at a dose.
  EXPECT_NEAR(eval("V3Gy", r, rx), 70.0, 1e-12);
  EXPECT_NEAR(eval("V3.5Gy", r, rx), 65.0, 1e-12);
  EXPECT_NEAR(eval("V3.5Gy[cc]", r, rx), 6.5, 1e-12);
  EXPECT_NEAR(eval("V50%", r, rx), 60.0, 1e-12);  // 50 % of 8 Gy = 4 Gy
  EXPECT_NEAR(eval("V0Gy", r, rx), 100.0, 1e-12);
  EXPECT_NEAR(eval("V12Gy", r, rx), 0.0, 1e-12);
  // Statistics.
  EXPECT_DOUBLE_EQ(eval("Dmean", r, rx), 5.0);
  EXPECT_DOUBLE_EQ(eval("Dmax[%]", r, rx), 125.0);
  // In % of a prescription that is not there.
  EXPECT_TRUE(std::isnan(eval("V95%", r, 0)));
  EXPECT_TRUE(std::isnan(eval("D95%[%]", r, 0)));
  EXPECT_NEAR(eval("D95%", r, 0), 0.5, 1e-12);
  // An empty curve.
  EXPECT_TRUE(std::isnan(evaluateDvhQuery(parseDvhQueries("D95%").queries.front(), DvhResult{}, rx)));
}

TEST(DvhQuery, AgreesWithTheEngineStatistics) {
  // A 20 mm cube in a dose rising 1 Gy per mm along x: a real curve from the engine.
  Grid g;
  g.dims = {40, 40, 40};
  g.spacing = {1, 1, 1};
  g.origin = {-19.5, -19.5, -19.5};
  DoseVolume d;
  d.dose = Volume<float>(g, 0.0f);
  for (int k = 0; k < 40; ++k)
    for (int j = 0; j < 40; ++j)
      for (int i = 0; i < 40; ++i) d.dose.at(i, j, k) = float(30 + g.indexToWorld({double(i), 0, 0}).x);
  Structure s;
  s.name = "cube";
  for (double z = -9.5; z <= 9.5; z += 1.0) {
    Contour c;
    c.points = {{-10, -10, z}, {10, -10, z}, {10, 10, z}, {-10, 10, z}};
    s.contours.push_back(c);
  }
  DvhOptions o;
  o.prescriptionGy = 30;
  const DvhResult r = computeDvh(s, d, o);
  const DvhQueryParse p = parseDvhQueries("D95%, D50%, D2%, D0.03cc, V95%, V107%, Dmean");
  ASSERT_TRUE(p.ok());
  const double expected[] = {r.stats.d95Gy, r.stats.d50Gy, r.stats.d2Gy, r.stats.d0_03ccGy,
                             r.stats.v95Percent, r.stats.v107Percent, r.stats.meanGy};
  for (std::size_t i = 0; i < p.queries.size(); ++i)
    EXPECT_NEAR(evaluateDvhQuery(p.queries[i], r, 30), expected[i], 1e-9 * std::max(1.0, std::abs(expected[i])))
        << p.queries[i].label();
  // Uniform rise over 20 mm from 20 to 40 Gy: D50 = 30 Gy, V(28.5 Gy) = 57.5 %.
  EXPECT_NEAR(r.stats.d50Gy, 30.0, 0.05);
  EXPECT_NEAR(evaluateDvhQuery(p.queries[4], r, 30), 57.5, 0.3);
}
