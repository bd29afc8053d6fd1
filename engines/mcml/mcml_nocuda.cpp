// Built without CUDA: the CUDA backend of MCML is absent (selectBackend never picks it).
#include "core/error.hpp"
#include "mcml/mcml.hpp"

namespace penumbra::mcml {

double runBatchCuda(const LayeredMedium&, const McmlConfig&, std::uint64_t, std::uint64_t,
                    McmlTally&, std::string*, int*, std::vector<KernelProfile>*) {
  PENUMBRA_THROW(Unsupported, "this build of Penumbra has no CUDA backend for MCML");
}

}  // namespace penumbra::mcml
