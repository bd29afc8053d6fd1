// Optimisation objectives in case files (issue 14, item 4): an exact round trip by structure
// name (no voxels in the file), files written before objectives were saved, and one message per
// bad field that names the JSON path and the structure, on reading and on writing (a refused
// write leaves the existing file as it was).
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

namespace penumbra::io {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using optimise::StructureRole;
using optimise::TermType;

/// The objectives of a two-structure plan with awkward doubles (1/3, 0.1) and every term type.
CaseOptimisation sampleOptimisation() {
  CaseOptimisation o;
  o.objectives.push_back({"OuterTarget",
                          StructureRole::Target,
                          {{TermType::Uniform, 2.0, 1.0},
                           {TermType::MinDose, 1.94, 20.0},
                           {TermType::MaxDose, 2.08, 1.0 / 3.0}}});
  o.objectives.push_back({"Cord \"spinal\"",
                          StructureRole::OrganAtRisk,
                          {{TermType::MaxDose, 0.1, 0.0}, {TermType::MeanDose, 0.0, 2.5}}});
  o.options = CaseOptimiserOptions{2.5e-4, 77, std::nullopt};
  return o;
}

CaseFile caseWith(CaseOptimisation o) {
  CaseFile c;
  c.data.dicomFolder = "../data/BOXPHANTOM";
  c.prescription = {"OuterTarget", 2.0, 30};
  c.optimisation = std::move(o);
  return c;
}

void expectEqual(const CaseOptimisation& a, const CaseOptimisation& b) {
  ASSERT_EQ(a.objectives.size(), b.objectives.size());
  for (std::size_t i = 0; i < a.objectives.size(); ++i) {
    const CaseObjective &x = a.objectives[i], &y = b.objectives[i];
    EXPECT_EQ(x.structure, y.structure);
    EXPECT_EQ(x.role, y.role);
    ASSERT_EQ(x.terms.size(), y.terms.size());
    for (std::size_t t = 0; t < x.terms.size(); ++t) {
      EXPECT_EQ(x.terms[t].type, y.terms[t].type) << x.structure << " term " << t;
      EXPECT_EQ(x.terms[t].levelGy, y.terms[t].levelGy) << x.structure << " term " << t;
      EXPECT_EQ(x.terms[t].weight, y.terms[t].weight) << x.structure << " term " << t;  // exact
    }
  }
  ASSERT_EQ(a.options.has_value(), b.options.has_value());
  if (a.options) {
    EXPECT_EQ(a.options->matrixCutoff, b.options->matrixCutoff);
    EXPECT_EQ(a.options->maxIterations, b.options->maxIterations);
  }
}

/// The sample case's document, as JSON to spoil one field of.
json sampleDocument() { return json::parse(formatCaseFile(caseWith(sampleOptimisation()))); }

using test::formatError;

TEST(CaseObjectives, RoundTripByStructureName) {
  const fs::path dir =
      fs::temp_directory_path() / ("penumbra-obj-" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  const std::string path = (dir / "case.json").string();
  const CaseFile c = caseWith(sampleOptimisation());
  writeCaseFile(path, c);
  const CaseFile back = readCaseFile(path);
  expectEqual(c.optimisation, back.optimisation);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), {}), 1);  // atomic: no temporary left

  // By name, with role, type, level and weight; no voxel lists.
  const json doc = json::parse(formatCaseFile(back));
  const json& first = doc.at("optimisation").at("objectives").at(0);
  EXPECT_EQ(first.at("structure"), "OuterTarget");
  EXPECT_EQ(first.at("role"), "target");
  EXPECT_EQ(first.at("terms").at(1),
            json::parse(R"({"type": "min", "level": 1.94, "weight": 20.0})"));
  EXPECT_EQ(doc.at("optimisation").at("objectives").at(1).at("role"), "organ-at-risk");
  EXPECT_EQ(doc.at("optimisation").at("options"),
            json::parse(R"({"matrixCutoff": 2.5e-4, "maxIterations": 77})"));
  EXPECT_EQ(formatCaseFile(back).find("voxel"), std::string::npos);
  fs::remove_all(dir);
}

