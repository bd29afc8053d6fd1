// Locating the shared photon beam data (never part of the repository, see the data README).
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "photon/physics/photon_beam_model.hpp"

namespace penumbra::photon {

std::string findPhotonDataDir() {
  std::vector<std::string> candidates;
  for (const char* var : {"PENUMBRA_DATA", "PENUMBRA_TEST_DATA"})
    if (const char* env = std::getenv(var); env && *env) candidates.emplace_back(env);
  candidates.emplace_back(std::string(PENUMBRA_SOURCE_DIR) + "/../shared/data");
  for (const auto& dir : candidates) {
    std::error_code ec;
    if (std::filesystem::is_directory(std::filesystem::path(dir) / "photon-beam", ec)) return dir;
  }
  return {};
}

}  // namespace penumbra::photon
