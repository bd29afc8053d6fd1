// penumbra-cli photon: collapsed-cone photon dose (6 MV) of one field on a built-in water or
// lung-slab box phantom (central-axis depth dose, a lateral profile and the energy balance), or
// of a case file's photon beams on its DICOM CT; the dose can be written as MetaImage.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli_commands.hpp"
#include "core/error.hpp"
#include "image/metaimage_writer.hpp"
#include "photon/photon_dose.hpp"
#include "photon/photon_phantoms.hpp"
#include "raytrace/raytrace.hpp"

#if defined(PENUMBRA_HAVE_DICOM) && defined(PENUMBRA_HAVE_CASE_FILES)
#define PENUMBRA_CLI_PHOTON_CASES 1
#include "case/case_file.hpp"
#include "dicom/dicom_import.hpp"
#endif

namespace penumbra::cli {

using namespace photon;

namespace {

constexpr const char* kDoseComment = "photon dose in Gy (collapsed cone, beam MU), DICOM LPS mm";

DepositStrategy parseDeposit(const std::string& text) {
  if (text == "atomic") return DepositStrategy::Atomic;
  if (text == "atomic-free" || text == "atomicfree") return DepositStrategy::AtomicFree;
  PENUMBRA_THROW(InvalidArgument, "--deposit: '" + text + "' is not atomic or atomic-free");
}

void parseCones(const std::string& text, PhotonDoseParameters& p) {
  const auto x = text.find('x');
  PENUMBRA_REQUIRE(x != std::string::npos, InvalidArgument,
                   "--cones: expected POLARxAZIMUTH, e.g. 8x12 (got '" + text + "')");
  p.polarCones = parseOptionInteger(text.substr(0, x), "--cones");
  p.azimuthalCones = parseOptionInteger(text.substr(x + 1), "--cones");
}

void printRun(const PhotonDoseRequest& req, const PhotonDoseResult& res) {
  for (const auto& m : res.messages) std::printf("note: %s\n", m.c_str());
  float dmax = 0;
  for (float d : res.dose.data) dmax = std::max(dmax, d);
  std::printf("backend %s (%s), variant %s, deposit %s, cones %dx%d: max dose %.4g Gy, %.1f ms\n",
              toString(res.backend), res.device.c_str(), toString(req.params.variant),
              req.params.deposit == DepositStrategy::AtomicFree ? "atomic-free" : "atomic",
              req.params.polarCones, req.params.azimuthalCones, double(dmax), res.elapsedMs);
  for (const auto& p : res.profiles)
    std::printf("  %-16s %-22s %10.1f ms\n", p.kernel.c_str(), p.variant.c_str(), p.medianMs);
  const EnergyBalance& e = res.energy;
  std::printf(
      "energy [MeV per photon/cm^2, summed over beams]: TERMA x mass %.6g, released %.6g, "
      "deposited %.6g, escaped %.6g; (deposited + escaped) / released - 1 = %.2e; "
      "%llu transport segments\n",
      e.termaEnergy, e.released, e.deposited, e.escaped,
      e.released > 0 ? (e.deposited + e.escaped) / e.released - 1 : 0.0,
      (unsigned long long)res.voxelDirectionSteps);
}

/// Central-axis depth dose and a lateral profile of a gantry-0 box phantom run.
void printDepthDose(const PhotonPhantomCase& pc, const PhotonDoseResult& res) {
  std::vector<double> depth, dose;
  centralAxis(res.dose, pc.surfaceYMm, depth, dose);
  const std::size_t iMax = std::size_t(std::max_element(dose.begin(), dose.end()) - dose.begin());
  const double dm = dose[iMax];
  if (!(dm > 0)) {
    std::printf("no dose on the central axis\n");
    return;
  }
  std::printf("central axis: dmax %.1f mm (%.4g Gy); PDD", depth[iMax], dm);
  for (double z : {5.0, 10.0, 15.0, 50.0, 100.0, 150.0, 200.0, 250.0})
    if (z <= depth.back())
      std::printf("  %g cm %.1f %%", z / 10, 100 * interpolate(depth, dose, z) / dm);
  std::printf("\n");
  // Profile along x at 10 cm depth (nearest voxel row): 50 % width and 80-20 % penumbrae.
  const Grid& g = res.dose.grid;
  const int j = int(std::lround((100.0 + pc.surfaceYMm - g.origin.y) / g.spacing.y));
  if (j < 0 || j >= g.dims[1]) return;
  const int kc = g.dims[2] / 2, ic = g.dims[0] / 2;
  std::vector<double> x, p;
  for (int i = 0; i < g.dims[0]; ++i) {
    x.push_back(g.origin.x + i * g.spacing.x);
    p.push_back(double(res.dose.at(i, j, kc)));
  }
  const double c = p[std::size_t(ic)];
  auto crossing = [&](double level, int dir) {  // from the axis outwards
    for (int i = ic; i + dir >= 0 && i + dir < int(p.size()); i += dir) {
      const double a = p[std::size_t(i)], b = p[std::size_t(i + dir)];
      if (a >= level && b < level)
        return x[std::size_t(i)] +
               (a - level) / (a - b) * (x[std::size_t(i + dir)] - x[std::size_t(i)]);
    }
    return std::nan("");
  };
  const double r50 = crossing(0.5 * c, 1), l50 = crossing(0.5 * c, -1);
  std::printf(
      "profile at %.1f mm depth (x, z = 0): 50 %% width %.1f mm, 80-20 %% penumbra "
      "left %.1f mm, right %.1f mm\n",
      g.origin.y + j * g.spacing.y - pc.surfaceYMm, r50 - l50,
      crossing(0.8 * c, -1) - crossing(0.2 * c, -1), crossing(0.2 * c, 1) - crossing(0.8 * c, 1));
}

#ifdef PENUMBRA_CLI_PHOTON_CASES
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
  g.origin =
      ct.indexToWorld(Vec3{-0.5, -0.5, -0.5}) + ct.direction * (half + Vec3{h / 2, h / 2, h / 2});
  return g;
}

/// The case's photon beams on its CT, with the case's engine settings where the command line
/// gives none (backend; options holds the command line's variant, deposit, cones).
int doseFromCase(const std::string& caseFile, std::optional<Backend> backend,
                 const std::vector<std::string>& options, int threads, const std::string& out) {
  const io::CaseFile c = io::readCaseFile(caseFile);
  if (c.photonBeams.empty()) {
    std::cerr << "penumbra-cli photon --case: " << caseFile << " has no photon beams\n";
    return 1;
  }
  const std::string folder = io::resolveCasePath(caseFile, c.data.dicomFolder);
  const io::DicomScan scan = io::scanDicomFolder(folder);
  io::ImportOptions importOptions;
  importOptions.structureSetFile = io::resolveCasePath(caseFile, c.data.structureSetFile);
  io::PatientImportResult imported = io::importPatient(scan, c.data.seriesKey, importOptions);
  for (const auto& w : imported.messages.warnings) std::cout << "warning: " << w << "\n";
  for (const auto& e : imported.messages.errors) std::cout << "error: " << e << "\n";
  if (!imported.ok()) return 1;
  const Patient& patient = imported.patient;
  PhotonDoseRequest req;
  req.ct = std::make_shared<CtVolume>(patient.ct);
  if (c.engine.doseGridSpacingMm > 0)
    req.doseGrid = resampledGrid(patient.ct.grid, c.engine.doseGridSpacingMm);
  req.backend = backend.value_or(c.engine.backend);
  req.params.variant = options[0].empty() ? c.engine.variant : parseDdaVariant(options[0]);
  req.params.deposit = options[1].empty() ? c.engine.photon.deposit : parseDeposit(options[1]);
  req.params.polarCones = c.engine.photon.polarCones;
  req.params.azimuthalCones = c.engine.photon.azimuthalCones;
  if (!options[2].empty()) parseCones(options[2], req.params);
  req.params.cpuThreads = threads;
  for (const io::CasePhotonBeam& cb : c.photonBeams) {
    PhotonBeam b = cb.beam;
    // Grow the conformal aperture that the case names but does not hold.
    if (b.aperture.empty() && !cb.apertureTarget.empty()) {
      const Structure* t = patient.structures.find(cb.apertureTarget);
      PENUMBRA_REQUIRE(t, InvalidArgument,
                       "beam '" + b.name + "': aperture target '" + cb.apertureTarget +
                           "' is not in the structure set");
      b.aperture = conformalAperture(b, t->mask, cb.apertureMarginMm);
      std::printf("beam %s: conformal aperture on '%s' + %g mm: %zu polygon(s)\n", b.name.c_str(),
                  cb.apertureTarget.c_str(), cb.apertureMarginMm, b.aperture.size());
    }
    req.beams.push_back(b);
  }
  const Grid& dg = req.doseGrid.empty() ? patient.ct.grid : req.doseGrid;
  std::printf("case %s: CT %dx%dx%d, dose grid %dx%dx%d of %.2f mm, %zu photon beams\n",
              caseFile.c_str(), patient.ct.grid.dims[0], patient.ct.grid.dims[1],
              patient.ct.grid.dims[2], dg.dims[0], dg.dims[1], dg.dims[2], dg.spacing.x,
              req.beams.size());
  std::printf("memory estimate: %s\n", workspaceBytes(req).breakdown.c_str());
  const PhotonDoseResult res = computePhotonDose(req);
  printRun(req, res);
  if (const Structure* t = patient.structures.find(c.prescription.target)) {
    double sum = 0, lo = 1e300, hi = 0;
    std::size_t n = 0;
    const Grid& g = t->mask.grid;
    for (int k = 0; k < g.dims[2]; ++k)
      for (int j = 0; j < g.dims[1]; ++j)
        for (int i = 0; i < g.dims[0]; ++i) {
          if (!t->mask.at(i, j, k)) continue;
          std::array<int, 3> q{};
          const Vec3 p = g.indexToWorld(Vec3{double(i), double(j), double(k)});
          if (!res.dose.grid.worldToNearestIndex(p, q)) continue;
          const double v = res.dose.at(q[0], q[1], q[2]);
          sum += v, lo = std::min(lo, v), hi = std::max(hi, v), ++n;
        }
    std::printf("target '%s': dose min/mean/max %.4g / %.4g / %.4g Gy over %zu voxels\n",
                t->name.c_str(), lo, n ? sum / double(n) : 0.0, hi, n);
  }
  if (!out.empty()) {
    io::writeMetaImage(out, res.dose, kDoseComment);
    std::printf("wrote %s (MetaImage, float32 Gy)\n", out.c_str());
  }
  return 0;
}
#endif

}  // namespace

