#pragma once
// Private part of photon_dose_cuda.cu (included there only, inside its anonymous namespace):
// the per-direction transport plan built on the host - the DDA pattern of one cone direction
// on the dose grid and the culling of its lines against TERMA's index box.

/// One cone direction of one beam, prepared on the host.
struct DirectionPlan {
  int cone = 0;  ///< ConeSet index
  const TransportLattice* L = nullptr;
  dda::Start<float> start{};
  /// Per dominant slice (= virtual x): pattern index of slot 0, virtual lateral positions of
  /// the slots, and the slice's lateral range (for culling).
  std::vector<pc::SliceEntry> slices;
  std::vector<int> min0, max0, min1, max1;
  // Filled per beam once the TERMA box is known:
  int rect0Lo = 0, rect0Hi = -1, rect1Lo = 0, rect1Hi = -1;  ///< inclusive
  int lo[3] = {0, 0, 0}, hi[3] = {-1, -1, -1};               ///< shadow box
  int nBase = 0, nSpan = 0;  ///< pattern indices of the shadow box's slices, in walk order
  long long slotElems = 0;   ///< AtomicFree entries: nSpan x lateral box area
  bool empty() const { return rect0Hi < rect0Lo || rect1Hi < rect1Lo; }
  int blocks() const {
    if (empty()) return 0;
    const int w0 = rect0Hi - rect0Lo + 1, w1 = rect1Hi - rect1Lo + 1;
    return ((w0 + pc::kLinesX - 1) / pc::kLinesX) * ((w1 + pc::kLinesY - 1) / pc::kLinesY);
  }
};

/// Line (0,0)'s pattern in float as a per-slice table: the walk of latticePattern<float>
/// (transport_lattice.cpp; not visible to nvcc), i.e. dda::traverse on the virtual grid from
/// the same start state, so the pattern index n of every segment is the one the kernel counts.
/// Throws Internal for a slice with more than 3 segments or a lateral move of more than one
/// voxel (impossible for makeLattice()'s lattices).
void describePattern(DirectionPlan& p, DdaVariant variant) {
  const TransportLattice& L = *p.L;
  PENUMBRA_REQUIRE(lineStart(L, p.start), Internal, "photon CUDA: degenerate transport lattice");
  const int nA = L.line.dims[0];
  p.slices.assign(std::size_t(nA), pc::SliceEntry{0, 0, 0, 0});
  p.min0.assign(std::size_t(nA), INT_MAX);
  p.max0.assign(std::size_t(nA), INT_MIN);
  p.min1 = p.min0;
  p.max1 = p.max0;
  int n = 0, slice = p.start.voxel[0], slot = 0;
  bool bad = false;
  auto visit = [&](int a, int l0, int l1, float) {
    if (a != slice) {
      slice = a;
      slot = 0;
    }
    if (a < 0 || a >= nA || slot >= kMaxSliceSlots) {
      bad = true;
      return;
    }
    pc::SliceEntry& e = p.slices[std::size_t(a)];
    if (slot == 0) {
      e = pc::SliceEntry{n, l0, l1, 1};
    } else {
      const int d0 = l0 - e.y, d1 = l1 - e.z;
      if (d0 < -1 || d0 > 1 || d1 < -1 || d1 > 1) bad = true;
      e.w = (e.w & ~3) | (slot + 1);
      e.w |= ((d0 + 1) << (slot == 1 ? 2 : 6)) | ((d1 + 1) << (slot == 1 ? 4 : 8));
    }
    const std::size_t i = std::size_t(a);
    p.min0[i] = std::min(p.min0[i], l0), p.max0[i] = std::max(p.max0[i], l0);
    p.min1[i] = std::min(p.min1[i], l1), p.max1[i] = std::max(p.max1[i], l1);
    ++slot;
    ++n;
  };
  dda::traverse(variant, p.start, L.line.dims, visit);
  PENUMBRA_REQUIRE(!bad, Internal,
                   "photon CUDA: a transport line has more than 3 segments in one slice or moves "
                   "more than one voxel laterally within a slice");
}

/// The lines that can meet the TERMA box (a superset widened by one line each side; the
/// kernel's own tests are exact) and the direction's shadow box.
void cullAgainstBox(DirectionPlan& p, const int lo[3], const int hi[3]) {
  const TransportLattice& L = *p.L;
  const int A = L.dominant, l0 = L.lateral0, l1 = L.lateral1;
  int mn0 = INT_MAX, mx0 = INT_MIN, mn1 = INT_MAX, mx1 = INT_MIN;
  for (int a = std::max(0, lo[A]); a <= std::min(hi[A], L.line.dims[0] - 1); ++a) {
    const std::size_t i = std::size_t(a);
    if (p.max0[i] < p.min0[i]) continue;
    mn0 = std::min(mn0, p.min0[i]), mx0 = std::max(mx0, p.max0[i]);
    mn1 = std::min(mn1, p.min1[i]), mx1 = std::max(mx1, p.max1[i]);
  }
  p.rect0Lo = 0, p.rect0Hi = -1, p.rect1Lo = 0, p.rect1Hi = -1;
  if (mx0 < mn0) return;
  // Real lateral = virtual + o must reach [lo, hi]: o in [lo - max, hi - min].
  p.rect0Lo = std::max(L.off0Lo, lo[l0] - mx0 - 1);
  p.rect0Hi = std::min(L.off0Hi - 1, hi[l0] - mn0 + 1);
  p.rect1Lo = std::max(L.off1Lo, lo[l1] - mx1 - 1);
  p.rect1Hi = std::min(L.off1Hi - 1, hi[l1] - mn1 + 1);
  // A line walks monotonically along d from its first TERMA > 0 voxel (inside the box), so
  // it can reach only the box's downstream side along every axis (one voxel of margin).
  for (int c = 0; c < 3; ++c) {
    const double cs = L.cosines[c];
    p.lo[c] = cs > 0 ? lo[c] - 1 : (cs < 0 ? 0 : lo[c] - 1);
    p.hi[c] = cs > 0 ? L.dims[c] - 1 : (cs < 0 ? hi[c] + 1 : hi[c] + 1);
    p.lo[c] = std::max(p.lo[c], 0);
    p.hi[c] = std::min(p.hi[c], L.dims[c] - 1);
  }
  // Pattern indices of the box's slices: from the first slice in walk order to the last.
  const bool forward = p.start.step[0] > 0;
  const pc::SliceEntry& e0 = p.slices[std::size_t(forward ? p.lo[A] : p.hi[A])];
  const pc::SliceEntry& e1 = p.slices[std::size_t(forward ? p.hi[A] : p.lo[A])];
  PENUMBRA_REQUIRE((e0.w & 3) > 0 && (e1.w & 3) > 0, Internal,
                   "photon CUDA: a transport line crosses a slice without a segment");
  p.nBase = e0.x;
  p.nSpan = e1.x + (e1.w & 3) - e0.x;
  p.slotElems = (long long)p.nSpan * (p.hi[l0] - p.lo[l0] + 1) * (p.hi[l1] - p.lo[l1] + 1);
}
