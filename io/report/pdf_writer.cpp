#include "report/pdf_writer.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "core/error.hpp"

#ifdef PENUMBRA_HAVE_ZLIB
#include <zlib.h>
#endif

namespace penumbra::io::pdf {

namespace {

/// A number as PDF wants it: fixed point (PDF has no exponent notation), at most 3 decimals,
/// no trailing zeros; std::to_chars, so a locale's decimal comma can never slip in.
std::string num(double v) {
  if (!std::isfinite(v)) v = 0;
  char b[48];
  const auto r = std::to_chars(b, b + sizeof b, v, std::chars_format::fixed, 3);
  std::string s(b, r.ptr);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string rgb(const Colour& c) { return num(c.r) + " " + num(c.g) + " " + num(c.b); }

const char* fontResource(Font f) {
  switch (f) {
    case Font::Helvetica:
      return "/F1";
    case Font::HelveticaBold:
      return "/F2";
    case Font::Courier:
      return "/F3";
  }
  return "/F1";
}

/// The stream's bytes and the /Filter entry they need.
std::pair<std::string, std::string> encodeStream(const void* data, std::size_t size) {
#ifdef PENUMBRA_HAVE_ZLIB
  uLongf packed = compressBound(uLong(size));
  std::string out(packed, '\0');
  const int rc = compress2(reinterpret_cast<Bytef*>(out.data()), &packed,
                           static_cast<const Bytef*>(data), uLong(size), Z_DEFAULT_COMPRESSION);
  PENUMBRA_REQUIRE(rc == Z_OK, Internal,
                   "PDF writer: zlib compress2 failed (" + std::to_string(rc) + ")");
  out.resize(packed);
  return {std::move(out), " /Filter /FlateDecode"};
#else
  return {std::string(static_cast<const char*>(data), size), ""};
#endif
}

/// 64-bit FNV-1a, for the trailer's /ID (a file identifier, not a security feature).
std::uint64_t fnv1a(const std::string& s, std::uint64_t h) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

void Page::text(double x, double y, Font font, double sizePt, const std::string& utf8,
                Colour colour) {
  ops_ += rgb(colour) + " rg BT " + fontResource(font) + " " + num(sizePt) + " Tf " + num(x) + " " +
          num(y) + " Td " + literalString(toWinAnsi(utf8)) + " Tj ET\n";
}

void Page::line(double x0, double y0, double x1, double y1, double widthPt, Colour colour,
                double dashPt) {
  ops_ += "q " + num(widthPt) + " w " + rgb(colour) + " RG ";
  if (dashPt > 0) {  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "[" + string
    const std::string d = num(dashPt);
    ops_.append("[").append(d).append(" ").append(d).append("] 0 d ");
  }
  ops_ += num(x0) + " " + num(y0) + " m " + num(x1) + " " + num(y1) + " l S Q\n";
}

void Page::fillRect(double x, double y, double w, double h, Colour colour) {
  ops_ += rgb(colour) + " rg " + num(x) + " " + num(y) + " " + num(w) + " " + num(h) + " re f\n";
}

void Page::strokeRect(double x, double y, double w, double h, double widthPt, Colour colour) {
  ops_ += "q " + num(widthPt) + " w " + rgb(colour) + " RG " + num(x) + " " + num(y) + " " +
          num(w) + " " + num(h) + " re S Q\n";
}

void Page::image(ImageId id, double x, double y, double w, double h) {
  PENUMBRA_REQUIRE(id.index >= 0, InvalidArgument, "PDF writer: image not added to a document");
  ops_ += "q " + num(w) + " 0 0 " + num(h) + " " + num(x) + " " + num(y) + " cm /Im" +
          std::to_string(id.index) + " Do Q\n";
  bool known = false;
  for (int i : images_) known = known || i == id.index;
  if (!known) images_.push_back(id.index);
}

Page& Document::addPage() { return pages_.emplace_back(); }

ImageId Document::addImage(int width, int height, std::vector<std::uint8_t> rgb) {
  PENUMBRA_REQUIRE(
      width > 0 && height > 0 && rgb.size() == std::size_t(width) * std::size_t(height) * 3,
      InvalidArgument,
      "PDF writer: an RGB image of " + std::to_string(width) + " x " + std::to_string(height) +
          " needs " +
          std::to_string(std::size_t(std::max(width, 0)) * std::size_t(std::max(height, 0)) * 3) +
          " bytes, got " + std::to_string(rgb.size()));
  images_.push_back({width, height, std::move(rgb)});
  return {int(images_.size()) - 1};
}

bool Document::compresses() {
#ifdef PENUMBRA_HAVE_ZLIB
  return true;
#else
  return false;
#endif
}

std::string Document::serialize() const {
  PENUMBRA_REQUIRE(!pages_.empty(), InvalidArgument, "PDF writer: a document needs a page");
  // Objects: 1 catalog, 2 page tree, 3 info, 4-6 fonts, then the images, then each page
  // followed by its content stream.
  const int firstImage = 7;
  const int firstPage = firstImage + int(images_.size());
  const int objectCount = firstPage + 2 * int(pages_.size());  // ids 1 .. objectCount - 1
  std::vector<std::size_t> offset(std::size_t(objectCount), 0);
  // The second line's bytes above 127 tell transfer tools that the file is binary (PDF 7.5.2).
  std::string out = "%PDF-1.4\n%\xE2\xE3\xCF\xD3\n";
  auto begin = [&](int id) {
    offset[std::size_t(id)] = out.size();
    out += std::to_string(id) + " 0 obj\n";
  };
  auto object = [&](int id, const std::string& body) {
    begin(id);
    out += body + "\nendobj\n";
  };
  auto stream = [&](int id, const std::string& dict, const void* data, std::size_t size) {
    const auto [bytes, filter] = encodeStream(data, size);
    begin(id);
    out += "<< " + dict + filter + " /Length " + std::to_string(bytes.size()) + " >>\nstream\n";
    out += bytes;
    out += "\nendstream\nendobj\n";
  };

  object(1, "<< /Type /Catalog /Pages 2 0 R >>");
  std::string kids;
  for (std::size_t p = 0; p < pages_.size(); ++p)
    kids.append(p ? " " : "").append(std::to_string(firstPage + 2 * int(p))).append(" 0 R");
  object(2, "<< /Type /Pages /Kids [" + kids + "] /Count " + std::to_string(pages_.size()) + " >>");
  std::string info = "<< /Producer (Penumbra PDF writer)";
  auto entry = [&](const char* key, const std::string& value) {
    if (!value.empty()) info += std::string(" /") + key + " " + literalString(toWinAnsi(value));
  };
  entry("Title", info_.title);
  entry("Subject", info_.subject);
  entry("Creator", info_.creator);
  entry("CreationDate", info_.creationDate);
  object(3, info + " >>");
  const char* fonts[] = {"Helvetica", "Helvetica-Bold", "Courier"};
  for (int f = 0; f < 3; ++f)
    object(4 + f, std::string("<< /Type /Font /Subtype /Type1 /BaseFont /") + fonts[f] +
                      " /Encoding /WinAnsiEncoding >>");
  for (std::size_t i = 0; i < images_.size(); ++i) {
    const Image& im = images_[i];
    stream(firstImage + int(i),
           "/Type /XObject /Subtype /Image /Width " + std::to_string(im.width) + " /Height " +
               std::to_string(im.height) + " /ColorSpace /DeviceRGB /BitsPerComponent 8",
           im.rgb.data(), im.rgb.size());
  }
  for (std::size_t p = 0; p < pages_.size(); ++p) {
    const Page& page = pages_[p];
    const int id = firstPage + 2 * int(p);
    std::string xobjects;
    for (int i : page.images_)
      xobjects += " /Im" + std::to_string(i) + " " + std::to_string(firstImage + i) + " 0 R";
    object(id, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 " + num(kA4WidthPt) + " " +
                   num(kA4HeightPt) +
                   "] /Resources << /ProcSet [/PDF /Text /ImageC] /Font << /F1 4 0 R /F2 5 0 R "
                   "/F3 6 0 R >>" +
                   (xobjects.empty() ? "" : " /XObject <<" + xobjects + " >>") + " >> /Contents " +
                   std::to_string(id + 1) + " 0 R >>");
    stream(id + 1, "", page.ops_.data(), page.ops_.size());
  }

  // Cross-reference table: one 20-byte entry per object, the free head of the list first.
  const std::size_t xref = out.size();
  out += "xref\n0 " + std::to_string(objectCount) + "\n0000000000 65535 f \n";
  char entryText[32];
  for (int id = 1; id < objectCount; ++id) {
    std::snprintf(entryText, sizeof entryText, "%010zu 00000 n \n", offset[std::size_t(id)]);
    out += entryText;
  }
  char fileId[40];
  std::snprintf(fileId, sizeof fileId, "%016llx%016llx",
                (unsigned long long)fnv1a(out, 14695981039346656037ull),
                (unsigned long long)fnv1a(out, 0x9E3779B97F4A7C15ull));
  out += "trailer\n<< /Size " + std::to_string(objectCount) + " /Root 1 0 R /Info 3 0 R /ID [<" +
         fileId + "> <" + fileId + ">] >>\nstartxref\n" + std::to_string(xref) + "\n%%EOF\n";
  return out;
}

std::string pdfDate(long long unixSeconds) {
  const std::time_t t = std::time_t(unixSeconds);
  std::tm local{};
  localtime_r(&t, &local);
  char b[32];
  std::strftime(b, sizeof b, "D:%Y%m%d%H%M%S", &local);
  const long off = local.tm_gmtoff / 60;  // minutes east of UTC
  char zone[32];
  std::snprintf(zone, sizeof zone, "%c%02ld'%02ld'", off < 0 ? '-' : '+', std::labs(off) / 60,
                std::labs(off) % 60);
  return std::string(b) + zone;
}

}  // namespace penumbra::io::pdf
