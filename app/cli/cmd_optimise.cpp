// penumbra-cli optimise: spot-weight optimisation of a case (issue 5, item 4). Imports the case's
// CT and structures, builds the dose-deposition matrix D with the proton engine, minimises the
// case's objectives (saved by the GUI's Optimise panel; without them the default target / BODY /
// organ-at-risk objective) over w >= 0 with projected L-BFGS on the SpMV engine, recomputes the
// dose with the full engine and writes the case with the new weights.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>

#include "cli_commands.hpp"
#include "core/error.hpp"
#include "optimise_robust.hpp"
#include "robust_options.hpp"

#if defined(PENUMBRA_HAVE_DICOM) && defined(PENUMBRA_HAVE_CASE_FILES)
#define PENUMBRA_CLI_CASES 1
#include "case/case_file.hpp"
#include "dicom/dicom_import.hpp"
#include "optimise/optimise.hpp"
#include "proton/proton_dose.hpp"
#endif

namespace penumbra::cli {

namespace {

#ifdef PENUMBRA_CLI_CASES
using Clock = std::chrono::steady_clock;

/// Isotropic grid of spacing h [mm] over the CT's extent, centred on it (as `proton --case`).
Grid isotropicGrid(const Grid& ct, double h) {
  Grid g = ct;
  Vec3 half{};
  for (int c = 0; c < 3; ++c) {
    const double extent = ct.dims[c] * ct.spacing[c];
    g.dims[c] = std::max(1, int(std::lround(extent / h)));
    g.spacing[c] = h;
    half[c] = 0.5 * (extent - g.dims[c] * h);
  }
  g.origin =
      ct.indexToWorld(Vec3{-0.5, -0.5, -0.5}) + ct.direction * (half + Vec3{h / 2, h / 2, h / 2});
  return g;
}

/// Dose-grid voxels whose centre's nearest CT voxel is in the mask (rows of D).
std::vector<std::int64_t> voxelsOnDoseGrid(const Mask& mask, const Grid& dose) {
  std::vector<std::int64_t> v;
  for (int k = 0; k < dose.dims[2]; ++k)
    for (int j = 0; j < dose.dims[1]; ++j)
      for (int i = 0; i < dose.dims[0]; ++i) {
        std::array<int, 3> q{};
        if (mask.grid.worldToNearestIndex(dose.indexToWorld(Vec3{double(i), double(j), double(k)}),
                                          q) &&
            mask.at(q[0], q[1], q[2]))
          v.push_back(std::int64_t(dose.linearIndex(i, j, k)));
      }
  return v;
}

std::vector<std::int64_t> without(const std::vector<std::int64_t>& a,
                                  const std::vector<std::int64_t>& b) {
  std::vector<std::int64_t> out;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

/// The case's objectives on the dose grid, as the GUI builds them: the voxels come from each
/// structure's mask (the case names structures, it holds no voxels), and an external contour
/// with the organ-at-risk role counts outside the target-role structures only (it contains
/// them). Structures the patient lacks, or that miss the dose grid, are skipped with a warning.
std::vector<optimise::StructureObjective> caseObjectives(const io::CaseOptimisation& o,
                                                         const Patient& patient, const Grid& grid) {
  struct Found {
    const io::CaseObjective* objective;
    const Structure* structure;
    std::vector<std::int64_t> voxels;
  };
  std::vector<Found> found;
  std::vector<std::int64_t> targets;  // ascending, the union of the target-role structures
  for (const io::CaseObjective& x : o.objectives) {
    const Structure* s = patient.structures.find(x.structure);
    if (!s || s->mask.empty()) {
      std::printf("warning: objective of structure '%s' skipped: %s\n", x.structure.c_str(),
                  s ? "the structure has no contour on this CT" : "the structure set has no such structure");
      continue;
    }
    found.push_back({&x, s, voxelsOnDoseGrid(s->mask, grid)});
    if (x.role == optimise::StructureRole::Target) {
      std::vector<std::int64_t> merged;
      std::set_union(targets.begin(), targets.end(), found.back().voxels.begin(),
                     found.back().voxels.end(), std::back_inserter(merged));
      targets = std::move(merged);
    }
  }
  std::vector<optimise::StructureObjective> out;
  for (Found& f : found) {
    const bool outsideTargets = f.structure->kind == StructureKind::External &&
                                f.objective->role == optimise::StructureRole::OrganAtRisk;
    if (outsideTargets) f.voxels = without(f.voxels, targets);
    if (f.voxels.empty()) {
      std::printf("warning: objective of structure '%s' skipped: no voxels on the dose grid\n",
                  f.objective->structure.c_str());
      continue;
    }
    out.push_back({f.objective->structure, f.objective->role, std::move(f.voxels), f.objective->terms});
  }
  return out;
}

/// The default objective: target uniform dose with min (97 %) and max (104 %) penalties, BODY
/// outside the target kept below 80 %, organs at risk below 50 % of the prescription.
std::vector<optimise::StructureObjective> defaultObjectives(const Patient& patient, const Structure& target,
                                                            const std::vector<std::int64_t>& targetVoxels,
                                                            double rx, const Grid& grid) {
  std::vector<optimise::StructureObjective> terms{optimise::targetObjective(
      target.name, targetVoxels, rx, 1.0, 0.97 * rx, 20.0, 1.04 * rx, 20.0)};
  for (const Structure& s : patient.structures.structures) {
    if (&s == &target || s.mask.empty() ||
        (s.kind != StructureKind::External && s.kind != StructureKind::OrganAtRisk))
      continue;
    const bool body = s.kind == StructureKind::External;
    const auto voxels = without(voxelsOnDoseGrid(s.mask, grid), targetVoxels);
    if (voxels.empty()) continue;
    terms.push_back(optimise::organAtRiskObjective(s.name + (body ? " - target" : ""), voxels,
                                                   (body ? 0.8 : 0.5) * rx, 1.0));
  }
  return terms;
}

/// robustOpt: --robust cowc|expected; nominalForced: --robust none. Neither: as the case says
/// (its optimiser options' robust mode over its robustness scenarios), like its objectives.
int optimiseCase(const std::string& caseFile, double rx, std::optional<Backend> backendOpt,
                 std::optional<int> iterationsOpt, std::string outCase,
                 std::optional<RobustCliOptions> robustOpt, bool nominalForced) {
  const auto t0 = Clock::now();
  io::CaseFile c = io::readCaseFile(caseFile);
  const bool robustFromCommand = robustOpt.has_value();
  if (!robustOpt && !nominalForced && c.optimisation.options && c.optimisation.options->robustMode) {
    RobustCliOptions fromCase;
    fromCase.mode = *c.optimisation.options->robustMode;
    if (c.robustness) fromCase.options = c.robustness->scenarios;
    fromCase.scenarios = robust::makeScenarios(fromCase.options);
    std::printf("robust optimisation as the case says: %s over %zu scenarios (--robust none for "
                "the nominal plan)\n",
                optimise::toString(fromCase.mode), fromCase.scenarios.size());
    robustOpt = fromCase;
  }
  const std::string folder = io::resolveCasePath(caseFile, c.data.dicomFolder);
  io::ImportOptions importOptions;
  importOptions.structureSetFile = io::resolveCasePath(caseFile, c.data.structureSetFile);
  io::PatientImportResult imported =
      io::importPatient(io::scanDicomFolder(folder), c.data.seriesKey, importOptions);
  for (const auto& w : imported.messages.warnings) std::cout << "warning: " << w << "\n";
  for (const auto& e : imported.messages.errors) std::cout << "error: " << e << "\n";
  if (!imported.ok()) return 1;
  const Patient& patient = imported.patient;
  if (rx <= 0) rx = c.prescription.dosePerFractionGy;
  const Structure* target = patient.structures.find(c.prescription.target);
  PENUMBRA_REQUIRE(target, InvalidArgument,
                   "optimise: the case names no target structure found in the structure set ('" +
                       c.prescription.target + "')");
  PENUMBRA_REQUIRE(rx > 0, InvalidArgument, "optimise: no prescription (use --prescription Gy)");
  PENUMBRA_REQUIRE(proton::totalSpotCount(c.beams) > 0, InvalidArgument,
                   "optimise: the case has no spots (run penumbra-cli plan first)");
  const Backend backend = backendOpt.value_or(c.engine.backend);

  proton::ProtonDoseRequest req;
  req.ct = std::make_shared<CtVolume>(patient.ct);
  req.beams = c.beams;
  req.doseGrid = c.engine.doseGridSpacingMm > 0
                     ? isotropicGrid(patient.ct.grid, c.engine.doseGridSpacingMm)
                     : patient.ct.grid;
  req.backend = backend;
  req.variant = c.engine.variant;
  req.params.computeDoseMatrix = true;
  // The options the user set in the GUI travel with the case; --iterations still wins.
  const std::optional<io::CaseOptimiserOptions>& saved = c.optimisation.options;
  if (saved) req.params.doseMatrixRelativeCutoff = saved->matrixCutoff;
  const int iterations = iterationsOpt.value_or(saved ? saved->maxIterations : 200);
  std::printf("case %s: dose grid %dx%dx%d of %.2f mm, %zu beams, %zu spots\n", caseFile.c_str(),
              req.doseGrid.dims[0], req.doseGrid.dims[1], req.doseGrid.dims[2],
              req.doseGrid.spacing.x, req.beams.size(), proton::totalSpotCount(req.beams));
  // Robust: one matrix per scenario (the nominal among them) instead of the one matrix.
  std::optional<proton::ProtonDoseResult> built;
  robust::ScenarioMatrices scenarioSet;
  if (robustOpt) {
    scenarioSet = buildRobustMatrices(req, robustOpt->scenarios);
  } else {
    // On the GPU D stays there for the SpMV engine (spmv/device_half_csr.hpp).
    req.params.doseMatrixOnDevice = selectBackend(backend).backend == Backend::Cuda;
    built = proton::computeProtonDose(req);
    req.params.doseMatrixOnDevice = false;
    for (const auto& m : built->messages) std::printf("note: %s\n", m.c_str());
    const std::int64_t rows = built->deviceMatrix ? built->deviceMatrix->rows : built->matrix->rows;
    const std::int64_t cols = built->deviceMatrix ? built->deviceMatrix->cols : built->matrix->cols;
    const std::int64_t nnz = built->deviceMatrix ? built->deviceMatrix->nnz : built->matrix->nnz();
    std::printf("dose matrix: %lld x %lld, %lld non-zeros (fp16, cut-off %.0e)%s, %.1f s\n", (long long)rows,
                (long long)cols, (long long)nnz, req.params.doseMatrixRelativeCutoff,
                built->deviceMatrix ? ", kept on the GPU" : "", built->elapsedMs / 1000);
  }

  const std::vector<std::int64_t> targetVoxels = voxelsOnDoseGrid(target->mask, req.doseGrid);
  std::vector<optimise::StructureObjective> terms;
  if (!c.optimisation.objectives.empty()) {
    terms = caseObjectives(c.optimisation, patient, req.doseGrid);
    if (terms.empty())
      std::printf("warning: none of the case's objectives matches a structure: default objectives used\n");
  }
  std::printf("objectives: %s\n", terms.empty() ? "defaults from the structure kinds and the prescription"
                                                  : "the case's");
  if (terms.empty()) terms = defaultObjectives(patient, *target, targetVoxels, rx, req.doseGrid);
  for (const auto& s : terms)
    for (const auto& t : s.terms)
      std::printf("  objective %-24s %-5s %6.3f Gy  weight %5.1f  (%zu voxels)\n", s.name.c_str(),
                  optimise::toString(t.type), t.levelGy, t.weight, s.voxels.size());

  optimise::OptimiserOptions options;
  options.maxIterations = iterations;
  optimise::OptimiseResult res;
  if (robustOpt) {
    res = optimiseNominalAndRobust(scenarioSet, optimise::PlanObjective(terms), optimise::planWeights(c.beams),
                                   targetVoxels, robustOpt->mode, options);
  } else {
    spmv::SpmvOptions spmvOptions;
    spmvOptions.backend = backend;
    const spmv::SpmvEngine engine =
        built->deviceMatrix ? spmv::SpmvEngine(std::move(*built->deviceMatrix), spmvOptions)
                            : spmv::SpmvEngine(std::move(static_cast<spmv::HalfCsr&>(*built->matrix)), spmvOptions);
    if (!engine.message().empty()) std::printf("note: %s\n", engine.message().c_str());
    res = optimise::optimiseSpotWeights(
        engine, optimise::PlanObjective(terms), optimise::planWeights(c.beams), options, {},
        [](const optimise::IterationRecord& r) {
          std::printf("  iter %4d  f %.6e  |pg| %.3e  step %.3g  %.3f s\n", r.iteration, r.objective,
                      r.projectedGradientNorm, r.step, r.elapsedSeconds);
        });
    std::printf("optimiser: %s (%s) after %d iterations, %.2f s, %.1f iterations/s on %s (%s)\n",
                optimise::toString(res.state), res.stopReason.c_str(), res.iterations,
                res.elapsedSeconds, res.iterationsPerSecond, toString(res.backend),
                res.device.c_str());
  }

  optimise::setPlanWeights(c.beams, res.weights);
  req.beams = c.beams;
  req.params.computeDoseMatrix = false;
  const proton::ProtonDoseResult recomputed = proton::computeProtonDose(req);
  const auto fromMatrix = optimise::voxelDoseStatistics(res.dose, targetVoxels);
  const auto fromEngine = optimise::voxelDoseStatistics(recomputed.dose.data, targetVoxels);
  std::printf(
      "target '%s' (prescription %.3g Gy): D95 %.4g Gy (%.1f %%), Dmax %.4g Gy (%.1f %%) "
      "[full engine, %s]; D w: D95 %.4g, Dmax %.4g Gy\n",
      target->name.c_str(), rx, fromEngine.d95Gy, 100 * fromEngine.d95Gy / rx, fromEngine.maxGy,
      100 * fromEngine.maxGy / rx, toString(recomputed.backend), fromMatrix.d95Gy,
      fromMatrix.maxGy);

  // The case records how it was optimised when the command chose: the robust mode and its
  // scenarios (--robust), or the nominal plan (--robust none), with the options used.
  if (robustFromCommand || nominalForced) {
    io::CaseOptimiserOptions used = c.optimisation.options.value_or(io::CaseOptimiserOptions{});
    used.maxIterations = iterations;
    used.matrixCutoff = req.params.doseMatrixRelativeCutoff;
    used.robustMode = std::nullopt;
    if (robustFromCommand) {
      used.robustMode = robustOpt->mode;
      io::CaseRobustness r = c.robustness.value_or(io::CaseRobustness{});
      r.scenarios = robustOpt->options;
      c.robustness = r;
    }
    c.optimisation.options = used;
  }
  if (outCase.empty()) outCase = caseFile;  // --in-place
  if (outCase != caseFile) {  // keep the case's data paths valid from its new folder
    c.data.dicomFolder = io::relativeToCase(outCase, folder);
    if (!c.data.structureSetFile.empty())
      c.data.structureSetFile = io::relativeToCase(outCase, importOptions.structureSetFile);
    for (auto& d : c.doseSets)
      d.file = io::relativeToCase(outCase, io::resolveCasePath(caseFile, d.file));
  }
  const std::filesystem::path parent = std::filesystem::path(outCase).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  io::writeCaseFile(outCase, c);
  std::printf("wrote %s with the optimised weights; total %.1f s\n", outCase.c_str(),
              std::chrono::duration<double>(Clock::now() - t0).count());
  return 0;
}
#endif

}  // namespace

int cmdOptimise(Args args) {
  OptionParser options("optimise", std::move(args));
  const std::string caseFile = options.text("--case");
  const double rx = options.number("--prescription", 0);
  const std::string backend = options.text("--backend");
  const std::string iterationsText = options.text("--iterations");  // absent: the case's, else 200
  const std::string outCase = options.text("--out-case");
  const bool inPlace = options.flag("--in-place");
  const std::string robustMode = options.text("--robust");  // absent: nominal optimisation
  const std::optional<std::string> rangeText = options.value("--range");
  const std::optional<std::string> setupText = options.value("--setup");
  const std::string scenarioCount = options.text("--scenarios");
  if (!options.allTaken(usageOf("optimise"))) return 2;
  if (caseFile.empty()) {
    std::cerr << usageOf("optimise");
    return 2;
  }
  // The input case used to be overwritten silently when --out-case was left out.
  if (outCase.empty() && !inPlace) {
    std::cerr << "penumbra-cli optimise: give --out-case FILE.json, or --in-place to overwrite "
              << caseFile << "\n"
              << usageOf("optimise");
    return 2;
  }
  if (!outCase.empty() && inPlace) {
    std::cerr << "penumbra-cli optimise: --in-place and --out-case exclude each other\n"
              << usageOf("optimise");
    return 2;
  }
  std::optional<Backend> chosen;  // none: the case's engine backend
  if (!backend.empty()) chosen = parseBackendOption(backend);
  std::optional<int> iterations;
  if (!iterationsText.empty()) iterations = parseOptionInteger(iterationsText, "--iterations");
  std::optional<RobustCliOptions> robustChoice;
  const bool nominalForced = robustMode == "none";
  if (!robustMode.empty() && !nominalForced) {
    RobustCliOptions robustOptions;
    robustOptions.mode = optimise::parseRobustMode(robustMode);
    // Made (and so checked) before the import, as `robust` does.
    robustOptions.scenarios = scenarioSetOf(scenarioOptionsOf(rangeText, setupText), scenarioCount,
                                            /*sphereGiven=*/false, &robustOptions.options);
    robustChoice = robustOptions;
  } else if (!scenarioCount.empty() || rangeText || setupText) {
    std::cerr << "penumbra-cli optimise: --range, --setup and --scenarios need --robust cowc|expected\n"
              << usageOf("optimise");
    return 2;
  }
#ifdef PENUMBRA_CLI_CASES
  return optimiseCase(caseFile, rx, chosen, iterations, outCase, robustChoice, nominalForced);
#else
  (void)rx, (void)chosen, (void)iterations, (void)outCase, (void)robustChoice, (void)nominalForced;
  std::cerr << "penumbra-cli optimise: this build has no DICOM or no case-file support "
               "(needs DCMTK and nlohmann_json)\n";
  return 1;
#endif
}

}  // namespace penumbra::cli
