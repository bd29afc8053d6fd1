#pragma once
/// A small PDF 1.4 writer for reports made without Qt (penumbra-cli compare --report FILE.pdf):
/// A4 pages of text in three of the standard 14 fonts (never embedded, so every reader has them),
/// straight lines, rectangles and RGB images. No dependency beyond zlib, which the build already
/// links through DCMTK: with it every stream is FlateDecode-compressed, without it stored plain.
///
/// Coordinates are PDF points (1/72 inch) from the page's bottom-left corner, as in the PDF
/// itself; the caller lays out. Text is UTF-8 and is set in WinAnsiEncoding (Windows-1252):
/// characters it lacks print as '?', except <= and >= for their mathematical signs.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace penumbra::io::pdf {

inline constexpr double kA4WidthPt = 595.276;   ///< 210 mm
inline constexpr double kA4HeightPt = 841.890;  ///< 297 mm
inline constexpr double kPtPerMm = 72.0 / 25.4;

enum class Font { Helvetica, HelveticaBold, Courier };

struct Colour {
  double r = 0, g = 0, b = 0;  ///< each in [0, 1]
};

/// UTF-8 to WinAnsiEncoding bytes (invalid UTF-8 and unmapped characters become '?').
std::string toWinAnsi(const std::string& utf8);
/// The WinAnsi bytes as a PDF literal string, parentheses included: '(', ')' and '\' escaped,
/// bytes outside printable ASCII as octal escapes so that content streams stay 7-bit text.
std::string literalString(const std::string& winAnsi);
/// Advance width in points of `utf8` set in `font` at `sizePt` (Adobe's AFM widths, no kerning).
double textWidth(Font font, double sizePt, const std::string& utf8);

/// An image added to a Document, to be drawn on any of its pages.
struct ImageId {
  int index = -1;
};

/// One page's drawing operations (its content stream).
class Page {
 public:
  /// Text with its baseline starting at (x, y).
  void text(double x, double y, Font font, double sizePt, const std::string& utf8,
            Colour colour = {});
  void line(double x0, double y0, double x1, double y1, double widthPt, Colour colour = {},
            double dashPt = 0);
  void fillRect(double x, double y, double w, double h, Colour colour);
  void strokeRect(double x, double y, double w, double h, double widthPt, Colour colour = {});
  /// The image scaled to the box whose bottom-left corner is (x, y); its first row at the top.
  void image(ImageId id, double x, double y, double w, double h);

  const std::string& content() const { return ops_; }

 private:
  friend class Document;
  std::string ops_;
  std::vector<int> images_;  ///< indices drawn on this page (its /XObject resources)
};

struct DocumentInfo {
  std::string title, subject, creator;  ///< UTF-8
  std::string creationDate;             ///< "D:YYYYMMDDHHmmSS+hh'mm'" or empty
};

class Document {
 public:
  /// A new empty A4 portrait page at the end; the reference stays valid while the document lives.
  Page& addPage();
  std::size_t pageCount() const { return pages_.size(); }
  Page& page(std::size_t i) { return pages_.at(i); }

  /// An RGB image of 8 bits per channel, rows from the top; throws InvalidArgument unless
  /// rgb.size() == width * height * 3 with width, height > 0.
  ImageId addImage(int width, int height, std::vector<std::uint8_t> rgb);

  void setInfo(DocumentInfo info) { info_ = std::move(info); }

  /// The whole file: header, objects, cross-reference table and trailer.
  std::string serialize() const;

  /// True when streams are compressed (zlib was found at build time).
  static bool compresses();

 private:
  struct Image {
    int width = 0, height = 0;
    std::vector<std::uint8_t> rgb;
  };
  std::deque<Page> pages_;
  std::vector<Image> images_;
  DocumentInfo info_;
};

/// "D:YYYYMMDDHHmmSS+hh'mm'" of a local time for DocumentInfo::creationDate.
std::string pdfDate(long long unixSeconds);

}  // namespace penumbra::io::pdf