TEST(CaseObjectives, CasesWithoutObjectivesReadAndWriteAsBefore) {
  // A case written before objectives were saved: none, and no options (the programs' defaults).
  const CaseFile old = parseCaseFile(
      R"({"version": 1, "data": {"dicomFolder": "ct"}, "prescription": {"target": "PTV",
          "dosePerFraction": 2, "fractions": 30}, "beams": [], "display": {}})");
  EXPECT_TRUE(old.optimisation.objectives.empty());
  EXPECT_FALSE(old.optimisation.options.has_value());
  // And a case without them is written without the section, so older builds still read it.
  EXPECT_FALSE(json::parse(formatCaseFile(old)).contains("optimisation"));
  // Options alone, and a mean-dose term without a level (it has none), are fine.
  const CaseFile some = parseCaseFile(
      R"({"version": 1, "data": {"dicomFolder": "ct"}, "beams": [], "optimisation": {
          "objectives": [{"structure": "Cord", "role": "organ-at-risk",
                          "terms": [{"type": "mean", "weight": 3}]}],
          "options": {"maxIterations": 12}}})");
  ASSERT_EQ(some.optimisation.objectives.size(), 1u);
  EXPECT_EQ(some.optimisation.objectives[0].terms[0].type, TermType::MeanDose);
  EXPECT_EQ(some.optimisation.objectives[0].terms[0].levelGy, 0.0);
  EXPECT_EQ(some.optimisation.options->maxIterations, 12);
  EXPECT_EQ(some.optimisation.options->matrixCutoff, CaseOptimiserOptions{}.matrixCutoff);
}

TEST(CaseObjectives, EachBadFieldNamesItsPathAndStructure) {
  struct Bad {
    const char* what;
    std::function<void(json&)> spoil;
    std::vector<std::string> expected;  ///< substrings of the message
  };
  const std::string cord = "(structure 'Cord \"spinal\"')";
  const std::string o1 = "optimisation.objectives[1]";
  const std::vector<Bad> bad = {
      {"negative weight",
       [](json& d) { d["optimisation"]["objectives"][1]["terms"][0]["weight"] = -1; },
       {o1 + ".terms[0].weight: -1 is negative: term weights must be >= 0", cord}},
      {"non-finite level (null)",
       [](json& d) { d["optimisation"]["objectives"][1]["terms"][0]["level"] = nullptr; },
       {o1 + ".terms[0].level: null is not a finite number", cord}},
      {"level as text",
       [](json& d) { d["optimisation"]["objectives"][1]["terms"][0]["level"] = "inf"; },
       {o1 + ".terms[0].level: expected a number", cord}},
      {"level out of range",
       [](json& d) { d["optimisation"]["objectives"][1]["terms"][0]["level"] = 5000; },
       {o1 + ".terms[0].level: 5000 Gy is outside [0, 1000] Gy", cord}},
      {"negative level",
       [](json& d) { d["optimisation"]["objectives"][0]["terms"][2]["level"] = -0.5; },
       {"optimisation.objectives[0].terms[2].level: -0.5 Gy is outside",
        "(structure 'OuterTarget')"}},
      {"unknown term type",
       [](json& d) { d["optimisation"]["objectives"][1]["terms"][1]["type"] = "median"; },
       {o1 + ".terms[1].type: \"median\" is not one of \"uniform\", \"min\", \"max\", \"mean\"",
        cord}},
      {"missing term type",
       [](json& d) { d["optimisation"]["objectives"][1]["terms"][1].erase("type"); },
       {o1 + ".terms[1].type: missing", cord}},
      {"missing level",
       [](json& d) { d["optimisation"]["objectives"][1]["terms"][0].erase("level"); },
       {o1 + ".terms[0].level: missing", cord}},
      {"missing weight",
       [](json& d) { d["optimisation"]["objectives"][1]["terms"][0].erase("weight"); },
       {o1 + ".terms[0].weight: missing", cord}},
      {"misspelt key",
       [](json& d) { d["optimisation"]["objectives"][1]["terms"][0]["wieght"] = 1; },
       {o1 + ".terms[0].wieght: unknown key", cord}},
      {"unknown role",
       [](json& d) { d["optimisation"]["objectives"][1]["role"] = "oar"; },
       {o1 + ".role: \"oar\" is not one of \"target\", \"organ-at-risk\"", cord}},
      {"no terms",
       [](json& d) { d["optimisation"]["objectives"][1]["terms"] = json::array(); },
       {o1 + ".terms: no terms", cord}},
      {"empty structure name",
       [](json& d) { d["optimisation"]["objectives"][0]["structure"] = ""; },
       {"optimisation.objectives[0].structure: must not be empty"}},
      {"structure name not text",
       [](json& d) { d["optimisation"]["objectives"][0]["structure"] = 3; },
       {"optimisation.objectives[0].structure: expected a string"}},
      {"structure twice",
       [](json& d) { d["optimisation"]["objectives"][1]["structure"] = "OuterTarget"; },
       {o1 + ".structure: 'OuterTarget' is listed twice (also optimisation.objectives[0])"}},
      {"voxel lists",
       [](json& d) {
         d["optimisation"]["objectives"][0]["voxels"] = json::array({1, 2});
       },
       {"optimisation.objectives[0].voxels: unknown key (structure 'OuterTarget')"}},
      {"cut-off",
       [](json& d) { d["optimisation"]["options"]["matrixCutoff"] = 1.5; },
       {"optimisation.options.matrixCutoff: 1.5 is outside [0, 1)"}},
      {"iterations",
       [](json& d) { d["optimisation"]["options"]["maxIterations"] = 0; },
       {"optimisation.options.maxIterations: must be >= 1"}},
      {"objectives not a list",
       [](json& d) { d["optimisation"]["objectives"] = "PTV"; },
       {"optimisation.objectives: expected an array"}},
  };
  for (const Bad& b : bad) {
    json doc = sampleDocument();
    b.spoil(doc);
    const std::string message = formatError(doc);
    for (const std::string& e : b.expected)
      EXPECT_NE(message.find(e), std::string::npos)
          << b.what << ": \"" << message << "\" lacks \"" << e << "\"";
  }
  // A level too large for a double is not JSON this reader takes at all.
  const std::string text = sampleDocument().dump();
  std::string huge = text;
  huge.replace(huge.find("1.94"), 4, "1e999");
  EXPECT_THROW(parseCaseFile(huge), Error);
}

