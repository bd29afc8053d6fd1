#include "image/metaimage_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <vector>

#include "core/error.hpp"

namespace penumbra::io {

namespace {

namespace fs = std::filesystem;

struct HeaderLine {
  std::string value;
  int line = 0;
};

/// Header fields by key, and where the voxels start when ElementDataFile is LOCAL.
struct Header {
  std::map<std::string, HeaderLine> fields;
  std::size_t localDataOffset = 0;
};

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(ErrorCode code, const std::string& what) const {
    throw Error(code, "MetaImage '" + path_ + "': " + what, __FILE__, __LINE__);
  }
  [[noreturn]] void bad(const std::string& key, const std::string& why) const {
    fail(ErrorCode::Format, key + ": " + why);
  }

  Header readHeader() const {
    std::ifstream in(path_, std::ios::binary);
    if (!in) fail(ErrorCode::Io, std::string("cannot open: ") + std::strerror(errno));
    std::string text(kMaxMetaImageHeaderBytes, '\0');
    in.read(text.data(), std::streamsize(text.size()));
    text.resize(std::size_t(in.gcount()));
    Header h;
    std::size_t pos = 0;
    for (int line = 1; pos < text.size(); ++line) {
      std::size_t end = text.find('\n', pos);
      const bool complete = end != std::string::npos;
      if (!complete) end = text.size();
      const std::string raw = text.substr(pos, end - pos);
      pos = complete ? end + 1 : end;
      const std::string trimmed = trim(raw);
      if (trimmed.empty()) continue;
      const auto eq = trimmed.find('=');
      const bool printable = std::all_of(trimmed.begin(), trimmed.end(), [](char c) {
        return c == '\t' || (static_cast<unsigned char>(c) >= 32 && c != 127);
      });
      if (eq == std::string::npos || eq == 0 || !printable)
        fail(ErrorCode::Format, "line " + std::to_string(line) + " is not 'Key = Value' (" +
                                    quoted(trimmed) + "): not a MetaImage header");
      const std::string key = trim(trimmed.substr(0, eq));
      if (h.fields.count(key))
        bad(key, "appears twice (lines " + std::to_string(h.fields[key].line) + " and " +
                     std::to_string(line) + ")");
      h.fields[key] = {trim(trimmed.substr(eq + 1)), line};
      // MetaIO ends the header with ElementDataFile; LOCAL data starts on the next byte.
      if (key == "ElementDataFile") {
        if (!complete && h.fields[key].value == "LOCAL")
          bad(key, "LOCAL but the header has no line end before the data");
        h.localDataOffset = pos;
        return h;
      }
    }
    fail(ErrorCode::Format, "no ElementDataFile line in the first " + std::to_string(text.size()) +
                                " bytes (a MetaImage header ends "
                                "with it)");
  }

  const HeaderLine* find(const Header& h, std::initializer_list<const char*> keys) const {
    const HeaderLine* found = nullptr;
    std::string first;
    for (const char* k : keys) {
      const auto it = h.fields.find(k);
      if (it == h.fields.end()) continue;
      if (found) bad(first, std::string("and its synonym ") + k + " are both given");
      found = &it->second;
      first = k;
    }
    return found;
  }
  const HeaderLine& require(const Header& h, const char* key) const {
    const HeaderLine* l = find(h, {key});
    if (!l) bad(key, "missing");
    return *l;
  }

  std::vector<double> numbers(const std::string& key, const std::string& value,
                              std::size_t count) const {
    std::istringstream s(value);
    std::vector<double> v;
    std::string token;
    while (s >> token) {
      char* end = nullptr;
      const double x = std::strtod(token.c_str(), &end);
      if (end != token.c_str() + token.size() || !std::isfinite(x))
        bad(key, "expected " + std::to_string(count) + " finite numbers, got " + quoted(value));
      v.push_back(x);
    }
    if (v.size() != count)
      bad(key, "expected " + std::to_string(count) + " numbers, got " + quoted(value));
    return v;
  }

  /// A boolean field that must have `required` when present.
  void expectFlag(const Header& h, std::initializer_list<const char*> keys, bool required,
                  const std::string& why) const {
    const HeaderLine* l = find(h, keys);
    if (!l) return;
    std::string v = l->value;
    std::transform(v.begin(), v.end(), v.begin(), [](char c) { return char(std::tolower(c)); });
    const std::string key = *keys.begin();
    if (v != "true" && v != "false") bad(key, "expected True or False, got " + quoted(l->value));
    if ((v == "true") != required) bad(key, l->value + " is not supported (" + why + ")");
  }

  static std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
  }
  static std::string quoted(const std::string& s) {
    return "'" + (s.size() > 64 ? s.substr(0, 64) + "..." : s) + "'";
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct ElementType {
  const char* name;
  std::size_t bytes;
};
constexpr ElementType kElementTypes[] = {
    {"MET_FLOAT", 4}, {"MET_DOUBLE", 8}, {"MET_SHORT", 2}, {"MET_USHORT", 2}};

template <typename T>
void convert(const std::vector<char>& bytes, VoxelVector<float>& out) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    out[i] = float(v);
  }
}

}  // namespace

