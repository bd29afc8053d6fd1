// The "optimisation" section of a case file: objectives by structure name, and the optimiser
// options of the GUI's panel (robust mode included). Reading and writing share one set of rules
// (firstProblem), so a case the writer accepts always reads back, and every message names the
// JSON path and, inside an objective, the structure.
#include <cmath>
#include <optional>

#include "case/case_json_reader.hpp"

namespace penumbra::io::case_json {

namespace {

using optimise::StructureRole;
using optimise::TermType;

/// The names in the file, kept here rather than taken from optimise::toString(): a display name
/// may change, a file format may not.
constexpr std::pair<TermType, const char*> kTermNames[] = {{TermType::Uniform, "uniform"},
                                                           {TermType::MinDose, "min"},
                                                           {TermType::MaxDose, "max"},
                                                           {TermType::MeanDose, "mean"}};
constexpr std::pair<StructureRole, const char*> kRoleNames[] = {
    {StructureRole::Target, "target"}, {StructureRole::OrganAtRisk, "organ-at-risk"}};

template <typename Enum, std::size_t N>
const char* nameOf(const std::pair<Enum, const char*> (&names)[N], Enum value) {
  for (const auto& [v, name] : names)
    if (v == value) return name;
  return nullptr;
}

/// `key` of `r`, which must be one of `names` (an error lists them).
template <typename Enum, std::size_t N>
Enum readName(ObjectReader& r, const char* key, const std::pair<Enum, const char*> (&names)[N]) {
  r.get(key);  // "missing" when absent: no default role or term type is safe to guess
  const std::string s = r.string(key);
  std::string list;
  for (const auto& [v, name] : names) {
    if (s == name) return v;
    list += (list.empty() ? "\"" : ", \"") + std::string(name) + "\"";
  }
  fail(r.path(key), "\"" + s + "\" is not one of " + list);
}

struct Problem {
  std::string path, what;
};

/// The first value of `o` that a case may not hold, in document order; nothing when all is well.
std::optional<Problem> firstProblem(const CaseOptimisation& o, const std::string& root) {
  const std::string list = member(root, "objectives");
  for (std::size_t i = 0; i < o.objectives.size(); ++i) {
    const CaseObjective& obj = o.objectives[i];
    const std::string p = element(list, i);
    const std::string who = " (structure '" + obj.structure + "')";
    if (obj.structure.empty()) return Problem{member(p, "structure"), "must not be empty"};
    for (std::size_t k = 0; k < i; ++k)
      if (o.objectives[k].structure == obj.structure)
        return Problem{member(p, "structure"), "'" + obj.structure + "' is listed twice (also " +
                                                   element(list, k) +
                                                   "): give all its terms in one entry"};
    if (!nameOf(kRoleNames, obj.role))
      return Problem{member(p, "role"), "unknown role " + std::to_string(int(obj.role)) + who};
    if (obj.terms.empty()) return Problem{member(p, "terms"), "no terms" + who};
    for (std::size_t t = 0; t < obj.terms.size(); ++t) {
      const optimise::ObjectiveTerm& term = obj.terms[t];
      const std::string tp = element(member(p, "terms"), t);
      if (!nameOf(kTermNames, term.type))
        return Problem{member(tp, "type"),
                       "unknown term type " + std::to_string(int(term.type)) + who};
      if (!std::isfinite(term.levelGy))
        return Problem{member(tp, "level"),
                       formatG(term.levelGy) + " Gy is not a finite dose" + who};
      if (!(term.levelGy >= 0 && term.levelGy <= kMaxObjectiveLevelGy))
        return Problem{member(tp, "level"), formatG(term.levelGy) + " Gy is outside [0, " +
                                                formatG(kMaxObjectiveLevelGy) + "] Gy" + who};
      if (!std::isfinite(term.weight))
        return Problem{member(tp, "weight"),
                       formatG(term.weight) + " is not a finite weight" + who};
      if (term.weight < 0)
        return Problem{member(tp, "weight"),
                       formatG(term.weight) + " is negative: term weights must be >= 0" + who};
    }
  }
  if (o.options) {
    const std::string p = member(root, "options");
    // The proton engine's limits (proton_dose.cpp validates 0 <= cut-off < 1).
    if (!(o.options->matrixCutoff >= 0 && o.options->matrixCutoff < 1))
      return Problem{member(p, "matrixCutoff"),
                     formatG(o.options->matrixCutoff) + " is outside [0, 1)"};
    if (o.options->maxIterations < 1) return Problem{member(p, "maxIterations"), "must be >= 1"};
    if (o.options->robustMode && !nameOf(kRobustModeNames, *o.options->robustMode))
      return Problem{member(p, "robustMode"),
                     "unknown robust mode " + std::to_string(int(*o.options->robustMode))};
  }
  return std::nullopt;
}

CaseObjective readObjective(const json& j, const std::string& path) {
  ObjectReader r(j, path);
  CaseObjective obj;
  obj.structure = r.string("structure");  // first, so that every later message can name it
  try {
    obj.role = readName(r, "role", kRoleNames);
    const json& terms = r.array("terms");
    for (std::size_t t = 0; t < terms.size(); ++t) {
      ObjectReader tj(terms[t], element(r.path("terms"), t));
      optimise::ObjectiveTerm term;
      term.type = readName(tj, "type", kTermNames);
      // A mean-dose term has no level; the others cannot do without one.
      term.levelGy =
          term.type == TermType::MeanDose && !tj.has("level") ? 0.0 : tj.finiteNumber("level");
      term.weight = tj.finiteNumber("weight");
      tj.finish();
      obj.terms.push_back(term);
    }
    r.finish();
  } catch (const Error& e) {
    if (e.code() != ErrorCode::Format) throw;
    throw Error(e.code(), e.message() + " (structure '" + obj.structure + "')", e.file().c_str(),
                e.line());
  }
  return obj;
}

/// "robustMode" of the optimiser options: "none" or absent (the nominal plan) or a mode.
std::optional<optimise::RobustMode> readRobustMode(ObjectReader& r) {
  const std::string s = r.string("robustMode", "none");
  if (s == "none") return std::nullopt;
  std::string list = "\"none\"";
  for (const auto& [mode, name] : kRobustModeNames) {
    if (s == name) return mode;
    list += ", \"" + std::string(name) + "\"";
  }
  fail(r.path("robustMode"), "\"" + s + "\" is not one of " + list);
}

}  // namespace

CaseOptimisation readOptimisation(const json& j, const std::string& path) {
  ObjectReader r(j, path);
  CaseOptimisation o;
  if (r.has("objectives")) {
    const json& list = r.array("objectives");
    for (std::size_t i = 0; i < list.size(); ++i)
      o.objectives.push_back(readObjective(list[i], element(r.path("objectives"), i)));
  }
  if (r.has("options")) {
    ObjectReader op(r.get("options"), r.path("options"));
    CaseOptimiserOptions x;
    x.matrixCutoff = op.number("matrixCutoff", x.matrixCutoff);
    x.maxIterations = op.integer("maxIterations", x.maxIterations);
    x.robustMode = readRobustMode(op);
    op.finish();
    o.options = x;
  }
  r.finish();
  if (const auto p = firstProblem(o, path)) fail(p->path, p->what);
  return o;
}

nlohmann::ordered_json optimisationJson(const CaseOptimisation& o) {
  using ojson = nlohmann::ordered_json;
  if (const auto p = firstProblem(o, "optimisation"))
    PENUMBRA_THROW(InvalidArgument, "case file: " + p->path + ": " + p->what);
  ojson list = ojson::array();
  for (const CaseObjective& obj : o.objectives) {
    ojson terms = ojson::array();
    for (const optimise::ObjectiveTerm& t : obj.terms)
      terms.push_back(
          {{"type", nameOf(kTermNames, t.type)}, {"level", t.levelGy}, {"weight", t.weight}});
    list.push_back({{"structure", obj.structure},
                    {"role", nameOf(kRoleNames, obj.role)},
                    {"terms", std::move(terms)}});
  }
  ojson out = {{"objectives", std::move(list)}};
  if (o.options) {
    out["options"] = {{"matrixCutoff", o.options->matrixCutoff},
                      {"maxIterations", o.options->maxIterations}};
    // Only a robust mode is written ("none" is the default): a nominal plan's options read as
    // before modes were saved, in older builds too.
    if (o.options->robustMode)
      out["options"]["robustMode"] = nameOf(kRobustModeNames, *o.options->robustMode);
  }
  return out;
}

}  // namespace penumbra::io::case_json
