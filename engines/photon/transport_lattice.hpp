#pragma once
/// Transport lattice of one collapsed-cone direction (Xiao et al., Med. Phys. 39 (2012), with
/// the lattice construction of the lead's design, /work/cccs_design.md). Header-only and
/// host+device safe like dda_traversal.hpp: the CPU reference and the CUDA kernels walk the
/// lines with the same code.
///
/// Construction. For a unit direction d (patient LPS), cosines[a] = dot(d, index axis a) and
/// the dominant axis A maximises |cosines[a]| / spacing[a] (the index-space component), so a
/// line advances at most one lateral voxel per dominant slice. The lateral axes L0 < L1 are the
/// other two. Every transport line is an integer voxel translate (o0 along L0, o1 along L1) of
/// line (0,0), which starts on the volume's entry face of A (index -0.5 or dims[A] - 0.5) at the
/// lateral index fractions kLateralStart0 / kLateralStart1 (away from voxel faces, so no line
/// runs through an edge at its start).
///
/// Line (0,0) is walked in a virtual grid whose axes are ordered (A, L0, L1) and whose lateral
/// extent covers the whole lateral drift across the dims[A] slices, so the walk never leaves the
/// virtual grid laterally and all lines run identical floating-point operations (identical
/// segment lengths, bit for bit); a line's real voxel is the virtual one shifted by (o0, o1).
/// Because the axes are fixed in the virtual grid, the stepping loop indexes no arrays (no local
/// memory on the GPU). Segments outside the real volume are skipped; a line is inside the
/// volume on one contiguous stretch, and walkLine() stops when it has left it or can no longer
/// reach it.
///
/// Slots. sliceSlot = rank of a segment within its dominant slice (0..2): unique per voxel
/// among the lines of one direction, so an atomic-free deposit can give each (slot, voxel) one
/// writer. The segment lengths of all lines crossing a voxel add up to sliceChordMm =
/// spacing[A] / |cosines[A]| (to rounding), and each line stands for a tube of cross-section
/// crossSectionMm2 = voxel volume / sliceChordMm.
#include "raytrace/dda_traversal.hpp"

#include <vector>

namespace penumbra {
struct Grid;
struct Vec3;
}  // namespace penumbra

namespace penumbra::photon {

/// Lateral start fractions of line (0,0) in index units (voxel centres at integers).
inline constexpr double kLateralStart0 = 0.1234;
inline constexpr double kLateralStart1 = 0.3456;
/// Segments per dominant slice are at most 3 (one lateral step per lateral axis per slice).
inline constexpr int kMaxSliceSlots = 3;

/// Bounds of a lattice walk (TransportLattice::bounds(); the CUDA kernel reads them from
/// constant memory): the virtual grid is nA x vdims1 x vdims2, the real volume along (A, L0, L1)
/// is nA x n0 x n1.
struct LatticeBounds {
  int vdims1, vdims2;  ///< virtual lateral extents along L0, L1
  int nA, n0, n1;      ///< real dims along A, L0, L1
};

/// Plain numbers (copyable to the device by value or into constant memory).
struct TransportLattice {
  double direction[3];     ///< unit direction, patient LPS
  double cosines[3];       ///< direction along the grid index axes i, j, k (dirMm of the design)
  int dominant;            ///< A
  int lateral0, lateral1;  ///< L0 < L1
  int dims[3];             ///< real grid, i, j, k
  long long stride[3];     ///< linear-index stride of i, j, k (1, nx, nx ny)
  /// Virtual grid of line (0,0), axes (A, L0, L1): index-axis frame in mm, identity
  /// orientation, voxel (0,0,0) centred at 0. dims = (dims[A], virtual lateral extents).
  dda::Geometry line;
  dda::RayData ray;  ///< line (0,0) in the virtual frame (starts on the entry face)
  /// Real lateral index = virtual lateral index + offset. Lines: o0 in [off0Lo, off0Hi),
  /// o1 in [off1Lo, off1Hi); every line that meets the volume is in that range (a few at the
  /// corners may miss it: they visit nothing).
  int off0Lo, off0Hi, off1Lo, off1Hi;
  double sliceChordMm;     ///< spacing[A] / |cosines[A]|
  double crossSectionMm2;  ///< voxel volume / sliceChordMm