MetaImage readMetaImage(const std::string& path) {
  const Reader r(path);
  const Header h = r.readHeader();

  if (r.require(h, "NDims").value != "3")
    r.bad("NDims", r.require(h, "NDims").value + " is not supported (3D volumes only)");
  if (const HeaderLine* ch = r.find(h, {"ElementNumberOfChannels"}); ch && ch->value != "1")
    r.bad("ElementNumberOfChannels", ch->value + " is not supported (one value per voxel only)");
  r.expectFlag(h, {"BinaryData"}, true, "ASCII voxel data");
  r.expectFlag(h, {"CompressedData"}, false, "compressed voxel data");
  r.expectFlag(h, {"BinaryDataByteOrderMSB", "ElementByteOrderMSB"}, false,
               "big-endian voxel data");
  if (const HeaderLine* hs = r.find(h, {"HeaderSize"}); hs && hs->value != "0")
    r.bad("HeaderSize", hs->value + " is not supported (data files with a header of their own)");

  Grid g;
  const std::vector<double> dims = r.numbers("DimSize", r.require(h, "DimSize").value, 3);
  for (int a = 0; a < 3; ++a) {
    if (dims[a] != std::floor(dims[a]) || dims[a] < 1 || dims[a] > 2147483647.0)
      r.bad("DimSize",
            "expected 3 positive integers, got " + Reader::quoted(r.require(h, "DimSize").value));
    g.dims[a] = int(dims[a]);
  }
  const HeaderLine* spacing = r.find(h, {"ElementSpacing", "ElementSize"});
  if (!spacing) r.bad("ElementSpacing", "missing");
  const std::vector<double> sp = r.numbers("ElementSpacing", spacing->value, 3);
  for (int a = 0; a < 3; ++a) {
    if (!(sp[a] > 0))
      r.bad("ElementSpacing", "must be positive, got " + Reader::quoted(spacing->value));
    g.spacing[a] = sp[a];
  }
  const HeaderLine* offset = r.find(h, {"Offset", "Origin", "Position"});
  if (!offset) r.bad("Offset", "missing (the position of the first voxel's centre, mm)");
  const std::vector<double> o = r.numbers("Offset", offset->value, 3);
  g.origin = {o[0], o[1], o[2]};
  if (const HeaderLine* tm = r.find(h, {"TransformMatrix", "Orientation", "Rotation"})) {
    const std::vector<double> t = r.numbers("TransformMatrix", tm->value, 9);
    for (int c = 0; c < 3; ++c)
      for (int row = 0; row < 3; ++row) g.direction.m[row][c] = t[std::size_t(3 * c + row)];
    if (!g.isOrthonormal())
      r.bad("TransformMatrix", "its columns are not orthonormal: " + Reader::quoted(tm->value));
  }

  const std::string& typeName = r.require(h, "ElementType").value;
  const ElementType* type = nullptr;
  for (const ElementType& t : kElementTypes)
    if (typeName == t.name) type = &t;
  if (!type)
    r.bad("ElementType", typeName +
                             " is not supported (MET_FLOAT, MET_DOUBLE, MET_SHORT or "
                             "MET_USHORT)");

  const std::string& dataName = r.require(h, "ElementDataFile").value;
  if (dataName.empty()) r.bad("ElementDataFile", "empty");
  if (dataName.rfind("LIST", 0) == 0 || dataName.find('%') != std::string::npos)
    r.bad("ElementDataFile",
          Reader::quoted(dataName) + ": lists and patterns of slice files are not supported");
  const bool local = dataName == "LOCAL";
  fs::path dataPath = local ? fs::path(path) : fs::path(dataName);
  if (!local && dataPath.is_relative()) dataPath = fs::path(path).parent_path() / dataPath;
  const std::size_t skip = local ? h.localDataOffset : 0;

  // Sizes in double first: three dimensions up to 2^31 overflow 64 bits.
  const double expected = dims[0] * dims[1] * dims[2] * double(type->bytes);
  if (expected > 1e15) r.bad("DimSize", r.require(h, "DimSize").value + " is too large");
  const std::uintmax_t need = std::uintmax_t(expected);
  std::error_code ec;
  const std::uintmax_t have = fs::file_size(dataPath, ec);
  if (ec)
    r.fail(ErrorCode::Io, "cannot read its data file '" + dataPath.string() + "': " + ec.message());
  if (have < skip || have - skip != need)
    r.bad("DimSize", r.require(h, "DimSize").value + " needs " + std::to_string(need) +
                         " bytes of " + type->name + " in '" + dataPath.string() + "', which has " +
                         std::to_string(have - std::min<std::uintmax_t>(have, skip)) +
                         (local ? " after the header" : ""));

  MetaImage out;
  out.elementType = type->name;
  out.dataFile = dataPath.string();
  if (const HeaderLine* c = r.find(h, {"Comment"})) out.comment = c->value;
  out.volume = Volume<float>(g, 0.0f);
  // MetaImage data is little-endian here (MSB False); so is every host Penumbra builds for.
  std::ifstream in(dataPath, std::ios::binary);
  std::vector<char> bytes(type->name == std::string("MET_FLOAT") ? 0 : std::size_t(need));
  char* dest = bytes.empty() ? reinterpret_cast<char*>(out.volume.data.data()) : bytes.data();
  if (!in || !in.seekg(std::streamoff(skip)) || !in.read(dest, std::streamsize(need)))
    r.fail(ErrorCode::Io,
           "cannot read " + std::to_string(need) + " bytes from '" + dataPath.string() + "'");
  if (type->name == std::string("MET_DOUBLE")) convert<double>(bytes, out.volume.data);
  if (type->name == std::string("MET_SHORT")) convert<std::int16_t>(bytes, out.volume.data);
  if (type->name == std::string("MET_USHORT")) convert<std::uint16_t>(bytes, out.volume.data);
  return out;
}

}  // namespace penumbra::io
