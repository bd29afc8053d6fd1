// io/report/pdf_writer and report_flow: the file's structure read back with the small reader of
// tests/pdf_test_reader.hpp (every xref offset at its "N 0 obj", page counts, stream lengths),
// text that round-trips through the escaping, images that decode to Width x Height x 3 bytes,
// and widths hand-checked against Adobe's font metrics.
#include "report/pdf_writer.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../pdf_test_reader.hpp"
#include "core/error.hpp"
#include "report/report_flow.hpp"

namespace {

using namespace penumbra::io::pdf;
using penumbra::test_pdf::allText;
using penumbra::test_pdf::pageCount;
using penumbra::test_pdf::readPdf;

/// `pages` pages with a line of text each; two images on the first.
Document sampleDocument(int pages) {
  Document doc;
  std::vector<std::uint8_t> rgb(4 * 3 * 3);
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = std::uint8_t(i * 7);
  const ImageId a = doc.addImage(4, 3, rgb);
  const ImageId b = doc.addImage(1, 1, {255, 0, 0});
  for (int p = 0; p < pages; ++p) {
    Page& page = doc.addPage();
    page.text(72, 700, Font::Helvetica, 12, "page " + std::to_string(p + 1));
    page.line(72, 690, 300, 690, 0.5, {0.5, 0.5, 0.5}, 2);
    page.fillRect(72, 600, 100, 50, {0.9, 0.9, 0.9});
    page.strokeRect(72, 600, 100, 50, 1);
    if (p == 0) {
      page.image(a, 72, 400, 120, 90);
      page.image(b, 200, 400, 10, 10);
    }
  }
  doc.setInfo({"A title (with parentheses)", "subject", "penumbra tests", pdfDate(0)});
  return doc;
}

}  // namespace

TEST(PdfWriter, XrefOffsetsPointAtEveryObject) {
  const std::string bytes = sampleDocument(3).serialize();
  const auto pdf = readPdf(bytes);
  EXPECT_TRUE(pdf.problems.empty()) << ::testing::PrintToString(pdf.problems);
  // Catalog, pages, info, 3 fonts, 2 images, and a page object and a content stream per page.
  ASSERT_EQ(pdf.objects.size(), 6u + 2u + 2u * 3u);
  for (const auto& [id, object] : pdf.objects) {
    const std::string head = std::to_string(id) + " 0 obj\n";
    EXPECT_EQ(bytes.substr(object.offset, head.size()), head) << "object " << id;
  }
  EXPECT_NE(pdf.trailer.find("/Root 1 0 R"), std::string::npos) << pdf.trailer;
  EXPECT_EQ(bytes.substr(bytes.size() - 6), "%%EOF\n");

  // The check can fail: one byte more in front of the objects moves every one of them.
  std::string shifted = bytes;
  shifted.insert(shifted.find("1 0 obj"), " ");
  const auto broken = readPdf(shifted);
  EXPECT_FALSE(broken.problems.empty());
}

TEST(PdfWriter, PageCountMatchesThePagesAdded) {
  for (int pages : {1, 2, 7}) {
    const auto pdf = readPdf(sampleDocument(pages).serialize());
    ASSERT_TRUE(pdf.problems.empty()) << ::testing::PrintToString(pdf.problems);
    EXPECT_EQ(pageCount(pdf), pages);
    EXPECT_EQ(penumbra::test_pdf::dictNumber(pdf.objects.at(2).dict, "Count"), pages);
    const std::string text = allText(pdf);
    EXPECT_NE(text.find("page " + std::to_string(pages) + "\n"), std::string::npos) << text;
  }
  Document empty;  // a PDF needs a page
  EXPECT_THROW(empty.serialize(), penumbra::Error);
}

TEST(PdfWriter, TextEscapingRoundTrips) {
  const std::vector<std::string> samples = {
      "plain text",
      "(balanced) and )unbalanced( parentheses",
      "back\\slash \\( \\) \\\\",
      "Gy \xC2\xB1 1 % at 5 \xC2\xB5m, 90\xC2\xB0, caf\xC3\xA9, \xC3\x85ngstr\xC3\xB6m",  // Latin-1
      "tab\there",
  };
  Document doc;
  Page& page = doc.addPage();
  double y = 800;
  for (const std::string& s : samples) page.text(50, y -= 20, Font::Courier, 10, s);
  const std::string bytes = doc.serialize();
  const auto pdf = readPdf(bytes);
  ASSERT_TRUE(pdf.problems.empty()) << ::testing::PrintToString(pdf.problems);
  std::string expected;
  for (const std::string& s : samples) expected += s + "\n";
  EXPECT_EQ(allText(pdf), expected);
  // What the reader could not be trusted to undo: the escapes themselves, and the 7-bit content.
  EXPECT_EQ(literalString("a(b)c\\"), "(a\\(b\\)c\\\\)");
  EXPECT_EQ(literalString(toWinAnsi("\xC2\xB5")), "(\\265)");
  // WinAnsi's own characters, the two signs it lacks written out, anything else as '?'.
  EXPECT_EQ(toWinAnsi("\xE2\x80\x93\xE2\x82\xAC"), "\x96\x80");  // en dash, euro
  EXPECT_EQ(toWinAnsi("\xE2\x89\xA4 1, \xE2\x89\xA5 2"), "<= 1, >= 2");
  EXPECT_EQ(toWinAnsi("\xCE\xB3 = 1"), "? = 1");  // gamma: not in WinAnsi
  EXPECT_EQ(toWinAnsi("bad \xC3"), "bad ?");      // a sequence cut short
  EXPECT_EQ(toWinAnsi("\x80x"), "?x");            // a stray continuation byte
}

