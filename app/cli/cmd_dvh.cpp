// penumbra-cli dvh RS.dcm RD.dcm: cumulative DVHs and dose statistics of a structure set's ROIs
// on an RT Dose, with the DVH engine's contour method (dvh::computeDvh, the call the GUI's DVH
// dock makes), as a table and optionally as a CSV of the curves in the GUI export's columns.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli_commands.hpp"
#include "core/error.hpp"
#include "dose_inputs.hpp"
#include "dvh/dvh.hpp"
#include "file/atomic_file.hpp"

namespace penumbra::cli {

namespace {

/// A CSV field, quoted where it holds a comma, a quote or a line end (RFC 4180).
std::string csvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

/// The curves as the GUI's DVH export writes them, less its dose-set column (one dose here).
std::string dvhCsv(const std::vector<dvh::DvhResult>& results) {
  std::string out = "structure,dose_gy,volume_percent,volume_cc\n";
  char line[96];
  for (const dvh::DvhResult& r : results) {
    const std::string name = csvField(r.structureName) + ",";
    const dvh::DvhCurve& c = r.curve;
    for (std::size_t k = 0; k < c.doseGy.size(); ++k) {
      std::snprintf(line, sizeof line, "%.10g,%.10g,%.10g\n", c.doseGy[k], c.volumePercent[k],
                    c.volumeCc[k]);
      out += name + line;
    }
  }
  return out;
}

std::vector<const Structure*> chosenStructures(const StructureSetInput& rs, const std::string& list,
                                               std::vector<std::string>& skipped) {
  std::vector<const Structure*> chosen;
  if (list.empty()) {
    for (const Structure& s : rs.set.structures)
      if (hasAreaContours(s))
        chosen.push_back(&s);
      else
        skipped.push_back(s.name);
    return chosen;
  }
  for (const std::string& name : splitNames(list)) {
    const Structure* s = rs.set.find(name);
    if (!s) {
      std::string names;
      for (const Structure& t : rs.set.structures) names += (names.empty() ? "" : ", ") + t.name;
      PENUMBRA_THROW(InvalidArgument, "--structures: '" + rs.file + "' has no structure '" + name +
                                          "' (it has: " + names + ")");
    }
    PENUMBRA_REQUIRE(hasAreaContours(*s), InvalidArgument,
                     "--structures: '" + name +
                         "' has no contour of three or more points "
                         "(a point ROI has no DVH)");
    chosen.push_back(s);
  }
  PENUMBRA_REQUIRE(!chosen.empty(), InvalidArgument, "--structures: no structure named");
  return chosen;
}

}  // namespace

int cmdDvh(Args args) {
  OptionParser options("dvh", std::move(args));
  const std::string csvFile = options.text("--csv");
  const std::string names = options.text("--structures");
  if (!options.positionals(2, usageOf("dvh"))) return 2;
  const StructureSetInput rs = readStructureSetInput(options.rest()[0]);
  const DoseInput dose = readDoseInput(options.rest()[1], "RD.dcm");
  std::vector<std::string> skipped;
  const std::vector<const Structure*> todo = chosenStructures(rs, names, skipped);

  const Grid& g = dose.dose->grid();
  float maxGy = 0;
  for (float d : dose.dose->dose.data) maxGy = std::max(maxGy, d);
  std::printf("structure set %s: %zu ROIs\n", rs.file.c_str(), rs.set.structures.size());
  std::printf("dose %s (%s): %d x %d x %d voxels of %g x %g x %g mm, max %.3f Gy\n",
              dose.file.c_str(), dose.kind.c_str(), g.dims[0], g.dims[1], g.dims[2], g.spacing.x,
              g.spacing.y, g.spacing.z, double(maxGy));
  for (const std::string& n : rs.notes) std::printf("note: %s\n", n.c_str());
  for (const std::string& n : dose.notes) std::printf("note: %s\n", n.c_str());
  if (!rs.set.frameOfReferenceUid.empty() && !dose.frameOfReference.empty() &&
      rs.set.frameOfReferenceUid != dose.frameOfReference)
    std::printf(
        "note: the structure set is in frame of reference %s, the dose in %s: the "
        "structures may be misplaced\n",
        rs.set.frameOfReferenceUid.c_str(), dose.frameOfReference.c_str());

  dvh::DvhOptions opts;  // the GUI's DVH settings: 0.01 Gy bins, shape-based interpolation
  opts.binWidthGy = 0.01;
  std::vector<dvh::DvhResult> results;
  std::vector<std::string> warnings;
  const auto t0 = std::chrono::steady_clock::now();
  for (const Structure* s : todo) {
    try {
      results.push_back(dvh::computeDvh(*s, *dose.dose, opts));
    } catch (const Error& e) {  // one unusable ROI must not hide the others (as in the GUI)
      warnings.push_back(s->name + ": no DVH (" + e.message() + ")");
      continue;
    }
    for (const std::string& w : results.back().warnings) warnings.push_back(s->name + ": " + w);
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::size_t width = 9;
  for (const auto& r : results) width = std::max(width, r.structureName.size());
  std::printf("%-*s %10s %8s %8s %8s %8s %8s %8s %8s %10s\n", int(width), "structure", "volume cc",
              "min Gy", "mean Gy", "max Gy", "D98 Gy", "D95 Gy", "D50 Gy", "D2 Gy", "D0.03cc Gy");
  for (const auto& r : results) {
    const dvh::DvhStatistics& s = r.stats;
    std::printf("%-*s %10.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %10.3f\n", int(width),
                r.structureName.c_str(), s.volumeCc, s.minGy, s.meanGy, s.maxGy, s.d98Gy, s.d95Gy,
                s.d50Gy, s.d2Gy, s.d0_03ccGy);
  }
  for (const std::string& w : warnings) std::printf("note: %s\n", w.c_str());
  if (!skipped.empty()) {
    std::string list;
    for (const std::string& n : skipped) list += (list.empty() ? "" : ", ") + n;
    std::printf("skipped (no contour of three or more points): %s\n", list.c_str());
  }
  std::printf(
      "DVH of %zu structure(s) from their contours (shape-based interpolation, %g Gy "
      "bins) in %.2f s\n",
      results.size(), opts.binWidthGy, secs);
  PENUMBRA_REQUIRE(!results.empty(), InvalidArgument,
                   "no DVH could be computed (see the notes above)");
  if (!csvFile.empty()) {
    io::writeFileAtomically(csvFile, dvhCsv(results), "DVH CSV");
    std::printf("wrote %s (cumulative DVH curves)\n", csvFile.c_str());
  }
  return 0;
}

}  // namespace penumbra::cli
