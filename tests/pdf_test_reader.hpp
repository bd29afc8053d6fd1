#pragma once
// A deliberately small PDF reader for tests of io/report/pdf_writer: it reads a file the way a
// viewer starts to (startxref -> xref table -> each object at its offset), decodes the streams
// (FlateDecode through zlib when the test links it) and pulls the strings of the Tj operators out
// of the content streams. Anything it cannot follow goes to `problems`, so a test can assert the
// list is empty. It reads what our writer writes (one xref section, direct /Length), no more.
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#ifdef PENUMBRA_TEST_ZLIB
#include <zlib.h>
#endif

namespace penumbra::test_pdf {

struct Object {
  std::size_t offset = 0;  ///< where the xref says "N 0 obj" starts
  std::string dict;        ///< the text between "obj" and "stream" (or "endobj")
  bool hasStream = false;
  std::string data;  ///< the stream after decoding
};

struct Pdf {
  std::map<int, Object> objects;
  std::string trailer;
  std::vector<std::string> problems;
};

/// The integer after `/key ` in `dict` (-1 when absent).
inline long dictNumber(const std::string& dict, const std::string& key) {
  const std::string k = "/" + key + " ";
  const auto at = dict.find(k);
  return at == std::string::npos ? -1 : std::strtol(dict.c_str() + at + k.size(), nullptr, 10);
}

inline bool inflate(const std::string& in, std::string& out) {
#ifdef PENUMBRA_TEST_ZLIB
  z_stream z{};
  if (inflateInit(&z) != Z_OK) return false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = uInt(in.size());
  char buf[65536];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    rc = ::inflate(&z, Z_NO_FLUSH);
    out.append(buf, sizeof buf - z.avail_out);
  }
  inflateEnd(&z);
  return rc == Z_STREAM_END && z.avail_in == 0;
#else
  (void)in;
  (void)out;
  return false;
#endif
}

inline Pdf readPdf(const std::string& bytes) {
  Pdf pdf;
  auto problem = [&](const std::string& p) { pdf.problems.push_back(p); };
  if (bytes.compare(0, 8, "%PDF-1.4") != 0) problem("no %PDF-1.4 header");
  const auto sx = bytes.rfind("startxref");
  if (sx == std::string::npos) {
    problem("no startxref");
    return pdf;
  }
  const std::size_t xref = std::strtoul(bytes.c_str() + sx + 9, nullptr, 10);
  if (bytes.compare(xref, 5, "xref\n") != 0) {
    problem("startxref " + std::to_string(xref) + " does not point at 'xref'");
    return pdf;
  }
  char* end = nullptr;
  const long first = std::strtol(bytes.c_str() + xref + 5, &end, 10);
  const long count = std::strtol(end, &end, 10);
  if (first != 0 || count < 1 || *end != '\n') problem("xref subsection header is not '0 N'");
  const std::size_t entries = std::size_t(end - bytes.c_str()) + 1;
  if (bytes.compare(entries, 20, "0000000000 65535 f \n") != 0) problem("object 0 is not free");
  for (long id = 1; id < count; ++id) {
    const std::string entry = bytes.substr(entries + std::size_t(id) * 20, 20);
    if (entry.size() != 20 || entry.compare(10, 10, " 00000 n \n") != 0) {
      problem("xref entry " + std::to_string(id) + " malformed: '" + entry + "'");
      continue;
    }
    Object o;
    o.offset = std::strtoul(entry.c_str(), nullptr, 10);
    const std::string head = std::to_string(id) + " 0 obj\n";
    if (bytes.compare(o.offset, head.size(), head) != 0) {
      problem("xref offset of object " + std::to_string(id) + " points at '" +
              bytes.substr(o.offset, 12) + "'");
      continue;
    }
    const std::size_t body = o.offset + head.size();
    const std::size_t endobj = bytes.find("endobj", body);
    const std::size_t stream = bytes.find(">>\nstream\n", body);
    o.hasStream = stream != std::string::npos && stream < endobj;
    o.dict = bytes.substr(body, (o.hasStream ? stream + 2 : endobj) - body);
    if (o.hasStream) {
      const long length = dictNumber(o.dict, "Length");
      const std::size_t start = stream + 10;
      std::string raw = bytes.substr(start, std::size_t(std::max(length, 0L)));
      if (length < 0 || bytes.compare(start + std::size_t(length), 10, "\nendstream") != 0)
        problem("object " + std::to_string(id) + ": /Length does not end at endstream");
      if (o.dict.find("/FlateDecode") != std::string::npos) {
        if (!inflate(raw, o.data)) problem("object " + std::to_string(id) + ": cannot inflate");
      } else {
        o.data = std::move(raw);
      }
    }
    pdf.objects[int(id)] = std::move(o);
  }
  const auto tr = bytes.find("trailer", xref);
  if (tr == std::string::npos)
    problem("no trailer");
  else
    pdf.trailer = bytes.substr(tr, sx - tr);
  if (dictNumber(pdf.trailer, "Size") != count) problem("trailer /Size differs from the xref");
  return pdf;
}

/// Objects whose dictionary has "/Type /Page " (pages, not the page tree).
inline int pageCount(const Pdf& pdf) {
  int n = 0;
  for (const auto& [id, o] : pdf.objects) n += o.dict.find("/Type /Page ") != std::string::npos;
  return n;
}

/// WinAnsi bytes back to UTF-8 (Latin-1 part; the writer's tests use no 0x80-0x9F character).
inline std::string winAnsiToUtf8(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c < 0x80) {
      out.push_back(char(c));
    } else {
      out.push_back(char(0xC0 | (c >> 6)));
      out.push_back(char(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

/// The strings shown by Tj in one content stream, unescaped, as UTF-8, in order.
inline std::vector<std::string> shownStrings(const std::string& content) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < content.size(); ++i) {
    if (content[i] != '(') continue;
    std::string s;
    int depth = 1;
    for (++i; i < content.size(); ++i) {
      char c = content[i];
      if (c == '\\' && i + 1 < content.size()) {
        c = content[++i];
        if (c >= '0' && c <= '7') {  // up to three octal digits
          int v = c - '0';
          for (int k = 0;
               k < 2 && i + 1 < content.size() && content[i + 1] >= '0' && content[i + 1] <= '7';
               ++k)
            v = v * 8 + (content[++i] - '0');
          c = char(v);
        } else if (c == 'n') {
          c = '\n';
        }
        s.push_back(c);
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')' && --depth == 0) break;
      s.push_back(c);
    }
    const std::size_t op = content.find_first_not_of(" \n", i + 1);
    if (op != std::string::npos && content.compare(op, 2, "Tj") == 0)
      out.push_back(winAnsiToUtf8(s));
  }
  return out;
}

/// Every page's shown strings, one per line, pages in object order.
inline std::string allText(const Pdf& pdf) {
  std::string text;
  for (const auto& [id, o] : pdf.objects) {
    if (o.dict.find("/Type /Page ") == std::string::npos) continue;
    const long contents = dictNumber(o.dict, "Contents");
    const auto it = pdf.objects.find(int(contents));
    if (it == pdf.objects.end()) continue;
    for (const std::string& s : shownStrings(it->second.data)) text += s + "\n";
  }
  return text;
}

}  // namespace penumbra::test_pdf
