#include "compare_pdf_figures.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/format.hpp"
#include "report/compare_colours.hpp"

namespace penumbra::cli {

namespace {

using namespace io::pdf;

constexpr int kBars = 40;  // as the GUI's histogram (gui/compare/gamma_histogram.hpp)

Colour colour(const io::Rgb& c) { return {c[0], c[1], c[2]}; }

/// A round axis maximum at or above `v` (1, 2 or 5 times a power of ten) and its tick step.
std::pair<double, double> niceAxis(double v) {
  v = std::max(v, 1e-9);
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * p >= v) return {m * p, m == 2.0 ? p / 2 : m * p / 5};  // 4 or 5 intervals
  return {10 * p, 2 * p};
}

/// One slice of the gamma map: RGB pixels (rows from the top) and its size in mm.
struct SliceImage {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
  double widthMm = 0, heightMm = 0;
  std::string caption, detail;
  std::array<const char*, 4> sides{};  ///< left, right, top, bottom orientation letters
};

std::uint8_t byte(double v) { return std::uint8_t(std::lround(std::clamp(v, 0.0, 1.0) * 255)); }

}  // namespace

void drawGammaHistogram(ReportFlow& flow, const compare::CompareResult& r, double cap) {
  const compare::GammaStatistics& s = r.gammaStats;
  const int fine = int(s.histogram.size());
  if (s.evaluatedPoints <= 0 || fine == 0 || !(cap > 0)) {
    flow.paragraph("No point was evaluated: no histogram.", Font::Helvetica, 9, kTextGrey);
    return;
  }
  // Fine bin f covers [f, f + 1) x binWidth; its points pass when the bin lies at or below 1,
  // which splits the bar that holds 1 into a passing and a failing part (as in the GUI).
  std::vector<double> pass(kBars, 0), fail(kBars, 0);
  const double w = s.binWidth > 0 ? s.binWidth : cap / fine;
  for (int f = 0; f < fine; ++f) {
    const int bar = std::min(kBars - 1, int(double(f) * kBars / fine));
    const bool passes = (f + 1) * w <= 1.0 + 1e-9;
    (passes ? pass : fail)[std::size_t(bar)] +=
        100.0 * double(s.histogram[std::size_t(f)]) / double(s.evaluatedPoints);
  }
  double top = 0;
  for (int i = 0; i < kBars; ++i) top = std::max(top, pass[std::size_t(i)] + fail[std::size_t(i)]);
  // Plain variables, not a structured binding: the lambda below captures yMax (clang 14, the
  // sanitizer build's compiler, does not capture bindings).
  const std::pair<double, double> axis = niceAxis(top * 1.05);
  const double yMax = axis.first, yStep = axis.second;

  const double height = 150;
  const double boxTop = flow.block(height);
  Page& page = flow.page();
  const double x0 = flow.left() + 40, x1 = flow.right() - 8;
  const double y0 = boxTop - height + 28, y1 = boxTop - 16;  // plot area, PDF coordinates
  auto X = [&](double g) { return x0 + (x1 - x0) * g / cap; };
  auto Y = [&](double pct) { return y0 + (y1 - y0) * pct / yMax; };
  for (double t = 0; t <= yMax * (1 + 1e-9); t += yStep) {  // grid lines and y labels
    page.line(x0, Y(t), x1, Y(t), 0.3, t == 0 ? kRuleGrey : Colour{0.85, 0.85, 0.85});
    const std::string label = formatG(t);
    page.text(x0 - 4 - textWidth(Font::Helvetica, 7.5, label), Y(t) - 2.5, Font::Helvetica, 7.5,
              label, kTextGrey);
  }
  page.text(flow.left(), y1 + 6, Font::Helvetica, 7.5, "% of evaluated points", kTextGrey);
  const Colour passColour = colour(io::lerpRgb(io::kGammaPassLow, io::kGammaPassHigh, 0.6));
  const Colour failColour = colour(io::kGammaFailLow);
  const double bw = (x1 - x0) / kBars;
  for (int i = 0; i < kBars; ++i) {
    const double p = pass[std::size_t(i)], f = fail[std::size_t(i)];
    const double bx = x0 + i * bw + 0.4;
    if (p > 0) page.fillRect(bx, Y(0), bw - 0.8, Y(p) - Y(0), passColour);
    if (f > 0) page.fillRect(bx, Y(p), bw - 0.8, Y(p + f) - Y(p), failColour);
  }
  const double tick = cap <= 4 ? 0.5 : 1.0;
  for (double g = 0; g <= cap + 1e-9; g += tick) {  // x axis
    page.line(X(g), y0, X(g), y0 - 3, 0.5, kRuleGrey);
    const std::string label = formatNumber("%.1f", g);
    page.text(X(g) - textWidth(Font::Helvetica, 7.5, label) / 2, y0 - 11, Font::Helvetica, 7.5,
              label, kTextGrey);
  }
  page.text((x0 + x1) / 2 - 12, y0 - 22, Font::Helvetica, 8, "gamma", kTextGrey);
  if (cap > 1) {
    page.line(X(1), y0, X(1), y1, 0.9, {0, 0, 0}, 3);
    page.text(X(1) + 3, y1 - 8, Font::Helvetica, 7.5, "gamma = 1");
  }
  // Legend, top right.
  double lx = x1 - 150;
  for (const auto& [c, label] :
       {std::pair{passColour, "pass (gamma <= 1)"}, std::pair{failColour, "fail (gamma > 1)"}}) {
    page.fillRect(lx, y1 + 5, 8, 8, c);
    page.text(lx + 11, y1 + 6, Font::Helvetica, 7.5, label);
    lx += 78;
  }
}

