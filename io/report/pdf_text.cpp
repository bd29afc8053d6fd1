// Text for the PDF writer: UTF-8 to WinAnsiEncoding, PDF literal strings, and advance widths of
// the standard fonts, so that the caller can right-align numbers and wrap paths.
#include <array>
#include <cstdint>
#include <string>

#include "report/pdf_writer.hpp"

namespace penumbra::io::pdf {

namespace {

/// Windows-1252 bytes 0x80..0x9F and the characters they stand for (0: unused byte).
constexpr std::array<std::uint16_t, 32> kCp1252High = {
    0x20AC, 0,      0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0,      0x017D, 0,      0,      0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0,      0x017E, 0x0178};

void appendCodePoint(std::string& out, char32_t c) {
  if (c < 0x80 || (c >= 0xA0 && c <= 0xFF)) {
    out.push_back(char(c));  // ASCII and Latin-1 keep their codes in WinAnsi
    return;
  }
  for (std::size_t i = 0; i < kCp1252High.size(); ++i)
    if (kCp1252High[i] != 0 && kCp1252High[i] == c) {
      out.push_back(char(0x80 + i));
      return;
    }
  if (c == 0x2264)
    out += "<=";
  else if (c == 0x2265)
    out += ">=";
  else if (c == 0x2212)
    out += "-";  // minus sign
  else
    out.push_back('?');
}

// Advance widths (1/1000 em) of codes 32..126 from Adobe's Helvetica and Helvetica-Bold AFM
// files; WinAnsi code 39 is quotesingle and 96 grave, not the AFM's quoteright/quoteleft.
constexpr std::array<std::uint16_t, 95> kHelvetica = {
    278,  278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,  // ' '../
    556,  556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,  // 0..?
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,  // @..O
    667,  778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,  // P.._
    333,  556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,  // `..o
    556,  556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584};      // p..~
constexpr std::array<std::uint16_t, 95> kHelveticaBold = {
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278,  //
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611,  //
    975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,  //
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556,  //
    333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,  //
    611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584};

/// Width of a byte above 126. Reports use few of these (degree, micro, plus-minus, accented
/// letters in names); the AFM values of the common ones, an upper-case or lower-case letter's
/// typical width otherwise, which errs by a few per cent of one character at most.
int highWidth(unsigned char c, bool bold) {
  switch (c) {
    case 0xB0:
      return 400;  // degree
    case 0xB1:
    case 0xD7:
      return 584;  // plus-minus, multiply
    case 0x95:
      return 350;  // bullet
    case 0x97:
      return 1000;  // em dash
    case 0xB5:
      return bold ? 611 : 556;  // micro
    default:
      break;
  }
  if (c >= 0xC0 && c <= 0xDE) return bold ? 722 : 667;
  return bold ? 611 : 556;
}

}  // namespace

std::string toWinAnsi(const std::string& utf8) {
  std::string out;
  out.reserve(utf8.size());
  const auto* s = reinterpret_cast<const unsigned char*>(utf8.data());
  const std::size_t n = utf8.size();
  for (std::size_t i = 0; i < n;) {
    const unsigned char b = s[i];
    const int extra = b < 0x80             ? 0
                      : (b & 0xE0) == 0xC0 ? 1
                      : (b & 0xF0) == 0xE0 ? 2
                      : (b & 0xF8) == 0xF0 ? 3
                                           : -1;
    char32_t c = extra <= 0 ? b : char32_t(b & (0x3F >> extra));
    bool ok = extra >= 0 && i + std::size_t(extra) < n;
    for (int k = 1; ok && k <= extra; ++k) {
      ok = (s[i + std::size_t(k)] & 0xC0) == 0x80;
      c = (c << 6) | (s[i + std::size_t(k)] & 0x3F);
    }
    if (!ok) {  // a stray continuation byte, or a sequence cut short
      out.push_back('?');
      ++i;
      continue;
    }
    appendCodePoint(out, c);
    i += std::size_t(extra) + 1;
  }
  return out;
}

std::string literalString(const std::string& winAnsi) {
  std::string out = "(";
  for (unsigned char c : winAnsi) {
    if (c == '(' || c == ')' || c == '\\') {
      out.push_back('\\');
      out.push_back(char(c));
    } else if (c < 32 || c > 126) {
      const char octal[5] = {'\\', char('0' + (c >> 6)), char('0' + ((c >> 3) & 7)),
                             char('0' + (c & 7)), 0};
      out += octal;
    } else {
      out.push_back(char(c));
    }
  }
  out.push_back(')');
  return out;
}

double textWidth(Font font, double sizePt, const std::string& utf8) {
  const std::string bytes = toWinAnsi(utf8);
  if (font == Font::Courier) return 0.6 * sizePt * double(bytes.size());  // 600 for every glyph
  const bool bold = font == Font::HelveticaBold;
  const auto& table = bold ? kHelveticaBold : kHelvetica;
  long units = 0;
  for (unsigned char c : bytes)
    units += c >= 32 && c <= 126 ? table[c - 32] : c < 32 ? 0 : highWidth(c, bold);
  return double(units) * sizePt / 1000.0;
}

}  // namespace penumbra::io::pdf
