#pragma once
/// Regular voxel grid in DICOM patient coordinates (LPS, mm). Index (i, j, k) runs along
/// the grid's three axes with i fastest in memory. All index<->world conversions in
/// Penumbra go through this class so that direction cosines are honoured everywhere.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/vec3.hpp"

namespace penumbra {

/// Voxel spacing the dose engines accept on a dose grid [mm], and case files for their dose
/// grid: from 0.01 mm (micro-CT voxels are 10-50 um) to 100 mm (a grid coarser than 10 cm says
/// nothing about a patient's dose). Outside it a spacing is an input error, not a plan: 1e-300
/// mm made a resampled grid's voxel counts overflow and the dose run to inf/NaN.
inline constexpr double kMinDoseGridSpacingMm = 0.01;
inline constexpr double kMaxDoseGridSpacingMm = 100;

struct Grid;
/// Throws InvalidArgument unless every spacing of the dose grid `g` is finite and within
/// [kMinDoseGridSpacingMm, kMaxDoseGridSpacingMm]; the message starts with `who` and names the
/// value: "proton dose: dose grid spacing 1e-300 mm (axis 1) is outside [0.01, 100] mm".
void requireDoseGridSpacing(const Grid& g, const std::string& who);

struct Grid {
  std::array<int, 3> dims{0, 0, 0};  ///< voxels along i, j, k
  Vec3 spacing{1, 1, 1};             ///< mm between voxel centres along i, j, k
  Vec3 origin{0, 0, 0};              ///< patient position (mm) of the centre of voxel (0,0,0)
  Mat3 direction;                    ///< column c = unit vector of index axis c in patient space

  std::size_t voxelCount() const {
    return std::size_t(dims[0]) * std::size_t(dims[1]) * std::size_t(dims[2]);
  }
  bool empty() const { return voxelCount() == 0; }
  std::size_t linearIndex(int i, int j, int k) const {
    return (std::size_t(k) * std::size_t(dims[1]) + std::size_t(j)) * std::size_t(dims[0]) +
           std::size_t(i);
  }
  bool containsIndex(int i, int j, int k) const {
    return i >= 0 && j >= 0 && k >= 0 && i < dims[0] && j < dims[1] && k < dims[2];
  }

  /// Continuous index (voxel centres at integers) to patient position in mm.
  Vec3 indexToWorld(Vec3 ijk) const {
    return origin + direction * Vec3{ijk.x * spacing.x, ijk.y * spacing.y, ijk.z * spacing.z};
  }
  /// Patient position in mm to continuous index. Exact inverse of indexToWorld for
  /// orthonormal direction matrices (which Grid requires; see isOrthonormal()).
  Vec3 worldToIndex(Vec3 p) const {
    const Vec3 local = direction.transposed() * (p - origin);
    return {local.x / spacing.x, local.y / spacing.y, local.z / spacing.z};
  }
  /// Nearest voxel index of a patient position; false when outside the grid.
  bool worldToNearestIndex(Vec3 p, std::array<int, 3>& ijk) const;

  /// Unit normal of the slice planes (the k axis) in patient space.
  Vec3 sliceNormal() const { return direction.column(2); }
  double voxelVolumeMm3() const { return spacing.x * spacing.y * spacing.z; }
  /// Patient-space bounds of the voxel centres' box expanded by half a voxel.
  void worldBounds(Vec3& lo, Vec3& hi) const;

  /// True when the direction columns are unit length and mutually orthogonal within tol.
  bool isOrthonormal(double tol = 1e-4) const;
  /// True when direction is the identity within tol (axis-aligned LPS grid).
  bool isAxisAligned(double tol = 1e-4) const;
  bool sameGeometry(const Grid& other, double tolMm = 1e-3) const;
};

}  // namespace penumbra