void drawGammaSlices(Document& doc, ReportFlow& flow, const compare::CompareResult& r,
                     const Volume<float>& reference, const compare::GammaCriteria& criteria) {
  const Grid& g = r.gamma.grid;
  int lo[3] = {g.dims[0], g.dims[1], g.dims[2]}, hi[3] = {-1, -1, -1};
  for (int k = 0; k < g.dims[2]; ++k)
    for (int j = 0; j < g.dims[1]; ++j)
      for (int i = 0; i < g.dims[0]; ++i)
        if (std::isfinite(r.gamma.at(i, j, k))) {
          const int c[3] = {i, j, k};
          for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], c[a]), hi[a] = std::max(hi[a], c[a]);
        }
  if (hi[0] < 0 || reference.grid.dims != g.dims) {
    flow.paragraph("No point was evaluated: no gamma map.", Font::Helvetica, 9, kTextGrey);
    return;
  }
  const int centre[3] = {(lo[0] + hi[0]) / 2, (lo[1] + hi[1]) / 2, (lo[2] + hi[2]) / 2};
  const double cap = std::max(criteria.gammaCap, 1.0 + 1e-3);
  const double cutoffGy = criteria.cutoffPercent / 100.0 * r.normalisationGy;
  auto pixel = [&](int i, int j, int k, std::uint8_t* out) {
    const float v = r.gamma.at(i, j, k);
    io::Rgb c;
    if (std::isfinite(v)) {
      c = io::gammaColour(std::min(double(v), cap), cap);
    } else {  // not evaluated: light below the cut-off, a darker grey above it (outside B)
      const double a = reference.at(i, j, k);
      const double level =
          a >= cutoffGy && cutoffGy > 0
              ? 0.62
              : 1.0 - 0.2 * std::clamp(cutoffGy > 0 ? a / cutoffGy : 0.0, 0.0, 1.0);
      c = {level, level, level};
    }
    out[0] = byte(c[0]), out[1] = byte(c[1]), out[2] = byte(c[2]);
  };
  // Planes: (normal axis, horizontal axis, vertical axis, vertical flipped so that superior is up).
  const bool named = g.isAxisAligned();
  struct Plane {
    int normal, u, v;
    bool flipV;
    const char *name, *axis;
    std::array<const char*, 4> sides;
  };
  const Plane planes[3] = {{2, 0, 1, false, "Axial", "z", {"R", "L", "A", "P"}},
                           {1, 0, 2, true, "Coronal", "y", {"R", "L", "S", "I"}},
                           {0, 1, 2, true, "Sagittal", "x", {"A", "P", "S", "I"}}};
  const double spacing[3] = {g.spacing.x, g.spacing.y, g.spacing.z};
  std::vector<SliceImage> slices;
  for (const Plane& p : planes) {
    SliceImage s;
    s.width = g.dims[p.u];
    s.height = g.dims[p.v];
    s.widthMm = s.width * spacing[p.u];
    s.heightMm = s.height * spacing[p.v];
    s.rgb.resize(std::size_t(s.width) * std::size_t(s.height) * 3);
    for (int row = 0; row < s.height; ++row)
      for (int col = 0; col < s.width; ++col) {
        int ijk[3];
        ijk[p.normal] = centre[p.normal];
        ijk[p.u] = col;
        ijk[p.v] = p.flipV ? s.height - 1 - row : row;
        pixel(ijk[0], ijk[1], ijk[2], &s.rgb[(std::size_t(row) * std::size_t(s.width) + col) * 3]);
      }
    Vec3 index{double(centre[0]), double(centre[1]), double(centre[2])};
    const Vec3 world = g.indexToWorld(index);
    const double at[3] = {world.x, world.y, world.z};
    char b[96];
    if (named) {
      std::snprintf(b, sizeof b, "%s, %s = %.1f mm", p.name, p.axis, at[p.normal]);
      s.sides = p.sides;
    } else {  // a rotated grid: name the index planes, not the patient's
      std::snprintf(b, sizeof b, "index plane %c = %d", "ijk"[p.normal], centre[p.normal]);
      s.sides = {"", "", "", ""};
    }
    s.caption = b;
    std::snprintf(b, sizeof b, "slice %d of %d", centre[p.normal] + 1, g.dims[p.normal]);
    s.detail = b;
    slices.push_back(std::move(s));
  }
  // One mm scale for the three, as large as fits three across beside the colour bar.
  const double gap = 16, barColumn = 62, maxHeight = 190;
  const double boxWidth = (flow.width() - barColumn - 2 * gap) / 3;
  double scale = 1e9, tallest = 0;
  for (const SliceImage& s : slices)
    scale = std::min({scale, boxWidth / s.widthMm, maxHeight / s.heightMm});
  for (const SliceImage& s : slices) tallest = std::max(tallest, s.heightMm * scale);
  const double top = flow.block(tallest + 50) - 10;
  Page& page = flow.page();
  for (std::size_t n = 0; n < slices.size(); ++n) {
    const SliceImage& s = slices[n];
    const double w = s.widthMm * scale, h = s.heightMm * scale;
    const double x = flow.left() + double(n) * (boxWidth + gap) + (boxWidth - w) / 2;
    const double y = top - h;
    page.image(doc.addImage(s.width, s.height, s.rgb), x, y, w, h);
    page.strokeRect(x, y, w, h, 0.4, kRuleGrey);
    // Orientation letters outside the frame, where no colour of the map can hide them.
    const double ls = 6.5;
    auto centred = [&](const char* t) { return textWidth(Font::HelveticaBold, ls, t) / 2; };
    page.text(x - 2 - 2 * centred(s.sides[0]), y + h / 2 - 2, Font::HelveticaBold, ls, s.sides[0],
              kTextGrey);
    page.text(x + w + 2, y + h / 2 - 2, Font::HelveticaBold, ls, s.sides[1], kTextGrey);
    page.text(x + w / 2 - centred(s.sides[2]), y + h + 2, Font::HelveticaBold, ls, s.sides[2],
              kTextGrey);
    page.text(x + w / 2 - centred(s.sides[3]), y - ls - 1, Font::HelveticaBold, ls, s.sides[3],
              kTextGrey);
    const double cx = flow.left() + double(n) * (boxWidth + gap) + boxWidth / 2;
    page.text(cx - textWidth(Font::HelveticaBold, 8, s.caption) / 2, top - tallest - 20,
              Font::HelveticaBold, 8, s.caption);
    page.text(cx - textWidth(Font::Helvetica, 7.5, s.detail) / 2, top - tallest - 30,
              Font::Helvetica, 7.5, s.detail, kTextGrey);
  }
  // Colour bar: the same map over [0, cap], top = cap; labels at 0, 1 and the cap.
  constexpr int kBarRows = 200;
  std::vector<std::uint8_t> bar(kBarRows * 3);
  for (int row = 0; row < kBarRows; ++row) {
    const io::Rgb c = io::gammaColour(cap * (1.0 - (row + 0.5) / kBarRows), cap);
    bar[std::size_t(row) * 3] = byte(c[0]), bar[std::size_t(row) * 3 + 1] = byte(c[1]);
    bar[std::size_t(row) * 3 + 2] = byte(c[2]);
  }
  // Below its title, so that the title and the cap's label do not meet.
  const double bx = flow.right() - barColumn + 14, bh = std::clamp(tallest - 12, 40.0, 150.0);
  const double by = top - 12 - bh;
  page.image(doc.addImage(1, kBarRows, bar), bx, by, 10, bh);
  page.strokeRect(bx, by, 10, bh, 0.4, kRuleGrey);
  auto label = [&](double gamma, const std::string& text, Font font) {
    const double y = by + bh * gamma / cap;
    page.line(bx + 10, y, bx + 13, y, 0.5, kRuleGrey);
    page.text(bx + 15, y - 2.5, font, 7.5, text);
  };
  label(0, "0", Font::Helvetica);
  label(1, "1", Font::HelveticaBold);
  label(cap, formatG(cap) + " (cap)", Font::Helvetica);
  page.text(bx + 15, by + bh * 0.5 / cap - 2.5, Font::Helvetica, 6.5, "pass", kTextGrey);
  page.text(bx + 15, by + bh * (1 + cap) / (2 * cap) - 2.5, Font::Helvetica, 6.5, "fail",
            kTextGrey);
  page.text(bx - 4, top - 2, Font::Helvetica, 7.5, "gamma", kTextGrey);
}

}  // namespace penumbra::cli
