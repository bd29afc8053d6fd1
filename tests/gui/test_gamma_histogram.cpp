// The Compare panel's gamma histogram against the comparison engine's verdict (gamma <= 1
// passes): the pass part of the bars adds up to the engine's passing points and the fail part
// to the rest, also for points with gamma == 1 exactly, which the histogram used to put in the
// fail bar (it passed a fine bin only when the bin's upper edge was <= 1). Doses with known
// gamma, computed by the engine on the CPU; no test data needed.
#include <cmath>

#include <QApplication>
#include <QTest>

#include "compare/compare.hpp"
#include "compare/compare_test_support.hpp"  // tests/compare: doses sampled on grids
#include "gui/compare/gamma_histogram.hpp"

using namespace penumbra;
using namespace penumbra::compare;
using namespace penumbra::compare::test;

namespace {

struct Counts {
  double pass = 0, fail = 0;
};

Counts histogramOf(const CompareResult& r, double cap) {
  gui::GammaHistogram h;
  h.setStatistics(r.gammaStats, cap);
  Counts c;
  for (double v : h.passCounts()) c.pass += v;
  for (double v : h.failCounts()) c.fail += v;
  return c;
}

std::int64_t countExactlyOne(const CompareResult& r) {
  std::int64_t n = 0;
  for (float g : r.gamma.data) n += g == 1.0f;
  return n;
}

}  // namespace

class GammaHistogramTest : public QObject {
  Q_OBJECT

private slots:
  /// 2 Gy everywhere against 2.5 Gy with DD 25 % of A's maximum (0.5 Gy): moving does not change
  /// the dose, so every point has gamma = 0.5 / 0.5 = 1 exactly (binary fractions): all pass.
  void gammaOfOneIsAPass() {
    const Grid g = makeGrid(12, 10, 8, {2.5, 2.5, 2.5}, {0, 0, 0});
    const CompareResult r = compareDoses(request(sample(g, [](Vec3) { return 2.0; }),
                                                 sample(g, [](Vec3) { return 2.5; }), 25, 3));
    const auto& s = r.gammaStats;
    QCOMPARE(s.evaluatedPoints, std::int64_t(12 * 10 * 8));
    QCOMPARE(countExactlyOne(r), s.evaluatedPoints);  // the case the test is about
    QCOMPARE(s.passedPoints, s.evaluatedPoints);
    const Counts c = histogramOf(r, 2.0);
    QCOMPARE(c.pass, double(s.passedPoints));
    QCOMPARE(c.fail, 0.0);
  }

  /// Slabs of 2.4, 2.5 and 2.6 Gy against 2 Gy (gamma 0.8, 1 and 1.2 inside the slabs, between
  /// them where the search reaches across): the pass part is the engine's count, for the
  /// default cap and for a cap that puts 1 inside a fine bin rather than on its edge.
  void passPartIsTheEnginesCount() {
    const Grid g = makeGrid(30, 6, 6, {2.5, 2.5, 2.5}, {0, 0, 0});
    auto eval = sample(g, [](Vec3 p) { return p.x < 25 ? 2.4 : (p.x < 50 ? 2.5 : 2.6); });
    for (const double cap : {2.0, 3.0}) {
      CompareRequest req = request(sample(g, [](Vec3) { return 2.0; }), eval, 25, 3);
      req.criteria.gammaCap = cap;
      const CompareResult r = compareDoses(req);
      const auto& s = r.gammaStats;
      const Counts c = histogramOf(r, cap);
      qInfo("cap %.0f: %lld points, %lld pass, %lld at gamma 1 exactly; histogram %.0f pass, %.0f fail", cap,
            (long long)s.evaluatedPoints, (long long)s.passedPoints, (long long)countExactlyOne(r), c.pass, c.fail);
      QVERIFY(countExactlyOne(r) > 0);
      QVERIFY(s.passedPoints > countExactlyOne(r) && s.passedPoints < s.evaluatedPoints);  // all three kinds
      QCOMPARE(c.pass, double(s.passedPoints));
      QCOMPARE(c.fail, double(s.evaluatedPoints - s.passedPoints));
    }
  }
};

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  GammaHistogramTest test;
  return QTest::qExec(&test, argc, argv);
}

#include "test_gamma_histogram.moc"
