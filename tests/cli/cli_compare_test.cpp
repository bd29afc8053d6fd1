// penumbra-cli compare and dvh (issue 13 item 2), run as the built executable: the printed
// numbers of a hand-checkable MetaImage pair, the brain SRS case's IMRT and VMAT doses (skipped
// without the shared data), and refusals that exit 1 naming the reason and write nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "../test_data.hpp"
#include "cli_run.hpp"
#include "core/dose_volume.hpp"
#include "image/metaimage_reader.hpp"
#include "image/metaimage_writer.hpp"
#ifdef PENUMBRA_HAVE_DICOM
#include "dicom/rt_dose_writer.hpp"
#endif

namespace {

using namespace penumbra::test_cli;
using penumbra::Grid;
using penumbra::Volume;

const std::string kBrain = "patients/brain-srs-raystation/";
const std::string kImrtDose = kBrain + "imrt/RD1.2.752.243.1.1.20180405114728128.4000.85245.dcm";
const std::string kVmatDose = kBrain + "vmat/RD1.2.752.243.1.1.20180405120828294.3200.66183.dcm";
const std::string kStructures = kBrain + "imrt/RS1.2.752.243.1.1.20180405120828292.2900.76357.dcm";

/// A uniform dose of `gy` on 12^3 voxels of 2 mm whose first voxel centre is at `x0` along x.
Volume<float> uniform(float gy, double x0 = -11) {
  Grid g;
  g.dims = {12, 12, 12};
  g.spacing = {2, 2, 2};
  g.origin = {x0, -11, -11};
  return Volume<float>(g, gy);
}

/// The number printed right after `label` in `text` (NaN when the label is absent).
double numberAfter(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return std::nan("");
  return std::strtod(text.c_str() + at + label.size(), nullptr);
}

/// The line of `text` that starts with `start` (empty when none does).
[[maybe_unused]] std::string lineStarting(const std::string& text, const std::string& start) {
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    if (text.compare(pos, start.size(), start) == 0) return text.substr(pos, end - pos);
    pos = end + 1;
  }
  return {};
}

std::vector<std::string> sortedEntries(const TempDir& dir) {
  std::vector<std::string> names = dir.entries();
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST(CliCompare, UniformMetaImagePairGivesTheClosedFormGamma) {
  // 2.03 Gy against 2 Gy: |A - B| = 1.5 % of the 2 Gy maximum everywhere, so gamma = 1.5 / DD:
  // 0.5 at 3 %/3 mm (all pass), 1.5 at 1 %/1 mm (none pass).
  TempDir dir;
  penumbra::io::writeMetaImage(dir.sub("ref.mhd"), uniform(2.0f), "Gy");
  penumbra::io::writeMetaImage(dir.sub("eval.mhd"), uniform(2.03f), "Gy");
  CliRun r = runCli(
      "compare ref.mhd eval.mhd --cutoff 10 --backend cpu --out gamma.mhd "
      "--out-difference diff.mhd --report report.txt",
      dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "pass rate: 100.00 % (1728 of 1728 evaluated points")) << r.output;
  EXPECT_TRUE(contains(r.output, "gamma: mean 0.500, ")) << r.output;
  EXPECT_TRUE(contains(r.output, ", max 0.500\n")) << r.output;
  EXPECT_TRUE(contains(r.output, "3 % / 3 mm global")) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "difference A - B over the evaluated points: mean -0.030 Gy "
                       "(-1.50 %), SD 0.000 Gy (0.00 %)"))
      << r.output;
  EXPECT_TRUE(contains(r.output, "12 x 12 x 12 voxels of 2 x 2 x 2 mm")) << r.output;
  EXPECT_NEAR(numberAfter(r.output, "max "), 2.0, 1e-9) << r.output;  // the reference's
  // The report is the printed text; the volumes hold gamma and A - B on the reference grid.
  const std::string report = slurp(dir.sub("report.txt"));
  EXPECT_FALSE(report.empty());
  EXPECT_EQ(r.output.compare(0, report.size(), report), 0) << report << "\n---\n" << r.output;
  const auto gamma = penumbra::io::readMetaImage(dir.sub("gamma.mhd"));
  const auto diff = penumbra::io::readMetaImage(dir.sub("diff.mhd"));
  ASSERT_EQ(gamma.volume.data.size(), 1728u);
  for (std::size_t i = 0; i < gamma.volume.data.size(); ++i) {
    ASSERT_NEAR(gamma.volume.data[i], 0.5, 1e-3) << i;
    ASSERT_NEAR(diff.volume.data[i], -0.03, 1e-6) << i;
  }

  r = runCli("compare ref.mhd eval.mhd --dd 1 --dta 1 --backend cpu", dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "pass rate: 0.00 % (0 of 1728 evaluated points")) << r.output;
  EXPECT_NEAR(numberAfter(r.output, "gamma: mean "), 1.5, 2e-3) << r.output;
  // A normalisation dose in Gy: 1.5 % of 2 Gy is 0.75 % of 4 Gy, gamma 0.25 at 3 %.
  r = runCli("compare ref.mhd eval.mhd --norm 4 --backend cpu", dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NEAR(numberAfter(r.output, "gamma: mean "), 0.25, 2e-3) << r.output;
  EXPECT_TRUE(contains(r.output, "normalisation to 4.000 Gy")) << r.output;
#ifdef PENUMBRA_HAVE_CASE_FILES
  // A case file's exported dose set: the only one, or the one named after '#'.
  std::ofstream(dir.sub("case.json"))
      << R"({"version": 1, "data": {"dicomFolder": "ct"}, "beams": [],
             "doseSets": [{"name": "run 1", "file": "ref.mhd"}]})";
  r = runCli("compare case.json eval.mhd --backend cpu", dir.str());
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "dose set of case.json)")) << r.output;
  EXPECT_TRUE(contains(r.output, "pass rate: 100.00 %")) << r.output;
  r = runCli("compare 'case.json#run 2' eval.mhd", dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "has no exported dose set 'run 2' (exported: 'run 1'"))
      << r.output;
