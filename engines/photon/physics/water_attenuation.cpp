// NIST (Hubbell-Seltzer) mu/rho and mu_en/rho of water, log-log interpolation.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "photon/physics/photon_beam_model.hpp"

namespace penumbra::photon {

namespace {

/// Linear interpolation in the log-log table; the caller has checked the range.
double interpLogLog(const std::vector<double>& logE, const std::vector<double>& logY, double e) {
  const double x = std::log(e);
  auto it = std::upper_bound(logE.begin(), logE.end(), x);
  std::size_t hi = static_cast<std::size_t>(it - logE.begin());
  if (hi == 0) hi = 1;
  if (hi >= logE.size()) hi = logE.size() - 1;
  const std::size_t lo = hi - 1;
  const double t = (x - logE[lo]) / (logE[hi] - logE[lo]);
  return std::exp(logY[lo] + t * (logY[hi] - logY[lo]));
}

}  // namespace

WaterAttenuation WaterAttenuation::load(const std::string& csvPath) {
  std::ifstream in(csvPath);
  if (!in) PENUMBRA_THROW(Io, "cannot open NIST attenuation table '" + csvPath + "'");
  WaterAttenuation w;
  std::string line;
  int lineNo = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    if (!header) {  // "E_MeV,mu_rho_cm2_per_g,mu_en_rho_cm2_per_g"
      header = true;
      if (line.find("E_MeV") != std::string::npos) continue;
    }
    std::stringstream ss(line);
    double v[3];
    int n = 0;
    for (std::string f; std::getline(ss, f, ',');) {
      char* end = nullptr;
      const double x = std::strtod(f.c_str(), &end);
      while (end && *end && std::isspace(static_cast<unsigned char>(*end))) ++end;
      if (end == f.c_str() || *end != '\0' || n >= 3 || !(x > 0))
        PENUMBRA_THROW(Format, csvPath + ":" + std::to_string(lineNo) +
                                   ": expected 3 positive numbers 'E_MeV,mu_rho,mu_en_rho', got '" +
                                   line + "'");
      v[n++] = x;
    }
    if (n != 3)
      PENUMBRA_THROW(Format, csvPath + ":" + std::to_string(lineNo) +
                                 ": expected 3 numbers 'E_MeV,mu_rho,mu_en_rho', got '" + line +
                                 "'");
    if (!w.logE_.empty() && !(std::log(v[0]) > w.logE_.back()))
      PENUMBRA_THROW(Format,
                     csvPath + ":" + std::to_string(lineNo) + ": energies must increase strictly");
    w.logE_.push_back(std::log(v[0]));
    w.logMu_.push_back(std::log(v[1]));
    w.logMuEn_.push_back(std::log(v[2]));
  }
  if (w.logE_.size() < 2)
    PENUMBRA_THROW(Format, csvPath + ": fewer than 2 energies in the attenuation table");
  return w;
}

double WaterAttenuation::muRho(double energyMeV) const {
  PENUMBRA_REQUIRE(!logE_.empty(), InvalidArgument, "water attenuation table not loaded");
  // A relative slack of 1e-12 lets the exact table end points through despite log/exp rounding.
  PENUMBRA_REQUIRE(energyMeV > 0 && std::log(energyMeV) >= logE_.front() - 1e-12 &&
                       std::log(energyMeV) <= logE_.back() + 1e-12,
                   InvalidArgument,
                   "photon energy " + std::to_string(energyMeV) +
                       " MeV outside the water attenuation table (" +
                       std::to_string(std::exp(logE_.front())) + "-" +
                       std::to_string(std::exp(logE_.back())) + " MeV)");
  return interpLogLog(logE_, logMu_, energyMeV);
}

double WaterAttenuation::muEnRho(double energyMeV) const {
  muRho(energyMeV);  // same range check
  return interpLogLog(logE_, logMuEn_, energyMeV);
}

}  // namespace penumbra::photon
