// Writing side of case files: the JSON document of a CaseFile, and the atomic file write.
#include <cmath>

#include <nlohmann/json.hpp>

#include "case/case_file.hpp"
#include "case/case_json_reader.hpp"
#include "core/error.hpp"
#include "file/atomic_file.hpp"

namespace penumbra::io {

// ordered_json keeps the keys in the order written (format and version first), for people.
using json = nlohmann::ordered_json;

namespace {

constexpr const char* kUnits =
    "angles deg; positions, distances, spacings and margins mm (margins and layer spacing "
    "water-equivalent); energies MeV; dose and objective levels Gy; spot weights in units of 1e9 "
    "protons; range errors %";

/// nlohmann writes NaN and infinity as null, which would not read back: refuse them here, with
/// the path, before anything touches the disk.
void requireFinite(const json& j, const std::string& path) {
  if (j.is_number_float() && !std::isfinite(j.get<double>()))
    PENUMBRA_THROW(InvalidArgument, "case file: " + path + " is not a finite number");
  if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i)
      requireFinite(j[i], path + "[" + std::to_string(i) + "]");
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it)
      requireFinite(*it, path.empty() ? it.key() : path + "." + it.key());
}

/// Layers are written one per line (`{"energy": E, "spots": [[x, y, w], ...]}`): a plan has
/// 10^3-10^4 spots, and one number per line made a 12 000-spot case 1.2 MB and unreadable. The
/// layer objects go into the document as placeholder strings that formatCaseFile replaces with
/// their compact text after the indented dump.
/// Placeholder of layer k; it starts with a control character, which a dump always escapes.
/// User strings could still spell it, so formatCaseFile counts the occurrences before replacing.
std::string placeholder(std::size_t k) { return "\x01layer" + std::to_string(k); }

json beamJson(const proton::ProtonBeam& b, std::size_t index, std::vector<std::string>& layerText) {
  json layers = json::array();
  for (std::size_t l = 0; l < b.layers.size(); ++l) {
    json spots = json::array();
    for (std::size_t s = 0; s < b.layers[l].spots.size(); ++s) {
      const proton::ProtonSpot& p = b.layers[l].spots[s];
      PENUMBRA_REQUIRE(p.weight >= 0, InvalidArgument,
                       "case file: beams[" + std::to_string(index) + "].layers[" +
                           std::to_string(l) + "].spots[" + std::to_string(s) +
                           "]: weight must be >= 0");
      spots.push_back(json::array({p.x, p.y, p.weight}));
    }
    json layer = {{"energy", b.layers[l].energyMeV}, {"spots", std::move(spots)}};
    requireFinite(layer, "beams[" + std::to_string(index) + "].layers[" + std::to_string(l) + "]");
    layerText.push_back(layer.dump());
    layers.push_back(placeholder(layerText.size() - 1));
  }
  return {{"name", b.name},
          {"modality", "proton"},
          {"gantry", b.gantryDeg},
          {"couch", b.couchDeg},
          {"isocenter", json::array({b.isocenter.x, b.isocenter.y, b.isocenter.z})},
          {"virtualSourceDistance", b.virtualSourceDistanceMm},
          {"layers", std::move(layers)}};
}

json photonBeamJson(const CasePhotonBeam& c, std::size_t index, std::vector<std::string>& compactText) {
  const photon::PhotonBeam& b = c.beam;
  const std::string path = "beams[" + std::to_string(index) + "]";
  PENUMBRA_REQUIRE(b.monitorUnits >= 0, InvalidArgument, "case file: " + path + ".monitorUnits must be >= 0");
  json out = {{"name", b.name},
              {"modality", "photon"},
              {"gantry", b.gantryDeg},
              {"couch", b.couchDeg},
              {"collimator", b.collimatorDeg},
              {"isocenter", json::array({b.isocenter.x, b.isocenter.y, b.isocenter.z})},
              {"sad", b.sadMm},
              {"jaws", json::array({b.x1Mm, b.x2Mm, b.y1Mm, b.y2Mm})},
              {"monitorUnits", b.monitorUnits}};
  if (!b.aperture.empty() || !c.apertureTarget.empty()) {
    // One polygon per line, like the proton layers (an aperture has 10^2-10^3 points).
    json polygons = json::array();
    for (std::size_t p = 0; p < b.aperture.size(); ++p) {
      json poly = json::array();
      for (const auto& q : b.aperture[p]) poly.push_back(json::array({q[0], q[1]}));
      requireFinite(poly, path + ".aperture.polygons[" + std::to_string(p) + "]");
      compactText.push_back(poly.dump());
      polygons.push_back(placeholder(compactText.size() - 1));
    }
    out["aperture"] = {{"target", c.apertureTarget}, {"margin", c.apertureMarginMm}, {"polygons", std::move(polygons)}};
  }
  return out;
}

/// The beams with their layers and aperture polygons parsed back in place of the placeholders
/// (the slow, safe form: only those positions hold placeholders, whatever user strings spell).
void expandPlaceholders(json& beams, const std::vector<std::string>& compactText) {
  std::size_t k = 0;
  for (auto& b : beams) {
    if (b.contains("layers"))
      for (auto& layer : b["layers"]) layer = json::parse(compactText[k++]);
    if (b.contains("aperture"))
      for (auto& poly : b["aperture"]["polygons"]) poly = json::parse(compactText[k++]);
  }
}

}  // namespace