int cmdPhoton(Args args) {
  OptionParser options("photon", std::move(args));
  const std::string caseFile = options.text("--case");
  const std::string phantom = options.text("--phantom", "water");
  WaterBoxSpec spec;
  spec.fieldMm = options.number("--field", 100);
  spec.ssdMm = options.number("--ssd", 1000);
  const double gantry = options.number("--gantry", 0);
  const double collimator = options.number("--collimator", 0);
  spec.widthMm = spec.depthMm = options.number("--size", 300);
  spec.lateralSpacingMm = options.number("--spacing", 5);
  spec.depthSpacingMm = options.number("--depth-spacing", 2);
  const std::string backend = options.text("--backend");
  const std::string variant = options.text("--variant");
  const std::string deposit = options.text("--deposit");
  const std::string cones = options.text("--cones");
  const int threads = options.integer("--threads", 0);
  const std::string out = options.text("--out");
  if (!options.allTaken(usageOf("photon"))) return 2;
  // Checked before anything is read or computed (cuda-strict fails here without a GPU).
  const std::optional<Backend> chosen =
      backend.empty() ? std::nullopt : std::optional<Backend>(parseBackendOption(backend));
  if (!caseFile.empty()) {
#ifdef PENUMBRA_CLI_PHOTON_CASES
    return doseFromCase(caseFile, chosen, {variant, deposit, cones}, threads, out);
#else
    std::cerr << "penumbra-cli photon --case: this build has no DICOM or no case-file support "
                 "(needs DCMTK and nlohmann_json)\n";
    return 1;
#endif
  }
  PhotonDoseRequest req;
  req.backend = chosen.value_or(Backend::Auto);
  req.params.variant = parseDdaVariant(variant.empty() ? "dda-nc" : variant);
  req.params.deposit = parseDeposit(deposit.empty() ? "atomic-free" : deposit);
  req.params.cpuThreads = threads;
  parseCones(cones.empty() ? "8x12" : cones, req.params);
  PhotonPhantomCase pc;
  if (phantom == "water")
    pc = makeWaterBox(spec);
  else if (phantom == "lung")
    pc = makeLungSlab(spec);
  else {
    std::cerr << "penumbra-cli photon: unknown phantom '" << phantom << "' (water, lung)\n";
    return 2;
  }
  pc.beams[0].gantryDeg = gantry;
  pc.beams[0].collimatorDeg = collimator;
  req.density = pc.density;
  req.beams = pc.beams;
  const Grid& g = pc.density->grid;
  std::printf(
      "phantom %s: %dx%dx%d voxels of %gx%gx%g mm, %g x %g mm field at SSD %g mm, "
      "gantry %g, collimator %g\n",
      pc.name.c_str(), g.dims[0], g.dims[1], g.dims[2], g.spacing.x, g.spacing.y, g.spacing.z,
      spec.fieldMm, spec.fieldMm, spec.ssdMm, pc.beams[0].gantryDeg, pc.beams[0].collimatorDeg);
  std::printf("memory estimate: %s\n", workspaceBytes(req).breakdown.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  const auto model = defaultPhotonModel();
  const double modelMs =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("beam model: %s, calibrated in %.0f ms (%.4g Gy per MU per raw unit)\n",
              model->name.c_str(), modelMs, model->gyPerMuPerRawDose);
  req.model = model;
  const PhotonDoseResult res = computePhotonDose(req);
  printRun(req, res);
  if (pc.beams[0].gantryDeg == 0) printDepthDose(pc, res);
  if (!out.empty()) {
    io::writeMetaImage(out, res.dose, kDoseComment);
    std::printf("wrote %s (MetaImage, float32 Gy)\n", out.c_str());
  }
  return 0;
}

}  // namespace penumbra::cli
