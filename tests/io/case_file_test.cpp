// Case files: exact round trip (proton and photon beams), validation errors that name the JSON
// path, files written before photon beams existed, atomic writes that never damage an existing
// file.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <functional>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "case/case_file.hpp"
#include "core/error.hpp"

namespace penumbra::io {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class TempFolder {
public:
  TempFolder() {
    path_ = fs::temp_directory_path() / ("penumbra-case-" + std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, ec);
    fs::remove_all(path_, ec);
  }
  std::string sub(const std::string& name) const { return (path_ / name).string(); }
  std::size_t entries() const { return std::size_t(std::distance(fs::directory_iterator(path_), {})); }
  const fs::path& path() const { return path_; }

private:
  fs::path path_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A case with awkward doubles (1/3, 0.1, 1e-7), two beams, every section filled.
CaseFile sampleCase(int spotsPerLayer = 7) {
  CaseFile c;
  c.data = {"../data/BOXPHANTOM", "1.2.3.4", "RS.dcm"};
  c.prescription = {"OuterTarget", 2.0, 30};
  for (int b = 0; b < 2; ++b) {
    proton::ProtonBeam beam;
    beam.name = b == 0 ? "G0" : "G90 \"lateral\"";
    beam.gantryDeg = 90.0 * b;
    beam.couchDeg = b == 0 ? 0.0 : 270.0;
    beam.isocenter = {-3.0, 1.0 / 3.0, 0.1};
    beam.virtualSourceDistanceMm = 2000 + b;
    for (int l = 0; l < 4; ++l) {
      proton::EnergyLayer layer;
      layer.energyMeV = 100.0 + l * 3.7 + 1e-7;
      for (int s = 0; s < spotsPerLayer; ++s)
        layer.spots.push_back({s * 5.0 / 3.0, -s * 0.1, 1.0 / (s + 1)});
      beam.layers.push_back(layer);
    }
    c.beams.push_back(beam);
  }
  // Photon beams: an open field and a conformal aperture of two polygons.
  CasePhotonBeam open;
  open.beam.name = "X G0";
  open.beam.gantryDeg = 0;
  open.beam.collimatorDeg = 1.0 / 3.0;
  open.beam.isocenter = {-3.0, 1.0 / 3.0, 0.1};
  open.beam.x1Mm = -50, open.beam.x2Mm = 40.5, open.beam.y1Mm = -30, open.beam.y2Mm = 50;
  open.beam.monitorUnits = 123.4;
  c.photonBeams.push_back(open);
  CasePhotonBeam conformal = open;
  conformal.beam.name = "X G270 conformal";
  conformal.beam.gantryDeg = 270;
  conformal.beam.couchDeg = 10;
  conformal.beam.sadMm = 1000.5;
  conformal.beam.aperture = {{{-20.1, -20}, {20, -20}, {20.0 / 3.0, 20}, {-20, 20}}, {{30, 30}, {40, 30}, {35, 0.1}}};
  conformal.apertureTarget = "OuterTarget";
  conformal.apertureMarginMm = 5;
  c.photonBeams.push_back(conformal);
  c.spotGeneration.spotSpacingMm = 4.5;
  c.spotGeneration.pattern = proton::SpotGridPattern::Square;
  c.spotGeneration.weighting = proton::SpotWeighting::DepthWeighted;
  c.spotGeneration.layerSpacingMm = 0;
  c.engine = {Backend::Cuda, DdaVariant::Classic, 2.5, {6, 7, photon::DepositStrategy::Atomic}};
  c.displayJson = R"({"colormap":"jet","isodoseLevels":[107,100,95],"opacity":0.4})";
  c.doseSets = {{"run 1", "dose1.mhd"}, {"not exported", ""}};
  return c;
}

void expectEqual(const CaseFile& a, const CaseFile& b) {
  EXPECT_EQ(a.data.dicomFolder, b.data.dicomFolder);
  EXPECT_EQ(a.data.seriesKey, b.data.seriesKey);
  EXPECT_EQ(a.data.structureSetFile, b.data.structureSetFile);
  EXPECT_EQ(a.prescription.target, b.prescription.target);
  EXPECT_EQ(a.prescription.dosePerFractionGy, b.prescription.dosePerFractionGy);
  EXPECT_EQ(a.prescription.fractions, b.prescription.fractions);
  ASSERT_EQ(a.beams.size(), b.beams.size());
  for (std::size_t i = 0; i < a.beams.size(); ++i) {
    const auto &x = a.beams[i], &y = b.beams[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.gantryDeg, y.gantryDeg);
    EXPECT_EQ(x.couchDeg, y.couchDeg);
    EXPECT_EQ(x.isocenter.x, y.isocenter.x);
    EXPECT_EQ(x.isocenter.y, y.isocenter.y);  // exact: 17 significant digits
    EXPECT_EQ(x.isocenter.z, y.isocenter.z);
    EXPECT_EQ(x.virtualSourceDistanceMm, y.virtualSourceDistanceMm);
    ASSERT_EQ(x.layers.size(), y.layers.size());
    for (std::size_t l = 0; l < x.layers.size(); ++l) {
      EXPECT_EQ(x.layers[l].energyMeV, y.layers[l].energyMeV);
      ASSERT_EQ(x.layers[l].spots.size(), y.layers[l].spots.size());
      for (std::size_t s = 0; s < x.layers[l].spots.size(); ++s) {
        EXPECT_EQ(x.layers[l].spots[s].x, y.layers[l].spots[s].x);
        EXPECT_EQ(x.layers[l].spots[s].y, y.layers[l].spots[s].y);
        EXPECT_EQ(x.layers[l].spots[s].weight, y.layers[l].spots[s].weight);
      }
    }
  }
  const auto &o = a.spotGeneration, &p = b.spotGeneration;
  EXPECT_EQ(o.spotSpacingMm, p.spotSpacingMm);
  EXPECT_EQ(o.lateralMarginMm, p.lateralMarginMm);
  EXPECT_EQ(o.layerSpacingMm, p.layerSpacingMm);
  EXPECT_EQ(o.proximalMarginMm, p.proximalMarginMm);
  EXPECT_EQ(o.distalMarginMm, p.distalMarginMm);
  EXPECT_EQ(o.pattern, p.pattern);
  EXPECT_EQ(o.weighting, p.weighting);
  EXPECT_EQ(o.depthWeightExponent, p.depthWeightExponent);
  EXPECT_EQ(o.raySpacingMm, p.raySpacingMm);
  EXPECT_EQ(a.engine.backend, b.engine.backend);
  EXPECT_EQ(a.engine.variant, b.engine.variant);
  EXPECT_EQ(a.engine.doseGridSpacingMm, b.engine.doseGridSpacingMm);
  EXPECT_EQ(json::parse(a.displayJson), json::parse(b.displayJson));
  EXPECT_EQ(a.engine.photon.polarCones, b.engine.photon.polarCones);
  EXPECT_EQ(a.engine.photon.azimuthalCones, b.engine.photon.azimuthalCones);
  EXPECT_EQ(a.engine.photon.deposit, b.engine.photon.deposit);
  ASSERT_EQ(a.photonBeams.size(), b.photonBeams.size());
  for (std::size_t i = 0; i < a.photonBeams.size(); ++i) {
    const auto &x = a.photonBeams[i].beam, &y = b.photonBeams[i].beam;
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.gantryDeg, y.gantryDeg);
    EXPECT_EQ(x.couchDeg, y.couchDeg);
    EXPECT_EQ(x.collimatorDeg, y.collimatorDeg);
    EXPECT_EQ(x.isocenter.x, y.isocenter.x);
    EXPECT_EQ(x.isocenter.y, y.isocenter.y);
    EXPECT_EQ(x.isocenter.z, y.isocenter.z);
    EXPECT_EQ(x.sadMm, y.sadMm);
    EXPECT_EQ(x.x1Mm, y.x1Mm);
    EXPECT_EQ(x.x2Mm, y.x2Mm);
    EXPECT_EQ(x.y1Mm, y.y1Mm);
    EXPECT_EQ(x.y2Mm, y.y2Mm);
    EXPECT_EQ(x.monitorUnits, y.monitorUnits);
    EXPECT_EQ(x.aperture, y.aperture);  // exact: 17 significant digits
    EXPECT_EQ(a.photonBeams[i].apertureTarget, b.photonBeams[i].apertureTarget);
    EXPECT_EQ(a.photonBeams[i].apertureMarginMm, b.photonBeams[i].apertureMarginMm);
  }
  ASSERT_EQ(a.doseSets.size(), b.doseSets.size());
  for (std::size_t i = 0; i < a.doseSets.size(); ++i) {
    EXPECT_EQ(a.doseSets[i].name, b.doseSets[i].name);
    EXPECT_EQ(a.doseSets[i].file, b.doseSets[i].file);
  }
}

TEST(CaseFile, RoundTripIsExact) {
  TempFolder dir;
  const CaseFile c = sampleCase();
  writeCaseFile(dir.sub("case.json"), c);
  const CaseFile back = readCaseFile(dir.sub("case.json"));
  expectEqual(c, back);
  EXPECT_EQ(formatCaseFile(back), slurp(dir.sub("case.json")));
  EXPECT_EQ(dir.entries(), 1u);  // no temporary left behind
  // Layers are one line each.
  EXPECT_NE(slurp(dir.sub("case.json")).find(R"(        {"energy":100.0000001,"spots":[[0.0,)"),
            std::string::npos);
  // A name that spells the writer's layer placeholder still round-trips.
  CaseFile odd = sampleCase();
  odd.beams[0].name = "\x01layer1";
  writeCaseFile(dir.sub("odd.json"), odd);
  expectEqual(odd, readCaseFile(dir.sub("odd.json")));
}

TEST(CaseFile, MinimalDocumentTakesDefaults) {
  const CaseFile c = parseCaseFile(R"({"version": 1, "data": {"dicomFolder": "ct"}, "beams": []})");
  EXPECT_EQ(c.data.dicomFolder, "ct");
  EXPECT_TRUE(c.beams.empty());
  EXPECT_TRUE(c.prescription.target.empty());
  EXPECT_EQ(c.engine.backend, Backend::Auto);
  EXPECT_EQ(c.engine.variant, DdaVariant::BranchFree);
  EXPECT_EQ(c.spotGeneration.spotSpacingMm, proton::SpotGenerationOptions{}.spotSpacingMm);
  EXPECT_EQ(c.displayJson, "{}");
  EXPECT_TRUE(c.photonBeams.empty());
  EXPECT_EQ(c.engine.photon.polarCones, 8);
  EXPECT_EQ(c.engine.photon.deposit, photon::DepositStrategy::AtomicFree);
}

TEST(CaseFile, FilesWithoutPhotonBeamsStillOpen) {
  // A version-1 case as written before photon beams existed: proton beams without "modality",
  // an engine section without "photon".
  const CaseFile c = parseCaseFile(R"({"version": 1, "data": {"dicomFolder": "ct"},
      "beams": [{"name": "G0", "gantry": 0, "isocenter": [1, 2, 3],
                 "layers": [{"energy": 120, "spots": [[0, 0, 1]]}]}],
      "engine": {"backend": "cpu", "variant": "classic", "doseGridSpacing": 3}})");
  ASSERT_EQ(c.beams.size(), 1u);
  EXPECT_EQ(c.beams[0].spotCount(), 1u);
  EXPECT_TRUE(c.photonBeams.empty());
  EXPECT_EQ(c.engine.backend, Backend::Cpu);
  EXPECT_EQ(c.engine.photon.azimuthalCones, 12);
}

