#pragma once
/// Spot-weight optimisation objectives (issue 5, item 4): per-structure terms on the dose-grid
/// voxels of the structure's mask, evaluated on the dose d = D w that the SpMV engine computes.
///
/// Every term is convex in d (squared deviations, one-sided squared deviations, a linear mean),
/// so f(w) = f(D w) is convex in w and projected L-BFGS reaches the global optimum over w >= 0.
/// Each term is normalised by its structure's voxel count, so a term's weight does not depend on
/// the structure's size or the dose-grid spacing:
///   Uniform   weight / N * sum_v (d_v - level)^2               target: prescription
///   MinDose   weight / N * sum_v min(d_v - level, 0)^2         target: underdose below level
///   MaxDose   weight / N * sum_v max(d_v - level, 0)^2         target or organ: overdose
///   MeanDose  weight / N * sum_v d_v                           organ at risk: mean dose
/// The gradient with respect to w is D^T r, r_v = df/dd_v (one transposed product).
/// Units: dose and levels in Gy; f in Gy^2 (MeanDose terms contribute weight x Gy).
#include <cstdint>
#include <string>
#include <vector>

#include "core/volume.hpp"

namespace penumbra::optimise {

enum class TermType { Uniform, MinDose, MaxDose, MeanDose };
const char* toString(TermType t);  ///< "uniform", "min", "max", "mean"

struct ObjectiveTerm {
  TermType type = TermType::Uniform;
  double levelGy = 0;  ///< prescription / min / max level [Gy]; unused by MeanDose
  double weight = 1;   ///< >= 0
};

enum class StructureRole { Target, OrganAtRisk };

struct StructureObjective {
  std::string name;
  StructureRole role = StructureRole::Target;
  std::vector<std::int64_t> voxels;  ///< rows of D (dose-grid linear indices), ascending
  std::vector<ObjectiveTerm> terms;
};

/// Linear indices of the non-zero voxels of a mask on the dose grid (rows of D).
std::vector<std::int64_t> voxelsOfMask(const Mask& mask);

/// Target: squared deviation from `prescriptionGy` with `weight`; a MinDose term at `minGy`
/// and a MaxDose term at `maxGy` are added when their weights are positive.
StructureObjective targetObjective(std::string name, std::vector<std::int64_t> voxels,
                                   double prescriptionGy, double weight = 1.0, double minGy = 0,
                                   double minWeight = 0, double maxGy = 0, double maxWeight = 0);
/// Organ at risk: squared overdose above `limitGy` with `overdoseWeight`, plus a linear mean-dose
/// term with `meanWeight` when positive.
StructureObjective organAtRiskObjective(std::string name, std::vector<std::int64_t> voxels,
                                        double limitGy, double overdoseWeight = 1.0,
                                        double meanWeight = 0);

/// The sum of all structures' terms. Holds no dose; cheap to copy.
class PlanObjective {
 public:
  PlanObjective() = default;
  explicit PlanObjective(std::vector<StructureObjective> structures);

  const std::vector<StructureObjective>& structures() const { return structures_; }
  /// Throws InvalidArgument for an empty structure, a voxel outside [0, doseVoxels), a negative
  /// weight or a non-finite level, naming the structure.
  void validate(std::int64_t doseVoxels) const;

  /// f(d). When `residual` is non-null it is resized to d.size() and set to r = df/dd.
  double evaluate(const std::vector<double>& dose, std::vector<double>* residual = nullptr) const;
  /// q^T H(d) q, H = d^2 f / dd^2 (diagonal; one-sided terms count where active, the kink
  /// itself counting as inactive). The exact curvature of f along a dose direction q.
  double curvature(const std::vector<double>& dose, const std::vector<double>& q) const;

 private:
  std::vector<StructureObjective> structures_;
};

/// Dose statistics over a set of voxels, straight from voxel doses (every voxel has the same
/// volume on the dose grid): D95 = the highest dose that at least 95 % of the voxels receive.
struct VoxelDoseStatistics {
  double minGy = 0, meanGy = 0, maxGy = 0, d95Gy = 0, d98Gy = 0, d2Gy = 0;
  std::int64_t voxels = 0;
};
VoxelDoseStatistics voxelDoseStatistics(const std::vector<double>& dose,
                                        const std::vector<std::int64_t>& voxels);
/// Same for a float dose volume (the proton engine's output).
VoxelDoseStatistics voxelDoseStatistics(const VoxelVector<float>& dose,
                                        const std::vector<std::int64_t>& voxels);

}  // namespace penumbra::optimise
