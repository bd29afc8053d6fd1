// EGSnrc .spectrum reader, mean energy and rebinning onto the kernel energies.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "photon/physics/photon_beam_model.hpp"

namespace penumbra::photon {

namespace {

/// Splits a line on commas, blanks and tabs (EGSnrc files use either) and parses every token as a
/// number. False if a token is not a number.
bool parseNumbers(std::string line, std::vector<double>& out) {
  out.clear();
  std::replace(line.begin(), line.end(), ',', ' ');
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) break;
    std::size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    const std::string tok = line.substr(i, j - i);
    char* end = nullptr;
    const double v = std::strtod(tok.c_str(), &end);
    if (end != tok.c_str() + tok.size() || !std::isfinite(v)) return false;
    out.push_back(v);
    i = j;
  }
  return true;
}

[[noreturn]] void formatError(const std::string& path, int lineNo, const std::string& what) {
  PENUMBRA_THROW(Format, path + ":" + std::to_string(lineNo) + ": " + what);
}

}  // namespace

double Spectrum::meanEnergyMeV() const {
  double s = 0, w = 0;
  for (std::size_t i = 0; i < energyMeV.size() && i < fluence.size(); ++i) {
    s += fluence[i] * energyMeV[i];
    w += fluence[i];
  }
  return w > 0 ? s / w : 0.0;
}

Spectrum readEgsSpectrum(const std::string& path) {
  std::ifstream in(path);
  if (!in) PENUMBRA_THROW(Io, "cannot open spectrum file '" + path + "'");
  std::string line;
  int lineNo = 0;
  auto nextLine = [&](const char* what) {
    if (!std::getline(in, line))
      formatError(path, lineNo + 1, std::string("unexpected end of file, expected ") + what);
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();  // CERR files have CRLF
  };

  Spectrum s;
  nextLine("a title line");
  s.name = line;
  const auto first = s.name.find_first_not_of(" \t");
  s.name = first == std::string::npos ? std::string() : s.name.substr(first);

  std::vector<double> v;
  nextLine("'NBINS, EMIN, MODE'");
  if (!parseNumbers(line, v) || v.size() != 3)
    formatError(path, lineNo, "expected 'NBINS, EMIN, MODE', got '" + line + "'");
  const double nbinsD = v[0], emin = v[1], modeD = v[2];
  if (nbinsD < 1 || nbinsD > 100000 || nbinsD != std::floor(nbinsD))
    formatError(path, lineNo, "NBINS must be a positive integer, got '" + line + "'");
  if (emin < 0) formatError(path, lineNo, "EMIN must be >= 0, got '" + line + "'");
  if (modeD != 0 && modeD != 1)
    formatError(path, lineNo,
                "MODE must be 0 (counts per bin) or 1 (counts per MeV), got '" + line + "'");
  const int nbins = static_cast<int>(nbinsD);
  const bool perMeV = modeD == 1;

  double lower = emin, total = 0;
  for (int i = 0; i < nbins; ++i) {
    nextLine("'E_upper, value'");
    if (!parseNumbers(line, v) || v.size() != 2)
      formatError(path, lineNo, "expected 'E_upper, value', got '" + line + "'");
    const double upper = v[0], value = v[1];
    // Sheikh-Bagheri and Rogers' Elekta and Siemens files (CERR) give EMIN equal to the first
    // upper edge in per-bin mode: that first bin is a single energy, not an empty interval.
    const bool pointBin = i == 0 && !perMeV && upper == lower;
    if (!(upper > lower) && !pointBin)
      formatError(path, lineNo,
                  "bin upper edge " + std::to_string(upper) +
                      " MeV is not above the previous edge " + std::to_string(lower) + " MeV");
    if (value < 0) formatError(path, lineNo, "negative spectrum value '" + line + "'");
    const double perBin = perMeV ? value * (upper - lower) : value;
    s.energyMeV.push_back(0.5 * (lower + upper));
    s.fluence.push_back(perBin);
    total += perBin;
    lower = upper;
  }
  // Anything after the bins must be blank (a longer table than NBINS says is an error).
  while (std::getline(in, line)) {
    ++lineNo;
    if (line.find_first_not_of(" \t\r") != std::string::npos)
      formatError(path, lineNo, "more bins than NBINS = " + std::to_string(nbins));
  }
  if (!(total > 0)) PENUMBRA_THROW(Format, path + ": spectrum has no positive value");
  for (double& f : s.fluence) f /= total;
  return s;
}

Spectrum rebinOnto(const Spectrum& source, const std::vector<double>& energiesMeV,
                   const WaterAttenuation& water) {
  PENUMBRA_REQUIRE(!energiesMeV.empty(), InvalidArgument, "rebinOnto: no target energies");
  for (std::size_t k = 1; k < energiesMeV.size(); ++k)
    PENUMBRA_REQUIRE(energiesMeV[k] > energiesMeV[k - 1], InvalidArgument,
                     "rebinOnto: target energies must increase strictly");
  PENUMBRA_REQUIRE(source.energyMeV.size() == source.fluence.size(), InvalidArgument,
                   "rebinOnto: spectrum '" + source.name + "' has mismatched sizes");
  Spectrum out;
  out.name = source.name;
  out.energyMeV = energiesMeV;
  out.fluence.assign(energiesMeV.size(), 0.0);
  // Kernel bin edges are the midpoints between neighbouring kernel energies; the first and last
  // bins are open (a source bin below the first midpoint goes to the lowest kernel energy).
  double total = 0;
  for (std::size_t i = 0; i < source.energyMeV.size(); ++i) {
    const double e = source.energyMeV[i];
    std::size_t k = 0;
    while (k + 1 < energiesMeV.size() && e >= 0.5 * (energiesMeV[k] + energiesMeV[k + 1])) ++k;
    out.fluence[k] += source.fluence[i];
    total += source.fluence[i];
  }
  PENUMBRA_REQUIRE(total > 0, InvalidArgument,
                   "rebinOnto: spectrum '" + source.name + "' has no fluence");
  for (double& f : out.fluence) f /= total;
  for (double e : energiesMeV) {
    out.muRho.push_back(water.muRho(e));
    out.muEnRho.push_back(water.muEnRho(e));
  }
  return out;
}

}  // namespace penumbra::photon
