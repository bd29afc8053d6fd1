// .mci reading (several runs, comments, messages naming the line) and the .mco layout.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "mcml/mcml_files.hpp"

using namespace penumbra;
using namespace penumbra::io;

namespace {
const std::string kData = MCML_TEST_DATA_DIR;

std::string errorOf(const std::string& text) {
  try {
    parseMci(text, "bad.mci");
  } catch (const Error& e) {
    return e.message();
  }
  return "no error";
}
}  // namespace

TEST(McmlFiles, ReadsSeveralRunsWithComments) {
  const std::vector<MciRun> runs = readMciFile(kData + "/skin_633nm.mci");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].outputFile, "skin_633nm.mco");
  EXPECT_EQ(runs[0].config.packets, 100000u);
  EXPECT_DOUBLE_EQ(runs[0].config.dz, 0.002);
  EXPECT_DOUBLE_EQ(runs[0].config.dr, 0.01);
  EXPECT_EQ(runs[0].config.nz, 256);
  EXPECT_EQ(runs[0].config.nr, 256);
  EXPECT_EQ(runs[0].config.na, 30);
  ASSERT_EQ(runs[0].medium.layers.size(), 5u);
  EXPECT_DOUBLE_EQ(runs[0].medium.layers[0].n, 1.5);
  EXPECT_DOUBLE_EQ(runs[0].medium.layers[4].mus, 194);
  EXPECT_DOUBLE_EQ(runs[0].medium.layers[3].d, 0.09);
  EXPECT_EQ(runs[1].outputFile, "skin_633nm_short.mco");
  EXPECT_EQ(runs[1].config.packets, 10000u);
}

TEST(McmlFiles, FormatThenParseRoundTrips) {
  const std::vector<MciRun> runs = readMciFile(kData + "/slab_matched.mci");
  const std::vector<MciRun> again = parseMci(formatMci(runs));
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].outputFile, runs[0].outputFile);
  EXPECT_EQ(again[0].config.packets, runs[0].config.packets);
  EXPECT_DOUBLE_EQ(again[0].medium.layers[0].g, 0.75);
  EXPECT_DOUBLE_EQ(again[0].medium.layers[0].d, 0.02);
}

TEST(McmlFiles, MalformedInputNamesTheLine) {
  const std::string head = "1.0\n1\n# comment line\nout.mco A\n1000\n";
  EXPECT_NE(errorOf(head + "0.01 x\n").find("bad.mci:6:"), std::string::npos)
      << errorOf(head + "0.01 x\n");
  EXPECT_NE(errorOf(head + "0.01 0.01\n10 10\n").find("bad.mci:7: missing na"), std::string::npos);
  const std::string layerBad = head + "0.01 0.01\n10 10 5\n1\n1.0\n1.4 1 10 1.5 0.1\n1.0\n";
  EXPECT_NE(errorOf(layerBad).find("bad.mci:10:"), std::string::npos) << errorOf(layerBad);
  EXPECT_NE(errorOf(head).find("unexpected end of file"), std::string::npos);
  EXPECT_THROW(readMciFile(kData + "/does_not_exist.mci"), Error);
}

/// A one-run .mci: line 3 the output name, 4 photons, 5 dz dr, 6 nz nr na, 7 layers, 8 n above,
/// 9 the layer, 10 n below.
std::string oneRun(const std::string& output, const std::string& photons = "1000",
                   const std::string& bins = "10 10 5",
                   const std::string& layer = "1.4 1 10 0.9 0.1",
                   const std::string& nAbove = "1.0") {
  return "1.0\n1\n" + output + " A\n" + photons + "\n0.01 0.01\n" + bins + "\n1\n" + nAbove + "\n" +
         layer + "\n1.0\n";
}

