// penumbra-cli optimise --robust (issue 16, item 3): on a BOXPHANTOM case, one dose matrix per
// scenario, the nominal and the robust plan, both plans' target D95 in every scenario, and the
// robust weights written to the case; bad robust options are refused before the import.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "../test_data.hpp"
#include "cli_run.hpp"

using namespace penumbra::test_cli;

namespace {

/// The two numbers of a scenario's row ("  range +3.5%   1.6470   1.7378"), or false.
[[maybe_unused]] bool rowValues(const std::string& output, const std::string& scenario, double& nominal,
               double& robust) {
  const std::size_t at = output.find("\n  " + scenario + " ");
  if (at == std::string::npos) return false;
  return std::sscanf(output.c_str() + at + 3 + scenario.size(), "%lf %lf", &nominal, &robust) == 2;
}

}  // namespace

TEST(CliOptimiseRobust, PrintsBothPlansPerScenarioAndWritesTheRobustPlan) {
#if !defined(PENUMBRA_HAVE_DICOM) || !defined(PENUMBRA_HAVE_CASE_FILES)
  GTEST_SKIP() << "this build has no case files";
#else
  PENUMBRA_REQUIRE_DATA("phantoms/BOXPHANTOM");
  TempDir dir;
  CliRun r =
      runCli("plan --dicom " + penumbra::test::dataPath("phantoms/BOXPHANTOM") +
                 " --target OuterTarget --gantry 90 --dose-grid 8 --out " + dir.sub("plan.json"),
             dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  r = runCli(
      "optimise --case plan.json --out-case robust.json --backend cpu --iterations 6 --robust cowc "
      "--scenarios 9 --range 3 --setup 2",
      dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "robust: 9 scenario matrices of ")) << r.output;
  EXPECT_TRUE(contains(r.output, "scenario matrices: 9 built on cpu, products on cpu")) << r.output;
  EXPECT_TRUE(contains(r.output, "robust optimisation (cowc, 9 scenarios)")) << r.output;
  EXPECT_TRUE(contains(r.output, "nominal plan  robust plan")) << r.output;
  // --range 3 and --setup 2 reached the scenarios; every row has two doses near 2 Gy.
  for (const char* s :
       {"nominal", "range -3%", "range +3%", "shift +2 mm L", "shift -2 mm S", "worst"}) {
    double a = 0, b = 0;
    ASSERT_TRUE(rowValues(r.output, s, a, b)) << s << "\n" << r.output;
    EXPECT_GT(a, 0.5) << s;
    EXPECT_GT(b, 0.5) << s;
    EXPECT_LT(a, 3.0) << s;
    EXPECT_LT(b, 3.0) << s;
  }
  EXPECT_TRUE(contains(r.output, "wrote robust.json with the optimised weights")) << r.output;
  // The written case records the mode and the scenarios used ...
  const std::string written = slurp(dir.sub("robust.json"));
  EXPECT_TRUE(contains(written, "\"robustMode\": \"composite-worst-case\"")) << written;
  EXPECT_TRUE(contains(written, "\"rangeError\": 3")) << written;
  EXPECT_TRUE(contains(written, "\"setupError\": 2")) << written;
  // ... so that optimising it again without --robust does what it says, and --robust none the
  // nominal plan (which the case then records).
  r = runCli("optimise --case robust.json --out-case again.json --backend cpu --iterations 6",
             dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "robust optimisation as the case says: cowc over 9 scenarios"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "robust optimisation (cowc, 9 scenarios)")) << r.output;
  r = runCli("optimise --case robust.json --out-case none.json --backend cpu --iterations 6 "
             "--robust none",
             dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(contains(r.output, "robust optimisation")) << r.output;
  EXPECT_FALSE(contains(slurp(dir.sub("none.json")), "robustMode"));
  // The robust weights differ from the nominal optimiser's on the same case.
  r = runCli("optimise --case plan.json --out-case nominal.json --backend cpu --iterations 6",
             dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(slurp(dir.sub("robust.json")), slurp(dir.sub("nominal.json")));
#endif
}

TEST(CliOptimiseRobust, RefusesBadRobustOptions) {
  TempDir dir;
  CliRun r = runCli("optimise --case none.json --out-case out.json --range 3", dir.str());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--range, --setup and --scenarios need --robust cowc|expected"))
      << r.output;
  r = runCli("optimise --case none.json --out-case out.json --robust none --setup 2", dir.str());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--range, --setup and --scenarios need --robust cowc|expected"))
      << r.output;
  r = runCli("optimise --case none.json --out-case out.json --robust minimax", dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(
      contains(r.output, "robust mode 'minimax': use 'cowc' (composite worst case) or 'expected'"))
      << r.output;
  r = runCli("optimise --case none.json --out-case out.json --robust cowc --scenarios 2",
             dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "--scenarios 2: with --range 3.5 and --setup 3 the set has 21"))
      << r.output;
  r = runCli("optimise --case none.json --out-case out.json --robust cowc --range 60", dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "range error 60 %")) << r.output;
}