#endif
}

TEST(CliCompare, BadInputsExitOneWithTheReasonAndWriteNothing) {
  TempDir dir;
  penumbra::io::writeMetaImage(dir.sub("ref.mhd"), uniform(2.0f), "Gy");
  penumbra::io::writeMetaImage(dir.sub("eval.mhd"), uniform(2.03f), "Gy");
  penumbra::io::writeMetaImage(dir.sub("far.mhd"), uniform(2.0f, 1000), "Gy");
  // A header claiming one slice more than its data file holds.
  std::string header = slurp(dir.sub("eval.mhd"));
  header.replace(header.find("DimSize = 12 12 12"), 18, "DimSize = 12 12 13");
  std::ofstream(dir.sub("short.mhd")) << header;
  const std::vector<std::string> inputs = sortedEntries(dir);
  const std::string outputs = " --out gamma.mhd --out-difference diff.mhd --report report.txt";
  struct Case {
    std::string args, message;
  };
  const std::vector<Case> cases = {
      {"compare missing.mhd eval.mhd", "REF: no such file 'missing.mhd'"},
      {"compare ref.mhd short.mhd",
       "EVAL: MetaImage 'short.mhd': DimSize: 12 12 13 needs 7488 bytes of MET_FLOAT in "
       "'eval.raw', which has 6912"},
      {"compare ref.mhd eval.mhd --dd 0", "dose criterion 0 % must be in (0, 100]"},
      {"compare ref.mhd far.mhd", "the doses do not overlap: reference x -11.0..11.0"},
      {"compare ref.mhd eval.mhd --norm abc", "--norm: expected 'max' or a dose in Gy, got 'abc'"},
      {"compare ref.mhd eval.mhd --local --cutoff 0", "a local gamma needs a low-dose cut-off"},
      {"compare ref.mhd eval.mhd --structures missing-rs.dcm",
       "structure set: no such file 'missing-rs.dcm'"},
  };
  for (const Case& c : cases) {
    const CliRun r = runCli(c.args + outputs, dir.str());
    EXPECT_EQ(r.status, 1) << c.args << ":\n" << r.output;
    EXPECT_TRUE(contains(r.output, c.message)) << c.args << ":\n" << r.output;
    EXPECT_FALSE(contains(r.output, "unexpected error")) << c.args << ":\n" << r.output;
    EXPECT_EQ(sortedEntries(dir), inputs) << c.args;
  }
  // Usage errors exit 2 with the usage.
  for (const std::string args : {"compare", "compare ref.mhd", "compare ref.mhd eval.mhd --bogus",
                                 "compare ref.mhd eval.mhd --out"}) {
    const CliRun r = runCli(args, dir.str());
    EXPECT_EQ(r.status, 2) << args << ":\n" << r.output;
    EXPECT_TRUE(contains(r.output, "usage: penumbra-cli compare REF EVAL")) << r.output;
  }
  EXPECT_EQ(sortedEntries(dir), inputs);
}