TEST(PdfWriter, ImageDecodesToWidthTimesHeightTimesThreeBytes) {
  const int w = 37, h = 23;
  std::vector<std::uint8_t> rgb(std::size_t(w * h * 3));
  for (std::size_t i = 0; i < rgb.size(); ++i) rgb[i] = std::uint8_t((i * 31) ^ (i >> 3));
  Document doc;
  const ImageId id = doc.addImage(w, h, rgb);
  doc.addPage().image(id, 50, 50, 370, 230);
  const auto pdf = readPdf(doc.serialize());
  ASSERT_TRUE(pdf.problems.empty()) << ::testing::PrintToString(pdf.problems);
  int images = 0;
  for (const auto& [objectId, o] : pdf.objects) {
    if (o.dict.find("/Subtype /Image") == std::string::npos) continue;
    ++images;
    const long width = penumbra::test_pdf::dictNumber(o.dict, "Width");
    const long height = penumbra::test_pdf::dictNumber(o.dict, "Height");
    EXPECT_EQ(width, w);
    EXPECT_EQ(height, h);
    ASSERT_EQ(o.data.size(), std::size_t(width * height * 3));
    EXPECT_EQ(o.data, std::string(rgb.begin(), rgb.end()));
    EXPECT_EQ(o.dict.find("/FlateDecode") != std::string::npos, Document::compresses());
  }
  EXPECT_EQ(images, 1);
  EXPECT_THROW(doc.addImage(2, 2, std::vector<std::uint8_t>(11)), penumbra::Error);
  EXPECT_THROW(doc.addImage(0, 2, {}), penumbra::Error);
}

TEST(PdfWriter, TextWidthsFollowTheAfmMetrics) {
  // G 778 + a 556 + m 833 + m 833 + a 556 = 3556 units of 1/1000 em.
  EXPECT_NEAR(textWidth(Font::Helvetica, 10, "Gamma"), 35.56, 1e-9);
  // Bold: G 778 + a 556 + m 889 + m 889 + a 556 = 3668.
  EXPECT_NEAR(textWidth(Font::HelveticaBold, 10, "Gamma"), 36.68, 1e-9);
  EXPECT_NEAR(textWidth(Font::Courier, 10, "0123456789"), 60, 1e-9);
  EXPECT_NEAR(textWidth(Font::Helvetica, 10, "\xC2\xB0"), 4.0, 1e-9);  // degree, one byte
}

TEST(ReportFlow, WrapsAtSpacesAndInsideLongPathsAndPaginates) {
  const std::string path =
      "/work/shared/data/patients/brain-srs-raystation/imrt/"
      "RD1.2.752.243.1.1.20180405114728128.4000.85245.dcm";
  const auto lines = ReportFlow::wrap(path, Font::Courier, 8, 150);
  ASSERT_GT(lines.size(), 1u);
  std::string joined;
  for (const auto& l : lines) {
    EXPECT_LE(textWidth(Font::Courier, 8, l), 150) << l;
    joined += l;
  }
  EXPECT_EQ(joined, path);  // nothing lost or added
  const auto words = ReportFlow::wrap("one two three four five six", Font::Helvetica, 10, 60);
  for (const auto& l : words) EXPECT_LE(textWidth(Font::Helvetica, 10, l), 60) << l;
  EXPECT_EQ(ReportFlow::elide("a long structure name", Font::Helvetica, 9, 40).substr(0, 1), "a");

  Document doc;
  ReportFlow flow(doc);
  std::vector<std::vector<std::string>> rows(150, {"row", "1.000"});
  flow.table({{"name", 200, false}, {"value", 80}}, rows);
  flow.finish("footer");
  const auto pdf = readPdf(doc.serialize());
  ASSERT_TRUE(pdf.problems.empty()) << ::testing::PrintToString(pdf.problems);
  ASSERT_GE(pageCount(pdf), 2);  // 150 rows of 13.6 pt do not fit on one page
  const std::string text = allText(pdf);
  std::size_t headers = 0;
  for (auto at = text.find("name\nvalue\n"); at != std::string::npos;
       at = text.find("name\nvalue\n", at + 1))
    ++headers;
  EXPECT_EQ(headers, std::size_t(pageCount(pdf)));  // the header again on every page
  EXPECT_NE(text.find("Page 1 of " + std::to_string(pageCount(pdf))), std::string::npos);

  // Groups of three rows (a structure's A, B, A - B) are never split by a page break: after
  // every header comes the first row of a group.
  Document grouped;
  ReportFlow groupedFlow(grouped);
  groupedFlow.skip(300);  // so that the first break does not fall on a group boundary by luck
  rows.clear();
  std::vector<bool> starts;
  for (int g = 0; g < 60; ++g) {
    rows.insert(rows.end(), {{"g" + std::to_string(g), "A"}, {"", "B"}, {"", "A - B"}});
    starts.insert(starts.end(), {true, false, false});
  }
  groupedFlow.table({{"name", 200, false}, {"value", 80}}, rows, 8.5, starts);
  const auto groupedPdf = readPdf(grouped.serialize());
  ASSERT_GE(pageCount(groupedPdf), 2);
  const std::string groupedText = allText(groupedPdf);
  int breaks = 0;
  for (auto at = groupedText.find("name\nvalue\n"); at != std::string::npos;
       at = groupedText.find("name\nvalue\n", at + 1)) {
    ++breaks;
    EXPECT_EQ(groupedText.substr(at + 11, 1), "g") << groupedText.substr(at, 40);
  }
  EXPECT_EQ(breaks, pageCount(groupedPdf));
}
