#include "dose_inputs.hpp"

#include <filesystem>
#include <system_error>

#include "core/error.hpp"
#include "image/metaimage_reader.hpp"

#ifdef PENUMBRA_HAVE_DICOM
#include "dicom/rt_dose_reader.hpp"
#include "dicom/rtstruct_reader.hpp"  // readRtStructFile: one RT Structure Set file by name
#endif
#ifdef PENUMBRA_HAVE_CASE_FILES
#include "case/case_file.hpp"
#endif

namespace penumbra::cli {

namespace {

namespace fs = std::filesystem;

bool endsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

[[maybe_unused]] std::string joined(const std::vector<std::string>& lines) {  // DICOM only
  std::string all;
  for (const std::string& l : lines) all += (all.empty() ? "" : "; ") + l;
  return all;
}

void requireFile(const std::string& file, const std::string& role) {
  std::error_code ec;
  PENUMBRA_REQUIRE(fs::exists(file, ec), Io, role + ": no such file '" + file + "'");
  PENUMBRA_REQUIRE(!fs::is_directory(file, ec), Io,
                   role + ": '" + file + "' is a folder, not a dose file");
}

DoseInput readMetaImageDose(const std::string& file, const std::string& role) {
  io::MetaImage m;
  try {
    m = io::readMetaImage(file);
  } catch (const Error& e) {
    throw Error(e.code(), role + ": " + e.message(), e.file().c_str(), e.line());
  }
  DoseInput in;
  in.file = file;
  in.kind = "MetaImage " + m.elementType + ", read as Gy";
  auto dose = std::make_shared<DoseVolume>();
  dose->dose = std::move(m.volume);
  dose->label = fs::path(file).filename().string();
  dose->engine = "import";
  in.dose = std::move(dose);
  return in;
}

DoseInput readRtDoseInput(const std::string& file, const std::string& role) {
#ifdef PENUMBRA_HAVE_DICOM
  io::RtDoseImport d = io::readRtDose(file);
  PENUMBRA_REQUIRE(d.ok(), Format,
                   role + ": cannot use '" + file + "' as an RT Dose: " +
                       (d.messages.errors.empty() ? "no dose" : joined(d.messages.errors)));
  PENUMBRA_REQUIRE(d.dose.unit == "Gy", Unsupported,
                   role + ": '" + file + "' has DoseUnits " + d.info.doseUnits +
                       " (a relative dose): a dose in Gy is needed");
  DoseInput in;
  in.file = file;
  in.kind = "RT Dose " + d.info.doseType + " " + d.info.doseSummationType;
  in.frameOfReference = d.info.frameOfReferenceUid;
  in.notes = d.messages.warnings;
  in.dose = std::make_shared<DoseVolume>(std::move(d.dose));
  return in;
#else
  PENUMBRA_THROW(Unsupported, role + ": '" + file +
                                  "' would be read as an RT Dose, but this build has no DICOM "
                                  "support (PENUMBRA_DICOM=OFF); give a MetaImage (.mhd)");
#endif
}

DoseInput readFile(const std::string& file, const std::string& role) {
  requireFile(file, role);
  if (endsWith(file, ".mhd") || endsWith(file, ".mha")) return readMetaImageDose(file, role);
  return readRtDoseInput(file, role);
}

/// CASE.json or CASE.json#NAME: the file of one of the case's exported dose sets.
std::string caseDoseFile(const std::string& arg, const std::string& role) {
  const auto hash = arg.rfind('#');
  const bool named = hash != std::string::npos && endsWith(arg.substr(0, hash), ".json");
  const std::string caseFile = named ? arg.substr(0, hash) : arg;
  const std::string name = named ? arg.substr(hash + 1) : "";
#ifdef PENUMBRA_HAVE_CASE_FILES
  requireFile(caseFile, role);
  io::CaseFile c;
  try {
    c = io::readCaseFile(caseFile);
  } catch (const Error& e) {
    throw Error(e.code(), role + ": " + e.message(), e.file().c_str(), e.line());
  }
  std::vector<const io::CaseDoseSet*> exported;
  std::string names;
  for (const io::CaseDoseSet& s : c.doseSets)
    if (!s.file.empty()) {
      exported.push_back(&s);
      names += (names.empty() ? "'" : ", '") + s.name + "'";
    }
  PENUMBRA_REQUIRE(!exported.empty(), InvalidArgument,
                   role + ": case '" + caseFile + "' has no exported dose set");
  const io::CaseDoseSet* chosen = nullptr;
  for (const io::CaseDoseSet* s : exported)
    if (named ? s->name == name : exported.size() == 1) chosen = s;
  PENUMBRA_REQUIRE(chosen, InvalidArgument,
                   role + ": case '" + caseFile + "' has " +
                       (named ? "no exported dose set '" + name + "'" : "several dose sets") +
                       " (exported: " + names + "; pick one with CASE.json#NAME)");
  return io::resolveCasePath(caseFile, chosen->file);
#else
  (void)name;
  PENUMBRA_THROW(Unsupported, role + ": '" + caseFile +
                                  "' is a case file, but this build has no case-file support");
#endif
}

}  // namespace

DoseInput readDoseInput(const std::string& arg, const std::string& role) {
  PENUMBRA_REQUIRE(!arg.empty(), InvalidArgument, role + ": empty file name");
  if (endsWith(arg, ".json") || arg.find(".json#") != std::string::npos) {
    const std::string file = caseDoseFile(arg, role);
    PENUMBRA_REQUIRE(!endsWith(file, ".json"), InvalidArgument,
                     role + ": the dose set of '" + arg + "' is a case file itself");
    DoseInput in = readFile(file, role + " (dose set of " + arg + ")");
    in.kind += ", dose set of " + arg;
    return in;
  }
  return readFile(arg, role);
}

StructureSetInput readStructureSetInput(const std::string& file) {
  requireFile(file, "structure set");
#ifdef PENUMBRA_HAVE_DICOM
  io::RtStructContents rs;
  io::ImportMessages messages;
  const bool ok = io::readRtStructFile(file, rs, messages);
  PENUMBRA_REQUIRE(ok && messages.ok(), Format,
                   "cannot use '" + file + "' as an RT Structure Set: " +
                       (messages.errors.empty() ? "no structures" : joined(messages.errors)));
  StructureSetInput in;
  in.file = file;
  in.set = std::move(rs.set);
  in.notes = messages.warnings;
  return in;
#else
  PENUMBRA_THROW(Unsupported, "structure set '" + file +
                                  "': this build has no DICOM support (PENUMBRA_DICOM=OFF)");
#endif
}

bool hasAreaContours(const Structure& s) {
  for (const Contour& c : s.contours)
    if (c.points.size() >= 3) return true;
  return false;
}

std::vector<std::string> splitNames(const std::string& list) {
  std::vector<std::string> names;
  std::size_t pos = 0;
  while (pos <= list.size()) {
    std::size_t end = list.find(',', pos);
    if (end == std::string::npos) end = list.size();
    const std::string part = list.substr(pos, end - pos);
    const auto b = part.find_first_not_of(" \t");
    if (b != std::string::npos)
      names.push_back(part.substr(b, part.find_last_not_of(" \t") - b + 1));
    pos = end + 1;
  }
  return names;
}

}  // namespace penumbra::cli