TEST(McmlFiles, OutputNamesStayInTheMciFolder) {
  // An absolute name or one with ".." used to overwrite files outside the .mci's folder.
  for (const std::string name :
       {"/tmp/evil.mco", "../evil.mco", "out/../../evil.mco", "..", "a/.."}) {
    const std::string e = errorOf(oneRun(name));
    EXPECT_NE(e.find("bad.mci:3: output file name '" + name +
                     "' must stay in the .mci's folder (no absolute path, no '..')"),
              std::string::npos)
        << e;
  }
  EXPECT_EQ(parseMci(oneRun("out/run1.mco"))[0].outputFile, "out/run1.mco");
  EXPECT_EQ(parseMci(oneRun("run..1.mco"))[0].outputFile, "run..1.mco");  // not a '..' component
}

TEST(McmlFiles, HugeCountsAreRangeCheckedNotWrapped) {
  // nz = 2^32 + 1 used to wrap to 1 through int.
  std::string e = errorOf(oneRun("out.mco", "1000", "4294967297 10 5"));
  EXPECT_NE(e.find("bad.mci:6: nz 4294967297 is out of range (1 to 2147483647)"), std::string::npos)
      << e;
  e = errorOf(oneRun("out.mco", "1000", "10 10 -3"));
  EXPECT_NE(e.find("bad.mci:6: na -3 is out of range (1 to 2147483647)"), std::string::npos) << e;
  e = errorOf(oneRun("out.mco", "1e30"));
  EXPECT_NE(
      e.find("bad.mci:4: the number of photons 1e+30 is out of range (1 to 9223372036854775807)"),
      std::string::npos)
      << e;
  e = errorOf(oneRun("out.mco", "1000.5"));
  EXPECT_NE(e.find("bad.mci:4: the number of photons must be an integer, found '1000.5'"),
            std::string::npos)
      << e;
  const std::vector<MciRun> ok = parseMci(oneRun("out.mco", "1e12", "2147483647 1 1"));
  EXPECT_EQ(ok[0].config.packets, 1000000000000u);
  EXPECT_EQ(ok[0].config.nz, 2147483647);
}

TEST(McmlFiles, NonFiniteAndUnphysicalValuesAreRefused) {
  std::string e = errorOf(oneRun("out.mco", "1000", "10 10 5", "1.4 1 10 0.9 inf"));
  EXPECT_NE(e.find("bad.mci:9: expected a finite number for d, found 'inf'"), std::string::npos)
      << e;
  e = errorOf(oneRun("out.mco", "1000", "10 10 5", "1.4 nan 10 0.9 0.1"));
  EXPECT_NE(e.find("bad.mci:9: expected a finite number for mua, found 'nan'"), std::string::npos)
      << e;
  e = errorOf(oneRun("out.mco", "1000", "10 10 5", "0.5 1 10 0.9 0.1"));
  EXPECT_NE(e.find("bad.mci:9: layer 1: refractive index 0.5 is below 1"), std::string::npos) << e;
  e = errorOf(oneRun("out.mco", "1000", "10 10 5", "1.4 1 10 0.9 0.1", "0.9"));
  EXPECT_NE(e.find("bad.mci:8: refractive index above 0.9 is below 1"), std::string::npos) << e;
  e = errorOf(oneRun("out.mco", "1000", "10 10 5", "1.4 1 10 0.9 0"));
  EXPECT_NE(e.find("bad.mci:9: layer 1: thickness 0 cm must be positive"), std::string::npos) << e;
}

TEST(McmlFiles, McoHasTheOriginalSectionsInOrder) {
  MciRun run = readMciFile(kData + "/slab_matched.mci")[0];
  run.config.packets = 2000;
  run.config.backend = Backend::Cpu;
  const mcml::McmlResult r = mcml::runMcml(run.medium, run.config);
  const std::string text = formatMco(run, r, 1.5);
  std::size_t pos = 0;
  for (const char* s : {"InParm", "RAT", "A_l", "A_z", "Rd_r", "Rd_a", "Tt_r", "Tt_a", "\nA_rz",
                        "\nRd_ra", "\nTt_ra"}) {
    const std::size_t at = text.find(s, pos);
    ASSERT_NE(at, std::string::npos) << s;
    pos = at;
  }
  EXPECT_NE(text.find("#Diffuse reflectance [-]"), std::string::npos);
}
