#pragma once
/// Top-to-bottom layout of a report on the A4 pages of a pdf::Document: a cursor that moves down
/// from the top margin, headings, wrapped paragraphs, tables that repeat their header on a new
/// page, and blocks of a given height for figures. A block that does not fit below the cursor
/// starts a new page, so nothing is cut at the page's foot. Lengths in points (1/72 inch).
#include <string>
#include <vector>

#include "report/pdf_writer.hpp"

namespace penumbra::io::pdf {

struct Column {
  std::string title;
  double widthPt = 60;
  bool alignRight = true;  ///< numbers right-aligned; names and labels left
};

/// Grey of table rules and captions: dark enough to print, light enough to stay out of the way.
inline constexpr Colour kRuleGrey{0.55, 0.55, 0.55};
inline constexpr Colour kTextGrey{0.35, 0.35, 0.35};
inline constexpr Colour kShade{0.92, 0.93, 0.95};

class ReportFlow {
 public:
  /// `marginPt` on all four sides; the footer sits inside the bottom margin.
  explicit ReportFlow(Document& doc, double marginPt = 50);

  Page& page() { return *page_; }
  double left() const { return margin_; }
  double right() const { return kA4WidthPt - margin_; }
  double width() const { return kA4WidthPt - 2 * margin_; }
  /// The cursor as a PDF y coordinate (the top of the next thing drawn).
  double cursorY() const { return kA4HeightPt - y_; }

  /// A new page unless `heightPt` still fits below the cursor.
  void need(double heightPt);
  void newPage();
  void skip(double pt) { y_ += pt; }
  /// Reserves `heightPt` (on a new page if needed) and returns its top as a PDF y coordinate.
  double block(double heightPt);

  /// Section heading with a thin rule under it, kept on one page with `keepPt` of what follows.
  void heading(const std::string& text, double keepPt = 80);
  /// Text wrapped to the width less `indentPt`, one line per line height (1.3 x size).
  void paragraph(const std::string& text, Font font, double sizePt, Colour colour = {},
                 double indentPt = 0);
  /// Label in grey and value in black on one line, the value wrapped under itself.
  void labelled(const std::string& label, const std::string& value, double labelWidthPt,
                double sizePt = 9, Font valueFont = Font::Helvetica);
  /// Header row (bold on a shaded band), then the rows; cells too wide for their column are
  /// shortened with "...". `ruleAbove[i]` draws a rule above row i and starts a group of rows
  /// that a page break does not split.
  void table(const std::vector<Column>& columns, const std::vector<std::vector<std::string>>& rows,
             double sizePt = 8.5, const std::vector<bool>& ruleAbove = {});

  /// Writes `footer` and "Page i of n" at the foot of every page; call once, at the end.
  void finish(const std::string& footer);

  /// `text` broken into lines no wider than `widthPt`: at spaces, and inside a word (a path)
  /// that is wider than a line by itself.
  static std::vector<std::string> wrap(const std::string& text, Font font, double sizePt,
                                       double widthPt);
  /// `text`, or as much of it as fits in `widthPt` followed by "...".
  static std::string elide(const std::string& text, Font font, double sizePt, double widthPt);

 private:
  void tableRow(const std::vector<Column>& columns, const std::vector<std::string>& cells,
                double sizePt, bool header);

  Document& doc_;
  Page* page_ = nullptr;
  double margin_;
  double y_ = 0;  ///< from the top of the page
};

}  // namespace penumbra::io::pdf