TEST(CaseFile, PhotonBeamsFollowTheProtonBeams) {
  const json doc = json::parse(formatCaseFile(sampleCase()));
  ASSERT_EQ(doc["beams"].size(), 4u);
  EXPECT_EQ(doc["beams"][1]["modality"], "proton");
  EXPECT_EQ(doc["beams"][2]["modality"], "photon");
  EXPECT_FALSE(doc["beams"][2].contains("aperture"));  // open field: jaws only
  EXPECT_EQ(doc["beams"][3]["aperture"]["target"], "OuterTarget");
  EXPECT_EQ(doc["beams"][3]["aperture"]["polygons"].size(), 2u);
  // Minimal photon beam: optional fields take the engine's defaults.
  const CaseFile c = parseCaseFile(R"({"version": 1, "data": {"dicomFolder": "ct"},
      "beams": [{"name": "X", "modality": "photon", "gantry": 90, "isocenter": [0, 0, 0],
                 "jaws": [-20, 20, -10, 10], "monitorUnits": 50}]})");
  ASSERT_EQ(c.photonBeams.size(), 1u);
  EXPECT_EQ(c.photonBeams[0].beam.sadMm, 1000);
  EXPECT_EQ(c.photonBeams[0].beam.collimatorDeg, 0);
  EXPECT_TRUE(c.photonBeams[0].beam.aperture.empty());
  EXPECT_EQ(c.photonBeams[0].beam.y2Mm, 10);
}

