// penumbra-cli plan: proton beams with energy layers and spots generated on a target structure of
// an imported DICOM CT + RT Structure Set, saved as a case file that `penumbra-cli proton --case`
// computes. Needs DICOM (DCMTK) and case files (nlohmann_json).
#include <iostream>

#include "cli_commands.hpp"

#if defined(PENUMBRA_HAVE_DICOM) && defined(PENUMBRA_HAVE_CASE_FILES)
#include <chrono>
#include <cstdio>
#include <sstream>

#include "case/case_file.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "dicom/dicom_import.hpp"
#include "proton/physics/bragg_kleeman.hpp"
#include "proton/spot_generation.hpp"
#endif

namespace penumbra::cli {

#if defined(PENUMBRA_HAVE_DICOM) && defined(PENUMBRA_HAVE_CASE_FILES)
namespace {

/// "0,90,180": each item a whole, finite number (parseOptionNumber names the option).
std::vector<double> parseList(const std::string& text, const std::string& option) {
  std::vector<double> out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');)
    out.push_back(parseOptionNumber(item, option));
  PENUMBRA_REQUIRE(!out.empty(), InvalidArgument,
                   option + ": expected a number, got '" + text + "'");
  return out;
}

std::string beamName(double gantry, double couch) {
  char buf[64];
  if (couch == 0) std::snprintf(buf, sizeof buf, "G%g", gantry);
  else std::snprintf(buf, sizeof buf, "G%gC%g", gantry, couch);
  return buf;
}

}  // namespace

int cmdPlan(Args args) {
  // Every option is parsed and range-checked before the DICOM folder is read.
  OptionParser options("plan", std::move(args));
  const std::string dicom = options.text("--dicom");
  const std::string series = options.text("--series");
  const std::string structures = options.text("--structures");
  const std::string targetName = options.text("--target");
  const std::string gantries = options.text("--gantry", "0");
  const std::string couches = options.text("--couch", "0");
  const std::string iso = options.text("--isocenter");
  const std::string out = options.text("--out");
  io::CaseFile c;
  proton::SpotGenerationOptions& o = c.spotGeneration;
  o.spotSpacingMm = options.number("--spacing", 5);
  o.lateralMarginMm = options.number("--margin", 5);
  o.layerSpacingMm = options.number("--layer-spacing", 3);
  o.proximalMarginMm = options.number("--proximal-margin", 3);
  o.distalMarginMm = options.number("--distal-margin", 3);
  const std::string pattern = options.text("--pattern", "hex");
  const std::string weights = options.text("--weights", "uniform");
  c.engine.doseGridSpacingMm = options.number("--dose-grid", 0);
  c.prescription.dosePerFractionGy = options.number("--dose-per-fraction", 2);
  c.prescription.fractions = options.integer("--fractions", 1);
  if (!options.allTaken(usageOf("plan"))) return 2;
  if (dicom.empty() || targetName.empty() || out.empty() ||
      (pattern != "hex" && pattern != "square") || (weights != "uniform" && weights != "depth")) {
    std::cerr << usageOf("plan");
    return 2;
  }
  // The case file's own limits (io/case/case_file.hpp), so that the plan written reopens.
  const double dpf = c.prescription.dosePerFractionGy, grid = c.engine.doseGridSpacingMm;
  PENUMBRA_REQUIRE(dpf > 0 && dpf <= io::kMaxDosePerFractionGy, InvalidArgument,
                   "--dose-per-fraction: " + formatG(dpf) + " Gy is outside (0, " +
                       formatG(io::kMaxDosePerFractionGy) + "] Gy");
  PENUMBRA_REQUIRE(
      c.prescription.fractions >= 1, InvalidArgument,
      "--fractions: must be at least 1, got " + std::to_string(c.prescription.fractions));
  PENUMBRA_REQUIRE(grid == 0 || (grid >= kMinDoseGridSpacingMm && grid <= kMaxDoseGridSpacingMm),
                   InvalidArgument,
                   "--dose-grid: " + formatG(grid) + " mm is outside [" +
                       formatG(kMinDoseGridSpacingMm) + ", " + formatG(kMaxDoseGridSpacingMm) +
                       "] mm (0: the CT grid)");
  o.pattern = pattern == "hex" ? proton::SpotGridPattern::Hexagonal : proton::SpotGridPattern::Square;
  o.weighting = weights == "uniform" ? proton::SpotWeighting::Uniform
                                     : proton::SpotWeighting::DepthWeighted;

  const auto t0 = std::chrono::steady_clock::now();
  const io::DicomScan scan = io::scanDicomFolder(dicom);
  io::ImportOptions importOptions;
  importOptions.structureSetFile = structures;
  io::PatientImportResult imported = io::importPatient(scan, series, importOptions);
  for (const auto& w : imported.messages.warnings) std::cout << "warning: " << w << "\n";
  for (const auto& e : imported.messages.errors) std::cout << "error: " << e << "\n";
  if (!imported.ok()) return 1;
  const Patient& patient = imported.patient;
  const Structure* target = patient.structures.find(targetName);
  if (!target) {
    std::cerr << "penumbra-cli plan: no structure '" << targetName << "'; structures:";
    for (const auto& s : patient.structures.structures) std::cerr << " '" << s.name << "'";
    std::cerr << "\n";
    return 1;
  }
  const Vec3 centroid = proton::targetCentroid(target->mask);
  Vec3 isocenter = centroid;
  if (!iso.empty()) {
    const auto v = parseList(iso, "--isocenter");
    PENUMBRA_REQUIRE(v.size() == 3, InvalidArgument, "--isocenter takes x,y,z (mm)");
    isocenter = {v[0], v[1], v[2]};
  }
  const std::vector<double> g = parseList(gantries, "--gantry");
  std::vector<double> couch = parseList(couches, "--couch");
  if (couch.size() == 1) couch.resize(g.size(), couch[0]);
  PENUMBRA_REQUIRE(couch.size() == g.size(), InvalidArgument,
                   "--couch takes one angle or one per gantry angle");
  const double ms0 =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("imported %s: CT %dx%dx%d, target '%s' centroid (%.1f, %.1f, %.1f) mm (%.0f ms)\n",
              dicom.c_str(), patient.ct.grid.dims[0], patient.ct.grid.dims[1],
              patient.ct.grid.dims[2], targetName.c_str(), centroid.x, centroid.y, centroid.z, ms0);

  const Volume<float> spr = proton::stoppingPowerRatio(patient.ct);
  for (std::size_t b = 0; b < g.size(); ++b) {
    const auto tb = std::chrono::steady_clock::now();
    const proton::BeamPlacement placement{beamName(g[b], couch[b]), g[b], couch[b], isocenter};
    proton::SpotGenerationResult r = proton::generateSpots(spr, target->mask, placement, o);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tb).count();
    const auto& L = r.beam.layers;
    std::printf("beam %-6s gantry %5.1f couch %5.1f: target WEPL %.1f-%.1f mm, %zu layers "
                "(%.1f-%.1f MeV, %.2f mm apart), %zu spots, %.0f ms\n",
                r.beam.name.c_str(), g[b], couch[b], r.projection.minWeplMm, r.projection.maxWeplMm,
                L.size(), L.empty() ? 0.0 : L.back().energyMeV, L.empty() ? 0.0 : L.front().energyMeV,
                r.layerSpacingUsedMm, r.beam.spotCount(), ms);
    for (const auto& m : r.messages) std::printf("  note: %s\n", m.c_str());
    c.beams.push_back(std::move(r.beam));
  }

  c.data.dicomFolder = io::relativeToCase(out, dicom);
  c.data.seriesKey = series;
  c.data.structureSetFile = io::relativeToCase(out, structures);
  if (c.data.seriesKey.empty())
    for (const auto& s : scan.series)
      if (s.seriesInstanceUid == patient.ctSeriesUid) {
        c.data.seriesKey = s.key;  // pin the series, so that added series do not change the case
        break;
      }
  c.prescription.target = targetName;
  io::writeCaseFile(out, c);
  std::printf("wrote %s: %zu beams, %zu spots (DICOM folder '%s' relative to the case file)\n",
              out.c_str(), c.beams.size(), proton::totalSpotCount(c.beams),
              c.data.dicomFolder.c_str());
  return 0;
}
#else
int cmdPlan(Args) {
  std::cerr << "penumbra-cli plan: this build has no DICOM or no case-file support "
               "(needs DCMTK and nlohmann_json)\n";
  return 1;
}
#endif

}  // namespace penumbra::cli
