#pragma once
/// Small helpers shared by the CPU reference backends (proton, photon): stage timing, the
/// KernelProfile record of a CPU stage, and progress of one stage mapped onto a sub-range of
/// the whole run.
#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>
#include <utility>

#include "core/kernel_profile.hpp"
#include "core/progress.hpp"

namespace penumbra {

/// Milliseconds since t0 (steady clock).
inline double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

/// The profile of one CPU stage timed once on `threads` threads (blockX holds the thread count).
inline KernelProfile cpuProfile(const std::string& kernel, const std::string& variant, double ms,
                                int threads) {
  KernelProfile p;
  p.kernel = kernel;
  p.variant = variant;
  p.backend = "cpu";
  p.device = "cpu (" + std::to_string(threads) + " threads)";
  p.blockX = threads;
  p.repetitions = 1;
  p.medianMs = p.minMs = ms;
  return p;
}

/// Maps a stage's own progress [0, 1] onto [lo, hi] of the whole run, so that the GUI's
/// progress bar and time-left estimate move during a single-beam plan (a beam loop alone
/// reports once per beam). Call it only on the job's thread (parallelFor's thread 0).
class SubRangeProgress : public ProgressSink {
public:
  SubRangeProgress(const JobControl& job, double lo, double hi, std::string stage)
      : job_(job), lo_(lo), hi_(hi), stage_(std::move(stage)) {}
  void report(double fraction, std::string_view) override {
    job_.report(lo_ + (hi_ - lo_) * std::clamp(fraction, 0.0, 1.0), stage_);
  }

private:
  const JobControl& job_;
  double lo_, hi_;
  std::string stage_;
};

}  // namespace penumbra
