#include "case/case_file.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>

#include "case/case_json_reader.hpp"
#include "core/error.hpp"

namespace penumbra::io {

using nlohmann::json;
using namespace case_json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kFormatName = "penumbra-case";

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
  r.string("modality", "proton");  // "proton" (readAnyBeam dispatched on it)
  b.gantryDeg = r.number("gantry");
  b.couchDeg = r.number("couch", 0.0);
  b.isocenter = readVec3(r.get("isocenter"), r.path("isocenter"));
  b.virtualSourceDistanceMm = r.number("virtualSourceDistance", 2000.0);
  requireRange(b.virtualSourceDistanceMm, proton::kMinVirtualSourceDistanceMm,
               proton::kMaxVirtualSourceDistanceMm, r.path("virtualSourceDistance"), " mm");
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
      if (!(spot.weight >= 0 && spot.weight <= proton::kMaxSpotWeight))
        fail(element(sp, 2), "spot weight " + formatG(spot.weight) + " is outside [0, " +
                                 formatG(proton::kMaxSpotWeight) + "] (units of 1e9 protons)");
      layer.spots.push_back(spot);
    }
    lr.finish();
    b.layers.push_back(std::move(layer));
  }
  r.finish();
  return b;
}

/// [x1, x2, y1, y2] with x1 < x2 and y1 < y2.
void readJaws(const json& v, const std::string& path, photon::PhotonBeam& b) {
  if (!v.is_array() || v.size() != 4) fail(path, "expected [x1, x2, y1, y2] (4 numbers, mm)");
  double j[4];
  for (std::size_t i = 0; i < 4; ++i) j[i] = requireNumber(v[i], element(path, i));
  if (!(j[0] < j[1]) || !(j[2] < j[3])) fail(path, "jaws must open: x1 < x2 and y1 < y2");
  b.x1Mm = j[0], b.x2Mm = j[1], b.y1Mm = j[2], b.y2Mm = j[3];
}

void readAperture(const json& j, const std::string& path, CasePhotonBeam& c) {
  ObjectReader r(j, path);
  c.apertureTarget = r.string("target", "");
  c.apertureMarginMm = r.number("margin", 0.0);
  if (!(c.apertureMarginMm >= 0)) fail(r.path("margin"), "must be >= 0 mm");
  const json& polygons = r.array("polygons");
  for (std::size_t p = 0; p < polygons.size(); ++p) {
    const std::string pp = element(r.path("polygons"), p);
    const json& poly = polygons[p];
    if (!poly.is_array() || poly.size() < 3) fail(pp, "expected a polygon: [[u, v], ...] with >= 3 points");
    std::vector<std::array<double, 2>> points;
    for (std::size_t q = 0; q < poly.size(); ++q) {
      const std::string qp = element(pp, q);
      if (!poly[q].is_array() || poly[q].size() != 2) fail(qp, "expected [u, v] (mm)");
      points.push_back({requireNumber(poly[q][0], element(qp, 0)), requireNumber(poly[q][1], element(qp, 1))});
    }
    c.beam.aperture.push_back(std::move(points));
  }
  r.finish();
}

CasePhotonBeam readPhotonBeam(const json& j, const std::string& path) {
  ObjectReader r(j, path);
  CasePhotonBeam c;
  photon::PhotonBeam& b = c.beam;
  b.name = r.string("name");
  r.string("modality");  // "photon" (readAnyBeam dispatched on it)
  b.gantryDeg = r.number("gantry");
  b.couchDeg = r.number("couch", 0.0);
  b.collimatorDeg = r.number("collimator", 0.0);
  b.isocenter = readVec3(r.get("isocenter"), r.path("isocenter"));
  b.sadMm = r.number("sad", 1000.0);
  requireRange(b.sadMm, photon::kMinSadMm, photon::kMaxSadMm, r.path("sad"), " mm");
  readJaws(r.get("jaws"), r.path("jaws"), b);
  b.monitorUnits = r.number("monitorUnits");
  requireRange(b.monitorUnits, 0, photon::kMaxMonitorUnits, r.path("monitorUnits"), " MU");
  if (r.has("aperture")) readAperture(r.get("aperture"), r.path("aperture"), c);
  r.finish();
  return c;
}

