#include "core/error.hpp"
#include "core/smoke.hpp"

namespace penumbra {

std::vector<std::int32_t> cudaSmokeAffine(int, std::int32_t, std::int32_t) {
  PENUMBRA_THROW(Unsupported, "this build of Penumbra has no CUDA support");
}

}  // namespace penumbra
