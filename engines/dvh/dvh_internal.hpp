#pragma once
// Pieces shared by the DVH sources (internal to engines/dvh).
#include <cstddef>

#include "core/dose_volume.hpp"
#include "dvh/dose_histogram.hpp"
#include "dvh/dvh.hpp"

namespace penumbra::dvh::detail {

/// Histogram sized for `dose`: bins of options.binWidthGy (widened beyond 200k bins) up to a
/// little above the dose maximum.
DoseHistogram makeHistogram(const DoseVolume& dose, const DvhOptions& options);

/// Curve (cc and %) and statistics of a finished histogram into `result`.
void fillCurveAndStatistics(const DoseHistogram& hist, const DoseMoments& moments,
                            const DvhOptions& options, DvhResult& result);

/// Throws InvalidArgument unless the dose is usable for a DVH.
void validateDose(const DoseVolume& dose);

/// Threads to use for `items` independent pieces of work.
int threadCount(const DvhOptions& options, std::size_t items);

/// Adds the "outside the dose grid" warning to `result` when there is such volume.
void noteOutside(double outsideMm3, double totalMm3, const DvhOptions& options, DvhResult& result);

}  // namespace penumbra::dvh::detail
