// penumbra-cli robust (issue 16, item 5): on the built-in BOXPHANTOM (no DICOM needed) it prints
// a table with a row per metric and structure, the time, and writes the CSV and the worst-case
// and spread MetaImages; bad arguments get a message naming them and no output files.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "../test_data.hpp"
#include "cli_run.hpp"

namespace {

using namespace penumbra::test_cli;

/// The table's rows as printed: lines that start with the structure and have the metric next.
std::vector<std::string> tableLines(const std::string& output, const std::string& structure) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(structure + " ", 0) == 0) lines.push_back(line);
  return lines;
}

TEST(CliRobust, BoxPhantomPrintsTheTableAndWritesItsFiles) {
  TempDir dir;
  const CliRun r = runCli("robust --phantom box --scenarios 9 --backend cpu --csv table.csv "
                          "--out-worst worst.mhd --out-spread spread.mhd",
                          dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "9 scenarios (range +-3.5 %, setup 3 mm)")) << r.output;
  const std::vector<std::string> target = tableLines(r.output, "OuterTarget");
  const std::vector<std::string> body = tableLines(r.output, "Body");
  ASSERT_EQ(target.size(), 3u) << r.output;
  ASSERT_EQ(body.size(), 3u) << r.output;
  EXPECT_TRUE(contains(target[0], " D98 ") && contains(target[1], " D95 ") && contains(target[2], " Dmean "))
      << r.output;
  EXPECT_TRUE(contains(body[0], " D2 ") && contains(body[1], " Dmax ") && contains(body[2], " Dmean "))
      << r.output;
  // Targets carry a limit (95 % of the nominal Dmean) and a verdict; the body has none.
  for (const std::string& line : target)
    EXPECT_TRUE(contains(line, "Dmean") || contains(line, "VIOLATED") || contains(line, " ok")) << line;
  EXPECT_TRUE(contains(r.output, "evaluated 9 scenarios in ")) << r.output;
  EXPECT_TRUE(contains(r.output, "per scenario median")) << r.output;

  const std::string csv = slurp(dir.sub("table.csv"));
  EXPECT_EQ(csv.rfind("structure,metric,nominal_gy,worst_gy,best_gy,worst_scenario,limit_gy,flag\n", 0), 0u) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 7) << csv;
  EXPECT_TRUE(contains(csv, "\"OuterTarget\",D95,")) << csv;
  for (const char* f : {"worst.mhd", "worst.raw", "spread.mhd", "spread.raw"})
    EXPECT_TRUE(fs::exists(dir.sub(f))) << f;
  // 160^3 float voxels each.
  EXPECT_EQ(fs::file_size(dir.sub("worst.raw")), 160u * 160u * 160u * 4u);
  EXPECT_TRUE(contains(slurp(dir.sub("worst.mhd")), "DimSize = 160 160 160")) << slurp(dir.sub("worst.mhd"));
}

TEST(CliRobust, CaseFileTakesItsStructuresAndThePrescriptionsLimit) {
#if !defined(PENUMBRA_HAVE_DICOM) || !defined(PENUMBRA_HAVE_CASE_FILES)
  GTEST_SKIP() << "this build has no case files";
#else
  PENUMBRA_REQUIRE_DATA("phantoms/BOXPHANTOM");
  TempDir dir;
  CliRun r = runCli("plan --dicom " + penumbra::test::dataPath("phantoms/BOXPHANTOM") +
                        " --target OuterTarget --gantry 90 --dose-grid 6 --dose-per-fraction 2 --out plan.json",
                    dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  r = runCli("robust --case plan.json --scenarios 9 --backend cpu --csv t.csv", dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "prescription 2 Gy per fraction")) << r.output;
  // The case's target (OuterTarget) and external (BODY), with the target's limit at 95 % of
  // the prescription: 1.9 Gy.
  const std::vector<std::string> target = tableLines(r.output, "OuterTarget");
  ASSERT_EQ(target.size(), 3u) << r.output;
  EXPECT_TRUE(contains(target[0], " D98 ") && contains(target[0], " 1.9 ")) << target[0];
  EXPECT_TRUE(contains(target[1], " D95 ") && contains(target[1], " 1.9 ")) << target[1];
  EXPECT_EQ(tableLines(r.output, "BODY").size(), 3u) << r.output;
  EXPECT_TRUE(contains(slurp(dir.sub("t.csv")), "\"OuterTarget\",D98,")) << slurp(dir.sub("t.csv"));
#endif
}

TEST(CliRobust, BadArgumentsAreRefusedWithAMessage) {
  TempDir dir;
  struct Case {
    std::string args;
    int status;
    std::string words;
  };
  const Case cases[] = {
      {"robust", 2, "give either --case CASE.json or --phantom"},
      {"robust --phantom box --case x.json", 2, "give either --case CASE.json or --phantom"},
      {"robust --phantom lung", 1, "unknown phantom 'lung'"},
      {"robust --phantom box --range -1", 1, "range error -1"},
      {"robust --phantom box --range abc", 1, "--range: expected a number, got 'abc'"},
      {"robust --phantom box --setup 80", 1, "setup error 80"},
      {"robust --phantom box --scenarios 2", 1, "--scenarios 2: with --range 3.5 and --setup 3 the set has 21"},
      {"robust --phantom box --scenarios 2.5", 1, "--scenarios: expected an integer"},
      {"robust --phantom box --sphere 5000", 1, "5000 shift directions"},
      {"robust --phantom box --dose-grid 0.01", 1, "--dose-grid: 0.01 mm is outside"},
      {"robust --phantom box --backend gpu", 1, "--backend"},
      {"robust --phantom box --bogus", 2, "unexpected argument '--bogus'"},
      {"robust --case missing.json --csv out.csv", 1, "missing.json"},
  };
  for (const Case& c : cases) {
    const CliRun r = runCli(c.args, dir.str());
    EXPECT_EQ(r.status, c.status) << c.args << "\n" << r.output;
    EXPECT_TRUE(contains(r.output, c.words)) << c.args << "\n" << r.output;
  }
  EXPECT_TRUE(dir.entries().empty()) << "a refused run wrote a file";
  const CliRun help = runCli("robust --help", dir.str());
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(contains(help.output, "usage: penumbra-cli robust")) << help.output;
}

}  // namespace