TEST(CaseObjectives, WriterRefusesWhatTheReaderWouldWithoutTouchingTheFile) {
  const fs::path dir =
      fs::temp_directory_path() / ("penumbra-obj-" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  const std::string path = (dir / "case.json").string();
  std::ofstream(path) << "previous";
  struct Bad {
    std::function<void(CaseOptimisation&)> spoil;
    std::string expected;
  };
  const std::vector<Bad> bad = {
      {[](CaseOptimisation& o) { o.objectives[0].terms[1].levelGy = std::nan(""); },
       "case file: optimisation.objectives[0].terms[1].level: nan Gy is not a finite dose "
       "(structure 'OuterTarget')"},
      {[](CaseOptimisation& o) {
         o.objectives[0].terms[0].levelGy = std::numeric_limits<double>::infinity();
       },
       "optimisation.objectives[0].terms[0].level: inf Gy is not a finite dose"},
      {[](CaseOptimisation& o) { o.objectives[1].terms[1].weight = -2; },
       "optimisation.objectives[1].terms[1].weight: -2 is negative: term weights must be >= 0 "
       "(structure 'Cord"},
      {[](CaseOptimisation& o) { o.objectives[1].terms[0].type = TermType(9); },
       "optimisation.objectives[1].terms[0].type: unknown term type 9"},
      {[](CaseOptimisation& o) { o.objectives[1].structure.clear(); },
       "optimisation.objectives[1].structure: must not be empty"},
      {[](CaseOptimisation& o) { o.options->maxIterations = -1; },
       "optimisation.options.maxIterations: must be >= 1"},
  };
  for (const Bad& b : bad) {
    CaseOptimisation o = sampleOptimisation();
    b.spoil(o);
    test::expectRefusedWriteKeepsFile([&] { writeCaseFile(path, caseWith(o)); }, b.expected, path, dir);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace penumbra::io
