// Robustness settings in case files: the error scenarios (the "robustness" section) and the
// robust optimisation mode (optimisation.options.robustMode). An exact round trip, files written
// before either was saved (the defaults), one message per bad field naming its path and value on
// reading and on writing (a refused write leaves the existing file as it was), and limits that
// agree with the scenario model's own at their edges.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>

#include "case/case_file.hpp"
#include "case_test_util.hpp"
#include "core/error.hpp"
#include "robust/scenario.hpp"

namespace penumbra::io {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using optimise::RobustMode;

/// Every field away from its default, with doubles that only an exact writer keeps (1/3).
CaseRobustness sampleRobustness() {
  CaseRobustness r;
  r.scenarios.rangePercent = 2.25;
  r.scenarios.setupMm = 1.0 / 3.0;
  r.scenarios.sphereDirections = 26;
  r.scenarios.combine = false;
  r.doseGridSpacingMm = 2.5;
  return r;
}

CaseFile sampleCase() {
  CaseFile c;
  c.data.dicomFolder = "../data/BOXPHANTOM";
  c.prescription = {"OuterTarget", 2.0, 30};
  c.optimisation.options = CaseOptimiserOptions{2.5e-4, 77, RobustMode::ExpectedValue};
  c.robustness = sampleRobustness();
  return c;
}

void expectEqual(const CaseRobustness& a, const CaseRobustness& b) {
  EXPECT_EQ(a.scenarios.rangePercent, b.scenarios.rangePercent);  // exact
  EXPECT_EQ(a.scenarios.setupMm, b.scenarios.setupMm);
  EXPECT_EQ(a.scenarios.sphereDirections, b.scenarios.sphereDirections);
  EXPECT_EQ(a.scenarios.combine, b.scenarios.combine);
  EXPECT_EQ(a.doseGridSpacingMm, b.doseGridSpacingMm);
}

json sampleDocument() { return json::parse(formatCaseFile(sampleCase())); }

using test::formatError;

fs::path tempFolder() {
  const fs::path dir =
      fs::temp_directory_path() / ("penumbra-robust-" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  return dir;
}

TEST(CaseRobustness, RoundTripOfScenariosAndRobustMode) {
  const fs::path dir = tempFolder();
  const std::string path = (dir / "case.json").string();
  const CaseFile c = sampleCase();
  writeCaseFile(path, c);
  const CaseFile back = readCaseFile(path);
  ASSERT_TRUE(back.robustness.has_value());
  expectEqual(*c.robustness, *back.robustness);
  ASSERT_TRUE(back.optimisation.options.has_value());
  EXPECT_EQ(back.optimisation.options->robustMode, RobustMode::ExpectedValue);
  EXPECT_EQ(back.optimisation.options->maxIterations, 77);

  // The document people read: stable names, the count only with the sphere.
  const json doc = json::parse(formatCaseFile(back));
  EXPECT_EQ(doc.at("optimisation").at("options").at("robustMode"), "expected-value");
  const json& r = doc.at("robustness");
  EXPECT_EQ(r.at("rangeError"), 2.25);
  EXPECT_EQ(r.at("shiftPattern"), "sphere");
  EXPECT_EQ(r.at("sphereDirections"), 26);
  EXPECT_EQ(r.at("combine"), false);
  EXPECT_EQ(r.at("doseGridSpacing"), 2.5);

  // The other mode, the axes, and "none".
  CaseFile axes = sampleCase();
  axes.robustness->scenarios.sphereDirections = 0;
  axes.robustness->scenarios.rangePercent = 0;  // no range scenarios: allowed
  axes.optimisation.options->robustMode = RobustMode::CompositeWorstCase;
  const json axesDoc = json::parse(formatCaseFile(axes));
  EXPECT_EQ(axesDoc.at("robustness").at("shiftPattern"), "axes");
  EXPECT_FALSE(axesDoc.at("robustness").contains("sphereDirections"));
  EXPECT_EQ(axesDoc.at("optimisation").at("options").at("robustMode"), "composite-worst-case");
  const CaseFile axesBack = parseCaseFile(axesDoc.dump());
  expectEqual(*axes.robustness, *axesBack.robustness);
  EXPECT_EQ(axesBack.optimisation.options->robustMode, RobustMode::CompositeWorstCase);

  CaseFile nominal = sampleCase();
  nominal.optimisation.options->robustMode.reset();
  const std::string nominalText = formatCaseFile(nominal);
  // "none" is the default: not written, so a nominal plan's options read as before.
  EXPECT_FALSE(json::parse(nominalText).at("optimisation").at("options").contains("robustMode"));
  EXPECT_FALSE(parseCaseFile(nominalText).optimisation.options->robustMode.has_value());
  json spelt = json::parse(nominalText);
  spelt["optimisation"]["options"]["robustMode"] = "none";
  EXPECT_FALSE(parseCaseFile(spelt.dump()).optimisation.options->robustMode.has_value());
  fs::remove_all(dir);
}

TEST(CaseRobustness, CasesWithoutTheFieldsReadTheDefaults) {
  // Written before either was saved: no section, options without a mode.
  const CaseFile old = parseCaseFile(
      R"({"version": 1, "data": {"dicomFolder": "ct"}, "beams": [],
          "optimisation": {"options": {"matrixCutoff": 0.001, "maxIterations": 150}}})");
  EXPECT_FALSE(old.robustness.has_value());
  EXPECT_FALSE(old.optimisation.options->robustMode.has_value());
  // And written back as it was: no section, no mode.
  const json again = json::parse(formatCaseFile(old));
  EXPECT_FALSE(again.contains("robustness"));
  EXPECT_FALSE(again.at("optimisation").at("options").contains("robustMode"));

  // Any key may be left out: the scenario model's default.
  const CaseFile some = parseCaseFile(
      R"({"version": 1, "data": {"dicomFolder": "ct"}, "beams": [],
          "robustness": {"setupError": 5}})");
  ASSERT_TRUE(some.robustness.has_value());
  const robust::ScenarioOptions defaults;
  EXPECT_EQ(some.robustness->scenarios.setupMm, 5);
  EXPECT_EQ(some.robustness->scenarios.rangePercent, defaults.rangePercent);
  EXPECT_EQ(some.robustness->scenarios.sphereDirections, defaults.sphereDirections);
  EXPECT_EQ(some.robustness->scenarios.combine, defaults.combine);
  EXPECT_EQ(some.robustness->doseGridSpacingMm, 0);
  const CaseFile empty = parseCaseFile(
      R"({"version": 1, "data": {"dicomFolder": "ct"}, "beams": [], "robustness": {}})");
  EXPECT_EQ(empty.robustness->scenarios.rangePercent, defaults.rangePercent);
  EXPECT_EQ(empty.robustness->scenarios.setupMm, defaults.setupMm);
}

