#pragma once
// Internal: the host reductions of the robustness evaluation (robustness.hpp), one pass over
// each scenario's dose. Not part of the public API; the tests reach the pieces through it.
//
// A structure's mask is walked as runs of consecutive voxels along i (MaskRuns), made once per
// evaluation: a scenario's reduction then touches only the voxels of its structures, in
// contiguous stretches, whatever the number of structures or their overlaps. Histograms use one
// bin width for every structure and scenario (bands compare bin by bin); each thread counts
// into its own histograms, merged after the pass, and partial sums are kept per fixed chunk and
// added in chunk order, so the results do not depend on the thread count or scheduling.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/progress.hpp"
#include "robust/robustness.hpp"

namespace penumbra::robust::detail {

/// A mask as runs of consecutive voxels along i, cut into work chunks of about equal size.
struct MaskRuns {
  std::vector<std::uint64_t> start;   ///< linear index of each run's first voxel, ascending
  std::vector<std::uint32_t> length;  ///< voxels of each run (>= 1)
  std::vector<std::size_t> chunkBegin;  ///< first run of each chunk; back() == runs
  std::int64_t voxels = 0;
};

/// The runs of `mask` (parallel over slices on `threads` threads).
MaskRuns maskRuns(const Mask& mask, int threads);

/// Dose [Gy] that at least `fraction` (0..1) of the `voxels` receive, read off the histogram
/// `counts` (bin b holds doses in [b w, (b + 1) w)) with the voxels spread evenly inside their
/// bin, clamped to the exact [minGy, maxGy]. fraction 0 gives maxGy, 1 gives minGy.
double doseAtFraction(const std::vector<std::uint64_t>& counts, std::int64_t voxels,
                      double binWidthGy, double fraction, double minGy, double maxGy);

/// The cumulative DVH (% of `voxels` at or above each bin edge b w, b = 0..bins) of `counts`.
std::vector<double> cumulativePercent(const std::vector<std::uint64_t>& counts,
                                      std::int64_t voxels, std::size_t bins);

/// The statistics of one structure in one scenario, before its curve is made.
struct ScenarioHistogram {
  std::vector<std::uint64_t> counts;  ///< trimmed after the last non-empty bin
  double sumGy = 0;
  double minGy = 0, maxGy = 0;
};

/// Reduces the scenario doses as they come: voxel-wise minimum, maximum and sum; per structure
/// and scenario a histogram with exact sum, minimum and maximum. add() the nominal first.
class ScenarioReducer {
public:
  /// grid: the dose grid; scenarios: how many add() calls will come; binWidthGy <= 0: 1/500 of
  /// the nominal's maximum (after doseScale); threads: host threads of the passes.
  ScenarioReducer(const Grid& grid, const std::vector<RobustStructure>& structures,
                  int scenarios, double binWidthGy, double doseScale, int threads);
  ~ScenarioReducer();
  ScenarioReducer(const ScenarioReducer&) = delete;
  ScenarioReducer& operator=(const ScenarioReducer&) = delete;

  /// Makes the structures' mask runs and allocates the voxel-wise volumes (done by the first
  /// add() when not called before; the evaluation calls it on the reducing thread while the
  /// engine computes the nominal dose).
  void prepare();
  /// Reduces the dose of scenario `k` (Gy as computed; doseScale is applied here). The first
  /// call must be the nominal's (k = 0): it fixes the bin width, and its dose is kept (scaled,
  /// moved out of `dose`) as the result's nominal dose; the next two doses' memory is kept
  /// for the worst case and the spread. Throws CancelledError on cancel.
  void add(int k, Volume<float>&& dose, const JobControl& job);
  /// The voxel-wise volumes (nominal, minimum, maximum, mean, worst case, spread) and the
  /// per-structure DVHs and bands, into `out` (its scenarios and structures' names set by the
  /// caller). Call once, after every scenario was added.
  void finish(RobustnessResult& out, const JobControl& job);

  double binWidthGy() const { return binWidth_; }
  const std::vector<std::string>& messages() const { return messages_; }

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  double binWidth_ = 0;
  std::vector<std::string> messages_;
};

/// The robustness table of `out` (its structures' DVH statistics must be filled), flagged
/// against the limits of `structures` (same order as out.structures).
std::vector<RobustnessRow> robustnessTable(const RobustnessResult& out,
                                           const std::vector<RobustStructure>& structures);

}  // namespace penumbra::robust::detail
