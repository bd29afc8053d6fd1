// penumbra-cli optimise with the objectives saved in the case (issue 14, item 4): on a BOXPHANTOM
// plan, a case without objectives optimises the defaults; the same case with objectives (by
// structure name) and optimiser options optimises those instead: another objective value from
// the first iteration on, the case's iteration count and matrix cut-off, a warning for a
// structure the patient lacks, and the objectives kept in the case it writes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "../test_data.hpp"
#include "cli_run.hpp"

#ifdef PENUMBRA_HAVE_CASE_FILES
#include "case/case_file.hpp"
#endif

namespace {

using namespace penumbra::test_cli;

/// f of iteration 0 as printed ("  iter    0  f 1.059277e+01  |pg| ..."), or NaN.
[[maybe_unused]] double firstObjective(const std::string& output) {
  const std::string key = "iter    0  f ";
  const std::size_t at = output.find(key);
  return at == std::string::npos ? std::nan("") : std::stod(output.substr(at + key.size()));
}

}  // namespace

TEST(CliOptimise, UsesTheObjectivesSavedInTheCase) {
#if !defined(PENUMBRA_HAVE_DICOM) || !defined(PENUMBRA_HAVE_CASE_FILES)
  GTEST_SKIP() << "this build has no case files";
#else
  PENUMBRA_REQUIRE_DATA("phantoms/BOXPHANTOM");
  using penumbra::optimise::StructureRole;
  using penumbra::optimise::TermType;
  TempDir dir;
  // A 6 mm dose grid keeps D at 512 000 x ~6 000 (a few seconds on one core).
  CliRun r = runCli("plan --dicom " + penumbra::test::dataPath("phantoms/BOXPHANTOM") +
                        " --target OuterTarget --gantry 90 --dose-grid 6 --out " + dir.sub("plan.json"),
                    dir.str());
  ASSERT_EQ(r.status, 0) << r.output;

  r = runCli("optimise --case plan.json --out-case defaults.json --backend cpu --iterations 2", dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "objectives: defaults from the structure kinds and the prescription"))
      << r.output;
  const double fDefaults = firstObjective(r.output);
  ASSERT_TRUE(std::isfinite(fDefaults)) << r.output;

  penumbra::io::CaseFile c = penumbra::io::readCaseFile(dir.sub("plan.json"));
  c.optimisation.objectives = {
      {"OuterTarget", StructureRole::Target, {{TermType::Uniform, 2.0, 1.0}, {TermType::MaxDose, 2.1, 5.0}}},
      {"NoSuchOrgan", StructureRole::OrganAtRisk, {{TermType::MaxDose, 1.0, 1.0}}},
      {"BODY", StructureRole::OrganAtRisk, {{TermType::MaxDose, 1.0, 2.0}, {TermType::MeanDose, 0.0, 0.1}}}};
  c.optimisation.options = penumbra::io::CaseOptimiserOptions{1e-3, 3, std::nullopt};
  penumbra::io::writeCaseFile(dir.sub("objectives.json"), c);

  r = runCli("optimise --case objectives.json --out-case optimised.json --backend cpu", dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "objectives: the case's")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "warning: objective of structure 'NoSuchOrgan' skipped: the structure set has no such structure"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "objective BODY                     mean")) << r.output;
  EXPECT_TRUE(contains(r.output, "objective OuterTarget              max    2.100 Gy  weight   5.0")) << r.output;
  EXPECT_TRUE(contains(r.output, "cut-off 1e-03")) << r.output;  // the case's, not the engine's 1e-4
  EXPECT_TRUE(contains(r.output, "iter    3  f")) << r.output;   // the case's 3 iterations
  EXPECT_FALSE(contains(r.output, "iter    4  f")) << r.output;
  const double fCase = firstObjective(r.output);
  ASSERT_TRUE(std::isfinite(fCase)) << r.output;
  EXPECT_GT(std::abs(fCase - fDefaults), 1e-3 * fDefaults) << "case " << fCase << ", defaults " << fDefaults;

  // The written case keeps its objectives, and --iterations overrides the case's count.
  const penumbra::io::CaseFile out = penumbra::io::readCaseFile(dir.sub("optimised.json"));
  ASSERT_EQ(out.optimisation.objectives.size(), 3u);
  EXPECT_EQ(out.optimisation.objectives[2].terms[1].type, TermType::MeanDose);
  r = runCli("optimise --case objectives.json --out-case again.json --backend cpu --iterations 1", dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "iter    1  f")) << r.output;
  EXPECT_FALSE(contains(r.output, "iter    2  f")) << r.output;
#endif
}
