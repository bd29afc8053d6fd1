// .mci reader: MCML's input format. Every datum group sits on its own line; '#' starts a
// comment; blank lines are skipped. Layout (mcmlio.c ReadParm):
//   file version (1.0)          number of runs
//   per run: output file name and 'A'/'B'; photons [time]; dz dr; nz nr na; number of layers;
//            n above; one line "n mua mus g d" per layer; n below.
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "core/format.hpp"
#include "mcml/mcml_files.hpp"

namespace penumbra::io {

namespace {

struct Line {
  int number;
  std::vector<std::string> tokens;
};

class LineReader {
public:
  LineReader(const std::string& text, std::string source) : source_(std::move(source)) {
    std::istringstream in(text);
    std::string raw;
    int n = 0;
    while (std::getline(in, raw)) {
      ++n;
      if (auto hash = raw.find('#'); hash != std::string::npos) raw.erase(hash);
      std::istringstream ls(raw);
      Line l{n, {}};
      for (std::string t; ls >> t;) l.tokens.push_back(t);
      if (!l.tokens.empty()) lines_.push_back(std::move(l));
    }
    lastLine_ = n;
  }

  const Line& next(const char* what) {
    if (pos_ >= lines_.size()) fail(lastLine_, std::string("unexpected end of file, expected ") + what);
    return lines_[pos_++];
  }
  bool atEnd() const { return pos_ >= lines_.size(); }

  [[noreturn]] void fail(int line, const std::string& msg) const {
    PENUMBRA_THROW(Format, source_ + ":" + std::to_string(line) + ": " + msg);
  }