/// One element of "beams", by its "modality" (absent: proton, as in files written before
/// photon beams existed).
void readAnyBeam(const json& j, const std::string& path, CaseFile& c) {
  std::string modality = "proton";
  if (j.is_object() && j.contains("modality")) {
    if (!j.at("modality").is_string()) fail(member(path, "modality"), "expected a string");
    modality = j.at("modality").get<std::string>();
  }
  if (modality == "proton") c.beams.push_back(readBeam(j, path));
  else if (modality == "photon") c.photonBeams.push_back(readPhotonBeam(j, path));
  else
    PENUMBRA_THROW(Unsupported, member(path, "modality") + ": \"" + modality +
                                    "\" beams are not supported by this version (proton or photon)");
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

/// Refuses text whose arrays and objects nest deeper than kMaxCaseNesting, before the JSON
/// library sees it: its parser and its destructor recurse once per level, and 100 000 levels
/// overflowed the stack. Brackets inside strings do not count.
void requireShallowNesting(const std::string& text) {
  int depth = 0, line = 1;
  bool inString = false, escaped = false;
  for (const char ch : text) {
    if (ch == '\n') ++line;
    if (inString) {
      if (escaped)
        escaped = false;
      else if (ch == '\\')
        escaped = true;
      else if (ch == '"')
        inString = false;
      continue;
    }
    if (ch == '"')
      inString = true;
    else if (ch == '[' || ch == '{') {
      if (++depth > kMaxCaseNesting)
        PENUMBRA_THROW(Format, "nested deeper than " + std::to_string(kMaxCaseNesting) +
                                   " levels (line " + std::to_string(line) + ")");
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
}

}  // namespace

CaseFile parseCaseFile(const std::string& text) {
  requireShallowNesting(text);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e999
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
    const double dpf = c.prescription.dosePerFractionGy;
    if (!(dpf > 0 && dpf <= kMaxDosePerFractionGy))
      fail(p.path("dosePerFraction"),
           formatG(dpf) + " Gy is outside (0, " + formatG(kMaxDosePerFractionGy) + "] Gy");
    if (c.prescription.fractions < 1) fail(p.path("fractions"), "must be >= 1");
    p.finish();
  }
  const json& beams = top.array("beams");
  for (std::size_t b = 0; b < beams.size(); ++b) readAnyBeam(beams[b], element("beams", b), c);
  if (top.has("spotGeneration")) c.spotGeneration = readSpotOptions(top.get("spotGeneration"), "spotGeneration");
  if (top.has("engine")) {
    ObjectReader e(top.get("engine"), "engine");
    c.engine.backend = Backend(e.choice("backend", {"cpu", "cuda", "auto"}, int(Backend::Auto)));
    c.engine.variant = e.choice("variant", {"classic", "dda-nc"}, 1) == 0 ? DdaVariant::Classic
                                                                           : DdaVariant::BranchFree;
    c.engine.doseGridSpacingMm = e.number("doseGridSpacing", 0.0);
    if (c.engine.doseGridSpacingMm != 0)
      requireRange(c.engine.doseGridSpacingMm, kMinDoseGridSpacingMm, kMaxDoseGridSpacingMm,
                   e.path("doseGridSpacing"), " mm", " (0: the CT grid)");
    if (e.has("photon")) {
      ObjectReader p(e.get("photon"), e.path("photon"));
      CasePhotonEngineSettings& ph = c.engine.photon;
      ph.polarCones = p.integer("polarCones", ph.polarCones);
      if (ph.polarCones < 1 || 48 % ph.polarCones != 0) fail(p.path("polarCones"), "must divide 48");
      ph.azimuthalCones = p.integer("azimuthalCones", ph.azimuthalCones);
      if (ph.azimuthalCones < 1) fail(p.path("azimuthalCones"), "must be >= 1");
      ph.deposit = p.choice("deposit", {"atomic", "atomic-free"}, 1) == 0 ? photon::DepositStrategy::Atomic
                                                                          : photon::DepositStrategy::AtomicFree;
      p.finish();
    }
    e.finish();
  }
  if (top.has("optimisation")) c.optimisation = readOptimisation(top.get("optimisation"), "optimisation");
  if (top.has("robustness")) c.robustness = readRobustness(top.get("robustness"), "robustness");
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