  PENUMBRA_HD_INLINE LatticeBounds bounds() const {
    return {line.dims[1], line.dims[2], line.dims[0], dims[lateral0], dims[lateral1]};
  }
  PENUMBRA_HD_INLINE int lines0() const { return off0Hi - off0Lo; }
  PENUMBRA_HD_INLINE int lines1() const { return off1Hi - off1Lo; }
  PENUMBRA_HD_INLINE long long lineCount() const {
    return static_cast<long long>(lines0()) * static_cast<long long>(lines1());
  }
  /// Offsets of line `index` in [0, lineCount()), o0 fastest.
  PENUMBRA_HD_INLINE void lineOffsets(long long index, int& o0, int& o1) const {
    o0 = off0Lo + static_cast<int>(index % lines0());
    o1 = off1Lo + static_cast<int>(index / lines0());
  }
};

/// Stepping state of line (0,0) (the same for every line of the lattice). False only for a
/// degenerate lattice (never for one from makeLattice()).
template <typename T>
PENUMBRA_HD_INLINE bool lineStart(const TransportLattice& L, dda::Start<T>& s) {
  return dda::setupRay(L.line, L.ray, s);
}

/// Minimum of two walk distances: fminf/fmin on the GPU (one instruction), dda::minOf on the
/// host. The same value for the walk's t, which are never NaN (finite tNext, tDelta, length)
/// and never -0.
PENUMBRA_HD_INLINE float walkMin(float a, float b) {
#ifdef __CUDA_ARCH__
  return fminf(a, b);
#else
  return dda::minOf(a, b);
#endif
}
PENUMBRA_HD_INLINE double walkMin(double a, double b) {
#ifdef __CUDA_ARCH__
  return fmin(a, b);
#else
  return dda::minOf(a, b);
#endif
}

/// The walk of one lattice line (o0, o1), written once for walkLine (CPU) and the CUDA
/// transport kernel: dda::traverse's stepping on the virtual grid (x = A, y = L0, z = L1, the
/// same floating-point operations: both variants give the same segments, bit for bit) that also
/// keeps the line's real lateral indices r0 = vy + o0, r1 = vz + o1, the pattern index and the
/// slice slot. All state is scalar (no arrays: nothing in GPU local memory); state a caller
/// never reads (the kernel's slot, the CPU's pattern index) is dead code after inlining. The
/// kernel's transport loop compiles to the instruction count and registers of its former
/// hand-written copy (sm_90: 46 atomic, 40 atomic-free); walk() reads n0, n1 once and nA,
/// vdims1, vdims2 in the loop as that copy did (copying all five before the loop cost the
/// atomic-free kernel 7 more registers).
template <DdaVariant V, typename T>
struct LatticeWalker {
  int vx, vy, vz;  ///< virtual voxel; vx is also the real index along A
  int r0, r1;      ///< real lateral indices along L0, L1 (outside [0, n) off the volume)
  int sx, sy, sz;
  T tx, ty, tz;
  T dx, dy, dz;
  T tEnd;
  T tPrev = T(0), tHere = T(0);
  int n = 0;            ///< pattern index: positive-length segments before the current one
  int slot = 0;         ///< sliceSlot of the current segment (rank within its dominant slice)
  int sliceOfSlot = 0;  ///< dominant slice that `slot` counts in

  /// From line (0,0)'s start state (dda::Start or the kernel's constant-memory copy).
  PENUMBRA_HD_INLINE LatticeWalker(const int voxel[3], const int step[3], const T tNext[3],
                                   const T tDelta[3], T length, int o0, int o1) {
    vx = voxel[0], vy = voxel[1], vz = voxel[2];
    r0 = vy + o0, r1 = vz + o1;
    sx = step[0], sy = step[1], sz = step[2];
    tx = tNext[0], ty = tNext[1], tz = tNext[2];
    dx = tDelta[0], dy = tDelta[1], dz = tDelta[2];
    tEnd = length;
    sliceOfSlot = vx;
  }

  /// Calls onSegment(len) for every segment of positive length inside the real volume, in
  /// order along the direction (vx, r0, r1, n and slot describe it during the call). Ends at
  /// the chord's end, on leaving the virtual grid (rounding near the end), once the line has
  /// left the volume laterally (a monotone walk cannot come back), when it is outside and moving
  /// away (it never enters), or when stopAfterStep() (called after every step) returns true.
  template <typename OnSegment, typename StopAfterStep>
  PENUMBRA_HD_INLINE void walk(const LatticeBounds& b, OnSegment& onSegment,
                               StopAfterStep& stopAfterStep) {
    const int n0 = b.n0, n1 = b.n1;
    bool entered = false;
    for (;;) {
      tHere = walkMin(walkMin(tx, walkMin(ty, tz)), tEnd);
      const T len = tHere - tPrev;
      if (len > T(0)) {
        if (vx != sliceOfSlot) {
          sliceOfSlot = vx;
          slot = 0;
        }
        if (unsigned(r0) < unsigned(n0) && unsigned(r1) < unsigned(n1)) {
          entered = true;
          onSegment(len);
        } else if (entered) {
          break;
        }
        ++slot;
        ++n;
      }
      if (tHere >= tEnd) break;
      step();
      tPrev = tHere;
      if (unsigned(vx) >= unsigned(b.nA) || unsigned(vy) >= unsigned(b.vdims1) ||
          unsigned(vz) >= unsigned(b.vdims2))
        break;
      if (!entered && ((sy >= 0 && r0 >= n0) || (sy <= 0 && r0 < 0) || (sz >= 0 && r1 >= n1) ||
                       (sz <= 0 && r1 < 0)))
        break;
      if (stopAfterStep()) break;
    }
  }

