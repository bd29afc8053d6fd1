#include "case/case_file.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace penumbra::io {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kFormatName = "penumbra-case";

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  PENUMBRA_THROW(Format, (path.empty() ? std::string("(document)") : path) + ": " + what);
}
std::string member(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}
std::string element(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

/// Reading side: one JSON object and its path, with typed accessors that name the path of any
/// problem. Every key read is remembered, so that leftovers can be reported as unknown.
class ObjectReader {
public:
  ObjectReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object()) fail(path_, "expected an object");
  }
  bool has(const char* key) const { return j_.contains(key); }
  const json& get(const char* key) {
    seen_.push_back(key);
    if (!j_.contains(key)) fail(member(path_, key), "missing");
    return j_.at(key);
  }
  double number(const char* key) {
    const json& v = get(key);
    if (!v.is_number()) fail(member(path_, key), "expected a number");
    return v.get<double>();
  }
  double number(const char* key, double fallback) { return has(key) ? number(key) : (seen_.push_back(key), fallback); }
  int integer(const char* key) {
    const json& v = get(key);
    if (!v.is_number_integer()) fail(member(path_, key), "expected an integer");
    const auto x = v.get<long long>();
    if (x < -2147483647LL || x > 2147483647LL) fail(member(path_, key), "integer out of range");
    return int(x);
  }
  std::string string(const char* key) {
    const json& v = get(key);
    if (!v.is_string()) fail(member(path_, key), "expected a string");
    return v.get<std::string>();
  }
  std::string string(const char* key, std::string fallback) {
    return has(key) ? string(key) : (seen_.push_back(key), std::move(fallback));
  }
  const json& array(const char* key) {
    const json& v = get(key);
    if (!v.is_array()) fail(member(path_, key), "expected an array");
    return v;
  }
  /// One of `names` (index returned); anything else is an error listing them.
  int choice(const char* key, std::initializer_list<const char*> names, int fallback) {
    if (!has(key)) return seen_.push_back(key), fallback;
    const std::string s = string(key);
    int i = 0;
    std::string list;
    for (const char* n : names) {
      if (s == n) return i;
      list += (i++ ? ", " : "") + std::string("\"") + n + "\"";
    }
    fail(member(path_, key), "\"" + s + "\" is not one of " + list);
  }
  std::string path(const char* key) const { return member(path_, key); }
  /// Throws for the first key not read (misspellings must not fall back to defaults silently).
  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (std::find(seen_.begin(), seen_.end(), it.key()) == seen_.end())
        fail(member(path_, it.key()), "unknown key");
  }

private:
  const json& j_;
  std::string path_;
  std::vector<std::string> seen_;
};

double requireNumber(const json& v, const std::string& path) {
  if (!v.is_number()) fail(path, "expected a number");
  return v.get<double>();
}

Vec3 readVec3(const json& v, const std::string& path) {
  if (!v.is_array() || v.size() != 3) fail(path, "expected [x, y, z] (3 numbers, mm)");
  return {requireNumber(v[0], element(path, 0)), requireNumber(v[1], element(path, 1)),
          requireNumber(v[2], element(path, 2))};
}

proton::ProtonBeam readBeam(const json& j, const std::string& path) {
  ObjectReader r(j, path);
  proton::ProtonBeam b;
  b.name = r.string("name");
  const std::string modality = r.string("modality", "proton");
  if (modality != "proton")
    PENUMBRA_THROW(Unsupported, r.path("modality") + ": \"" + modality +
                                    "\" beams are not supported by this version (proton only)");
  b.gantryDeg = r.number("gantry");
  b.couchDeg = r.number("couch", 0.0);
  b.isocenter = readVec3(r.get("isocenter"), r.path("isocenter"));
  b.virtualSourceDistanceMm = r.number("virtualSourceDistance", 2000.0);
  if (!(b.virtualSourceDistanceMm > 0)) fail(r.path("virtualSourceDistance"), "must be > 0 mm");
  const json& layers = r.array("layers");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const std::string lp = element(r.path("layers"), l);
    ObjectReader lr(layers[l], lp);
    proton::EnergyLayer layer;
    layer.energyMeV = lr.number("energy");
    if (!(layer.energyMeV > 0)) fail(lr.path("energy"), "must be > 0 MeV");
    const json& spots = lr.array("spots");
    layer.spots.reserve(spots.size());
    for (std::size_t s = 0; s < spots.size(); ++s) {
      const std::string sp = element(lr.path("spots"), s);
      const json& v = spots[s];
      if (!v.is_array() || v.size() != 3) fail(sp, "expected [x, y, weight]");
      proton::ProtonSpot spot{requireNumber(v[0], element(sp, 0)),
                              requireNumber(v[1], element(sp, 1)),
                              requireNumber(v[2], element(sp, 2))};
      if (spot.weight < 0) fail(element(sp, 2), "weight must be >= 0");
      layer.spots.push_back(spot);
    }
    lr.finish();
    b.layers.push_back(std::move(layer));
  }
  r.finish();
  return b;
}

