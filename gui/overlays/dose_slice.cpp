#include "gui/overlays/dose_slice.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "gui/model/dose_set_store.hpp"

namespace penumbra::gui {

namespace {
std::array<int, 2> inPlaneAxes(SliceOrientation o) {
  switch (o) {
    case SliceOrientation::Axial: return {0, 1};
    case SliceOrientation::Coronal: return {0, 2};
    case SliceOrientation::Sagittal: return {1, 2};
  }
  return {0, 1};
}
}  // namespace

DoseSlice sampleDoseSlice(const Volume<float>& dose, const PatientScene& scene,
                          SliceOrientation orientation, int slice, const Mask* clip) {
  DoseSlice out;
  const Grid& dg = dose.grid;
  const Grid& sg = scene.grid();
  if (dg.empty() || dose.data.size() != dg.voxelCount()) return out;
  const int n = normalAxis(orientation);
  const auto [ua, va] = inPlaneAxes(orientation);
  // Footprint of the dose grid's 8 corners (expanded by half a voxel) in display indices.
  double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
  for (int c = 0; c < 8; ++c) {
    const Vec3 corner{(c & 1) ? dg.dims[0] - 0.5 : -0.5, (c & 2) ? dg.dims[1] - 0.5 : -0.5,
                      (c & 4) ? dg.dims[2] - 0.5 : -0.5};
    const Vec3 idx = sg.worldToIndex(dg.indexToWorld(corner));
    for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], idx[a]), hi[a] = std::max(hi[a], idx[a]);
  }
  if (slice < std::floor(lo[n]) || slice > std::ceil(hi[n])) return out;
  const int u0 = std::max(0, int(std::floor(lo[ua])) - 1);
  const int u1 = std::min(sg.dims[ua] - 1, int(std::ceil(hi[ua])) + 1);
  const int v0 = std::max(0, int(std::floor(lo[va])) - 1);
  const int v1 = std::min(sg.dims[va] - 1, int(std::ceil(hi[va])) + 1);
  if (u1 < u0 || v1 < v0) return out;
  out.u0 = u0;
  out.v0 = v0;
  out.nu = u1 - u0 + 1;
  out.nv = v1 - v0 + 1;
  out.gy.assign(std::size_t(out.nu) * std::size_t(out.nv), 0.0f);
  // The display patient's masks share the display grid: one byte per sample, no resampling.
  // A mask on another grid (not made by PatientScene) is looked up by position instead; a
  // mask without voxels clips nothing (hiding all dose would look like a failed computation).
  if (clip && (clip->grid.empty() || clip->data.size() != clip->grid.voxelCount())) clip = nullptr;
  const bool clipOnDisplayGrid = clip && clip->grid.sameGeometry(sg);
  auto outside = [&](const Vec3& ijk) {
    if (!clip) return false;
    std::array<int, 3> c{int(std::lround(ijk.x)), int(std::lround(ijk.y)), int(std::lround(ijk.z))};
    if (!clipOnDisplayGrid && !clip->grid.worldToNearestIndex(sg.indexToWorld(ijk), c)) return true;
    return !clip->grid.containsIndex(c[0], c[1], c[2]) || clip->at(c[0], c[1], c[2]) == 0;
  };
  Vec3 ijk;
  ijk[n] = slice;
  for (int iv = 0; iv < out.nv; ++iv) {
    ijk[va] = v0 + iv;
    for (int iu = 0; iu < out.nu; ++iu) {
      ijk[ua] = u0 + iu;
      if (outside(ijk)) {
        out.gy[std::size_t(iv) * std::size_t(out.nu) + std::size_t(iu)] = kClippedGy;
        continue;
      }
      double gy = 0;
      if (sampleDose(dose, sg.indexToWorld(ijk), gy))
        out.gy[std::size_t(iv) * std::size_t(out.nu) + std::size_t(iu)] = float(gy);
    }
  }
  return out;
}

std::vector<Segment2> doseIsoLines(const DoseSlice& s, float level) {
  std::vector<Segment2> segs;
  if (s.nu < 2 || s.nv < 2) return segs;
  // Corners 0 (u, v), 1 (u+1, v), 2 (u+1, v+1), 3 (u, v+1); edges 0: 0-1, 1: 1-2, 2: 2-3, 3: 3-0.
  static const int kCorner[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int iv = 0; iv + 1 < s.nv; ++iv) {
    for (int iu = 0; iu + 1 < s.nu; ++iu) {
      float val[4];
      int code = 0;
      for (int c = 0; c < 4; ++c) {
        val[c] = s.at(iu + kCorner[c][0], iv + kCorner[c][1]);
        if (val[c] >= level) code |= 1 << c;
      }
      if (code == 0 || code == 15) continue;
      auto edgePoint = [&](int e, float& u, float& v) {
        const int a = e, b = (e + 1) % 4;
        const float den = val[b] - val[a];
        const float t = den != 0 ? std::clamp((level - val[a]) / den, 0.0f, 1.0f) : 0.5f;
        u = float(s.u0 + iu) + kCorner[a][0] + t * float(kCorner[b][0] - kCorner[a][0]);
        v = float(s.v0 + iv) + kCorner[a][1] + t * float(kCorner[b][1] - kCorner[a][1]);
      };
      auto add = [&](int e0, int e1) {
        Segment2 seg{};
        edgePoint(e0, seg.u0, seg.v0);
        edgePoint(e1, seg.u1, seg.v1);
        segs.push_back(seg);
      };
      // Edge pairs per case: an edge is crossed where its two corners differ.
      switch (code) {
        case 1: case 14: add(3, 0); break;
        case 2: case 13: add(0, 1); break;
        case 3: case 12: add(3, 1); break;
        case 4: case 11: add(1, 2); break;
        case 6: case 9: add(0, 2); break;
        case 7: case 8: add(2, 3); break;
        case 5: case 10: {
          const bool centreHigh = (val[0] + val[1] + val[2] + val[3]) / 4 >= level;
          // Case 5: corners 0 and 2 high. A high centre joins them (lines cut off 1 and 3).
          if ((code == 5) == centreHigh) {
            add(0, 1);
            add(2, 3);
          } else {
            add(3, 0);
            add(1, 2);
          }
          break;
        }
        default: break;
      }
    }
  }
  return segs;
}

}  // namespace penumbra::gui