TEST(CaseRobustness, EachBadFieldNamesItsPathAndValue) {
  struct Bad {
    const char* what;
    std::function<void(json&)> spoil;
    std::string expected;  ///< a substring of the message
  };
  const std::vector<Bad> bad = {
      {"negative range error", [](json& d) { d["robustness"]["rangeError"] = -1; },
       "robustness.rangeError: -1 % is negative: the range error is a magnitude"},
      {"range error at the limit", [](json& d) { d["robustness"]["rangeError"] = 50; },
       "robustness.rangeError: 50 % is outside [0, 50) %"},
      {"range error null (NaN)", [](json& d) { d["robustness"]["rangeError"] = nullptr; },
       "robustness.rangeError: null is not a finite number"},
      {"range error as text", [](json& d) { d["robustness"]["rangeError"] = "3.5"; },
       "robustness.rangeError: expected a number, got \"3.5\""},
      {"negative setup error", [](json& d) { d["robustness"]["setupError"] = -2.5; },
       "robustness.setupError: -2.5 mm is negative: the setup error is a magnitude"},
      {"setup error too large", [](json& d) { d["robustness"]["setupError"] = 60; },
       "robustness.setupError: 60 mm is outside [0, 50] mm"},
      {"unknown shift pattern", [](json& d) { d["robustness"]["shiftPattern"] = "grid"; },
       "robustness.shiftPattern: \"grid\" is not one of \"axes\", \"sphere\""},
      {"shift pattern not text", [](json& d) { d["robustness"]["shiftPattern"] = 6; },
       "robustness.shiftPattern: expected a string, got 6"},
      {"sphere without a count", [](json& d) { d["robustness"].erase("sphereDirections"); },
       "robustness.sphereDirections: missing (shiftPattern \"sphere\" needs"},
      {"no direction", [](json& d) { d["robustness"]["sphereDirections"] = 0; },
       "robustness.sphereDirections: 0 is outside [1, 1000]"},
      {"too many directions", [](json& d) { d["robustness"]["sphereDirections"] = 1001; },
       "robustness.sphereDirections: 1001 is outside [1, 1000]"},
      {"fractional count", [](json& d) { d["robustness"]["sphereDirections"] = 2.5; },
       "robustness.sphereDirections: expected an integer, got 2.5"},
      {"count with the axes",
       [](json& d) { d["robustness"]["shiftPattern"] = "axes"; },
       "robustness.sphereDirections: only with shiftPattern \"sphere\""},
      {"combine as text", [](json& d) { d["robustness"]["combine"] = "yes"; },
       "robustness.combine: expected true or false, got \"yes\""},
      {"combine as a number", [](json& d) { d["robustness"]["combine"] = 1; },
       "robustness.combine: expected true or false, got 1"},
      {"negative grid", [](json& d) { d["robustness"]["doseGridSpacing"] = -1; },
       "robustness.doseGridSpacing: -1 mm is outside [0.01, 100] mm"},
      {"misspelt key", [](json& d) { d["robustness"]["rangeErorr"] = 3; },
       "robustness.rangeErorr: unknown key"},
      {"section not an object", [](json& d) { d["robustness"] = json::array({3.5, 3}); },
       "robustness: expected an object"},
      {"unknown robust mode",
       [](json& d) { d["optimisation"]["options"]["robustMode"] = "minimax"; },
       "optimisation.options.robustMode: \"minimax\" is not one of \"none\", \"expected-value\", "
       "\"composite-worst-case\""},
      {"robust mode not text",
       [](json& d) { d["optimisation"]["options"]["robustMode"] = true; },
       "optimisation.options.robustMode: expected a string, got true"},
  };
  for (const Bad& b : bad) {
    json doc = sampleDocument();
    b.spoil(doc);
    const std::string message = formatError(doc);
    EXPECT_NE(message.find(b.expected), std::string::npos)
        << b.what << ": \"" << message << "\" lacks \"" << b.expected << "\"";
  }
}

