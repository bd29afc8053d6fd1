#include "dicom/series_geometry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <map>
#include <numeric>

namespace penumbra::io {

namespace {

// Direction cosines within this of a signed unit axis count as axis-aligned: 1e-3 is
// 0.06 degrees, well below what changes a voxel's position over a 50 cm field (0.5 mm).
constexpr double kAxisTolerance = 1e-3;
constexpr double kMaxPositionMm = 1e6;

std::string mm(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g mm", v);
  return buf;
}

bool nearAxis(const Vec3& v, Vec3& snapped) {
  int best = 0;
  for (int a = 1; a < 3; ++a)
    if (std::abs(v[a]) > std::abs(v[best])) best = a;
  snapped = Vec3{};
  snapped[best] = v[best] > 0 ? 1.0 : -1.0;
  return norm(v - snapped) < kAxisTolerance;
}

bool sameSliceGeometry(const SliceHeader& a, const SliceHeader& b) {
  for (int i = 0; i < 6; ++i)
    if (std::abs(a.orientation[i] - b.orientation[i]) > kAxisTolerance) return false;
  return a.rows == b.rows && a.columns == b.columns &&
         std::abs(a.rowSpacing - b.rowSpacing) < 1e-4 &&
         std::abs(a.columnSpacing - b.columnSpacing) < 1e-4;
}

std::string values(std::initializer_list<double> v) {
  std::string s;
  char buf[32];
  for (double x : v) {
    std::snprintf(buf, sizeof buf, "%g", x);
    s += (s.empty() ? "" : ", ") + std::string(buf);
  }
  return "(" + s + ")";
}

// Why one slice's geometry cannot be used (empty when it can). Positions beyond a kilometre
// are no patient's; they would also swamp sub-millimetre gaps in double precision.
std::string invalidValue(const SliceHeader& s) {
  const Vec3& p = s.position;
  const auto& o = s.orientation;
  auto finite = [](std::initializer_list<double> v) {
    for (double x : v)
      if (!std::isfinite(x)) return false;
    return true;
  };
  if (!finite({p.x, p.y, p.z}) || std::abs(p.x) > kMaxPositionMm ||
      std::abs(p.y) > kMaxPositionMm || std::abs(p.z) > kMaxPositionMm)
    return "ImagePositionPatient " + values({p.x, p.y, p.z}) +
           " mm is not a finite position within 1 km";
  if (!finite({o[0], o[1], o[2], o[3], o[4], o[5]}))
    return "ImageOrientationPatient " + values({o[0], o[1], o[2], o[3], o[4], o[5]}) +
           " is not finite";
  if (!finite({s.rowSpacing, s.columnSpacing}) || s.rowSpacing <= 0 || s.columnSpacing <= 0)
    return "PixelSpacing " + values({s.rowSpacing, s.columnSpacing}) +
           " mm is not two positive spacings";
  if (s.rows <= 0 || s.columns <= 0)
    return "Rows/Columns " + values({double(s.rows), double(s.columns)}) + " is not an image size";
  return {};
}

}  // namespace

SeriesGeometry analyzeSeriesGeometry(const std::vector<SliceHeader>& slices,
                                     const std::string& label) {
  SeriesGeometry g;
  if (slices.empty()) {
    g.errors.push_back(label + ": no slices");
    return g;
  }
  // Every value first: a NaN compares false with everything, so it would pass the checks
  // below, sort anywhere and turn into a garbage lattice index (a crash in the pixel reader).
  for (const auto& s : slices) {
    const std::string problem = invalidValue(s);
    if (!problem.empty()) {
      g.errors.push_back(label + ": " + s.file + ": " + problem);
      return g;
    }
  }
  const SliceHeader& first = slices.front();
  for (const auto& s : slices)
    if (!sameSliceGeometry(first, s)) {
      g.errors.push_back(label + ": slices differ in orientation, pixel spacing or size (" +
                         s.file + " vs " + first.file + ")");
      return g;
    }

  Vec3 row{first.orientation[0], first.orientation[1], first.orientation[2]};
  Vec3 col{first.orientation[3], first.orientation[4], first.orientation[5]};
  if (std::abs(norm(row) - 1) > 1e-2 || std::abs(norm(col) - 1) > 1e-2 ||
      std::abs(dot(row, col)) > 1e-2) {
    g.errors.push_back(label +
                       ": ImageOrientationPatient is not a pair of orthogonal unit "
                       "vectors");
    return g;
  }
  row = normalized(row);
  col = normalized(col);
  Vec3 rowAxis, colAxis;
  if (!nearAxis(row, rowAxis) || !nearAxis(col, colAxis)) {
    g.oblique = true;
    char buf[160];
    std::snprintf(buf, sizeof buf, "[%.4f, %.4f, %.4f, %.4f, %.4f, %.4f]", row.x, row.y, row.z,
                  col.x, col.y, col.z);
    g.errors.push_back(label + ": oblique series (ImageOrientationPatient " + buf +
                       " is not aligned with the patient axes); resample it to an axial, "
                       "sagittal or coronal orientation before import");
    return g;
  }
  // Snap to the exact axes: the tolerance above is far below a voxel, and exact cosines
  // keep index<->world conversions free of drift.
  row = rowAxis;
  col = colAxis;
  const Vec3 normal = cross(row, col);

  // Sort along the normal (not by InstanceNumber or file name, which scanners number freely).
  const int n = int(slices.size());
  g.order.resize(n);
  std::iota(g.order.begin(), g.order.end(), 0);
  std::vector<double> pos(n);
  for (int i = 0; i < n; ++i) pos[i] = dot(slices[i].position, normal);
  std::stable_sort(g.order.begin(), g.order.end(), [&](int a, int b) { return pos[a] < pos[b]; });
  for (int i : g.order) g.positions.push_back(pos[i]);

  // Gantry tilt: slice origins must move along the normal only. A 1e-3 slope is 0.06 deg.
  const Vec3 p0 = slices[g.order.front()].position;
  double worstPerp = 0, worstAlong = 1;
  for (int i : g.order) {
    const Vec3 d = slices[i].position - p0;
    const double along = dot(d, normal);
    const double perp = norm(d - along * normal);
    if (perp > 0.01 + 1e-3 * std::abs(along) && perp > worstPerp) {
      worstPerp = perp;
      worstAlong = std::abs(along);
    }
  }
  if (worstPerp > 0) {
    g.tilted = true;
    g.tiltDegrees = std::atan2(worstPerp, worstAlong) * 180.0 / M_PI;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", g.tiltDegrees);
    g.errors.push_back(label + ": gantry tilt of about " + std::string(buf) +
                       " degrees (slice positions move sideways, not along the slice normal); "
                       "tilted series are not supported: reconstruct without tilt or resample");
    return g;
  }

  double spacing = 0;
  if (n == 1) {
    // One slice has no neighbour to measure against: SliceThickness is the physical extent,
    // SpacingBetweenSlices the next best; otherwise 1 mm so volumes are at least defined.
    if (std::isfinite(first.sliceThickness) && first.sliceThickness > 0) {
      spacing = first.sliceThickness;
      g.warnings.push_back(label + ": single-slice series; slice thickness " + mm(spacing) +
                           " taken from SliceThickness");
    } else if (std::isfinite(first.spacingBetweenSlices) && first.spacingBetweenSlices > 0) {
      spacing = first.spacingBetweenSlices;
      g.warnings.push_back(label + ": single-slice series; thickness " + mm(spacing) +
                           " taken from SpacingBetweenSlices");
    } else {
      spacing = 1.0;
      g.warnings.push_back(label +
                           ": single-slice series without SliceThickness; assuming "
                           "1 mm (volumes are not meaningful)");
    }
    g.latticeIndex = {0};
  } else {
    std::vector<double> gaps;
    for (int i = 1; i < n; ++i) gaps.push_back(g.positions[i] - g.positions[i - 1]);
    const double smallest = *std::min_element(gaps.begin(), gaps.end());
    if (smallest < 1e-3) {
      g.errors.push_back(label +
                         ": two or more slices share one position (duplicate images "
                         "or several acquisitions in one series)");
      return g;
    }
    // Distinct gaps, binned to 0.01 mm, for the message only.
    std::map<long, int> hist;
    for (double d : gaps) ++hist[std::lround(d * 100)];
    const double tol = std::max(0.01, 0.01 * smallest);
    spacing = smallest;
    g.latticeIndex.push_back(0);
    bool lattice = true;
    for (double d : gaps) {
      const double steps = std::round(d / smallest);
      // A lattice of more than 4 n planes is refused below; stop before int() of a step count
      // such as 5e12 (a 1e10 mm gap) or NaN, which is undefined (reproduced with fuzz_dicom_ct).
      if (!(steps <= 4.0 * n)) {
        lattice = false;
        break;
      }
      if (std::abs(d - steps * smallest) > tol * steps) lattice = false;
      if (steps > 1) g.unevenSpacing = true;
      g.latticeIndex.push_back(g.latticeIndex.back() + int(steps));
    }
    // Refine the spacing from the whole span: less sensitive to rounding in single gaps.
    if (lattice && g.latticeIndex.back() > 0)
      spacing = (g.positions.back() - g.positions.front()) / g.latticeIndex.back();
    const int latticeSlices = g.latticeIndex.back() + 1;
    if (!lattice || latticeSlices > 4 * n) {
      std::string list;
      for (const auto& [k, c] : hist) list += (list.empty() ? "" : ", ") + mm(k / 100.0);
      g.unevenSpacing = true;
      g.errors.push_back(label + ": non-uniform slice spacing (gaps " + list +
                         ") that fits no regular grid; resample the series to a constant "
                         "spacing before import");
      return g;
    }
    if (g.unevenSpacing) {
      g.missingSlices = true;
      std::vector<bool> have(latticeSlices, false);
      for (int k : g.latticeIndex) have[k] = true;
      std::string where;
      for (int k = 0; k < latticeSlices; ++k)
        if (!have[k]) {
          g.missingLatticeIndices.push_back(k);
          if (g.missingLatticeIndices.size() <= 8)
            where += (where.empty() ? "" : ", ") + mm(g.positions.front() + k * spacing);
        }
      if (g.missingLatticeIndices.size() > 8) where += ", ...";
      g.warnings.push_back(label + ": " + std::to_string(g.missingLatticeIndices.size()) +
                           " missing slice(s) or uneven spacing: gaps are multiples of " +
                           mm(spacing) + "; missing planes at " + where +
                           " (along the normal) are filled by linear interpolation between "
                           "neighbouring slices");
    }
  }

  g.sliceSpacing = spacing;
  g.grid.dims = {first.columns, first.rows, g.latticeIndex.back() + 1};
  // PixelSpacing is [row spacing, column spacing]: the i axis runs along a row, so its step
  // is the column spacing (dicompyler-core 0.5.5 swaps these; see the nelms README).
  g.grid.spacing = {first.columnSpacing, first.rowSpacing, spacing};
  g.grid.direction = Mat3::fromColumns(row, col, normal);
  g.grid.origin = slices[g.order.front()].position;
  return g;
}

}  // namespace penumbra::io