proton::SpotGenerationOptions readSpotOptions(const json& j, const std::string& path) {
  ObjectReader r(j, path);
  proton::SpotGenerationOptions o;
  o.spotSpacingMm = r.number("spotSpacing", o.spotSpacingMm);
  o.lateralMarginMm = r.number("lateralMargin", o.lateralMarginMm);
  o.layerSpacingMm = r.number("layerSpacing", o.layerSpacingMm);
  o.proximalMarginMm = r.number("proximalMargin", o.proximalMarginMm);
  o.distalMarginMm = r.number("distalMargin", o.distalMarginMm);
  o.pattern = r.choice("pattern", {"square", "hexagonal"}, int(o.pattern)) == 0
                  ? proton::SpotGridPattern::Square
                  : proton::SpotGridPattern::Hexagonal;
  o.weighting = r.choice("weighting", {"uniform", "depth"}, int(o.weighting)) == 0
                    ? proton::SpotWeighting::Uniform
                    : proton::SpotWeighting::DepthWeighted;
  o.depthWeightExponent = r.number("depthWeightExponent", o.depthWeightExponent);
  o.raySpacingMm = r.number("raySpacing", o.raySpacingMm);
  r.finish();
  return o;
}

}  // namespace

CaseFile parseCaseFile(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    PENUMBRA_THROW(Format, std::string("not valid JSON: ") + e.what());
  }
  ObjectReader top(doc, "");
  if (top.has("format") && top.string("format") != kFormatName)
    fail("format", "expected \"" + std::string(kFormatName) + "\"");
  const int version = top.integer("version");
  if (version != kCaseFileVersion)
    PENUMBRA_THROW(Unsupported, "version: case file version " + std::to_string(version) +
                                    " is not supported (this Penumbra reads version " +
                                    std::to_string(kCaseFileVersion) + ")");
  if (top.has("units")) top.string("units");  // informative only

  CaseFile c;
  {
    ObjectReader d(top.get("data"), "data");
    c.data.dicomFolder = d.string("dicomFolder");
    c.data.seriesKey = d.string("seriesKey", "");
    c.data.structureSetFile = d.string("structureSetFile", "");
    d.finish();
  }
  if (top.has("prescription")) {
    ObjectReader p(top.get("prescription"), "prescription");
    c.prescription.target = p.string("target");
    c.prescription.dosePerFractionGy = p.number("dosePerFraction");
    c.prescription.fractions = p.integer("fractions");
    if (!(c.prescription.dosePerFractionGy > 0)) fail(p.path("dosePerFraction"), "must be > 0 Gy");
    if (c.prescription.fractions < 1) fail(p.path("fractions"), "must be >= 1");
    p.finish();
  }
  const json& beams = top.array("beams");
  for (std::size_t b = 0; b < beams.size(); ++b) c.beams.push_back(readBeam(beams[b], element("beams", b)));
  if (top.has("spotGeneration")) c.spotGeneration = readSpotOptions(top.get("spotGeneration"), "spotGeneration");
  if (top.has("engine")) {
    ObjectReader e(top.get("engine"), "engine");
    c.engine.backend = Backend(e.choice("backend", {"cpu", "cuda", "auto"}, int(Backend::Auto)));
    c.engine.variant = e.choice("variant", {"classic", "dda-nc"}, 1) == 0 ? DdaVariant::Classic
                                                                           : DdaVariant::BranchFree;
    c.engine.doseGridSpacingMm = e.number("doseGridSpacing", 0.0);
    if (c.engine.doseGridSpacingMm < 0) fail(e.path("doseGridSpacing"), "must be >= 0 mm (0: CT grid)");
    e.finish();
  }
  if (top.has("display")) {
    const json& d = top.get("display");
    if (!d.is_object()) fail("display", "expected an object");
    c.displayJson = d.dump();
  }
  if (top.has("doseSets")) {
    const json& sets = top.array("doseSets");
    for (std::size_t i = 0; i < sets.size(); ++i) {
      ObjectReader s(sets[i], element("doseSets", i));
      c.doseSets.push_back({s.string("name"), s.string("file", "")});
      s.finish();
    }
  }
  top.finish();
  return c;
}

CaseFile readCaseFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) PENUMBRA_THROW(Io, "cannot open case file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) PENUMBRA_THROW(Io, "error reading case file '" + path + "'");
  try {
    return parseCaseFile(ss.str());
  } catch (const Error& e) {
    throw Error(e.code(), "case file '" + path + "': " + e.message(), e.file().c_str(), e.line());
  }
}

std::string resolveCasePath(const std::string& caseFilePath, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(caseFilePath).parent_path() / path).lexically_normal().string();
}

std::string relativeToCase(const std::string& caseFilePath, const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  const fs::path folder = fs::absolute(fs::path(caseFilePath), ec).parent_path().lexically_normal();
  const fs::path target = fs::absolute(fs::path(path), ec).lexically_normal();
  if (ec) return path;
  // Relative only when the two share a folder below the root (/work/main/box.json and
  // /work/shared/data): a case in /tmp pointing at /work/... would otherwise read
  // "../../work/...", which breaks as soon as the case file moves.
  auto f = folder.begin(), t = target.begin();
  int common = 0;
  for (; f != folder.end() && t != target.end() && *f == *t; ++f, ++t) ++common;
  if (common < 2) return target.string();
  const fs::path rel = target.lexically_relative(folder);
  return rel.empty() ? target.string() : rel.string();
}

}  // namespace penumbra::io