/// Applies `edit` to the sample document and expects an error whose message contains `needle`.
void expectError(const std::function<void(json&)>& edit, const std::string& needle,
                 ErrorCode code = ErrorCode::Format) {
  json doc = json::parse(formatCaseFile(sampleCase()));
  edit(doc);
  try {
    parseCaseFile(doc.dump());
    ADD_FAILURE() << "no error; expected '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.message();
    EXPECT_NE(e.message().find(needle), std::string::npos) << e.message();
  }
}

TEST(CaseFile, MalformedDocumentsNameThePath) {
  expectError([](json& d) { d["beams"][1]["layers"][3]["energy"] = "150"; },
              "beams[1].layers[3].energy: expected a number");
  expectError([](json& d) { d["beams"][0].erase("gantry"); }, "beams[0].gantry: missing");
  expectError([](json& d) { d["beams"][0]["isocenter"] = {1, 2}; }, "beams[0].isocenter: expected [x, y, z]");
  expectError([](json& d) { d["beams"][0]["isocenter"][2] = nullptr; }, "beams[0].isocenter[2]: expected a number");
  expectError([](json& d) { d["beams"][1]["layers"][0]["spots"][2] = {1, 2}; },
              "beams[1].layers[0].spots[2]: expected [x, y, weight]");
  expectError([](json& d) { d["beams"][0]["layers"][1]["spots"][4][2] = -1; },
              "beams[0].layers[1].spots[4][2]: spot weight -1 is outside [0, 1e+06]");
  expectError([](json& d) { d["beams"][0]["gantyr"] = 10; }, "beams[0].gantyr: unknown key");
  expectError([](json& d) { d["beams"] = json::object(); }, "beams: expected an array");
  expectError([](json& d) { d.erase("data"); }, "data: missing");
  expectError([](json& d) { d["data"]["dicomFolder"] = 3; }, "data.dicomFolder: expected a string");
  expectError([](json& d) { d["engine"]["backend"] = "gpu"; }, "engine.backend: \"gpu\" is not one of");
  expectError([](json& d) { d["spotGeneration"]["pattern"] = "round"; }, "spotGeneration.pattern");
  expectError([](json& d) { d["prescription"]["fractions"] = 2.5; }, "prescription.fractions: expected an integer");
  expectError([](json& d) { d["display"] = 3; }, "display: expected an object");
  expectError([](json& d) { d.erase("version"); }, "version: missing");
  expectError([](json& d) { d["version"] = "1"; }, "version: expected an integer");
  expectError([](json& d) { d["format"] = "other"; }, "format: expected \"penumbra-case\"");
  expectError([](json& d) { d["version"] = 2; }, "version 2 is not supported", ErrorCode::Unsupported);
  expectError([](json& d) { d["beams"][1]["modality"] = "electron"; }, "beams[1].modality",
              ErrorCode::Unsupported);
  // A proton beam relabelled photon: its proton keys are unknown to a photon beam.
  expectError([](json& d) { d["beams"][1]["modality"] = "photon"; }, "beams[1].jaws: missing");
  expectError([](json& d) { d["beams"][2]["jaws"] = {10, -10, -5, 5}; }, "beams[2].jaws: jaws must open");
  expectError([](json& d) { d["beams"][2]["jaws"] = {1, 2, 3}; }, "beams[2].jaws: expected [x1, x2, y1, y2]");
  expectError([](json& d) { d["beams"][2].erase("monitorUnits"); }, "beams[2].monitorUnits: missing");
  expectError([](json& d) { d["beams"][2]["monitorUnits"] = -1; },
              "beams[2].monitorUnits: -1 MU is outside [0, 100000]");
  expectError([](json& d) { d["beams"][3]["aperture"]["polygons"][1] = json::array({json::array({0, 0}), json::array({1, 1})}); },
              "beams[3].aperture.polygons[1]: expected a polygon");
  expectError([](json& d) { d["beams"][3]["aperture"]["polygons"][0][2] = json::array({1}); },
              "beams[3].aperture.polygons[0][2]: expected [u, v]");
  expectError([](json& d) { d["beams"][3]["aperture"]["margn"] = 1; }, "beams[3].aperture.margn: unknown key");
  expectError([](json& d) { d["engine"]["photon"]["polarCones"] = 5; }, "engine.photon.polarCones: must divide 48");
  expectError([](json& d) { d["engine"]["photon"]["deposit"] = "fast"; }, "engine.photon.deposit");
  expectError([](json& d) { d = json::array(); }, "(document): expected an object");
  EXPECT_THROW(parseCaseFile("{\"version\": 1, "), Error);
  try {
    parseCaseFile("{\"version\": 1,\n  \"beams\": [}");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Format);
    EXPECT_NE(e.message().find("not valid JSON"), std::string::npos) << e.message();
  }
  // readCaseFile prefixes the file name.
  TempFolder dir;
  std::ofstream(dir.sub("bad.json")) << R"({"version": 1, "data": {"dicomFolder": 1}, "beams": []})";
  try {
    readCaseFile(dir.sub("bad.json"));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("bad.json': data.dicomFolder"), std::string::npos) << e.message();
  }
  EXPECT_THROW(readCaseFile(dir.sub("missing.json")), Error);
}

