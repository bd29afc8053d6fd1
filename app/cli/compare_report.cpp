#include "compare_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>

namespace penumbra::cli {

namespace {

using namespace penumbra::compare;

/// printf into a growing string.
class Text {
 public:
  void line(const char* format, ...) __attribute__((format(printf, 2, 3))) {
    va_list args, again;
    va_start(args, format);
    va_copy(again, args);
    const int n = std::vsnprintf(nullptr, 0, format, args);
    va_end(args);
    std::string buffer(std::size_t(std::max(n, 0)) + 1, '\0');
    std::vsnprintf(buffer.data(), buffer.size(), format, again);
    va_end(again);
    buffer.back() = '\n';  // in place of the terminating zero
    text_ += buffer;
  }
  std::string str() const { return text_; }

 private:
  std::string text_;
};

void doseLines(Text& t, const char* role, const DoseInput& in, double maxGy) {
  const Grid& g = in.dose->grid();
  t.line("%s: %s (%s)", role, in.file.c_str(), in.kind.c_str());
  t.line(
      "  %d x %d x %d voxels of %g x %g x %g mm, first voxel centre (%g, %g, %g) mm, "
      "max %.3f Gy",
      g.dims[0], g.dims[1], g.dims[2], g.spacing.x, g.spacing.y, g.spacing.z, g.origin.x,
      g.origin.y, g.origin.z, maxGy);
}

void criteriaLines(Text& t, const GammaCriteria& c, const CompareResult& r) {
  const double searchMm = searchRadiusMm(c);
  t.line(
      "criteria: %g %% / %g mm %s, normalisation %s %.3f Gy, cut-off %g %% (%.3f Gy), "
      "search radius %g mm, gamma cap %g",
      c.dosePercent, c.distanceMm, c.local ? "local" : "global",
      c.normalisation == Normalisation::ReferenceMax ? "to the reference maximum" : "to",
      r.normalisationGy, c.cutoffPercent, c.cutoffPercent / 100 * r.normalisationGy, searchMm,
      c.gammaCap);
}

void gammaLines(Text& t, const CompareResult& r) {
  const GammaStatistics& s = r.gammaStats;
  t.line("pass rate: %.2f %% (%lld of %lld evaluated points with gamma <= 1)", s.passRatePercent,
         (long long)s.passedPoints, (long long)s.evaluatedPoints);
  auto p = [&](double v) { return reportedPercentile(v, s); };
  t.line("gamma: mean %.3f, p50 %.3f, p90 %.3f, p95 %.3f, p99 %.3f, max %.3f", s.mean, p(s.p50),
         p(s.p90), p(s.p95), p(s.p99), s.max);
  t.line(
      "points: %lld reference voxels: %lld evaluated, %lld below the cut-off, %lld outside "
      "the mask, %lld outside the evaluated dose",
      (long long)r.referencePoints, (long long)s.evaluatedPoints, (long long)r.belowCutoff,
      (long long)r.outsideMask, (long long)r.outsideEvaluated);
  const DifferenceStatistics& d = r.differenceStats;
  const double toPercent = r.normalisationGy > 0 ? 100 / r.normalisationGy : 0;
  t.line(
      "difference A - B over the evaluated points: mean %.3f Gy (%.2f %%), SD %.3f Gy "
      "(%.2f %%), min %.3f Gy (%.2f %%), max %.3f Gy (%.2f %%)",
      d.meanGy, d.meanPercent, d.sdGy, d.sdGy * toPercent, d.minGy, d.minPercent, d.maxGy,
      d.maxPercent);
}

std::string cell(double v, const char* format = "%8.3f") {
  char b[32];
  if (std::isnan(v)) return "       -";
  std::snprintf(b, sizeof b, format, v);
  return b;
}

int nameWidth(const CompareReport& rep) {
  std::size_t w = 9;
  for (const auto& s : rep.result->structures) w = std::max(w, s.name.size());
  for (const auto& n : rep.emptyMasks) w = std::max(w, n.size());
  for (const auto& d : rep.dvhs) w = std::max(w, d.name.size());
  return int(std::min<std::size_t>(w, 40));
}

void structureLines(Text& t, const CompareReport& rep) {
  const int w = nameWidth(rep);
  t.line("per structure (%s; masks on the reference grid, nearest contour plane per slice):",
         rep.structureSetFile.c_str());
  t.line("  %-*s %9s %8s %10s", w, "structure", "points", "pass %", "mean gamma");
  for (const StructurePassRate& s : rep.result->structures)
    t.line("  %-*s %9lld %s   %s", w, s.name.c_str(), (long long)s.evaluatedPoints,
           cell(s.passRatePercent).c_str(),
           cell(s.evaluatedPoints > 0 ? s.meanGamma : NAN, "%8.3f").c_str());
  for (const std::string& n : rep.emptyMasks)
    t.line("  %-*s %9s        -          - (no voxel of the reference grid inside)", w, n.c_str(),
           "0");

  t.line(
      "DVH differences (contours on each dose's own grid; D in Gy; V95 %% and V107 %%: %% of "
      "the volume receiving 95 %% and 107 %% of %.3f Gy):",
      rep.result->normalisationGy);
  t.line("  %-*s %-4s %8s %8s %8s %8s %8s %8s %8s", w, "structure", "dose", "Dmean", "D98", "D95",
         "D50", "D2", "V95 %", "V107 %");
  auto values = [](const dvh::DvhStatistics& s) {
    return std::vector<double>{s.meanGy, s.d98Gy,      s.d95Gy,      s.d50Gy,
                               s.d2Gy,   s.v95Percent, s.v107Percent};
  };
  for (const StructureDvhPair& p : rep.dvhs) {
    if (!p.error.empty()) {
      t.line("  %-*s no DVH: %s", w, p.name.c_str(), p.error.c_str());
      continue;
    }
    const std::vector<double> a = values(p.a.stats), b = values(p.b.stats);
    std::string ra, rb, rd;
    for (std::size_t k = 0; k < a.size(); ++k) {
      ra.append(1, ' ').append(cell(a[k]));
      rb.append(1, ' ').append(cell(b[k]));
      rd.append(1, ' ').append(cell(a[k] - b[k]));
    }
    t.line("  %-*s %-4s%s", w, p.name.c_str(), "A", ra.c_str());
    t.line("  %-*s %-4s%s", w, "", "B", rb.c_str());
    t.line("  %-*s %-4s%s", w, "", "A-B", rd.c_str());
  }
  t.line("DVHs of %zu structure(s) on both doses in %.2f s", rep.dvhs.size(), rep.dvhSeconds);
}

}  // namespace

double searchRadiusMm(const GammaCriteria& c) {
  return c.maxSearchMm > 0 ? std::min(c.maxSearchMm, c.gammaCap * c.distanceMm)
                           : c.gammaCap * c.distanceMm;
}

double reportedPercentile(double percentile, const GammaStatistics& s) {
  return std::min(percentile, s.max);
}

std::string formatCompareReport(const CompareReport& rep) {
  Text t;
  const CompareResult& r = *rep.result;
  doseLines(t, "reference A", *rep.reference, r.referenceMaxGy);
  doseLines(t, "evaluated B", *rep.evaluated, r.evaluatedMaxGy);
  criteriaLines(t, rep.request->criteria, r);
  gammaLines(t, r);
  if (!rep.structureSetFile.empty()) structureLines(t, rep);
  for (const std::string& n : rep.notes) t.line("note: %s", n.c_str());
  t.line("backend %s on %s: %.1f ms", toString(r.backend), r.device.c_str(), r.elapsedMs);
  return t.str();
}

}  // namespace penumbra::cli
