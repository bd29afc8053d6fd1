#include "optimise/objective.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/error.hpp"

namespace penumbra::optimise {

const char* toString(TermType t) {
  switch (t) {
    case TermType::Uniform:
      return "uniform";
    case TermType::MinDose:
      return "min";
    case TermType::MaxDose:
      return "max";
    case TermType::MeanDose:
      return "mean";
  }
  return "?";
}

std::vector<std::int64_t> voxelsOfMask(const Mask& mask) {
  std::vector<std::int64_t> v;
  for (std::size_t i = 0; i < mask.data.size(); ++i)
    if (mask.data[i]) v.push_back(std::int64_t(i));
  return v;
}

StructureObjective targetObjective(std::string name, std::vector<std::int64_t> voxels,
                                   double prescriptionGy, double weight, double minGy,
                                   double minWeight, double maxGy, double maxWeight) {
  StructureObjective s{std::move(name), StructureRole::Target, std::move(voxels), {}};
  s.terms.push_back({TermType::Uniform, prescriptionGy, weight});
  if (minWeight > 0) s.terms.push_back({TermType::MinDose, minGy, minWeight});
  if (maxWeight > 0) s.terms.push_back({TermType::MaxDose, maxGy, maxWeight});
  return s;
}

StructureObjective organAtRiskObjective(std::string name, std::vector<std::int64_t> voxels,
                                        double limitGy, double overdoseWeight, double meanWeight) {
  StructureObjective s{std::move(name), StructureRole::OrganAtRisk, std::move(voxels), {}};
  if (overdoseWeight > 0) s.terms.push_back({TermType::MaxDose, limitGy, overdoseWeight});
  if (meanWeight > 0) s.terms.push_back({TermType::MeanDose, 0, meanWeight});
  return s;
}

PlanObjective::PlanObjective(std::vector<StructureObjective> structures)
    : structures_(std::move(structures)) {}

void PlanObjective::validate(std::int64_t doseVoxels) const {
  PENUMBRA_REQUIRE(!structures_.empty(), InvalidArgument, "objective: no structures");
  for (const StructureObjective& s : structures_) {
    const std::string who = "objective of structure '" + s.name + "': ";
    PENUMBRA_REQUIRE(!s.voxels.empty(), InvalidArgument, who + "no voxels on the dose grid");
    PENUMBRA_REQUIRE(!s.terms.empty(), InvalidArgument, who + "no terms");
    for (std::int64_t v : s.voxels)
      PENUMBRA_REQUIRE(v >= 0 && v < doseVoxels, InvalidArgument,
                       who + "voxel " + std::to_string(v) + " outside the dose grid of " +
                           std::to_string(doseVoxels) + " voxels");
    for (const ObjectiveTerm& t : s.terms) {
      PENUMBRA_REQUIRE(std::isfinite(t.weight) && t.weight >= 0, InvalidArgument,
                       who + "term weights must be finite and >= 0");
      PENUMBRA_REQUIRE(std::isfinite(t.levelGy), InvalidArgument,
                       who + "dose levels must be finite");
    }
  }
}

double PlanObjective::evaluate(const std::vector<double>& dose,
                               std::vector<double>* residual) const {
  if (residual) residual->assign(dose.size(), 0.0);
  double f = 0;
  for (const StructureObjective& s : structures_) {
    const double invN = 1.0 / double(s.voxels.size());
    for (const ObjectiveTerm& t : s.terms) {
      const double c = t.weight * invN;
      double sum = 0;  // per term, then scaled: fewer roundings than scaling every voxel
      for (std::int64_t v : s.voxels) {
        const double d = dose[std::size_t(v)];
        double phi = 0, dphi = 0;
        switch (t.type) {
          case TermType::Uniform:
            phi = (d - t.levelGy) * (d - t.levelGy);
            dphi = 2 * (d - t.levelGy);
            break;
          case TermType::MinDose:
            if (d < t.levelGy) {
              phi = (d - t.levelGy) * (d - t.levelGy);
              dphi = 2 * (d - t.levelGy);
            }
            break;
          case TermType::MaxDose:
            if (d > t.levelGy) {
              phi = (d - t.levelGy) * (d - t.levelGy);
              dphi = 2 * (d - t.levelGy);
            }
            break;
          case TermType::MeanDose:
            phi = d;
            dphi = 1;
            break;
        }
        sum += phi;
        if (residual) (*residual)[std::size_t(v)] += c * dphi;
      }
      f += c * sum;
    }
  }
  return f;
}

double PlanObjective::curvature(const std::vector<double>& dose,
                                const std::vector<double>& q) const {
  double h = 0;
  for (const StructureObjective& s : structures_) {
    const double invN = 1.0 / double(s.voxels.size());
    for (const ObjectiveTerm& t : s.terms) {
      if (t.type == TermType::MeanDose) continue;
      double sum = 0;
      for (std::int64_t v : s.voxels) {
        const double d = dose[std::size_t(v)], qv = q[std::size_t(v)];
        const bool active = t.type == TermType::Uniform ||
                            (t.type == TermType::MinDose && d < t.levelGy) ||
                            (t.type == TermType::MaxDose && d > t.levelGy);
        if (active) sum += qv * qv;
      }
      h += 2 * t.weight * invN * sum;
    }
  }
  return h;
}

namespace {
template <typename Vector>
VoxelDoseStatistics statistics(const Vector& dose,
                               const std::vector<std::int64_t>& voxels) {
  VoxelDoseStatistics st;
  st.voxels = std::int64_t(voxels.size());
  if (voxels.empty()) return st;
  std::vector<double> d;
  d.reserve(voxels.size());
  for (std::int64_t v : voxels) d.push_back(double(dose.at(std::size_t(v))));
  std::sort(d.begin(), d.end());
  double sum = 0;
  for (double x : d) sum += x;
  const std::size_t n = d.size();
  // Dx: sorted ascending, voxel k and all above it ((n - k) / n of the volume) receive >= d[k];
  // the highest such dose with (n - k) / n >= x % is k = floor((1 - x / 100) n).
  auto dx = [&](double percent) {
    const auto k = std::size_t(std::floor((1.0 - percent / 100.0) * double(n) + 1e-9));
    return d[std::min(k, n - 1)];
  };
  st.minGy = d.front();
  st.maxGy = d.back();
  st.meanGy = sum / double(n);
  st.d95Gy = dx(95);
  st.d98Gy = dx(98);
  st.d2Gy = dx(2);
  return st;
}
}  // namespace

VoxelDoseStatistics voxelDoseStatistics(const std::vector<double>& dose,
                                        const std::vector<std::int64_t>& voxels) {
  return statistics(dose, voxels);
}
VoxelDoseStatistics voxelDoseStatistics(const VoxelVector<float>& dose,
                                        const std::vector<std::int64_t>& voxels) {
  return statistics(dose, voxels);
}

}  // namespace penumbra::optimise