#ifdef PENUMBRA_HAVE_DICOM
TEST(CliCompare, RtDosesInDifferentFramesOrRelativeUnitsAreRefused) {
  TempDir dir;
  penumbra::DoseVolume a, b, relative;
  a.dose = uniform(2.0f);
  b.dose = uniform(2.03f);
  relative.dose = uniform(100.0f);
  relative.unit = "%";
  penumbra::io::RtDoseWriteOptions frame1, frame2;
  frame1.frameOfReferenceUid = "1.2.826.0.1.3680043.2.1125.1";
  frame2.frameOfReferenceUid = "1.2.826.0.1.3680043.2.1125.2";
  penumbra::io::writeRtDose(dir.sub("a.dcm"), a, frame1);
  penumbra::io::writeRtDose(dir.sub("b.dcm"), b, frame1);
  penumbra::io::writeRtDose(dir.sub("b2.dcm"), b, frame2);
  penumbra::io::writeRtDose(dir.sub("rel.dcm"), relative, frame1);
  CliRun r = runCli("compare a.dcm b.dcm --backend cpu", dir.str());  // the same frame: compared
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "pass rate: 100.00 %")) << r.output;
  r = runCli("compare a.dcm b2.dcm --out g.mhd", dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "the doses are in different frames of reference")) << r.output;
  r = runCli("compare rel.dcm b.dcm --out g.mhd", dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "REF: 'rel.dcm' has DoseUnits RELATIVE")) << r.output;
  EXPECT_FALSE(fs::exists(dir.sub("g.mhd")));
}

TEST(CliCompare, BrainImrtAgainstVmatWithStructures) {
  PENUMBRA_REQUIRE_DATA(kStructures);
  PENUMBRA_REQUIRE_DATA(kVmatDose);
  const std::string data = penumbra::test::testDataDir() + "/";
  const CliRun r = runCli("compare " + data + kImrtDose + " " + data + kVmatDose +
                          " --dd 3 --dta 3 --backend cpu --structures " + data + kStructures);
  ASSERT_EQ(r.status, 0) << r.output;
  // Exact gamma: the pass rate is a property of the two doses (54.67 % when this was written).
  const double pass = numberAfter(r.output, "pass rate: ");
  EXPECT_NEAR(pass, 54.67, 0.05) << r.output;
  EXPECT_TRUE(contains(r.output, "max 61.971 Gy")) << r.output;  // README: 61.97 Gy
  EXPECT_TRUE(contains(r.output, "max 52.495 Gy")) << r.output;  // README: 52.50 Gy
  // PTV_ALL in the pass-rate table and the DVH table; the DVH means agree with dicompyler-core's
  // (48.39 and 40.47 Gy, README) within 1 Gy (its 3 mm pixel counting on 1 mm planes differs).
  const std::string passRow = lineStarting(r.output, "  PTV_ALL  ");
  EXPECT_FALSE(passRow.empty()) << r.output;
  EXPECT_GT(numberAfter(passRow, "PTV_ALL"), 100) << passRow;  // evaluated points
  const std::string dvhTable =
      r.output.substr(std::min(r.output.find("DVH differences"), r.output.size()));
  const std::string dvhA = lineStarting(dvhTable, "  PTV_ALL ");
  ASSERT_FALSE(dvhA.empty()) << r.output;
  EXPECT_NEAR(numberAfter(dvhA, " A "), 48.39, 1.0) << dvhA;
  const std::string dvhB = dvhTable.substr(dvhTable.find(dvhA) + dvhA.size());
  EXPECT_NEAR(numberAfter(dvhB, " B "), 40.47, 1.0) << dvhB.substr(0, 200);
}

TEST(CliDvh, BrainStemRowAndCsvCurves) {
  PENUMBRA_REQUIRE_DATA(kStructures);
  const std::string data = penumbra::test::testDataDir() + "/";
  TempDir dir;
  CliRun r =
      runCli("dvh " + data + kStructures + " " + data + kImrtDose + " --csv dvh.csv", dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  // BRAIN STEM: dicompyler-core gives 24.47 cc and a mean of 2.53 Gy (README, summary_default).
  const std::string row = lineStarting(r.output, "BRAIN STEM ");
  ASSERT_FALSE(row.empty()) << r.output;
  EXPECT_NEAR(numberAfter(row, "BRAIN STEM"), 24.47, 0.5) << row;
  EXPECT_TRUE(contains(r.output, "skipped (no contour of three or more points): ptv4")) << r.output;
  const std::string csv = slurp(dir.sub("dvh.csv"));
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "structure,dose_gy,volume_percent,volume_cc");
  EXPECT_TRUE(contains(csv, "\nBRAIN STEM,0,100,")) << csv.substr(0, 200);
  EXPECT_TRUE(contains(csv, "\nBRAIN - PTV,0,100,")) << csv.substr(0, 200);
  // Named structures only; an unknown name is refused with the names the set has.
  r = runCli("dvh " + data + kStructures + " " + data + kImrtDose + " --structures 'BRAIN STEM'",
             dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_FALSE(lineStarting(r.output, "BRAIN STEM ").empty()) << r.output;
  EXPECT_TRUE(lineStarting(r.output, "BODY ").empty()) << r.output;
  r = runCli(
      "dvh " + data + kStructures + " " + data + kImrtDose + " --structures NOPE --csv x.csv",
      dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "has no structure 'NOPE' (it has: PTV_1, BODY, ")) << r.output;
  EXPECT_FALSE(fs::exists(dir.sub("x.csv")));
}
#endif
