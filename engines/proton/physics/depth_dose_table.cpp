#include "proton/physics/depth_dose_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "core/error.hpp"
#include "proton/physics/csv_table.hpp"

namespace penumbra::proton {

DepthDoseTable::DepthDoseTable(std::vector<double> zCm, std::vector<double> idd, double energyMeV)
    : z_(std::move(zCm)), d_(std::move(idd)), energy_(energyMeV) {
  PENUMBRA_REQUIRE(z_.size() == d_.size() && z_.size() >= 2, InvalidArgument,
                   "depth-dose table needs >= 2 (z, IDD) pairs of equal count");
  for (std::size_t i = 0; i < z_.size(); ++i) {
    PENUMBRA_REQUIRE(std::isfinite(z_[i]) && std::isfinite(d_[i]) && d_[i] >= 0.0, InvalidArgument,
                     "depth-dose table: depths and IDD must be finite, IDD >= 0");
    PENUMBRA_REQUIRE(i == 0 || z_[i] > z_[i - 1], InvalidArgument,
                     "depth-dose table: depths must increase strictly");
  }
}

DepthDoseTable DepthDoseTable::load(const std::string& path) {
  const CsvTable csv = readNumericCsv(path, 2);
  std::vector<double> z, d;
  for (const auto& r : csv.rows) {
    z.push_back(r[0]);
    d.push_back(r[1]);
  }
  double energy = 0.0;
  for (const auto& c : csv.comments) {
    const auto k = c.find("energy_MeV:");
    if (k != std::string::npos) energy = std::atof(c.c_str() + k + 11);
  }
  try {
    return DepthDoseTable(std::move(z), std::move(d), energy);
  } catch (const Error& e) {
    PENUMBRA_THROW(Format, path + ": " + e.message());
  }
}

void DepthDoseTable::save(const std::string& path, const std::string& provenance) const {
  std::ofstream out(path);
  if (!out) PENUMBRA_THROW(Io, "cannot write '" + path + "'");
  if (!provenance.empty()) out << "# " << provenance << "\n";
  if (energy_ > 0.0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", energy_);
    out << "# energy_MeV: " << buf << "\n";
  }
  out << "z_cm,idd_MeV_cm2_per_g\n";
  char buf[96];
  for (std::size_t i = 0; i < z_.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.17g,%.17g\n", z_[i], d_[i]);
    out << buf;
  }
  if (!out) PENUMBRA_THROW(Io, "error writing '" + path + "'");
}

double DepthDoseTable::operator()(double zCm) const {
  if (z_.empty()) return 0.0;
  if (zCm <= z_.front()) return d_.front();
  if (zCm > z_.back()) return 0.0;
  const auto it = std::upper_bound(z_.begin(), z_.end(), zCm);
  const std::size_t i = static_cast<std::size_t>(std::distance(z_.begin(), it));
  if (i >= z_.size()) return d_.back();
  const double t = (zCm - z_[i - 1]) / (z_[i] - z_[i - 1]);
  return d_[i - 1] + t * (d_[i] - d_[i - 1]);
}

DepthDoseTable DepthDoseTable::resample(double dzCm, double zmaxCm) const {
  PENUMBRA_REQUIRE(dzCm > 0.0 && zmaxCm > dzCm, InvalidArgument, "resample: need 0 < dz < zmax");
  const std::size_t n = static_cast<std::size_t>(std::ceil(zmaxCm / dzCm - 1e-9)) + 1;
  std::vector<double> z(n), d(n);
  for (std::size_t i = 0; i < n; ++i) {
    z[i] = static_cast<double>(i) * dzCm;
    d[i] = (*this)(z[i]);
  }
  return DepthDoseTable(std::move(z), std::move(d), energy_);
}

double DepthDoseTable::integral() const {
  double s = 0.0;
  for (std::size_t i = 1; i < z_.size(); ++i) s += 0.5 * (d_[i] + d_[i - 1]) * (z_[i] - z_[i - 1]);
  return s;
}

namespace {
std::size_t argmax(const std::vector<double>& v) {
  return static_cast<std::size_t>(std::distance(v.begin(), std::max_element(v.begin(), v.end())));
}
}  // namespace

double DepthDoseTable::peakDepthCm() const {
  const std::size_t i = argmax(d_);
  if (i == 0 || i + 1 >= d_.size()) return z_[i];
  // Vertex of the parabola through three (possibly unevenly spaced) samples.
  const double x0 = z_[i - 1], x1 = z_[i], x2 = z_[i + 1];
  const double y0 = d_[i - 1], y1 = d_[i], y2 = d_[i + 1];
  const double num = (x1 - x0) * (x1 - x0) * (y1 - y2) - (x1 - x2) * (x1 - x2) * (y1 - y0);
  const double den = (x1 - x0) * (y1 - y2) - (x1 - x2) * (y1 - y0);
  return den != 0.0 ? x1 - 0.5 * num / den : x1;
}

double DepthDoseTable::peakValue() const { return d_.empty() ? 0.0 : d_[argmax(d_)]; }

double DepthDoseTable::distalDepthCm(double fraction) const {
  PENUMBRA_REQUIRE(fraction > 0.0 && fraction < 1.0, InvalidArgument,
                   "distalDepthCm: fraction must lie in (0, 1)");
  const std::size_t ip = argmax(d_);
  const double level = fraction * d_[ip];
  for (std::size_t i = ip + 1; i < d_.size(); ++i) {
    if (d_[i] <= level) {
      const double t = (d_[i - 1] - level) / (d_[i - 1] - d_[i]);
      return z_[i - 1] + t * (z_[i] - z_[i - 1]);
    }
  }
  PENUMBRA_THROW(InvalidArgument,
                 "depth-dose table never falls to the requested fraction "
                 "beyond its peak (table too short?)");
}

// ---- models -------------------------------------------------------------------------------

BortfeldDepthDoseModel::BortfeldDepthDoseModel(const BortfeldParameters& params,
                                               double relativeEnergySpread)
    : params_(params) {
  PENUMBRA_REQUIRE(relativeEnergySpread >= 0.0 && relativeEnergySpread < 0.2, InvalidArgument,
                   "relative energy spread must lie in [0, 0.2)");
  spread_ = [relativeEnergySpread](double e) { return relativeEnergySpread * e; };
}

BortfeldDepthDoseModel::BortfeldDepthDoseModel(const BortfeldParameters& params, SpreadFn spreadMeV)
    : params_(params), spread_(std::move(spreadMeV)) {
  PENUMBRA_REQUIRE(static_cast<bool>(spread_), InvalidArgument, "energy spread callable is empty");
}

BortfeldBraggCurve BortfeldDepthDoseModel::curve(double energyMeV) const {
  return BortfeldBraggCurve(energyMeV, spread_(energyMeV), params_);
}

DepthDoseTable BortfeldDepthDoseModel::tabulate(double energyMeV, double dzCm,
                                                double zmaxCm) const {
  PENUMBRA_REQUIRE(dzCm > 0.0 && zmaxCm > dzCm, InvalidArgument, "tabulate: need 0 < dz < zmax");
  const BortfeldBraggCurve c = curve(energyMeV);
  const std::size_t n = static_cast<std::size_t>(std::ceil(zmaxCm / dzCm - 1e-9)) + 1;
  std::vector<double> z(n), d(n);
  for (std::size_t i = 0; i < n; ++i) {
    z[i] = static_cast<double>(i) * dzCm;
    d[i] = c(z[i]);
  }
  return DepthDoseTable(std::move(z), std::move(d), energyMeV);
}

void TabulatedDepthDoseModel::add(DepthDoseTable table) {
  PENUMBRA_REQUIRE(table.energyMeV() > 0.0, InvalidArgument,
                   "a tabulated depth-dose curve must state its energy (# energy_MeV: ...)");
  const double e = table.energyMeV();
  tables_.insert_or_assign(e, std::move(table));
}

DepthDoseTable TabulatedDepthDoseModel::tabulate(double energyMeV, double dzCm,
                                                 double zmaxCm) const {
  PENUMBRA_REQUIRE(!tables_.empty(), InvalidArgument, "no depth-dose tables loaded");
  const double eLo = tables_.begin()->first, eHi = tables_.rbegin()->first;
  PENUMBRA_REQUIRE(energyMeV >= eLo - 1e-9 && energyMeV <= eHi + 1e-9, InvalidArgument,
                   "energy " + std::to_string(energyMeV) + " MeV outside the tabulated " +
                       std::to_string(eLo) + "-" + std::to_string(eHi) + " MeV");
  auto hi = tables_.lower_bound(energyMeV - 1e-9);
  if (std::fabs(hi->first - energyMeV) <= 1e-9) {
    DepthDoseTable t = hi->second.resample(dzCm, zmaxCm);
    return DepthDoseTable(t.depthsCm(), t.values(), energyMeV);
  }
  auto lo = std::prev(hi);
  const double w = (energyMeV - lo->first) / (hi->first - lo->first);
  const double r1 = lo->second.distalDepthCm(0.8), r2 = hi->second.distalDepthCm(0.8);
  // Where between R1 and R2 the range falls follows the CSDA range relation, not the energy:
  // R(E) is convex, so linear-in-E placement would be ~0.4 mm short between 10 MeV steps.
  const double u =
      (rangeCm(energyMeV) - rangeCm(lo->first)) / (rangeCm(hi->first) - rangeCm(lo->first));
  const double r = (1.0 - u) * r1 + u * r2;
  const std::size_t n = static_cast<std::size_t>(std::ceil(zmaxCm / dzCm - 1e-9)) + 1;
  std::vector<double> z(n), d(n);
  for (std::size_t i = 0; i < n; ++i) {
    z[i] = static_cast<double>(i) * dzCm;
    d[i] = (1.0 - w) * lo->second(z[i] * r1 / r) + w * hi->second(z[i] * r2 / r);
  }
  return DepthDoseTable(std::move(z), std::move(d), energyMeV);
}

}  // namespace penumbra::proton
