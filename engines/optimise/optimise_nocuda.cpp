// Builds without CUDA: the SpMV engine is never on the GPU, so the GPU loop is never chosen;
// a direct call says why.
#include "core/error.hpp"
#include "optimise/optimise.hpp"

namespace penumbra::optimise::detail {

void optimiseOnGpu(const spmv::SpmvEngine&, const PlanObjective&, const std::vector<double>&,
                   const OptimiserOptions&, const JobControl&, const IterationCallback&,
                   OptimiseResult&) {
  throw Error(ErrorCode::Unsupported, "optimise: this build has no CUDA support", __FILE__,
              __LINE__);
}

}  // namespace penumbra::optimise::detail