  /// The whole token as a finite number ("inf" and "nan" are refused: d = inf ran).
  double number(const Line& l, std::size_t i, const char* what) const {
    if (i >= l.tokens.size()) fail(l.number, std::string("missing ") + what);
    double v = 0;
    try {
      std::size_t used = 0;
      v = std::stod(l.tokens[i], &used);
      if (used != l.tokens[i].size()) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      fail(l.number, std::string("expected a number for ") + what + ", found '" + l.tokens[i] + "'");
    }
    if (!std::isfinite(v))
      fail(l.number,
           std::string("expected a finite number for ") + what + ", found '" + l.tokens[i] + "'");
    return v;
  }
  /// The token as a whole number in [lo, hi], checked in double before any conversion (nz =
  /// 4294967297 used to wrap to 1 through int). "1e6" is accepted, as MCML files write it.
  std::int64_t count(const Line& l, std::size_t i, const char* what, std::int64_t lo,
                     std::int64_t hi) const {
    const double v = number(l, i, what);
    if (v != std::floor(v))
      fail(l.number, std::string(what) + " must be an integer, found '" + l.tokens[i] + "'");
    // hi + 1 is exact in double for the limits used here (2^31, 2^63).
    if (v < double(lo) || v >= double(hi) + 1.0) {
      char shown[64];
      if (std::fabs(v) < 9e15)
        std::snprintf(shown, sizeof shown, "%.0f", v);
      else
        std::snprintf(shown, sizeof shown, "%g", v);
      fail(l.number, std::string(what) + " " + shown + " is out of range (" + std::to_string(lo) +
                         " to " + std::to_string(hi) + ")");
    }
    return std::int64_t(v);
  }

private:
  std::string source_;
  std::vector<Line> lines_;
  std::size_t pos_ = 0;
  int lastLine_ = 0;
};

}  // namespace

std::vector<MciRun> parseMci(const std::string& text, const std::string& source) {
  LineReader r(text, source);
  const Line& version = r.next("the file version");
  (void)r.number(version, 0, "the file version");
  const Line& nRunsLine = r.next("the number of runs");
  const std::int64_t nRuns = r.count(nRunsLine, 0, "the number of runs", 1, INT_MAX);
  std::vector<MciRun> runs;
  for (std::int64_t k = 0; k < nRuns; ++k) {
    MciRun run;
    const Line& out = r.next("an output file name");
    run.outputFile = out.tokens[0];
    run.line = out.number;
    // Output names are relative to the .mci's folder and must stay in it: "/etc/x" or
    // "../x" used to overwrite files elsewhere without notice.
    const std::filesystem::path name(run.outputFile);
    bool escapes = name.is_absolute();
    for (const auto& part : name) escapes = escapes || part == "..";
    if (escapes)
      r.fail(out.number, "output file name '" + run.outputFile +
                             "' must stay in the .mci's folder (no absolute path, no '..')");
    if (out.tokens.size() > 1) {
      const std::string& f = out.tokens[1];
      if (f != "A" && f != "a" && f != "B" && f != "b")
        r.fail(out.number, "output format must be A or B, found '" + f + "'");
      run.outputFormat = char(std::toupper(f[0]));
    }
    const Line& ph = r.next("the number of photons");
    run.config.packets = std::uint64_t(r.count(ph, 0, "the number of photons", 1, INT64_MAX));
    const Line& d = r.next("dz and dr");
    run.config.dz = r.number(d, 0, "dz");
    run.config.dr = r.number(d, 1, "dr");
    if (run.config.dz <= 0 || run.config.dr <= 0) r.fail(d.number, "dz and dr must be positive");
    const Line& n = r.next("nz, nr and na");
    // Bins: int's range here; whether the grid fits in memory is the engine's check (runMcml
    // refuses it with the sizes before allocating).
    run.config.nz = int(r.count(n, 0, "nz", 1, INT_MAX));
    run.config.nr = int(r.count(n, 1, "nr", 1, INT_MAX));
    run.config.na = int(r.count(n, 2, "na", 1, INT_MAX));
    const Line& nl = r.next("the number of layers");
    const std::int64_t layers = r.count(nl, 0, "the number of layers", 1, mcml::kMaxLayers);
    const Line& above = r.next("n for the medium above");
    run.medium.nAbove = r.number(above, 0, "n above");
    if (run.medium.nAbove < 1)
      r.fail(above.number, "refractive index above " + formatG(run.medium.nAbove) + " is below 1");
    for (std::int64_t i = 0; i < layers; ++i) {
      const Line& l = r.next("a layer line 'n mua mus g d'");
      mcml::Layer layer;
      layer.n = r.number(l, 0, "n");
      layer.mua = r.number(l, 1, "mua");
      layer.mus = r.number(l, 2, "mus");
      layer.g = r.number(l, 3, "g");
      layer.d = r.number(l, 4, "d");
      const std::string at = "layer " + std::to_string(i + 1) + ": ";
      if (layer.n < 1)
        r.fail(l.number, at + "refractive index " + formatG(layer.n) + " is below 1");
      if (layer.mua < 0 || layer.mus < 0)
        r.fail(l.number, at + "mua and mus must be >= 0 (found " + formatG(layer.mua) + ", " +
                             formatG(layer.mus) + ")");
      if (layer.g <= -1 || layer.g >= 1)
        r.fail(l.number, at + "g " + formatG(layer.g) + " is outside (-1, 1)");
      if (layer.d <= 0)
        r.fail(l.number, at + "thickness " + formatG(layer.d) + " cm must be positive");
      run.medium.layers.push_back(layer);
    }
    const Line& below = r.next("n for the medium below");
    run.medium.nBelow = r.number(below, 0, "n below");
    if (run.medium.nBelow < 1)
      r.fail(below.number, "refractive index below " + formatG(run.medium.nBelow) + " is below 1");
    runs.push_back(std::move(run));
  }
  return runs;
}

std::vector<MciRun> readMciFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) PENUMBRA_THROW(Io, "cannot open '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parseMci(ss.str(), path);
}

std::string formatMci(const std::vector<MciRun>& runs) {
  std::ostringstream o;
  o << "1.0\t\t\t# file version\n" << runs.size() << "\t\t\t# number of runs\n";
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const MciRun& r = runs[k];
    o << "\n#### SPECIFY DATA FOR RUN " << k + 1 << "\n#InParm\t\t\t# Input parameters. cm is used.\n"
      << r.outputFile << "\t" << r.outputFormat << "\t\t# output file name, ASCII.\n"
      << r.config.packets << "\t\t\t# No. of photons\n"
      << r.config.dz << "\t" << r.config.dr << "\t\t# dz, dr [cm]\n"
      << r.config.nz << "\t" << r.config.nr << "\t" << r.config.na << "\t# No. of dz, dr, da.\n\n"
      << r.medium.layers.size() << "\t\t\t# Number of layers\n"
      << "#n\tmua\tmus\tg\td\t# One line for each layer\n"
      << r.medium.nAbove << "\t\t\t# n for medium above\n";
    for (std::size_t i = 0; i < r.medium.layers.size(); ++i) {
      const mcml::Layer& l = r.medium.layers[i];
      o << l.n << "\t" << l.mua << "\t" << l.mus << "\t" << l.g << "\t" << l.d << "\t# layer "
        << i + 1 << "\n";
    }
    o << r.medium.nBelow << "\t\t\t# n for medium below\n";
  }
  return o.str();
}

}  // namespace penumbra::io
