// Built instead of cuda/*.cu when Penumbra has no CUDA: the CUDA entry point exists and says why
// it cannot run. computePhotonDose() never gets here in such a build (selectBackend() resolves
// to the CPU), but a direct call must fail with a clear message, not a link error.
#include "core/error.hpp"
#include "photon/photon_backend.hpp"

namespace penumbra::photon::detail {

void computeCuda(const ResolvedRequest&, PhotonDoseResult&, const JobControl&) {
  PENUMBRA_THROW(Unsupported,
                 "this build of Penumbra has no CUDA support (the photon collapsed-cone engine "
                 "runs on the CPU)");
}

}  // namespace penumbra::photon::detail
