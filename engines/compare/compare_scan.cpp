// The doses' own check before a comparison: no NaN or infinite voxel (the first one named), and
// their maxima; remembered per dose object so that a new criterion on the same doses does not
// scan them again.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "compare/compare_internal.hpp"
#include "core/error.hpp"
#include "core/parallel_for.hpp"

namespace penumbra::compare::detail {

namespace {

/// The maxima of the last doses that scanned clean, so that a new criterion on the same doses
/// (the GUI's and the bench's warm case) does not scan 2 x 64 MB again. Same identity rule as
/// the GPU cache (compare_cuda.cu): a dose reaches the engine as shared_ptr<const Volume>,
/// which nobody may change while it is shared, so the same owner, data and size mean the same
/// voxels.
class ScanMemo {
public:
  bool find(const std::shared_ptr<const Volume<float>>& v, double& max) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (const Entry& e : entries_)
      if (!e.owner.expired() && e.owner.lock() == v && e.data == v->data.data() &&
          e.voxels == v->data.size()) {
        max = e.max;
        return true;
      }
    return false;
  }
  void add(const std::shared_ptr<const Volume<float>>& v, double max) {
    const std::lock_guard<std::mutex> lock(mutex_);
    entries_[next_] = Entry{v, v->data.data(), v->data.size(), max};
    next_ = (next_ + 1) % entries_.size();
  }

private:
  struct Entry {
    std::weak_ptr<const Volume<float>> owner;
    const float* data = nullptr;
    std::size_t voxels = 0;
    double max = 0;
  };
  std::mutex mutex_;
  std::array<Entry, 4> entries_;
  std::size_t next_ = 0;
};

ScanMemo& scanMemo() {
  static ScanMemo memo;
  return memo;
}

}  // namespace

VolumeFacts checkVolumes(const CompareRequest& r, int threads, const JobControl& job) {
  VolumeFacts facts;
  struct Scan {
    double max = -std::numeric_limits<double>::infinity();
    std::size_t bad = 0, firstBad = std::numeric_limits<std::size_t>::max();
  };
  auto invalid = [](const std::string& what) {
    throw Error(ErrorCode::InvalidArgument, "dose comparison: " + what);
  };
  auto scan = [&](const Volume<float>& v, const char* which) {
    const std::size_t slice = std::size_t(v.grid.dims[0]) * v.grid.dims[1];
    std::vector<Scan> parts(std::size_t(v.grid.dims[2]));
    parallelFor(parts.size(), threads, job, [&](std::size_t k, int) {
      Scan s;
      const float* p = v.data.data() + k * slice;
      for (std::size_t i = 0; i < slice; ++i) {
        const float d = p[i];
        if (!std::isfinite(d)) {
          if (s.bad++ == 0) s.firstBad = k * slice + i;
        } else if (d > s.max) {
          s.max = d;
        }
      }
      parts[k] = s;
    });
    Scan all;
    for (const Scan& s : parts) {
      all.max = std::max(all.max, s.max);
      if (s.bad && all.bad == 0) all.firstBad = s.firstBad;
      all.bad += s.bad;
    }
    if (all.bad) {
      const std::size_t nx = std::size_t(v.grid.dims[0]), ny = std::size_t(v.grid.dims[1]);
      const std::size_t f = all.firstBad;
      invalid(std::string("the ") + which + " dose has " + std::to_string(all.bad) +
              " NaN or infinite voxel(s), the first at (i, j, k) = (" + std::to_string(f % nx) +
              ", " + std::to_string(f / nx % ny) + ", " + std::to_string(f / nx / ny) + ")");
    }
    return all.max;
  };
  auto scanOnce = [&](const std::shared_ptr<const Volume<float>>& v, const char* which) {
    double max = 0;
    if (scanMemo().find(v, max)) return max;
    max = scan(*v, which);  // throws for NaN or infinite voxels: nothing remembered
    scanMemo().add(v, max);
    return max;
  };
  facts.referenceMax = scanOnce(r.reference, "reference");
  facts.evaluatedMax = scanOnce(r.evaluated, "evaluated");
  return facts;
}

}  // namespace penumbra::compare::detail