TEST(CaseFile, DeepNestingIsRefusedWithoutCrashing) {
  // 100 000 nested arrays used to overflow the stack (SIGSEGV) inside the JSON library.
  const std::string head =
      R"({"version": 1, "data": {"dicomFolder": "ct"}, "beams": [], "display": {"a": )";
  const std::string deep = head + std::string(100000, '[') + std::string(100000, ']') + "}}";
  try {
    parseCaseFile(deep);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Format);
    EXPECT_NE(e.message().find("nested deeper than " + std::to_string(kMaxCaseNesting) + " levels"),
              std::string::npos)
        << e.message();
  }
  // Unbalanced and deep (never closed): refused the same way, before the parser sees it.
  EXPECT_THROW(parseCaseFile(head + std::string(100000, '{')), Error);
  // Brackets inside strings do not count.
  const CaseFile c = parseCaseFile(R"({"version": 1, "data": {"dicomFolder": ")" +
                                   std::string(1000, '[') + R"("}, "beams": []})");
  EXPECT_EQ(c.data.dicomFolder, std::string(1000, '['));
  // Exactly at the limit is fine (the document itself is level 1).
  std::string atLimit =
      R"({"version": 1, "data": {"dicomFolder": "ct"}, "beams": [], "display": {"a": )";
  atLimit += std::string(kMaxCaseNesting - 2, '[') + std::string(kMaxCaseNesting - 2, ']') + "}}";
  EXPECT_NO_THROW(parseCaseFile(atLimit));
  // readCaseFile names the file.
  TempFolder dir;
  const std::string deepPath = dir.sub("deep.json");
  std::ofstream(deepPath) << deep;
  try {
    readCaseFile(deepPath);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("case file '" + deepPath + "': nested deeper than"),
              std::string::npos)
        << e.message();
  }
}

