// penumbra-cli proton: proton pencil-beam dose of a plan, either on a built-in phantom (water,
// box = matRad's BOXPHANTOM, hn = the head-and-neck-sized benchmark case) or from a case file
// (DICOM CT + structures + beams and spots, see io/case/case_file.hpp), written as MetaImage
// (.mhd header + .raw float32), the format 3D Slicer, ITK-SNAP and ParaView open directly.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "cli_commands.hpp"
#include "core/error.hpp"
#include "image/metaimage_writer.hpp"
#include "proton/proton_dose.hpp"
#include "proton/proton_phantoms.hpp"
#include "raytrace/raytrace.hpp"

#if defined(PENUMBRA_HAVE_DICOM) && defined(PENUMBRA_HAVE_CASE_FILES)
#define PENUMBRA_CLI_CASES 1
#include "case/case_file.hpp"
#include "dicom/dicom_import.hpp"
#include "proton/spot_generation.hpp"
#endif

namespace penumbra::cli {

namespace {

constexpr const char* kDoseComment =
    "proton dose in Gy (spot weights in units of 1e9 protons), DICOM LPS mm";

#ifdef PENUMBRA_CLI_CASES
/// Isotropic grid of spacing h [mm] over the CT's extent (same direction cosines).
Grid resampledGrid(const Grid& ct, double h) {
  Grid g = ct;
  Vec3 half{};
  for (int c = 0; c < 3; ++c) {
    const double extent = ct.dims[c] * ct.spacing[c];
    g.dims[c] = std::max(1, int(std::lround(extent / h)));
    g.spacing[c] = h;
    half[c] = 0.5 * (extent - g.dims[c] * h);  // centre the new grid on the old one
  }
  g.origin = ct.indexToWorld(Vec3{-0.5, -0.5, -0.5}) + ct.direction * (half + Vec3{h / 2, h / 2, h / 2});
  return g;
}

/// Imports the case's CT and structures, computes the dose of its beams, prints a summary.
int doseFromCase(const std::string& caseFile, std::optional<Backend> backend,
                 const std::string& variantOpt, const std::string& out, bool record) {
  const auto t0 = std::chrono::steady_clock::now();
  io::CaseFile c = io::readCaseFile(caseFile);
  const std::string folder = io::resolveCasePath(caseFile, c.data.dicomFolder);
  const io::DicomScan scan = io::scanDicomFolder(folder);
  io::ImportOptions options;
  options.structureSetFile = io::resolveCasePath(caseFile, c.data.structureSetFile);
  io::PatientImportResult imported = io::importPatient(scan, c.data.seriesKey, options);
  for (const auto& w : imported.messages.warnings) std::cout << "warning: " << w << "\n";
  for (const auto& e : imported.messages.errors) std::cout << "error: " << e << "\n";
  if (!imported.ok()) return 1;
  const Patient& patient = imported.patient;
  const double importMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  proton::ProtonDoseRequest req;
  req.ct = std::make_shared<CtVolume>(patient.ct);
  req.beams = c.beams;
  req.doseGrid = c.engine.doseGridSpacingMm > 0 ? resampledGrid(patient.ct.grid, c.engine.doseGridSpacingMm)
                                               : patient.ct.grid;
  req.backend = backend.value_or(c.engine.backend);
  req.variant = variantOpt.empty() ? c.engine.variant : parseDdaVariant(variantOpt);
  std::printf("case %s: CT %dx%dx%d from %s (%.0f ms), dose grid %dx%dx%d of %.2f mm\n",
              caseFile.c_str(), patient.ct.grid.dims[0], patient.ct.grid.dims[1],
              patient.ct.grid.dims[2], folder.c_str(), importMs, req.doseGrid.dims[0],
              req.doseGrid.dims[1], req.doseGrid.dims[2], req.doseGrid.spacing.x);
  for (const auto& b : req.beams)
    std::printf("  beam %-8s gantry %5.1f couch %5.1f iso (%.1f, %.1f, %.1f) mm: %zu layers, %zu spots\n",
                b.name.c_str(), b.gantryDeg, b.couchDeg, b.isocenter.x, b.isocenter.y,
                b.isocenter.z, b.layers.size(), b.spotCount());
  const proton::ProtonDoseResult res = proton::computeProtonDose(req);
  for (const auto& m : res.messages) std::printf("note: %s\n", m.c_str());
  const Volume<float>& d = res.dose;
  std::size_t iMax = 0;
  for (std::size_t v = 0; v < d.data.size(); ++v)
    if (d.data[v] > d.data[iMax]) iMax = v;
  const std::size_t nx = std::size_t(d.grid.dims[0]), ny = std::size_t(d.grid.dims[1]);
  const Vec3 pMax = d.grid.indexToWorld(
      Vec3{double(iMax % nx), double((iMax / nx) % ny), double(iMax / (nx * ny))});
  std::printf("backend %s (%s), variant %s: %zu spots, dose %.1f ms\n", toString(res.backend),
              res.device.c_str(), toString(req.variant), proton::totalSpotCount(req.beams),
              res.elapsedMs);
  std::printf("max dose %.4g Gy at (%.1f, %.1f, %.1f) mm\n", double(d.data[iMax]), pMax.x,
              pMax.y, pMax.z);
  if (const Structure* t = patient.structures.find(c.prescription.target)) {
    // Dose at the target's voxel centres (nearest dose voxel when the grids differ).
    double sum = 0, lo = 1e300, hi = 0;
    std::size_t n = 0;
    const Grid& g = t->mask.grid;
    for (int k = 0; k < g.dims[2]; ++k)
      for (int j = 0; j < g.dims[1]; ++j)
        for (int i = 0; i < g.dims[0]; ++i) {
          if (!t->mask.at(i, j, k)) continue;
          std::array<int, 3> q{};
          if (!d.grid.worldToNearestIndex(g.indexToWorld(Vec3{double(i), double(j), double(k)}), q)) continue;
          const double v = d.at(q[0], q[1], q[2]);
          sum += v, lo = std::min(lo, v), hi = std::max(hi, v), ++n;
        }
    const Vec3 ctr = proton::targetCentroid(t->mask);
    std::array<int, 3> q{};
    const bool inside = t->mask.grid.worldToNearestIndex(pMax, q) && t->mask.at(q[0], q[1], q[2]);
    std::printf("target '%s': centroid (%.1f, %.1f, %.1f) mm, max dose %.1f mm from it (%s the "
                "target); dose min/mean/max %.4g / %.4g / %.4g Gy over %zu voxels\n",
                t->name.c_str(), ctr.x, ctr.y, ctr.z, norm(pMax - ctr), inside ? "inside" : "outside",
                lo, n ? sum / double(n) : 0.0, hi, n);
    if (n && sum > 0 && c.prescription.dosePerFractionGy > 0)
      std::printf("prescription %.3g Gy x %d: scale the spot weights by %.4g for a mean target dose "
                  "of %.3g Gy per fraction\n",
                  c.prescription.dosePerFractionGy, c.prescription.fractions,
                  c.prescription.dosePerFractionGy / (sum / double(n)), c.prescription.dosePerFractionGy);
  }
  if (!out.empty()) {
    io::writeMetaImage(out, d, kDoseComment);
    std::printf("wrote %s (MetaImage, float32 Gy)\n", out.c_str());
    if (record) {  // keep the dose with the case, written atomically like every case save
      c.doseSets.push_back({"proton " + std::string(toString(res.backend)) + " " +
                                std::to_string(c.doseSets.size() + 1),
                            io::relativeToCase(caseFile, out)});
      io::writeCaseFile(caseFile, c);
      std::printf("recorded dose set '%s' in %s\n", c.doseSets.back().name.c_str(), caseFile.c_str());
    }
  }
  const double totalMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("total %.0f ms (import %.0f ms, dose %.0f ms)\n", totalMs, importMs, res.elapsedMs);
  return 0;
}
#endif
}  // namespace

int cmdProton(Args args) {
  OptionParser options("proton", std::move(args));
  const std::string caseFile = options.text("--case");
  const std::string phantom = options.text("--phantom", "box");
  const std::string backendOpt = options.text("--backend");
  const std::string variantOpt = options.text("--variant");
  const std::string variant = variantOpt.empty() ? "dda-nc" : variantOpt;
  const std::string out = options.text("--out");
  const bool matrix = options.flag("--matrix");
  const bool record = options.flag("--record");
  if (!options.allTaken(usageOf("proton"))) return 2;
  if (record && (caseFile.empty() || out.empty())) {
    // --record used to do nothing at all without --out (and without --case), silently.
    std::cerr << "penumbra-cli proton: --record needs --case CASE.json and --out FILE.mhd (the "
                 "dose file it records in the case)\n"
              << usageOf("proton");
    return 2;
  }
  // Checked before anything is read or computed (cuda-strict fails here without a GPU).
  const std::optional<Backend> chosen =
      backendOpt.empty() ? std::nullopt : std::optional<Backend>(parseBackendOption(backendOpt));
  if (!caseFile.empty()) {
#ifdef PENUMBRA_CLI_CASES
    return doseFromCase(caseFile, chosen, variantOpt, out, record);
#else
    (void)record;
    std::cerr << "penumbra-cli proton --case: this build has no DICOM or no case-file support "
                 "(needs DCMTK and nlohmann_json)\n";
    return 1;
#endif
  }
  proton::ProtonPhantomCase pc;
  if (phantom == "water") pc = proton::makeWaterPhantomCase();
  else if (phantom == "box") pc = proton::makeBoxPhantomCase();
  else if (phantom == "hn") pc = proton::makeHeadNeckCase(1.0);
  else {
    std::cerr << "penumbra-cli proton: unknown phantom '" << phantom << "' (water, box, hn)\n";
    return 2;
  }
  proton::ProtonDoseRequest req;
  req.ct = std::make_shared<CtVolume>(std::move(pc.ct));
  req.beams = pc.beams;
  req.doseGrid = pc.doseGrid;
  req.backend = chosen.value_or(Backend::Auto);
  req.variant = parseDdaVariant(variant);
  req.params.computeDoseMatrix = matrix;
  std::printf("phantom %s: %zu beams, %zu spots, dose grid %dx%dx%d\n", pc.name.c_str(),
              req.beams.size(), proton::totalSpotCount(req.beams), req.doseGrid.dims[0],
              req.doseGrid.dims[1], req.doseGrid.dims[2]);
  const proton::WorkspaceEstimate est = proton::workspaceBytes(req);
  std::printf("memory estimate: %s\n", est.breakdown.c_str());
  const proton::ProtonDoseResult res = proton::computeProtonDose(req);
  for (const auto& m : res.messages) std::printf("note: %s\n", m.c_str());
  float dmax = 0;
  for (float d : res.dose.data) dmax = std::max(dmax, d);
  std::printf("backend %s (%s), variant %s: max dose %.4g Gy, %.1f ms (tables included on first use)\n",
              toString(res.backend), res.device.c_str(), variant.c_str(), double(dmax), res.elapsedMs);
  for (const auto& p : res.profiles)
    std::printf("  %-26s %-12s %9.3f ms\n", p.kernel.c_str(), p.variant.c_str(), p.medianMs);
  if (res.matrix)
    std::printf("dose matrix: %lld x %lld, %lld non-zeros (fp16), %lld dropped below %.0e of column max\n",
                (long long)res.matrix->rows, (long long)res.matrix->cols, (long long)res.matrix->nnz(),
                (long long)res.matrix->droppedEntries, res.matrix->relativeCutoff);
  if (!out.empty()) {
    io::writeMetaImage(out, res.dose, kDoseComment);
    std::printf("wrote %s (MetaImage, float32 Gy)\n", out.c_str());
  }
  return 0;
}

}  // namespace penumbra::cli
