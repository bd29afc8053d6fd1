// Built without CUDA: the backend choice never picks CUDA, so this is only reached by a direct
// call, which gets the same Unsupported error as the other engines.
#include "compare/compare_internal.hpp"
#include "core/error.hpp"

namespace penumbra::compare::detail {

PointSummary runCompareCuda(const CompareRequest&, const PointSetup<double>&, CompareResult&,
                            const JobControl&) {
  PENUMBRA_THROW(Unsupported, "this build of Penumbra has no CUDA backend");
}

void releaseGpuCache() {}

GpuCacheUse gpuCacheUse(const CompareRequest&) { return {}; }

}  // namespace penumbra::compare::detail