TEST(CaseRobustness, WriterRefusesWhatTheReaderWouldWithoutTouchingTheFile) {
  const fs::path dir = tempFolder();
  const std::string path = (dir / "case.json").string();
  std::ofstream(path) << "previous";
  struct Bad {
    std::function<void(CaseFile&)> spoil;
    std::string expected;
  };
  const std::vector<Bad> bad = {
      {[](CaseFile& c) { c.robustness->scenarios.rangePercent = -3.5; },
       "case file: robustness.rangeError: -3.5 % is negative"},
      {[](CaseFile& c) { c.robustness->scenarios.setupMm = std::nan(""); },
       "robustness.setupError: nan mm is not a finite setup error"},
      {[](CaseFile& c) {
         c.robustness->scenarios.rangePercent = std::numeric_limits<double>::infinity();
       },
       "robustness.rangeError: inf % is not a finite range error"},
      {[](CaseFile& c) { c.robustness->scenarios.sphereDirections = -3; },
       "robustness.sphereDirections: -3 is outside [1, 1000]"},
      {[](CaseFile& c) { c.robustness->doseGridSpacingMm = 500; },
       "robustness.doseGridSpacing: 500 mm is outside"},
      {[](CaseFile& c) { c.optimisation.options->robustMode = RobustMode(7); },
       "optimisation.options.robustMode: unknown robust mode 7"},
  };
  for (const Bad& b : bad) {
    CaseFile c = sampleCase();
    b.spoil(c);
    test::expectRefusedWriteKeepsFile([&] { writeCaseFile(path, c); }, b.expected, path, dir);
  }
  fs::remove_all(dir);
}

TEST(CaseRobustness, LimitsAreTheScenarioModels) {
  // At each edge, a case loads exactly when makeScenarios takes the settings: what opens, runs.
  struct Edge {
    const char* key;
    json value;
  };
  const std::vector<Edge> edges = {
      {"rangeError", 49.99}, {"rangeError", 50},        {"rangeError", 0},
      {"setupError", 50},    {"setupError", 50.01},     {"setupError", 0},
      {"sphereDirections", 1000}, {"sphereDirections", 1001}, {"sphereDirections", 1}};
  for (const Edge& e : edges) {
    json doc = sampleDocument();
    doc["robustness"][e.key] = e.value;
    std::string readError;
    robust::ScenarioOptions read;
    try {
      read = parseCaseFile(doc.dump()).robustness->scenarios;
    } catch (const Error& x) {
      readError = x.message();
    }
    robust::ScenarioOptions engine = sampleRobustness().scenarios;
    if (std::string(e.key) == "rangeError") engine.rangePercent = e.value.get<double>();
    if (std::string(e.key) == "setupError") engine.setupMm = e.value.get<double>();
    if (std::string(e.key) == "sphereDirections") engine.sphereDirections = e.value.get<int>();
    bool engineTakes = true;
    try {
      robust::makeScenarios(engine);
    } catch (const Error&) {
      engineTakes = false;
    }
    EXPECT_EQ(readError.empty(), engineTakes) << e.key << " = " << e.value.dump() << ": " << readError;
    if (readError.empty()) {
      EXPECT_EQ(read.rangePercent, engine.rangePercent);
      EXPECT_EQ(read.setupMm, engine.setupMm);
      EXPECT_EQ(read.sphereDirections, engine.sphereDirections);
    }
  }
}

}  // namespace
}  // namespace penumbra::io
