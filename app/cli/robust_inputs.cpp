// Inputs of `penumbra-cli robust` and `bench robust` (robust_inputs.hpp): built-in phantoms with
// geometric masks, and case files with their structures resampled onto the dose grid.
#include "robust_inputs.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>

#include "cli_args.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "proton/proton_phantoms.hpp"

#if defined(PENUMBRA_HAVE_DICOM) && defined(PENUMBRA_HAVE_CASE_FILES)
#define PENUMBRA_CLI_CASES 1
#include "case/case_file.hpp"
#include "dicom/dicom_import.hpp"
#endif

namespace penumbra::cli {

namespace {

using robust::RobustStructure;

/// The mask on `grid` of the voxel centres where `inside(p)` holds (p: patient mm).
std::shared_ptr<Mask> maskWhere(const Grid& grid, const std::function<bool(Vec3)>& inside) {
  auto m = std::make_shared<Mask>(grid, std::uint8_t(0));
  for (int k = 0; k < grid.dims[2]; ++k)
    for (int j = 0; j < grid.dims[1]; ++j)
      for (int i = 0; i < grid.dims[0]; ++i)
        m->at(i, j, k) = inside(grid.indexToWorld(Vec3{double(i), double(j), double(k)})) ? 1 : 0;
  return m;
}

/// The mask on `grid` of the voxels whose centre's nearest voxel of `source` is set.
template <typename T, typename Pred>
std::shared_ptr<Mask> resampledMask(const Volume<T>& source, const Grid& grid, Pred set) {
  return maskWhere(grid, [&](Vec3 p) {
    std::array<int, 3> q{};
    return source.grid.worldToNearestIndex(p, q) && set(source.at(q[0], q[1], q[2]));
  });
}

RobustStructure structure(std::string name, StructureKind kind, std::shared_ptr<Mask> mask) {
  RobustStructure s;
  s.name = std::move(name);
  s.kind = kind;
  s.mask = std::move(mask);
  return s;
}

}  // namespace

Grid isotropicDoseGrid(const Grid& g, double h) {
  Grid out = g;
  Vec3 half{};
  for (int c = 0; c < 3; ++c) {
    const double extent = g.dims[c] * g.spacing[c];
    out.dims[c] = std::max(1, int(std::lround(extent / h)));
    out.spacing[c] = h;
    half[c] = 0.5 * (extent - out.dims[c] * h);
  }
  out.origin = g.indexToWorld(Vec3{-0.5, -0.5, -0.5}) + g.direction * (half + Vec3{h / 2, h / 2, h / 2});
  return out;
}

RobustInputs phantomRobustInputs(const std::string& name, double doseGridMm) {
  proton::ProtonPhantomCase pc;
  if (name == "hn") pc = proton::makeHeadNeckCase(doseGridMm > 0 ? doseGridMm : 1.0);
  else if (name == "box") pc = proton::makeBoxPhantomCase();
  else if (name == "water") pc = proton::makeWaterPhantomCase();
  else
    PENUMBRA_THROW(InvalidArgument,
                   "robust: unknown phantom '" + name + "' (hn, box, water)");
  if (doseGridMm > 0 && name != "hn") pc.doseGrid = isotropicDoseGrid(pc.ct.grid, doseGridMm);
  RobustInputs in;
  const Grid& g = pc.doseGrid;
  const Vec3 c = pc.targetCenter;
  const double r = pc.targetRadiusMm;
  if (name == "box") {
    // matRad's OuterTarget: the 21^3 voxels of 3 mm around the centre (a 63-mm cube).
    in.structures.push_back(structure("OuterTarget", StructureKind::Target, maskWhere(g, [&](Vec3 p) {
      return std::fabs(p.x - c.x) <= r && std::fabs(p.y - c.y) <= r && std::fabs(p.z - c.z) <= r;
    })));
  } else {
    in.structures.push_back(structure("Target", StructureKind::Target,
                                      maskWhere(g, [&](Vec3 p) { return norm(p - c) <= r; })));
  }
  if (name == "hn") {
    // Both fields (gantry 45 and 315) stop in the posterior half of the target: a 10-mm sphere
    // 5 mm behind it sees their distal fall-off, which the range scenarios move.
    const Vec3 cord{c.x, c.y + r + 15, c.z};
    in.structures.push_back(structure("Cord", StructureKind::OrganAtRisk,
                                      maskWhere(g, [&](Vec3 p) { return norm(p - cord) <= 10; })));
  }
  in.structures.push_back(structure("Body", StructureKind::External,
                                    resampledMask(pc.ct, g, [](std::int16_t hu) { return hu > -500; })));
  in.plan.ct = std::make_shared<CtVolume>(std::move(pc.ct));
  in.plan.beams = pc.beams;
  in.plan.doseGrid = g;
  in.description = "phantom " + pc.name + ": " + std::to_string(pc.beams.size()) + " beams, " +
                   std::to_string(proton::totalSpotCount(pc.beams)) + " spots, dose grid " +
                   std::to_string(g.dims[0]) + "x" + std::to_string(g.dims[1]) + "x" +
                   std::to_string(g.dims[2]);
  in.targetLimitOfNominalMean = 0.95;
  return in;
}

RobustInputs caseRobustInputs(const std::string& caseFile, double doseGridMm) {
#ifndef PENUMBRA_CLI_CASES
  (void)doseGridMm;
  PENUMBRA_THROW(Unsupported,
                 "robust --case " + caseFile + ": this build has no DICOM or no case-file support "
                 "(needs DCMTK and nlohmann_json); use --phantom hn|box|water");
#else
  const io::CaseFile c = io::readCaseFile(caseFile);
  const std::string folder = io::resolveCasePath(caseFile, c.data.dicomFolder);
  io::ImportOptions options;
  options.structureSetFile = io::resolveCasePath(caseFile, c.data.structureSetFile);
  io::PatientImportResult imported = io::importPatient(io::scanDicomFolder(folder), c.data.seriesKey, options);
  RobustInputs in;
  for (const auto& w : imported.messages.warnings) in.notes.push_back("warning: " + w);
  PENUMBRA_REQUIRE(imported.ok(), Format,
                   "robust: the case's CT could not be imported from " + folder +
                       (imported.messages.errors.empty() ? std::string()
                                                         : ": " + imported.messages.errors.front()));
  PENUMBRA_REQUIRE(proton::totalSpotCount(c.beams) > 0, InvalidArgument,
                   "robust: the case has no proton spots (run penumbra-cli plan first)");
  const Patient& patient = imported.patient;
  const double h = doseGridMm > 0 ? doseGridMm : c.engine.doseGridSpacingMm;
  in.plan.doseGrid = h > 0 ? isotropicDoseGrid(patient.ct.grid, h) : patient.ct.grid;
  in.plan.beams = c.beams;
  in.plan.backend = c.engine.backend;
  in.plan.variant = c.engine.variant;
  const double rx = c.prescription.dosePerFractionGy;
  for (const Structure& s : patient.structures.structures) {
    const io::CaseObjective* objective = nullptr;
    for (const io::CaseObjective& o : c.optimisation.objectives)
      if (o.structure == s.name) objective = &o;
    StructureKind kind = s.kind;
    if (s.name == c.prescription.target ||
        (objective && objective->role == optimise::StructureRole::Target))
      kind = StructureKind::Target;
    else if (objective && kind != StructureKind::External)
      kind = StructureKind::OrganAtRisk;
    if (kind == StructureKind::Other) continue;  // points, supports, unnamed helpers
    if (s.mask.empty()) {
      in.notes.push_back("structure '" + s.name + "' skipped: no contour on this CT");
      continue;
    }
    RobustStructure r = structure(s.name, kind,
                                  resampledMask(s.mask, in.plan.doseGrid, [](std::uint8_t v) { return v != 0; }));
    if (objective)
      for (const optimise::ObjectiveTerm& t : objective->terms) {
        if (t.type == optimise::TermType::MinDose && kind == StructureKind::Target) r.minGy = t.levelGy;
        if (t.type == optimise::TermType::MaxDose && kind != StructureKind::Target)
          r.maxGy = std::isnan(r.maxGy) ? t.levelGy : std::min(r.maxGy, t.levelGy);
      }
    if (kind == StructureKind::Target && std::isnan(r.minGy) && rx > 0) r.minGy = 0.95 * rx;
    in.structures.push_back(std::move(r));
  }
  in.plan.ct = std::make_shared<CtVolume>(patient.ct);
  in.description = "case " + caseFile + ": " + std::to_string(c.beams.size()) + " beams, " +
                   std::to_string(proton::totalSpotCount(c.beams)) + " spots, dose grid " +
                   std::to_string(in.plan.doseGrid.dims[0]) + "x" +
                   std::to_string(in.plan.doseGrid.dims[1]) + "x" +
                   std::to_string(in.plan.doseGrid.dims[2]) +
                   (rx > 0 ? ", prescription " + formatG(rx) + " Gy per fraction" : "");
  return in;
#endif
}

void limitTargetsAtNominalMean(robust::RobustnessResult& result, double fraction) {
  for (robust::RobustnessRow& row : result.table) {
    if (row.metric != "D98" && row.metric != "D95") continue;
    for (const robust::StructureRobustness& s : result.structures)
      if (s.name == row.structure && s.kind == StructureKind::Target && !s.scenarios.empty()) {
        row.limitGy = fraction * s.scenarios[0].meanGy;
        row.violated = row.worstGy < row.limitGy;
      }
  }
}

}  // namespace penumbra::cli