TEST(CaseFile, OutOfRangeValuesAreRefusedNamingTheValue) {
  // Each of these used to load and run to an inf/NaN dose with exit status 0.
  expectError([](json& d) { d["beams"][0]["layers"][1]["spots"][4][2] = 1e308; },
              "beams[0].layers[1].spots[4][2]: spot weight 1e+308 is outside [0, 1e+06]");
  expectError([](json& d) { d["beams"][2]["monitorUnits"] = 1e308; },
              "beams[2].monitorUnits: 1e+308 MU is outside [0, 100000]");
  expectError([](json& d) { d["engine"]["doseGridSpacing"] = 1e-300; },
              "engine.doseGridSpacing: 1e-300 mm is outside [0.01, 100] mm (0: the CT grid)");
  expectError([](json& d) { d["beams"][3]["sad"] = 1e-9; },
              "beams[3].sad: 1e-09 mm is outside [500, 2000] mm");
  expectError([](json& d) { d["beams"][1]["virtualSourceDistance"] = 1e-9; },
              "beams[1].virtualSourceDistance: 1e-09 mm is outside [500, 100000] mm");
  expectError([](json& d) { d["prescription"]["dosePerFraction"] = 1e308; },
              "prescription.dosePerFraction: 1e+308 Gy is outside (0, 100] Gy");
  // A number beyond double's range: the JSON library throws out_of_range, which escaped as an
  // "unexpected error"; it is a malformed file like any other.
  json doc = json::parse(formatCaseFile(sampleCase()));
  std::string text = doc.dump();
  const std::string gantry = "\"gantry\":90.0";
  ASSERT_NE(text.find(gantry), std::string::npos);
  text.replace(text.find(gantry), gantry.size(), "\"gantry\":1e999");
  try {
    parseCaseFile(text);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Format);
    EXPECT_NE(e.message().find("not valid JSON"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("1e999"), std::string::npos) << e.message();
  }
  // The limits themselves are accepted.
  json ok = json::parse(formatCaseFile(sampleCase()));
  ok["beams"][0]["layers"][0]["spots"][0][2] = proton::kMaxSpotWeight;
  ok["beams"][2]["monitorUnits"] = photon::kMaxMonitorUnits;
  ok["beams"][2]["sad"] = photon::kMinSadMm;
  ok["beams"][0]["virtualSourceDistance"] = proton::kMaxVirtualSourceDistanceMm;
  ok["engine"]["doseGridSpacing"] = kMinDoseGridSpacingMm;
  EXPECT_NO_THROW(parseCaseFile(ok.dump()));
}

