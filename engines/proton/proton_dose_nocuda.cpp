// Built instead of cuda/*.cu when Penumbra has no CUDA: the CUDA entry point exists and says why
// it cannot run. computeProtonDose() never gets here in such a build (selectBackend() resolves
// to the CPU), but a direct call must fail with a clear message, not a link error.
#include "core/error.hpp"
#include "proton/proton_backend.hpp"

namespace penumbra::proton::detail {

void computeCuda(ResolvedRequest&, ProtonDoseResult&, const JobControl&) {
  PENUMBRA_THROW(Unsupported,
                 "this build of Penumbra has no CUDA support (the proton engine runs on the CPU)");
}

std::pair<std::vector<int>, std::vector<int>> deviceTileListsForTests(const PreparedBeam&) {
  PENUMBRA_THROW(Unsupported, "this build of Penumbra has no CUDA support (no GPU tile lists)");
}

DoseMatrixCsr buildDoseMatrixCuda(const ResolvedRequest&, const JobControl&,
                                  std::vector<KernelProfile>&) {
  PENUMBRA_THROW(Unsupported,
                 "this build of Penumbra has no CUDA support (the dose matrix is built on the CPU)");
}

std::shared_ptr<spmv::DeviceHalfCsr> buildDoseMatrixCudaOnDevice(const ResolvedRequest&, const JobControl&,
                                                                 std::vector<KernelProfile>&) {
  PENUMBRA_THROW(Unsupported, "this build of Penumbra has no CUDA support (no dose matrix on a GPU)");
}

}  // namespace penumbra::proton::detail
