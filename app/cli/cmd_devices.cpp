#include <iostream>

#include "cli_commands.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/smoke.hpp"

namespace penumbra::cli {

int cmdDevices(Args) {
  std::string why;
  const auto devices = queryCudaDevices(&why);
  std::cout << "built with CUDA: " << (builtWithCuda() ? "yes" : "no") << "\n";
  if (devices.empty()) std::cout << "no usable CUDA device: " << why << "\n";
  for (const auto& d : devices)
    std::cout << "GPU " << d.index << ": " << d.name << ", " << d.multiprocessors
              << " SMs, compute " << d.computeMajor << "." << d.computeMinor << ", "
              << formatBytes(double(d.totalMemoryBytes)) << " ("
              << formatBytes(double(d.freeMemoryBytes)) << " free), L2 "
              << formatBytes(double(d.l2CacheBytes)) << "\n";
  const auto choice = selectBackend(Backend::Auto);
  std::cout << "backend 'auto' -> " << toString(choice.backend)
            << (choice.device ? " on " + choice.device->name : std::string()) << "\n";
  if (!choice.message.empty()) std::cout << choice.message << "\n";
  if (choice.backend == Backend::Cuda) {
    const int n = 1 << 20;
    const auto v = cudaSmokeAffine(n, 2, 1);
    for (int i = 0; i < n; ++i)
      if (v[i] != 2 * i + 1) {
        std::cout << "GPU smoke test FAILED at element " << i << "\n";
        return 1;
      }
    std::cout << "GPU smoke test passed (" << n << " elements)\n";
  }
  return 0;
}

}  // namespace penumbra::cli
