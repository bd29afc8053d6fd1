// penumbra-cli compare --report FILE.pdf, run as the built executable: the PDF read back with
// tests/pdf_test_reader.hpp (structure, text, images), its numbers against the CLI's own stdout
// (the brain SRS case, skipped without the shared data), and failures that leave nothing behind
// and never touch an existing report.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "../pdf_test_reader.hpp"
#include "../test_data.hpp"
#include "cli_run.hpp"
#include "image/metaimage_writer.hpp"
#include "report/compare_colours.hpp"

namespace {

using namespace penumbra::test_cli;
namespace tp = penumbra::test_pdf;

/// A uniform dose of `gy` on 12^3 voxels of 2 mm (as cli_compare_test.cpp's).
penumbra::Volume<float> uniform(float gy) {
  penumbra::Grid g;
  g.dims = {12, 12, 12};
  g.spacing = {2, 2, 2};
  g.origin = {-11, -11, -11};
  return penumbra::Volume<float>(g, gy);
}

/// The text after `label` up to the next `end` (empty when the label is absent).
std::string between(const std::string& text, const std::string& label, const std::string& end) {
  const auto at = text.find(label);
  if (at == std::string::npos) return {};
  const auto from = at + label.size();
  return text.substr(from, text.find(end, from) - from);
}

/// The image XObjects of a PDF.
std::vector<const tp::Object*> images(const tp::Pdf& pdf) {
  std::vector<const tp::Object*> out;
  for (const auto& [id, o] : pdf.objects)
    if (o.dict.find("/Subtype /Image") != std::string::npos) out.push_back(&o);
  return out;
}

/// The whitespace-separated words of a line.
[[maybe_unused]] std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

/// The line of `text` that starts with `start` (empty when none does).
std::string lineStarting(const std::string& text, const std::string& start, std::size_t from = 0) {
  for (std::size_t pos = from; pos < text.size();) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    if (text.compare(pos, start.size(), start) == 0) return text.substr(pos, end - pos);
    pos = end + 1;
  }
  return {};
}

[[maybe_unused]] std::string joinLines(const std::vector<std::string>& cells) {
  std::string s;
  for (const auto& c : cells) s += c + "\n";
  return s;
}

void writePair(const TempDir& dir) {
  penumbra::io::writeMetaImage(dir.sub("ref.mhd"), uniform(2.0f), "Gy");
  penumbra::io::writeMetaImage(dir.sub("eval.mhd"), uniform(2.03f), "Gy");
}

}  // namespace

TEST(CliComparePdf, UniformPairGivesAPdfWithThePrintedNumbersAndGammaColours) {
  // 1.5 % everywhere: gamma 0.5 at 3 %/3 mm (every voxel passes), 1.5 at 1 %/1 mm (none does).
  TempDir dir;
  writePair(dir);
  for (const auto& [args, gamma] :
       {std::pair{std::string(""), 0.5}, std::pair{std::string(" --dd 1 --dta 1"), 1.5}}) {
    const CliRun r =
        runCli("compare ref.mhd eval.mhd --backend cpu --report Report.PDF" + args, dir.str());
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(contains(r.output, "wrote Report.PDF (PDF report)")) << r.output;
    const std::string bytes = slurp(dir.sub("Report.PDF"));
    const tp::Pdf pdf = tp::readPdf(bytes);
    ASSERT_TRUE(pdf.problems.empty()) << ::testing::PrintToString(pdf.problems);
    EXPECT_GE(tp::pageCount(pdf), 1);
    const std::string text = tp::allText(pdf);
    const std::string printed = between(r.output, "pass rate: ", " %");
    ASSERT_FALSE(printed.empty()) << r.output;
    EXPECT_TRUE(contains(text, "Gamma pass rate: " + printed + " %\n")) << text;
    const std::string counts = between(lineStarting(r.output, "pass rate: "), "(", " evaluated");
    EXPECT_TRUE(contains(text, "\n" + counts + " evaluated points with gamma <= 1\n")) << counts;
    EXPECT_TRUE(contains(text, "12 x 12 x 12 voxels of 2 x 2 x 2 mm")) << text;
    EXPECT_TRUE(contains(text, "maximum 2.000 Gy\n")) << text;
    EXPECT_TRUE(contains(text, "maximum 2.030 Gy\n")) << text;
    EXPECT_TRUE(contains(text, "Reviewed by (name)")) << text;
    // Three slices of 12 x 12 voxels and the colour bar; every voxel of a slice has the
    // GUI's colour of its gamma (the same everywhere here: blue for 0.5, red-orange for 1.5).
    const auto found = images(pdf);
    ASSERT_EQ(found.size(), 4u);
    const penumbra::io::Rgb c = penumbra::io::gammaColour(gamma, 2.0);
    const unsigned char expected[3] = {(unsigned char)std::lround(c[0] * 255),
                                       (unsigned char)std::lround(c[1] * 255),
                                       (unsigned char)std::lround(c[2] * 255)};
    int slices = 0;
    for (const tp::Object* o : found) {
      const long w = tp::dictNumber(o->dict, "Width"), h = tp::dictNumber(o->dict, "Height");
      ASSERT_EQ(o->data.size(), std::size_t(w * h * 3)) << o->dict;
      if (w != 12 || h != 12) continue;  // the colour bar
      ++slices;
      for (std::size_t p = 0; p < o->data.size(); ++p)  // +-1: gamma is exact within 1e-3
        ASSERT_NEAR((unsigned char)o->data[p], expected[p % 3], 1) << "byte " << p << args;
    }
    EXPECT_EQ(slices, 3);
  }
}

