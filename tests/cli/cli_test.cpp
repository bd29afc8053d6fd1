// penumbra-cli on bad input (issue 12, items 11-13): clear messages that name the option or file
// and the value, a non-zero exit status, nothing written half-way, and `CMD --help` for every
// subcommand.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"
#include "core/device.hpp"

namespace {

namespace fs = std::filesystem;
using namespace penumbra::test_cli;

bool haveGpu() { return !penumbra::queryCudaDevices().empty(); }

/// A copy of the matched-slab .mci in `dir` (so its .mco lands there), with `packets` photons.
std::string slabMci(const TempDir& dir, const std::string& packets = "2000") {
  std::string text = slurp(std::string(MCML_TEST_DATA_DIR) + "/slab_matched.mci");
  const std::string from = "200000                      # No. of photons";
  text.replace(text.find(from), from.size(), packets + " # No. of photons");
  const std::string path = dir.sub("slab.mci");
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(Cli, HelpWorksForEverySubcommand) {
  TempDir dir;  // "make-demo --help" used to write a phantom into a folder named "--help"
  for (const std::string cmd : {"devices", "inspect", "import", "make-demo", "proton", "photon",
                                "plan", "optimise", "mcml", "bench", "compare", "dvh"}) {
    for (const std::string flag : {"--help", "-h"}) {
      const CliRun r = runCli(cmd + " " + flag, dir.str());
      EXPECT_EQ(r.status, 0) << cmd << " " << flag << ":\n" << r.output;
      EXPECT_TRUE(contains(r.output, "usage: penumbra-cli " + cmd)) << cmd << " " << flag << ":\n"
                                                                    << r.output;
    }
  }
  EXPECT_TRUE(dir.entries().empty());
}

TEST(Cli, BadOptionValuesNameTheOption) {
  TempDir dir;
  const std::string mci = slabMci(dir);
  struct Case {
    std::string args, message;
  };
  std::vector<Case> cases = {
      {"mcml " + mci + " --packets abc",
       "--packets: expected a whole number from 1 to 9223372036854775807, got 'abc'"},
      {"mcml " + mci + " --packets 1e30", "--packets: expected a whole number from 1 to"},
      {"mcml " + mci + " --seed -1", "--seed: expected a whole number from 0 to"},
      {"mcml " + mci + " --batches 2.5", "--batches: expected an integer, got '2.5'"},
      {"mcml " + mci + " --max-cpu-hours x", "--max-cpu-hours: expected a number, got 'x'"},
      {"bench --reps abc", "--reps: expected an integer, got 'abc'"},
      {"bench mcml --packets 1e99", "--packets: expected a whole number from 10 to"},
  };
#if defined(PENUMBRA_HAVE_DICOM) && defined(PENUMBRA_HAVE_CASE_FILES)  // else plan is a stub
  const std::string plan = "plan --dicom " + dir.str() + " --target PTV --out " + dir.sub("c.json");
  cases.push_back({plan + " --fractions 2.5", "--fractions: expected an integer, got '2.5'"});
  cases.push_back({plan + " --spacing 5mm", "--spacing: expected a number, got '5mm'"});
#endif
  for (const Case& c : cases) {
    const CliRun r = runCli(c.args, dir.str());
    EXPECT_NE(r.status, 0) << c.args << ":\n" << r.output;
    EXPECT_TRUE(contains(r.output, c.message)) << c.args << ":\n" << r.output;
    EXPECT_FALSE(contains(r.output, "unexpected error")) << c.args << ":\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(dir.sub("slab_matched.mco")));  // nothing ran
}

TEST(Cli, McmlSaysWhenCudaFellBackAndStrictRefuses) {
  if (haveGpu()) GTEST_SKIP() << "a GPU is present: nothing falls back";
  TempDir dir;
  const std::string mci = slabMci(dir);
  CliRun r = runCli("mcml " + mci + " --backend cuda", dir.str());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "running on the CPU backend instead")) << r.output;
  EXPECT_TRUE(fs::exists(dir.sub("slab_matched.mco")));
  fs::remove(dir.sub("slab_matched.mco"));
  for (const std::string& cmd : {"mcml " + mci, std::string("proton --phantom water"),
                                 std::string("photon --phantom water --size 60")}) {
    r = runCli(cmd + " --backend cuda-strict", dir.str());
    EXPECT_EQ(r.status, 1) << cmd << ":\n" << r.output;
    EXPECT_TRUE(contains(r.output, "--backend cuda-strict: no usable GPU")) << cmd << ":\n"
                                                                            << r.output;
  }
  EXPECT_FALSE(fs::exists(dir.sub("slab_matched.mco")));
}

TEST(Cli, McmlRefusesHugeRunsUpFront) {
  TempDir dir;
  // 10^15 packets: refused on any CPU (the engine test covers 10^12 with a fixed thread count).
  const std::string mci = slabMci(dir, "1000000000000000");
  CliRun r = runCli("mcml " + mci + " --backend cpu", dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "1000000000000000 packets would take about")) << r.output;
  EXPECT_TRUE(contains(r.output, "--max-cpu-hours")) << r.output;
  EXPECT_FALSE(fs::exists(dir.sub("slab_matched.mco")));
}