std::string formatCaseFile(const CaseFile& c) {
  json doc;
  doc["format"] = "penumbra-case";
  doc["version"] = kCaseFileVersion;
  doc["units"] = kUnits;
  doc["data"] = {{"dicomFolder", c.data.dicomFolder},
                 {"seriesKey", c.data.seriesKey},
                 {"structureSetFile", c.data.structureSetFile}};
  if (!c.prescription.target.empty())
    doc["prescription"] = {{"target", c.prescription.target},
                           {"dosePerFraction", c.prescription.dosePerFractionGy},
                           {"fractions", c.prescription.fractions}};
  json beams = json::array();
  std::vector<std::string> layerText;
  for (std::size_t b = 0; b < c.beams.size(); ++b) beams.push_back(beamJson(c.beams[b], b, layerText));
  for (std::size_t b = 0; b < c.photonBeams.size(); ++b)
    beams.push_back(photonBeamJson(c.photonBeams[b], c.beams.size() + b, layerText));
  doc["beams"] = std::move(beams);
  const proton::SpotGenerationOptions& o = c.spotGeneration;
  doc["spotGeneration"] = {
      {"spotSpacing", o.spotSpacingMm},
      {"lateralMargin", o.lateralMarginMm},
      {"layerSpacing", o.layerSpacingMm},
      {"proximalMargin", o.proximalMarginMm},
      {"distalMargin", o.distalMarginMm},
      {"pattern", o.pattern == proton::SpotGridPattern::Square ? "square" : "hexagonal"},
      {"weighting", o.weighting == proton::SpotWeighting::Uniform ? "uniform" : "depth"},
      {"depthWeightExponent", o.depthWeightExponent},
      {"raySpacing", o.raySpacingMm}};
  static const char* const backends[] = {"cpu", "cuda", "auto"};
  const CasePhotonEngineSettings& ph = c.engine.photon;
  PENUMBRA_REQUIRE(ph.polarCones >= 1 && 48 % ph.polarCones == 0 && ph.azimuthalCones >= 1, InvalidArgument,
                   "case file: engine.photon: polar cones must divide 48 and azimuthal cones be >= 1");
  doc["engine"] = {{"backend", backends[int(c.engine.backend)]},
                   {"variant", c.engine.variant == DdaVariant::Classic ? "classic" : "dda-nc"},
                   {"doseGridSpacing", c.engine.doseGridSpacingMm},
                   {"photon",
                    {{"polarCones", ph.polarCones},
                     {"azimuthalCones", ph.azimuthalCones},
                     {"deposit", ph.deposit == photon::DepositStrategy::Atomic ? "atomic" : "atomic-free"}}}};
  // Only when the user's objectives or options exist, so a case without them reads as before.
  if (!c.optimisation.objectives.empty() || c.optimisation.options)
    doc["optimisation"] = case_json::optimisationJson(c.optimisation);
  if (c.robustness) doc["robustness"] = case_json::robustnessJson(*c.robustness);
  json display;
  try {
    display = json::parse(c.displayJson.empty() ? std::string("{}") : c.displayJson);
  } catch (const json::parse_error& e) {
    PENUMBRA_THROW(InvalidArgument, std::string("case file: display is not valid JSON: ") + e.what());
  }
  PENUMBRA_REQUIRE(display.is_object(), InvalidArgument, "case file: display must be a JSON object");
  doc["display"] = std::move(display);
  json sets = json::array();
  for (const CaseDoseSet& s : c.doseSets) sets.push_back({{"name", s.name}, {"file", s.file}});
  doc["doseSets"] = std::move(sets);
  requireFinite(doc, "");
  // nlohmann prints doubles with max_digits10 (17 significant digits): exact round trip.
  std::string text = doc.dump(2);
  const std::string prefix = "\"\\u0001layer";
  std::size_t occurrences = 0;
  for (std::size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1))
    ++occurrences;
  if (occurrences != layerText.size()) {
    // Some string of the case spells a placeholder: write the same document without compact
    // layers (one number per line) rather than risk a wrong replacement.
    expandPlaceholders(doc["beams"], layerText);
    return doc.dump(2) + "\n";
  }
  std::size_t from = 0;
  for (std::size_t k = 0; k < layerText.size(); ++k) {
    const std::string quoted = "\"\\u0001layer" + std::to_string(k) + "\"";
    const std::size_t at = text.find(quoted, from);
    PENUMBRA_REQUIRE(at != std::string::npos, Internal, "case file: layer placeholder lost");
    text.replace(at, quoted.size(), layerText[k]);
    from = at + layerText[k].size();
  }
  return text + "\n";
}

void writeCaseFile(const std::string& path, const CaseFile& c) {
  const std::string text = formatCaseFile(c);  // every refusal happens before the disk is touched
  writeFileAtomically(path, text, "case file");
}

}  // namespace penumbra::io
