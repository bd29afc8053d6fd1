#include "report/report_flow.hpp"

#include <algorithm>

namespace penumbra::io::pdf {

namespace {

/// Bytes of the UTF-8 character starting at `s[i]` (1 for a stray byte), so that a word broken
/// across lines is never broken inside a character.
std::size_t charBytes(const std::string& s, std::size_t i) {
  std::size_t n = 1;
  while (i + n < s.size() && (static_cast<unsigned char>(s[i + n]) & 0xC0) == 0x80) ++n;
  return n;
}

/// The longest prefix of `word` that fits in `widthPt`, preferring a break after '/' or '_'
/// (paths and DICOM file names) when one lies in the second half; at least one character.
std::size_t fittingPrefix(const std::string& word, Font font, double sizePt, double widthPt) {
  std::size_t end = 0, lastBreak = 0;
  while (end < word.size()) {
    const std::size_t next = end + charBytes(word, end);
    if (end > 0 && textWidth(font, sizePt, word.substr(0, next)) > widthPt) break;
    end = next;
    if (word[end - 1] == '/' || word[end - 1] == '_' || word[end - 1] == '.') lastBreak = end;
  }
  return lastBreak > end / 2 && end < word.size() ? lastBreak : end;
}

}  // namespace

ReportFlow::ReportFlow(Document& doc, double marginPt) : doc_(doc), margin_(marginPt) { newPage(); }

void ReportFlow::newPage() {
  page_ = &doc_.addPage();
  y_ = margin_;
}

void ReportFlow::need(double heightPt) {
  if (y_ + heightPt > kA4HeightPt - margin_ && y_ > margin_ + 1e-6) newPage();
}

double ReportFlow::block(double heightPt) {
  need(heightPt);
  const double top = cursorY();
  y_ += heightPt;
  return top;
}

void ReportFlow::heading(const std::string& text, double keepPt) {
  const double size = 11.5;
  need(size * 2.2 + keepPt);
  if (y_ > margin_ + 1e-6) y_ += size * 0.9;  // space above, except at the top of a page
  page_->text(left(), cursorY() - size, Font::HelveticaBold, size, text);
  y_ += size * 1.45;
  page_->line(left(), cursorY(), right(), cursorY(), 0.6, kRuleGrey);
  y_ += size * 0.6;
}

void ReportFlow::paragraph(const std::string& text, Font font, double sizePt, Colour colour,
                           double indentPt) {
  for (const std::string& line : wrap(text, font, sizePt, width() - indentPt)) {
    need(sizePt * 1.3);
    page_->text(left() + indentPt, cursorY() - sizePt, font, sizePt, line, colour);
    y_ += sizePt * 1.3;
  }
}

void ReportFlow::labelled(const std::string& label, const std::string& value, double labelWidthPt,
                          double sizePt, Font valueFont) {
  const std::vector<std::string> lines = wrap(value, valueFont, sizePt, width() - labelWidthPt);
  need(sizePt * 1.3 * double(std::max<std::size_t>(1, lines.size())));
  page_->text(left(), cursorY() - sizePt, Font::Helvetica, sizePt, label, kTextGrey);
  for (const std::string& line : lines) {
    page_->text(left() + labelWidthPt, cursorY() - sizePt, valueFont, sizePt, line);
    y_ += sizePt * 1.3;
  }
  if (lines.empty()) y_ += sizePt * 1.3;
}

void ReportFlow::tableRow(const std::vector<Column>& columns, const std::vector<std::string>& cells,
                          double sizePt, bool header) {
  const double h = sizePt * 1.6;
  const double top = cursorY();
  const Font font = header ? Font::HelveticaBold : Font::Helvetica;
  if (header) page_->fillRect(left(), top - h, width(), h, kShade);
  double x = left();
  const double pad = 3;
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const Column& col = columns[c];
    const std::string text =
        elide(c < cells.size() ? cells[c] : std::string(), font, sizePt, col.widthPt - 2 * pad);
    const double w = textWidth(font, sizePt, text);
    const double tx = col.alignRight ? x + col.widthPt - pad - w : x + pad;
    page_->text(tx, top - h + sizePt * 0.5, font, sizePt, text);
    x += col.widthPt;
  }
  y_ += h;
  if (header) page_->line(left(), cursorY(), right(), cursorY(), 0.6, kRuleGrey);
}

void ReportFlow::table(const std::vector<Column>& columns,
                       const std::vector<std::vector<std::string>>& rows, double sizePt,
                       const std::vector<bool>& ruleAbove) {
  std::vector<std::string> titles;
  for (const Column& c : columns) titles.push_back(c.title);
  const double h = sizePt * 1.6;
  need(2 * h);  // the header never stands alone at a page's foot
  tableRow(columns, titles, sizePt, true);
  auto starts = [&](std::size_t r) { return r < ruleAbove.size() && ruleAbove[r]; };
  for (std::size_t r = 0; r < rows.size(); ++r) {
    // A group of rows (a structure's A, B and A - B) moves to the next page whole.
    std::size_t group = 1;
    while (starts(r) && r + group < rows.size() && r + group < ruleAbove.size() &&
           !ruleAbove[r + group])
      ++group;
    if (y_ + double(group) * h > kA4HeightPt - margin_) {
      newPage();
      tableRow(columns, titles, sizePt, true);  // the header again on the new page
    } else if (starts(r) && r > 0) {
      page_->line(left(), cursorY(), right(), cursorY(), 0.3, kRuleGrey);
    }
    tableRow(columns, rows[r], sizePt, false);
  }
  page_->line(left(), cursorY(), right(), cursorY(), 0.6, kRuleGrey);
}

void ReportFlow::finish(const std::string& footer) {
  const std::size_t n = doc_.pageCount();
  for (std::size_t i = 0; i < n; ++i) {
    Page& p = doc_.page(i);
    const double y = margin_ * 0.5;
    p.line(left(), y + 10, right(), y + 10, 0.4, kRuleGrey);
    p.text(left(), y, Font::Helvetica, 7.5, elide(footer, Font::Helvetica, 7.5, width() - 70),
           kTextGrey);
    const std::string number = "Page " + std::to_string(i + 1) + " of " + std::to_string(n);
    p.text(right() - textWidth(Font::Helvetica, 7.5, number), y, Font::Helvetica, 7.5, number,
           kTextGrey);
  }
}

std::vector<std::string> ReportFlow::wrap(const std::string& text, Font font, double sizePt,
                                          double widthPt) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t space = text.find(' ', i);
    std::string word = text.substr(i, space == std::string::npos ? std::string::npos : space - i);
    i = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    const std::string joined = line.empty() ? word : line + " " + word;
    if (textWidth(font, sizePt, joined) <= widthPt) {
      line = joined;
      continue;
    }
    if (!line.empty()) lines.push_back(line);
    line.clear();
    while (textWidth(font, sizePt, word) > widthPt) {  // a word longer than a line
      const std::size_t cut = fittingPrefix(word, font, sizePt, widthPt);
      lines.push_back(word.substr(0, cut));
      word.erase(0, cut);
    }
    line = word;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string ReportFlow::elide(const std::string& text, Font font, double sizePt, double widthPt) {
  if (textWidth(font, sizePt, text) <= widthPt) return text;
  std::string kept;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = charBytes(text, i);
    if (textWidth(font, sizePt, kept + text.substr(i, n) + "...") > widthPt) break;
    kept += text.substr(i, n);
    i += n;
  }
  return kept + "...";
}

}  // namespace penumbra::io::pdf