  /// One turn of walk()'s loop over a segment known to change nothing (the GPU transport before
  /// its warp meets the TERMA box): the same DDA additions, and n and slot counted as walk()
  /// counts them, without the visit. False where walk() would end (chord end, virtual grid
  /// left); walk() then goes on from the state reached, bit for bit the state it would have had.
  PENUMBRA_HD_INLINE bool skipStep(const LatticeBounds& b) {
    tHere = walkMin(walkMin(tx, walkMin(ty, tz)), tEnd);
    if (tHere - tPrev > T(0)) {
      if (vx != sliceOfSlot) {
        sliceOfSlot = vx;
        slot = 0;
      }
      ++slot;
      ++n;
    }
    if (tHere >= tEnd) return false;
    step();
    tPrev = tHere;
    return unsigned(vx) < unsigned(b.nA) && unsigned(vy) < unsigned(b.vdims1) &&
           unsigned(vz) < unsigned(b.vdims2);
  }

  /// One step of the 3D-DDA (dda::traverse's two forms): classic steps one minimal axis,
  /// DDA-nc every minimal axis at once (adding 0 * delta to the others, which is exact).
  PENUMBRA_HD_INLINE void step() {
    if constexpr (V == DdaVariant::Classic) {
      if (tx < ty) {
        if (tx < tz) {
          tx += dx;
          vx += sx;
        } else {
          tz += dz;
          vz += sz;
          r1 += sz;
        }
      } else {
        if (ty < tz) {
          ty += dy;
          vy += sy;
          r0 += sy;
        } else {
          tz += dz;
          vz += sz;
          r1 += sz;
        }
      }
    } else {
      const int ix = (tx <= ty) & (tx <= tz);
      const int iy = (ty <= tx) & (ty <= tz);
      const int iz = (tz <= tx) & (tz <= ty);
      tx += T(ix) * dx;
      ty += T(iy) * dy;
      tz += T(iz) * dz;
      vx += ix * sx;
      vy += iy * sy;
      vz += iz * sz;
      r0 += iy * sy;
      r1 += iz * sz;
    }
  }
};

/// Walks line (o0, o1): calls visit(linearVoxel, lengthMm, sliceSlot) for every segment of
/// positive length inside the real volume, in order along the direction. linearVoxel indexes
/// the real grid (i fastest), lengthMm is of type T. Returns the number of segments visited.
template <DdaVariant V, typename T, typename Visitor>
PENUMBRA_HD inline int walkLine(const TransportLattice& L, const dda::Start<T>& s, int o0, int o1,
                                Visitor& visit) {
  const LatticeBounds b = L.bounds();
  const long long strideA = L.stride[L.dominant], stride0 = L.stride[L.lateral0],
                  stride1 = L.stride[L.lateral1];
  LatticeWalker<V, T> w(s.voxel, s.step, s.tNext, s.tDelta, s.length, o0, o1);
  int visited = 0;
  auto onSegment = [&](T len) {
    visit(static_cast<long long>(w.vx) * strideA + static_cast<long long>(w.r0) * stride0 +
              static_cast<long long>(w.r1) * stride1,
          len, w.slot);
    ++visited;
  };
  auto never = [] { return false; };
  w.walk(b, onSegment, never);
  return visited;
}

/// Runtime variant switch over walkLine<>.
template <typename T, typename Visitor>
PENUMBRA_HD inline int walkLine(DdaVariant v, const TransportLattice& L, const dda::Start<T>& s,
                                int o0, int o1, Visitor& visit) {
  return v == DdaVariant::Classic ? walkLine<DdaVariant::Classic>(L, s, o0, o1, visit)
                                  : walkLine<DdaVariant::BranchFree>(L, s, o0, o1, visit);
}

/// Lattice of direction (unit or not, patient LPS) on grid (orthonormal direction matrix,
/// positive spacing). Throws InvalidArgument otherwise or for a zero/non-finite direction.
/// Defined in transport_lattice.cpp (host code; also callable from .cu host code).
TransportLattice makeLattice(const Grid& grid, const Vec3& direction);

/// One segment of line (0,0)'s walk in the virtual grid (for tests and host-side culling).
struct LatticeSegment {
  int a, l0, l1;  ///< virtual voxel (A, L0, L1)
  double lengthMm;
  int slot;
};
/// Every positive-length segment of line (0,0) in the virtual grid, in `variant` and
/// precision T (float or double), as walkLine computes them.
template <typename T>
std::vector<LatticeSegment> latticePattern(const TransportLattice& L, DdaVariant variant);

}  // namespace penumbra::photon
