#pragma once
// Shared by the comparison's front end (compare.cpp), its statistics (compare_stats.cpp) and its
// backends (CPU in compare.cpp, CUDA in cuda/compare_cuda.cu). Not part of the engine's API.
#include <cstdint>

#include "compare/compare.hpp"
#include "compare/compare_point.hpp"

namespace penumbra::compare::detail {

/// What validate() learns from the volumes while checking them.
struct VolumeFacts {
  double referenceMax = 0, evaluatedMax = 0;
};
VolumeFacts checkVolumes(const CompareRequest& request, int threads, const JobControl& job);

/// Criteria and geometry turned into numbers for the per-point code.
PointSetup<double> makePointSetup(const CompareRequest& request, double normalisationGy);
/// The same in float for the GPU search (positions stay double).
PointSetup<float> toFloat(const PointSetup<double>& s);

/// Fills result.gammaStats, differenceStats, the class counts and the per-structure pass
/// rates from result.gamma and result.difference. Deterministic: per-slice partial sums are
/// merged in slice order whatever the thread count.
void summarise(const CompareRequest& request, const PointSetup<double>& setup, int threads,
               std::int64_t depthLimited, CompareResult& result);

/// The CUDA backend (cuda/compare_cuda.cu, or compare_nocuda.cpp without CUDA). Sets gamma and
/// difference (grid and data), profiles and device; returns the number of depth-limited points.
std::int64_t runCompareCuda(const CompareRequest& request, const PointSetup<double>& setup,
                            CompareResult& result, const JobControl& job);
/// Drops what the CUDA backend keeps between calls (nothing without CUDA).
void releaseGpuCache();

}  // namespace penumbra::compare::detail
