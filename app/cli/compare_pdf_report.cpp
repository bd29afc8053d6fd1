#include "compare_pdf_report.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <tuple>

#include "compare_pdf_figures.hpp"
#include "report/compare_colours.hpp"
#include "report/report_flow.hpp"

namespace penumbra::cli {

namespace {

using namespace io::pdf;
using namespace penumbra::compare;

constexpr Colour kAccent{0.16, 0.24, 0.52};  // the gamma map's "pass" blue (compare_colours)

std::string f(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string f(const char* format, ...) {
  va_list args;
  va_start(args, format);
  char b[512];
  std::vsnprintf(b, sizeof b, format, args);
  va_end(args);
  return b;
}

/// A value of a table as the text report prints it ("%.3f"), "-" for NaN.
std::string cell(double v) { return std::isnan(v) ? "-" : f("%.3f", v); }

std::string fileName(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string localTime(long long t, const char* format) {
  const std::time_t tt = std::time_t(t);
  std::tm local{};
  localtime_r(&tt, &local);
  char b[64];
  std::strftime(b, sizeof b, format, &local);
  return b;
}

void header(ReportFlow& flow, const PdfReportStamp& stamp) {
  const double top = flow.block(62);
  Page& p = flow.page();
  p.text(flow.left(), top - 20, Font::HelveticaBold, 20, "Dose comparison report");
  p.text(flow.left(), top - 37, Font::Helvetica, 10,
         "Gamma index and dose difference of EVAL (B) against REF (A)", kTextGrey);
  const std::string created = "Created " + localTime(stamp.unixSeconds, "%Y-%m-%d %H:%M %Z");
  p.text(flow.right() - textWidth(Font::Helvetica, 8.5, created), top - 12, Font::Helvetica, 8.5,
         created, kTextGrey);
  p.text(flow.right() - textWidth(Font::Helvetica, 8.5, stamp.program), top - 24, Font::Helvetica,
         8.5, stamp.program, kTextGrey);
  p.line(flow.left(), top - 50, flow.right(), top - 50, 1.5, kAccent);
}

void doses(ReportFlow& flow, const CompareReport& rep) {
  flow.heading("Dose distributions");
  const CompareResult& r = *rep.result;
  const double label = 92;
  for (const auto& [role, in, maxGy] :
       {std::tuple{"A  reference", rep.reference, r.referenceMaxGy},
        std::tuple{"B  evaluated", rep.evaluated, r.evaluatedMaxGy}}) {
    const Grid& g = in->dose->grid();
    flow.labelled(role, in->kind, label, 9, Font::HelveticaBold);
    flow.labelled("", in->file, label, 8, Font::Courier);
    flow.labelled("",
                  f("%d x %d x %d voxels of %g x %g x %g mm, first voxel centre (%g, %g, %g) mm",
                    g.dims[0], g.dims[1], g.dims[2], g.spacing.x, g.spacing.y, g.spacing.z,
                    g.origin.x, g.origin.y, g.origin.z),
                  label, 9);
    flow.labelled("", f("maximum %.3f Gy", maxGy), label, 9);
    flow.skip(4);
  }
}

/// Label-value pairs two to a row.
void pairs(ReportFlow& flow, const std::vector<std::pair<std::string, std::string>>& items) {
  const double size = 9, half = flow.width() / 2, label = 98;
  for (std::size_t i = 0; i < items.size(); i += 2) {
    const double top = flow.block(size * 1.5);
    for (std::size_t k = i; k < std::min(i + 2, items.size()); ++k) {
      const double x = flow.left() + double(k - i) * half;
      flow.page().text(x, top - size, Font::Helvetica, size, items[k].first, kTextGrey);
      flow.page().text(x + label, top - size, Font::Helvetica, size,
                       ReportFlow::elide(items[k].second, Font::Helvetica, size, half - label - 6));
    }
  }
}

void criteria(ReportFlow& flow, const CompareReport& rep) {
  const GammaCriteria& c = rep.request->criteria;
  const CompareResult& r = *rep.result;
  flow.heading("Criteria");
  pairs(flow,
        {{"Dose criterion", f("%g %% %s", c.dosePercent, c.local ? "local" : "global")},
         {"Distance to agreement", f("%g mm", c.distanceMm)},
         {"Normalisation", c.normalisation == Normalisation::ReferenceMax
                               ? f("reference maximum, %.3f Gy", r.normalisationGy)
                               : f("%.3f Gy (given)", r.normalisationGy)},
         {"Low-dose cut-off",
          f("%g %% (%.3f Gy)", c.cutoffPercent, c.cutoffPercent / 100 * r.normalisationGy)},
         {"Search radius", f("%g mm", searchRadiusMm(c))},
         {"Gamma cap", f("%g", c.gammaCap)},
         {"Structures",
          rep.structureSetFile.empty() ? std::string("none") : fileName(rep.structureSetFile)},
         {"Computed", f("%s on %s, %.1f ms", toString(r.backend), r.device.c_str(), r.elapsedMs)}});
}

void results(ReportFlow& flow, const CompareResult& r) {
  const GammaStatistics& s = r.gammaStats;
  flow.heading("Results", 140);
  const double top = flow.block(46);
  flow.page().fillRect(flow.left(), top - 42, flow.width(), 42, kShade);
  flow.page().fillRect(flow.left(), top - 42, 3, 42, kAccent);
  flow.page().text(flow.left() + 12, top - 20, Font::HelveticaBold, 16,
                   f("Gamma pass rate: %.2f %%", s.passRatePercent));
  flow.page().text(flow.left() + 12, top - 34, Font::Helvetica, 9,
                   f("%lld of %lld evaluated points with gamma <= 1", (long long)s.passedPoints,
                     (long long)s.evaluatedPoints));
  flow.skip(6);
  auto p = [&](double v) { return f("%.3f", reportedPercentile(v, s)); };
  const double w = flow.width();
  flow.table({{"Gamma", w - 6 * 60, false},
              {"Mean", 60},
              {"p50", 60},
              {"p90", 60},
              {"p95", 60},
              {"p99", 60},
              {"Max", 60}},
             {{"over the evaluated points", f("%.3f", s.mean), p(s.p50), p(s.p90), p(s.p95),
               p(s.p99), f("%.3f", s.max)}});
  flow.skip(6);
  const DifferenceStatistics& d = r.differenceStats;
  const double toPercent = r.normalisationGy > 0 ? 100 / r.normalisationGy : 0;
  flow.table(
      {{"Difference A - B over the evaluated points", w - 4 * 70, false},
       {"Mean", 70},
       {"SD", 70},
       {"Min", 70},
       {"Max", 70}},
      {{"Gy", f("%.3f", d.meanGy), f("%.3f", d.sdGy), f("%.3f", d.minGy), f("%.3f", d.maxGy)},
       {"% of the normalisation dose", f("%.2f", d.meanPercent), f("%.2f", d.sdGy * toPercent),
        f("%.2f", d.minPercent), f("%.2f", d.maxPercent)}});
  flow.skip(5);
  flow.paragraph(
      f("Points: %lld reference voxels: %lld evaluated, %lld below the cut-off, %lld "
        "outside the mask, %lld outside the evaluated dose.",
        (long long)r.referencePoints, (long long)s.evaluatedPoints, (long long)r.belowCutoff,
        (long long)r.outsideMask, (long long)r.outsideEvaluated),
      Font::Helvetica, 8.5, kTextGrey);
}

void structures(ReportFlow& flow, const CompareReport& rep) {
  const CompareResult& r = *rep.result;
  flow.heading("Gamma pass rate per structure");
  flow.paragraph("Masks on the reference grid, nearest contour plane per slice, of",
                 Font::Helvetica, 8.5, kTextGrey);
  flow.paragraph(rep.structureSetFile, Font::Courier, 8);
  flow.skip(3);
  const double w = flow.width();
  std::vector<std::vector<std::string>> rows;
  for (const StructurePassRate& s : r.structures)
    rows.push_back({s.name, f("%lld", (long long)s.evaluatedPoints), cell(s.passRatePercent),
                    cell(s.evaluatedPoints > 0 ? s.meanGamma : NAN)});
  for (const std::string& n : rep.emptyMasks)
    rows.push_back({n + " (no voxel of the reference grid inside)", "0", "-", "-"});
  flow.table({{"Structure", w - 3 * 80, false}, {"Points", 80}, {"Pass %", 80}, {"Mean gamma", 80}},
             rows);

  flow.heading("DVH differences");
  flow.paragraph(f("Contours on each dose's own grid; D in Gy; V95 %% and V107 %%: %% of the "
                   "volume receiving 95 %% and 107 %% of %.3f Gy.",
                   r.normalisationGy),
                 Font::Helvetica, 8.5, kTextGrey);
  flow.skip(3);
  rows.clear();
  std::vector<bool> groups;
  std::vector<std::string> failures;
  for (const StructureDvhPair& p : rep.dvhs) {
    if (!p.error.empty()) {
      rows.push_back({p.name, "no DVH"});
      groups.push_back(true);
      failures.push_back(p.name + ": " + p.error);
      continue;
    }
    const dvh::DvhStatistics& a = p.a.stats;
    const dvh::DvhStatistics& b = p.b.stats;
    const double va[] = {a.meanGy, a.d98Gy, a.d95Gy, a.d50Gy, a.d2Gy, a.v95Percent, a.v107Percent};
    const double vb[] = {b.meanGy, b.d98Gy, b.d95Gy, b.d50Gy, b.d2Gy, b.v95Percent, b.v107Percent};
    std::vector<std::string> ra{p.name, "A"}, rb{"", "B"}, rd{"", "A - B"};
    for (std::size_t k = 0; k < 7; ++k) {
      ra.push_back(cell(va[k]));
      rb.push_back(cell(vb[k]));
      rd.push_back(cell(va[k] - vb[k]));
    }
    rows.insert(rows.end(), {ra, rb, rd});
    groups.insert(groups.end(), {true, false, false});
  }
  const double n = (w - 130 - 40) / 7;
  flow.table({{"Structure", 130, false},
              {"Dose", 40, false},
              {"Dmean", n},
              {"D98", n},
              {"D95", n},
              {"D50", n},
              {"D2", n},
              {"V95 %", n},
              {"V107 %", n}},
             rows, 8, groups);
  flow.skip(3);
  for (const std::string& s : failures) flow.paragraph("No DVH: " + s, Font::Helvetica, 8.5);
  flow.paragraph(
      f("DVHs of %zu structure(s) on both doses in %.2f s.", rep.dvhs.size(), rep.dvhSeconds),
      Font::Helvetica, 8.5, kTextGrey);
}

void signOff(ReportFlow& flow) {
  flow.heading("Review", 60);
  flow.skip(26);
  const double y = flow.block(24);
  const double w = (flow.width() - 2 * 24) / 3;
  const char* labels[] = {"Reviewed by (name)", "Signature", "Date"};
  for (int i = 0; i < 3; ++i) {
    const double x = flow.left() + i * (w + 24);
    flow.page().line(x, y, x + w, y, 0.6, {0, 0, 0});
    flow.page().text(x, y - 10, Font::Helvetica, 7.5, labels[i], kTextGrey);
  }
}

}  // namespace

bool isPdfPath(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".pdf";
}

std::string formatComparePdfReport(const CompareReport& rep, const PdfReportStamp& stamp) {
  const CompareResult& r = *rep.result;
  const GammaCriteria& c = rep.request->criteria;
  Document doc;
  ReportFlow flow(doc);
  header(flow, stamp);
  doses(flow, rep);
  criteria(flow, rep);
  results(flow, r);
  flow.heading("Gamma histogram", 150);
  drawGammaHistogram(flow, r, c.gammaCap);
  flow.heading("Gamma maps", 230);
  drawGammaSlices(doc, flow, r, rep.reference->dose->dose, c);
  flow.paragraph(
      "Slices through the centre of the evaluated region. Blue: gamma <= 1 (pass), darker for "
      "lower gamma; red through orange to yellow: gamma > 1 (fail), up to the cap. Grey: not "
      "evaluated; light where the reference dose is below the cut-off, darker where it is above "
      "the cut-off but outside the evaluated dose.",
      Font::Helvetica, 8, kTextGrey);
  if (!rep.structureSetFile.empty()) structures(flow, rep);
  if (!rep.notes.empty()) {
    flow.heading("Notes", 30);
    for (const std::string& n : rep.notes) flow.paragraph("- " + n, Font::Helvetica, 8.5);
  }
  signOff(flow);
  const std::string created = localTime(stamp.unixSeconds, "%Y-%m-%d %H:%M");
  flow.finish("Dose comparison: " + fileName(rep.evaluated->file) + " (B) against " +
              fileName(rep.reference->file) + " (A), " + created);
  doc.setInfo({"Dose comparison report: " + fileName(rep.evaluated->file) + " against " +
                   fileName(rep.reference->file),
               f("gamma %g %% / %g mm %s, pass rate %.2f %%", c.dosePercent, c.distanceMm,
                 c.local ? "local" : "global", r.gammaStats.passRatePercent),
               stamp.program, pdfDate(stamp.unixSeconds)});
  return doc.serialize();
}

}  // namespace penumbra::cli
