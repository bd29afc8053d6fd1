#pragma once
/// Measured cost of one kernel (or CPU routine) variant: the record behind the GUI profiling
/// panel, the CLI bench table and the JSON export.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace penumbra {

struct KernelProfile {
  std::string kernel;   ///< e.g. "csr_spmv_warp_per_row"
  std::string variant;  ///< e.g. "baseline", "dda-nc"
  std::string backend;  ///< "cpu" or "cuda"
  std::string device;   ///< device name
  int gridX = 0, blockX = 0;
  int registersPerThread = 0;
  int sharedBytesPerBlock = 0;
  double theoreticalOccupancy = 0;  ///< 0..1
  int repetitions = 0;
  double medianMs = 0;
  double minMs = 0;
  double bytes = 0;  ///< from the engine's own traffic model
  double flops = 0;
  double peakBandwidthGBs = 0;  ///< the device's measured bandwidth used for pctPeakBandwidth

  double gbPerS() const { return medianMs > 0 ? bytes / (medianMs * 1e6) : 0; }
  double gflopPerS() const { return medianMs > 0 ? flops / (medianMs * 1e6) : 0; }
  double pctPeakBandwidth() const {
    return peakBandwidthGBs > 0 ? 100.0 * gbPerS() / peakBandwidthGBs : 0;
  }
};

/// Collects profiles of one run. Engines call record(); views read records().
class ProfilerHook {
public:
  virtual ~ProfilerHook() = default;
  virtual void record(const KernelProfile& p) { records_.push_back(p); }
  const std::vector<KernelProfile>& records() const { return records_; }
  void clear() { records_.clear(); }

private:
  std::vector<KernelProfile> records_;
};

/// Median of a list of times (ms); empty -> 0.
double medianOf(std::vector<double> values);

/// Times a host callable `reps` times after `warmups` untimed calls; returns the median ms.
template <typename F>
KernelProfile timeHost(const std::string& kernel, const std::string& variant, F&& fn, int reps,
                       int warmups = 1) {
  for (int w = 0; w < warmups; ++w) fn();
  std::vector<double> ms;
  ms.reserve(reps);
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const auto t1 = std::chrono::steady_clock::now();
    ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  KernelProfile p;
  p.kernel = kernel;
  p.variant = variant;
  p.backend = "cpu";
  p.repetitions = reps;
  p.medianMs = medianOf(ms);
  p.minMs = ms.empty() ? 0 : *std::min_element(ms.begin(), ms.end());
  return p;
}

/// One host stage of an engine call, timed once, as a profile row (backend "cpu", device
/// "host"): the profiling panel and the bench show where a call's time goes besides kernels.
inline KernelProfile hostStageProfile(const std::string& kernel, const std::string& variant,
                                      double ms) {
  KernelProfile p;
  p.kernel = kernel;
  p.variant = variant;
  p.backend = "cpu";
  p.device = "host";
  p.repetitions = 1;
  p.medianMs = p.minMs = ms;
  return p;
}

/// One JSON object per profile, as an array (for `penumbra-cli bench --json`).
std::string profilesToJson(const std::vector<KernelProfile>& profiles);

}  // namespace penumbra
