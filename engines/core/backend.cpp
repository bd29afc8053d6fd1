#include <algorithm>
#include <cctype>
#include <cstdio>

#include "core/device.hpp"
#include "core/error.hpp"

namespace penumbra {

const char* toString(Backend b) {
  switch (b) {
    case Backend::Cpu: return "cpu";
    case Backend::Cuda: return "cuda";
    case Backend::Auto: return "auto";
  }
  return "cpu";
}

Backend parseBackend(const std::string& text) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  if (t == "cpu") return Backend::Cpu;
  if (t == "cuda" || t == "gpu") return Backend::Cuda;
  if (t == "auto") return Backend::Auto;
  PENUMBRA_THROW(InvalidArgument, "unknown backend '" + text + "' (expected cpu, cuda or auto)");
}

BackendChoice selectBackend(Backend requested, bool withFreeMemory) {
  BackendChoice choice;
  if (requested == Backend::Cpu) return choice;
  std::string why;
  const auto devices = queryCudaDevices(&why, withFreeMemory);
  if (!devices.empty()) {
    choice.backend = Backend::Cuda;
    choice.device = devices.front();
    return choice;
  }
  choice.backend = Backend::Cpu;
  choice.fellBack = true;
  choice.message = "No usable GPU (" + why + "); running on the CPU backend instead.";
  return choice;
}

std::string formatBytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 4) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace penumbra