#ifdef PENUMBRA_HAVE_DICOM
TEST(CliComparePdf, BrainCasePdfHasTheNumbersOfStdout) {
  const std::string brain = "patients/brain-srs-raystation/";
  const std::string rs = brain + "imrt/RS1.2.752.243.1.1.20180405120828292.2900.76357.dcm";
  const std::string vmat = brain + "vmat/RD1.2.752.243.1.1.20180405120828294.3200.66183.dcm";
  PENUMBRA_REQUIRE_DATA(rs);
  PENUMBRA_REQUIRE_DATA(vmat);
  const std::string data = penumbra::test::testDataDir() + "/";
  TempDir dir;
  const CliRun r = runCli(
      "compare " + data + brain + "imrt/RD1.2.752.243.1.1.20180405114728128.4000.85245.dcm " +
          data + vmat + " --backend cpu --structures " + data + rs + " --report brain.pdf",
      dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  const tp::Pdf pdf = tp::readPdf(slurp(dir.sub("brain.pdf")));
  ASSERT_TRUE(pdf.problems.empty()) << ::testing::PrintToString(pdf.problems);
  EXPECT_GE(tp::pageCount(pdf), 3);  // results, maps and tables, 24 DVHs
  const std::string text = tp::allText(pdf);
  const std::string printed = between(r.output, "pass rate: ", " %");
  EXPECT_NEAR(std::stod(printed), 54.67, 0.05) << r.output;  // README
  EXPECT_TRUE(contains(text, "Gamma pass rate: " + printed + " %\n")) << text.substr(0, 2000);
  EXPECT_TRUE(contains(text, "maximum 61.971 Gy\n")) << text.substr(0, 2000);
  const std::string gammaLine = lineStarting(r.output, "gamma: mean ");
  EXPECT_TRUE(
      contains(text, "over the evaluated points\n" + between(gammaLine, "mean ", ",") + "\n"))
      << gammaLine;
  // PTV_ALL's pass-rate row and its three DVH rows hold the printed values, cell by cell.
  const std::string passRow = lineStarting(r.output, "  PTV_ALL  ");
  ASSERT_EQ(words(passRow).size(), 4u) << passRow;
  EXPECT_TRUE(contains(text, joinLines(words(passRow)))) << passRow;
  const std::size_t dvhAt = r.output.find("DVH differences");
  const std::string dvhA = lineStarting(r.output, "  PTV_ALL ", dvhAt);
  const std::size_t rowB = r.output.find('\n', r.output.find(dvhA)) + 1;
  const std::size_t rowD = r.output.find('\n', rowB) + 1;
  const auto a = words(dvhA), b = words(r.output.substr(rowB, rowD - rowB - 1));
  const auto d = words(r.output.substr(rowD, r.output.find('\n', rowD) - rowD));
  ASSERT_EQ(a.size(), 9u) << dvhA;
  ASSERT_EQ(b.size(), 8u);
  ASSERT_EQ(d.size(), 8u);
  std::vector<std::string> expected = a;
  expected.push_back("");  // the B row leaves the structure cell empty
  expected.insert(expected.end(), b.begin(), b.end());
  expected.insert(expected.end(), {"", "A - B"});  // the text report writes "A-B"
  expected.insert(expected.end(), d.begin() + 1, d.end());
  EXPECT_TRUE(contains(text, joinLines(expected))) << joinLines(expected);
  EXPECT_EQ(images(pdf).size(), 4u);
}
#endif

TEST(CliComparePdf, ReportInAMissingFolderFailsAtOnceAndLeavesNothing) {
  TempDir dir;
  writePair(dir);
  const auto before = dir.entries();
  const CliRun r =
      runCli("compare ref.mhd eval.mhd --backend cpu --report nowhere/r.pdf", dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "cannot write PDF report 'nowhere/r.pdf': cannot create a "
                       "temporary file in 'nowhere': No such file or directory"))
      << r.output;
  EXPECT_FALSE(contains(r.output, "pass rate")) << r.output;  // refused before computing
  EXPECT_EQ(dir.entries(), before);
}

TEST(CliComparePdf, AFailedRunLeavesAnExistingReportAsItWas) {
  TempDir dir;
  writePair(dir);
  std::ofstream(dir.sub("report.pdf")) << "previous report";
  const auto before = dir.entries();
  // Refused by the engine after the report's temporary file was made.
  CliRun r = runCli("compare ref.mhd eval.mhd --dd 0 --report report.pdf", dir.str());
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "dose criterion 0 % must be in (0, 100]")) << r.output;
  EXPECT_EQ(slurp(dir.sub("report.pdf")), "previous report");
  EXPECT_EQ(dir.entries(), before);
  // The write itself fails half way: a 1 KiB file-size limit (which binds root too; SIGXFSZ
  // ignored so that write() returns EFBIG) against a PDF of several KiB, as a full disk would.
  r = runCli("compare ref.mhd eval.mhd --backend cpu --report report.pdf", dir.str(),
             "trap '' XFSZ; ulimit -f 1;");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "cannot write PDF report 'report.pdf': File too large "
                       "(existing file untouched)"))
      << r.output;
  EXPECT_EQ(slurp(dir.sub("report.pdf")), "previous report");
  EXPECT_EQ(dir.entries(), before);
  // Without the limit the same run replaces it with a PDF larger than that limit.
  r = runCli("compare ref.mhd eval.mhd --backend cpu --report report.pdf", dir.str());
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string pdf = slurp(dir.sub("report.pdf"));
  EXPECT_EQ(pdf.substr(0, 8), "%PDF-1.4");
  EXPECT_GT(pdf.size(), 1024u);
  EXPECT_EQ(dir.entries(), before);
}
