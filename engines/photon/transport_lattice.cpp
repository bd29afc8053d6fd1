// makeLattice() and latticePattern(): the host-side construction of a direction's transport
// lattice (see transport_lattice.hpp).
#include "photon/transport_lattice.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/grid.hpp"
#include "core/vec3.hpp"

namespace penumbra::photon {

TransportLattice makeLattice(const Grid& grid, const Vec3& direction) {
  PENUMBRA_REQUIRE(std::isfinite(direction.x) && std::isfinite(direction.y) &&
                       std::isfinite(direction.z) && norm(direction) > 0,
                   InvalidArgument, "transport lattice: the direction must be finite and non-zero");
  PENUMBRA_REQUIRE(grid.dims[0] > 0 && grid.dims[1] > 0 && grid.dims[2] > 0, InvalidArgument,
                   "transport lattice: the grid is empty");
  PENUMBRA_REQUIRE(
      grid.spacing.x > 0 && grid.spacing.y > 0 && grid.spacing.z > 0 && grid.isOrthonormal(),
      InvalidArgument, "transport lattice: the grid needs positive spacing and orthonormal axes");
  const Vec3 d = normalized(direction);
  TransportLattice L{};
  L.direction[0] = d.x;
  L.direction[1] = d.y;
  L.direction[2] = d.z;
  double idx[3];
  for (int a = 0; a < 3; ++a) {
    L.cosines[a] = dot(d, grid.direction.column(a));
    idx[a] = L.cosines[a] / grid.spacing[a];  // index units per mm along the line
    L.dims[a] = grid.dims[a];
  }
  L.stride[0] = 1;
  L.stride[1] = grid.dims[0];
  L.stride[2] = static_cast<long long>(grid.dims[0]) * grid.dims[1];
  int A = 0;
  for (int a = 1; a < 3; ++a)
    if (std::abs(idx[a]) > std::abs(idx[A])) A = a;
  L.dominant = A;
  L.lateral0 = A == 0 ? 1 : 0;
  L.lateral1 = A == 2 ? 1 : 2;
  const int lat[2] = {L.lateral0, L.lateral1};
  const double frac[2] = {kLateralStart0, kLateralStart1};

  // Line (0,0) crosses the dims[A] slices over tA mm and drifts idx[L] tA lateral voxels.
  const double tA = grid.dims[A] / std::abs(idx[A]);
  int vdims[2], lo[2], hi[2];
  double startV[2];
  for (int n = 0; n < 2; ++n) {
    const double drift = idx[lat[n]] * tA;
    vdims[n] = int(std::ceil(std::abs(drift))) + 2;
    const int shift = drift < 0 ? vdims[n] - 1 : 0;
    startV[n] = frac[n] + shift;
    // Virtual lateral voxels of the walk: from the start voxel to the end voxel, widened by one
    // each side for the rounding of the float walk near a voxel face.
    const int first = int(std::floor(startV[n] + 0.5));
    const int last = int(std::floor(startV[n] + drift + 0.5));
    lo[n] = std::max(0, std::min(first, last) - 1);
    hi[n] = std::min(vdims[n] - 1, std::max(first, last) + 1);
  }
  dda::Geometry& g = L.line;
  g.dims[0] = grid.dims[A];
  g.dims[1] = vdims[0];
  g.dims[2] = vdims[1];
  const int axes[3] = {A, lat[0], lat[1]};
  for (int a = 0; a < 3; ++a) {
    g.origin[a] = 0;
    g.spacing[a] = grid.spacing[axes[a]];
    for (int b = 0; b < 3; ++b) g.toLocal[a][b] = a == b ? 1 : 0;
    L.ray.direction[a] = L.cosines[axes[a]];
  }
  const double startA = L.cosines[A] > 0 ? -0.5 : grid.dims[A] - 0.5;
  L.ray.origin[0] = startA * g.spacing[0];
  L.ray.origin[1] = startV[0] * g.spacing[1];
  L.ray.origin[2] = startV[1] * g.spacing[2];
  L.ray.tMax = 1e300;
  // Real lateral = virtual + offset must meet [0, n): offset in [-hi, n - lo).
  L.off0Lo = -hi[0];
  L.off0Hi = grid.dims[lat[0]] - lo[0];
  L.off1Lo = -hi[1];
  L.off1Hi = grid.dims[lat[1]] - lo[1];
  L.sliceChordMm = grid.spacing[A] / std::abs(L.cosines[A]);
  L.crossSectionMm2 = grid.voxelVolumeMm3() / L.sliceChordMm;
  return L;
}

template <typename T>
std::vector<LatticeSegment> latticePattern(const TransportLattice& L, DdaVariant variant) {
  std::vector<LatticeSegment> out;
  dda::Start<T> s;
  if (!lineStart(L, s)) return out;
  int slice = s.voxel[0], slot = 0;
  auto visit = [&](int a, int l0, int l1, T len) {
    if (a != slice) {
      slice = a;
      slot = 0;
    }
    out.push_back({a, l0, l1, double(len), slot++});
  };
  dda::traverse(variant, s, L.line.dims, visit);
  return out;
}

template std::vector<LatticeSegment> latticePattern<double>(const TransportLattice&, DdaVariant);
template std::vector<LatticeSegment> latticePattern<float>(const TransportLattice&, DdaVariant);

}  // namespace penumbra::photon
