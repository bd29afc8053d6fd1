// Device query for builds without CUDA: no devices, and a reason the user can act on.
#include "core/device.hpp"

namespace penumbra {

bool builtWithCuda() { return false; }

std::vector<DeviceInfo> queryCudaDevices(std::string* whyNot, bool /*withFreeMemory*/) {
  if (whyNot) *whyNot = "this build of Penumbra was configured without CUDA (PENUMBRA_CUDA=OFF)";
  return {};
}

std::size_t cudaFreeMemoryBytes(int /*index*/) { return 0; }

}  // namespace penumbra
