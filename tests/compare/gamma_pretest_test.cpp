// The search's pre-test (detail::ruledOut, gamma_search.hpp): a box it drops is one whose full
// evaluation would neither lower the best value found nor ask to be refined, so skipping it
// leaves the search exactly as it was. Checked box by box on seeded random cells, points and
// best values, in both precisions the engine searches in.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "compare/gamma_search.hpp"

namespace penumbra::compare {
namespace {

template <typename Real>
void checkRuledOutBoxesChangeNothing(unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  GammaField<Real> f;
  for (int a = 0; a < 3; ++a) {
    f.n[a] = 8;
    f.cells[a] = 7;
    f.h[a] = Real(0.25 + unit(rng));  // spacing / DTA
    f.w[a] = f.h[a];
    f.invw[a] = Real(1) / f.h[a];
  }
  int dropped = 0, kept = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    Real c[8], lo[3], ur[3];
    for (Real& v : c) v = Real(4 * unit(rng));  // doses / DD
    for (int a = 0; a < 3; ++a) {
      ur[a] = Real(unit(rng)) * f.w[a];  // the point, in its own cell (offset 0)
      lo[a] = Real(int(unit(rng) * 5) - 2) * f.h[a];  // the box's cell, up to 2 cells away
    }
    const Real dr = Real(4 * unit(rng));
    detail::Best<Real> best;
    const Real g = Real(0.05 + 2 * unit(rng));
    best.g2 = g * g;
    best.tol = Real(1e-3);
    best.limit2 = Real(4);
    const Real b = g - best.tol;
    best.prune2 = b > Real(0) ? b * b : Real(0);
    detail::BoxCursor box;
    box.level = int(unit(rng) * 6);
    const int side = 1 << box.level;
    box.ix = int(unit(rng) * side);
    box.iy = int(unit(rng) * side);
    box.iz = int(unit(rng) * side);
    const bool out = detail::ruledOut(c, lo, f, ur, dr, best, box);
    detail::Best<Real> evaluated = best;
    const bool refine = detail::boxUndecided(c, lo, f, ur, dr, evaluated, box);
    if (!out) {
      ++kept;
      continue;
    }
    ++dropped;
    ASSERT_FALSE(refine) << "trial " << trial;
    ASSERT_EQ(evaluated.g2, best.g2) << "trial " << trial << ": a dropped box lowered best";
    ASSERT_EQ(evaluated.depthLimited, best.depthLimited);
  }
  // Both outcomes occur often enough for the check to mean something.
  EXPECT_GT(dropped, 2000);
  EXPECT_GT(kept, 2000);
}

TEST(GammaPretest, ABoxRuledOutWouldNeitherLowerBestNorBeRefinedInFloat) {
  checkRuledOutBoxesChangeNothing<float>(7u);
}

TEST(GammaPretest, ABoxRuledOutWouldNeitherLowerBestNorBeRefinedInDouble) {
  checkRuledOutBoxesChangeNothing<double>(11u);
}

TEST(GammaSearchParts, BoxWidthsAreExactPowersOfTwoAtEveryLevel) {
  // pow2Neg builds 2^-level from exponent bits; the boxes' corners (t0, t1) rely on it exactly.
  for (int level = 0; level <= kGammaMaxLevel; ++level) {
    EXPECT_EQ(detail::pow2Neg<float>(level), std::ldexp(1.0f, -level)) << level;
    EXPECT_EQ(detail::pow2Neg<double>(level), std::ldexp(1.0, -level)) << level;
  }
}

}  // namespace
}  // namespace penumbra::compare
