#include "gui/overlays/dashed_lines.hpp"

#include <cmath>
#include <cstdint>
#include <unordered_map>

namespace penumbra::gui {

namespace {

struct Point2 {
  float u, v;
};

std::uint64_t endKey(float u, float v) {
  // 1/256 index: far below a voxel, far above float noise of the edge interpolation.
  const auto qu = std::uint64_t(std::uint32_t(std::int32_t(std::lround(double(u) * 256.0))));
  const auto qv = std::uint64_t(std::uint32_t(std::int32_t(std::lround(double(v) * 256.0))));
  return (qu << 32) | qv;
}

/// Chains segments into polylines (each a list of points) through shared end points.
std::vector<std::vector<Point2>> chain(const std::vector<Segment2>& segs) {
  std::unordered_multimap<std::uint64_t, int> ends;  // key -> segment index
  ends.reserve(segs.size() * 2);
  for (int i = 0; i < int(segs.size()); ++i) {
    ends.emplace(endKey(segs[std::size_t(i)].u0, segs[std::size_t(i)].v0), i);
    ends.emplace(endKey(segs[std::size_t(i)].u1, segs[std::size_t(i)].v1), i);
  }
  std::vector<char> used(segs.size(), 0);
  auto nextAt = [&](const Point2& p) -> int {
    auto [a, b] = ends.equal_range(endKey(p.u, p.v));
    for (auto it = a; it != b; ++it)
      if (!used[std::size_t(it->second)]) return it->second;
    return -1;
  };
  auto degree = [&](float u, float v) { return int(ends.count(endKey(u, v))); };
  std::vector<std::vector<Point2>> lines;
  // Open chains first (start at an end point no other segment shares), then closed loops.
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < int(segs.size()); ++i) {
      if (used[std::size_t(i)]) continue;
      const Segment2& s = segs[std::size_t(i)];
      bool reversed = false;
      if (pass == 0) {
        if (degree(s.u0, s.v0) == 1) reversed = false;
        else if (degree(s.u1, s.v1) == 1) reversed = true;
        else continue;
      }
      std::vector<Point2> line;
      used[std::size_t(i)] = 1;
      if (!reversed) line = {{s.u0, s.v0}, {s.u1, s.v1}};
      else line = {{s.u1, s.v1}, {s.u0, s.v0}};
      for (int j = nextAt(line.back()); j >= 0; j = nextAt(line.back())) {
        used[std::size_t(j)] = 1;
        const Segment2& t = segs[std::size_t(j)];
        const bool forward = endKey(t.u0, t.v0) == endKey(line.back().u, line.back().v);
        line.push_back(forward ? Point2{t.u1, t.v1} : Point2{t.u0, t.v0});
      }
      lines.push_back(std::move(line));
    }
  }
  return lines;
}

}  // namespace

std::vector<Segment2> dashSegments(const std::vector<Segment2>& segments, double mmPerU,
                                   double mmPerV, double dashMm, double gapMm) {
  if (!(dashMm > 0) || !(gapMm > 0)) return segments;
  std::vector<Segment2> out;
  out.reserve(segments.size());
  for (const auto& line : chain(segments)) {
    bool on = true;
    double left = dashMm;  // length left in the current dash or gap [mm]
    for (std::size_t k = 0; k + 1 < line.size(); ++k) {
      const Point2 a = line[k], b = line[k + 1];
      const double du = (b.u - a.u) * mmPerU, dv = (b.v - a.v) * mmPerV;
      const double len = std::sqrt(du * du + dv * dv);
      double t = 0;  // position along this piece [mm]
      while (t < len) {
        const double step = std::min(left, len - t);
        if (on && step > 0) {
          const double f0 = t / len, f1 = (t + step) / len;
          out.push_back({float(a.u + (b.u - a.u) * f0), float(a.v + (b.v - a.v) * f0),
                         float(a.u + (b.u - a.u) * f1), float(a.v + (b.v - a.v) * f1)});
        }
        t += step;
        left -= step;
        if (left <= 1e-12) {
          on = !on;
          left = on ? dashMm : gapMm;
        }
      }
    }
  }
  return out;
}

}  // namespace penumbra::gui
