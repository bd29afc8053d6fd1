// The error-scenario options that `robust` and `optimise --robust` share (app/cli/robust_options):
// a bad --range, --setup or --scenarios is refused by both commands with the same status and the
// same words, before anything is read (the case here does not even exist) or written.
#include <gtest/gtest.h>

#include <string>

#include "cli_run.hpp"

using namespace penumbra::test_cli;

TEST(CliRobustOptions, BothCommandsRefuseABadScenarioOptionAlike) {
  TempDir dir;
  struct Case {
    std::string options;
    std::string words;
  };
  const Case cases[] = {
      {"--scenarios 0",
       "--scenarios 0: with --range 3.5 and --setup 3 the set has 21 (range x setup) or 9"},
      {"--scenarios -9", "--scenarios -9: with --range 3.5 and --setup 3 the set has 21"},
      {"--scenarios 2", "--scenarios 2: with --range 3.5 and --setup 3 the set has 21"},
      {"--scenarios 2.5", "--scenarios: expected an integer, got '2.5'"},
      {"--range 0 --setup 0 --scenarios 5",
       "--scenarios 5: with --range 0 and --setup 0 the set has 1"},
      {"--range abc", "--range: expected a number, got 'abc'"},
      {"--range ''", "--range: expected a number, got ''"},
      {"--setup 1e400", "--setup: expected a number, got '1e400'"},
      {"--range 60", "range error 60 %"},
      {"--setup 80", "setup error 80"},
  };
  for (const Case& c : cases) {
    const CliRun robust = runCli("robust --phantom box " + c.options, dir.str());
    const CliRun optimise = runCli(
        "optimise --case none.json --out-case out.json --robust cowc " + c.options, dir.str());
    EXPECT_EQ(robust.status, 1) << c.options << "\n" << robust.output;
    EXPECT_EQ(optimise.status, 1) << c.options << "\n" << optimise.output;
    EXPECT_TRUE(contains(robust.output, c.words)) << c.options << "\n" << robust.output;
    // One message from one function: the same text, not merely the same words.
    EXPECT_EQ(optimise.output, robust.output) << c.options;
  }
  EXPECT_TRUE(dir.entries().empty()) << "a refused run wrote a file";
}
