// Built instead of cuda/raytrace_cuda.cu when Penumbra has no CUDA: the CUDA entry points exist
// and say why they cannot run, so callers need no #ifdefs (the CPU functions always work).
#include "core/error.hpp"
#include "raytrace/raytrace.hpp"

namespace penumbra {

namespace {
[[noreturn]] void noCuda() {
  PENUMBRA_THROW(Unsupported,
                 "this build of Penumbra has no CUDA support (ray tracing runs on the CPU)");
}
}  // namespace

void traceRadiologicalPathsCuda(const Volume<float>&, const std::vector<Ray>&, DdaVariant,
                                std::vector<float>&, float*) {
  noCuda();
}

std::vector<std::vector<VoxelSegment>> traceRaysCuda(const Grid&, const std::vector<Ray>&,
                                                     DdaVariant, int) {
  noCuda();
}

KernelProfile timeRadiologicalPathsCuda(const Volume<float>&, const std::vector<Ray>&, DdaVariant,
                                        int) {
  noCuda();
}

}  // namespace penumbra
