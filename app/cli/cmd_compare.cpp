// penumbra-cli compare REF EVAL: gamma index and dose difference of two doses with the dose
// comparison engine (engines/compare), per structure with --structures (pass rates on masks on
// REF's grid, DVH differences with the DVH engine on each dose's own grid); the gamma and
// difference volumes as MetaImage on request, and a report: the printed text, or with
// --report FILE.pdf an A4 PDF with figures (compare_pdf_report).
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli_commands.hpp"
#include "compare/compare.hpp"
#include "compare_pdf_report.hpp"
#include "compare_report.hpp"
#include "core/error.hpp"
#include "dose_inputs.hpp"
#include "dvh/dvh.hpp"
#include "file/atomic_file.hpp"
#include "image/metaimage_writer.hpp"

#ifdef PENUMBRA_HAVE_DICOM
#include "dicom/rt_dose_reader.hpp"  // rasterizeNearestPlanes
#endif

namespace penumbra::cli {

namespace {

using namespace penumbra::compare;

/// The options of a comparison, all checked before any file is read.
struct CompareOptions {
  GammaCriteria criteria;
  Backend backend = Backend::Auto;
  std::string structures, out, outDifference, report;
};

std::optional<CompareOptions> parseOptions(OptionParser& options) {
  CompareOptions o;
  GammaCriteria& c = o.criteria;
  c.dosePercent = options.number("--dd", 3);
  c.distanceMm = options.number("--dta", 3);
  c.local = options.flag("--local");
  c.cutoffPercent = options.number("--cutoff", 10);
  const std::string norm = options.text("--norm", "max");
  if (norm != "max") {
    double gy = 0;
    try {
      gy = parseOptionNumber(norm, "--norm");
    } catch (const Error&) {
      PENUMBRA_THROW(InvalidArgument, "--norm: expected 'max' or a dose in Gy, got '" + norm + "'");
    }
    c.normalisation = Normalisation::Value;
    c.normalisationGy = gy;
  }
  c.gammaCap = options.number("--cap", 2);
  c.maxSearchMm = options.number("--max-search", 0);
  o.backend = parseBackendOption(options.text("--backend", "auto"));
  o.structures = options.text("--structures");
  o.out = options.text("--out");
  o.outDifference = options.text("--out-difference");
  o.report = options.text("--report");
  if (!options.positionals(2, usageOf("compare"))) return std::nullopt;
  return o;
}

/// The Volume<float> of a dose, sharing its owner.
std::shared_ptr<const Volume<float>> volumeOf(const DoseInput& in) {
  return {in.dose, &in.dose->dose};
}

/// Masks of the structures on the reference grid for per-structure pass rates.
void addStructureMasks(const StructureSetInput& rs, const DoseInput& ref, CompareRequest& req,
                       CompareReport& report) {
  PENUMBRA_REQUIRE(rs.set.frameOfReferenceUid.empty() || ref.frameOfReference.empty() ||
                       rs.set.frameOfReferenceUid == ref.frameOfReference,
                   InvalidArgument,
                   "--structures: '" + rs.file + "' is in frame of reference " +
                       rs.set.frameOfReferenceUid + ", REF in " + ref.frameOfReference +
                       ": its structures cannot be placed on the dose");
#ifdef PENUMBRA_HAVE_DICOM
  for (const Structure& s : rs.set.structures) {
    if (!hasAreaContours(s)) continue;
    auto mask = std::make_shared<Mask>(io::rasterizeNearestPlanes(s.contours, ref.dose->grid()));
    bool any = false;
    for (std::uint8_t v : mask->data) any = any || v != 0;
    if (any)
      req.structures.push_back({s.name, mask});
    else
      report.emptyMasks.push_back(s.name);
  }
#else
  (void)req;
  (void)report;
#endif
}

/// DVHs of every structure with contours on both doses (each on its own grid).
void addDvhs(const StructureSetInput& rs, const DoseInput& ref, const DoseInput& eval,
             double normalisationGy, CompareReport& report) {
  dvh::DvhOptions opts;  // the GUI's DVH settings: 0.01 Gy bins, shape-based interpolation
  opts.binWidthGy = 0.01;
  opts.prescriptionGy = normalisationGy;  // V95 % and V107 % of the normalisation dose
  const auto t0 = std::chrono::steady_clock::now();
  for (const Structure& s : rs.set.structures) {
    if (!hasAreaContours(s)) continue;
    StructureDvhPair p;
    p.name = s.name;
    try {
      p.a = dvh::computeDvh(s, *ref.dose, opts);
      p.b = dvh::computeDvh(s, *eval.dose, opts);
    } catch (const Error& e) {  // one unusable ROI must not hide the others (as in the GUI)
      p.error = e.message();
    }
    for (const std::string& w : p.a.warnings) report.notes.push_back(s.name + " (A): " + w);
    for (const std::string& w : p.b.warnings) report.notes.push_back(s.name + " (B): " + w);
    report.dvhs.push_back(std::move(p));
  }
  report.dvhSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string criteriaText(const GammaCriteria& c) {
  char b[128];
  std::snprintf(b, sizeof b, "%g %%/%g mm %s, cut-off %g %%", c.dosePercent, c.distanceMm,
                c.local ? "local" : "global", c.cutoffPercent);
  return b;
}

}  // namespace

int cmdCompare(Args args) {
  OptionParser parser("compare", std::move(args));
  const std::optional<CompareOptions> options = parseOptions(parser);
  if (!options) return 2;
  // The report's temporary file is made before anything is read or computed: an unwritable
  // folder fails at once, not after minutes of gamma, and any later failure removes it
  // (AtomicFile's destructor during unwinding), so an existing report is never touched.
  const bool pdf = isPdfPath(options->report);
  std::optional<io::AtomicFile> reportFile;
  if (!options->report.empty())
    reportFile.emplace(options->report, pdf ? "PDF report" : "comparison report");
  const DoseInput ref = readDoseInput(parser.rest()[0], "REF");
  const DoseInput eval = readDoseInput(parser.rest()[1], "EVAL");
  std::optional<StructureSetInput> rs;
  if (!options->structures.empty()) rs = readStructureSetInput(options->structures);

  CompareRequest req;
  req.reference = volumeOf(ref);
  req.evaluated = volumeOf(eval);
  req.referenceFrame = ref.frameOfReference;
  req.evaluatedFrame = eval.frameOfReference;
  req.criteria = options->criteria;
  req.backend = options->backend;
  CompareReport report;
  report.reference = &ref;
  report.evaluated = &eval;
  report.request = &req;
  for (const std::string& n : ref.notes) report.notes.push_back("REF: " + n);
  for (const std::string& n : eval.notes) report.notes.push_back("EVAL: " + n);
  if (rs) {
    report.structureSetFile = rs->file;
    for (const std::string& n : rs->notes) report.notes.push_back(n);
    addStructureMasks(*rs, ref, req, report);
  }

  const CompareResult result = compareDoses(req);
  report.result = &result;
  for (const std::string& m : result.messages) report.notes.push_back(m);
  if (rs) addDvhs(*rs, ref, eval, result.normalisationGy, report);
  const std::string text = formatCompareReport(report);
  std::cout << text << std::flush;

  const std::string what = criteriaText(req.criteria) + " of EVAL " + eval.file + " against REF " +
                           ref.file + "; reference grid";
  if (!options->out.empty()) {
    io::writeMetaImage(options->out, result.gamma,
                       "gamma index (" + what + "; NaN: not evaluated)");
    std::printf("wrote %s (gamma)\n", options->out.c_str());
  }
  if (!options->outDifference.empty()) {
    io::writeMetaImage(options->outDifference, result.difference,
                       "dose difference A - B in Gy (" + what + "; NaN: outside EVAL)");
    std::printf("wrote %s (difference A - B)\n", options->outDifference.c_str());
  }
  if (reportFile) {
    if (pdf) {
      const PdfReportStamp stamp{(long long)std::time(nullptr), "penumbra-cli " PENUMBRA_VERSION};
      reportFile->write(formatComparePdfReport(report, stamp));
    } else {
      reportFile->write(text);
    }
    reportFile->commit();
    std::printf("wrote %s (%s)\n", options->report.c_str(), pdf ? "PDF report" : "report");
  }
  return 0;
}

}  // namespace penumbra::cli