TEST(Cli, OptimiseDoesNotOverwriteTheInputCaseUnlessAskedTo) {
#if !defined(PENUMBRA_HAVE_DICOM) || !defined(PENUMBRA_HAVE_CASE_FILES)
  GTEST_SKIP() << "this build has no case files";
#endif
  TempDir dir;
  const std::string caseFile = dir.sub("case.json");
  const std::string text =
      R"({"version": 1, "data": {"dicomFolder": "no-such-folder"}, "beams": []})";
  std::ofstream(caseFile) << text;
  CliRun r = runCli("optimise --case " + caseFile, dir.str());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "give --out-case FILE.json, or --in-place to overwrite"))
      << r.output;
  EXPECT_EQ(slurp(caseFile), text);
  // --in-place is accepted (this case then fails on its missing DICOM folder, not on options).
  r = runCli("optimise --case " + caseFile + " --in-place", dir.str());
  EXPECT_FALSE(contains(r.output, "--in-place to overwrite")) << r.output;
  EXPECT_EQ(slurp(caseFile), text);
  r = runCli("optimise --case " + caseFile + " --in-place --out-case " + dir.sub("o.json"),
             dir.str());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--in-place and --out-case exclude each other")) << r.output;
}

TEST(Cli, ProtonRecordWithoutATargetSaysSo) {
  TempDir dir;
  CliRun r = runCli("proton --record", dir.str());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--record needs --case CASE.json and --out FILE.mhd")) << r.output;
  r = runCli("proton --case " + dir.sub("missing.json") + " --record", dir.str());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--record needs --case CASE.json and --out FILE.mhd")) << r.output;
}

TEST(Cli, FailedDoseWriteLeavesNoPartialFiles) {
  // A file-size limit (which binds root too) makes the 6 MB .raw fail after 4 KiB, as a full disk
  // would; SIGXFSZ is ignored so that the write returns EFBIG instead of killing the process.
  TempDir dir;
  std::ofstream(dir.sub("old.mhd")) << "previous header";
  CliRun r = runCli("proton --phantom water --out " + dir.sub("dose.mhd"), dir.str(),
                    "trap '' XFSZ; ulimit -f 4;");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, dir.sub("dose.raw"))) << r.output;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"old.mhd"}) << r.output;
  // The same over an existing dose: the old files stay as they were.
  r = runCli("proton --phantom water --out " + dir.sub("old.mhd"), dir.str(),
             "trap '' XFSZ; ulimit -f 4;");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_EQ(slurp(dir.sub("old.mhd")), "previous header");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"old.mhd"}) << r.output;
  // An unwritable target (its folder is a file): a message naming it, nothing written.
  r = runCli("proton --phantom water --out " + dir.sub("old.mhd") + "/dose.mhd", dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot write MetaImage")) << r.output;
  // Without the limit the same command writes both files.
  r = runCli("proton --phantom water --out " + dir.sub("dose.mhd"), dir.str());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(fs::file_size(dir.sub("dose.raw")), 100u * 160u * 100u * 4u);
  EXPECT_TRUE(contains(slurp(dir.sub("dose.mhd")), "ElementDataFile = dose.raw"));
}