TEST(CaseFile, RefusedValuesNeverTouchTheExistingFile) {
  TempFolder dir;
  const std::string path = dir.sub("case.json");
  writeCaseFile(path, sampleCase());
  const std::string before = slurp(path);
  CaseFile bad = sampleCase();
  bad.beams[1].layers[2].spots[0].x = std::nan("");
  try {
    writeCaseFile(path, bad);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("beams[1].layers[2].spots[0][0]"), std::string::npos) << e.message();
  }
  bad = sampleCase();
  bad.displayJson = "[1, 2]";
  EXPECT_THROW(writeCaseFile(path, bad), Error);
  EXPECT_EQ(slurp(path), before);
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(CaseFile, FailedWriteLeavesTheExistingFileIntact) {
  TempFolder dir;
  const std::string path = dir.sub("case.json");
  writeCaseFile(path, sampleCase(1));
  const std::string before = slurp(path);
  // A write that fails half way: the file-size limit (which binds root too) stops the temporary
  // file at 4 KiB; the new document is ~100 KiB.
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills the process
  rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    writeCaseFile(path, sampleCase(2000));
  } catch (const Error& e) {
    threw = true;
    EXPECT_EQ(e.code(), ErrorCode::Io);
    EXPECT_NE(e.message().find("existing file untouched"), std::string::npos) << e.message();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, oldHandler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(slurp(path), before);
  EXPECT_EQ(dir.entries(), 1u);  // the partial temporary was removed
  expectEqual(readCaseFile(path), sampleCase(1));

  // A folder that does not exist.
  EXPECT_THROW(writeCaseFile(dir.sub("no/such/folder/case.json"), sampleCase()), Error);
}

TEST(CaseFile, UnwritableFolderLeavesTheExistingFileIntact) {
  TempFolder dir;
  const std::string path = dir.sub("case.json");
  writeCaseFile(path, sampleCase(1));
  const std::string before = slurp(path);
  fs::permissions(dir.path(), fs::perms::owner_read | fs::perms::owner_exec);
  if (access(dir.path().c_str(), W_OK) == 0) {  // root ignores permissions
    fs::permissions(dir.path(), fs::perms::owner_all);
    GTEST_SKIP() << "running with permission override (root); the size-limit test covers this";
  }
  EXPECT_THROW(writeCaseFile(path, sampleCase(3)), Error);
  fs::permissions(dir.path(), fs::perms::owner_all);
  EXPECT_EQ(slurp(path), before);
}

TEST(CaseFile, PathsRelativeToTheCaseFolder) {
  EXPECT_EQ(resolveCasePath("/a/b/case.json", "../data/ct"), "/a/data/ct");
  EXPECT_EQ(resolveCasePath("/a/b/case.json", "/abs/ct"), "/abs/ct");
  EXPECT_EQ(resolveCasePath("/a/b/case.json", ""), "");
  EXPECT_EQ(relativeToCase("/a/b/case.json", "/a/data/ct"), "../data/ct");
  EXPECT_EQ(relativeToCase("/a/b/case.json", "/a/b/ct"), "ct");
  EXPECT_EQ(relativeToCase("/a/b/case.json", "/x/y"), "/x/y");  // nothing in common but "/"
  EXPECT_EQ(resolveCasePath("/a/b/case.json", relativeToCase("/a/b/case.json", "/x/y")), "/x/y");
}

}  // namespace
}  // namespace penumbra::io
