#include <algorithm>
#include <cstdlib>

#include "cli_commands.hpp"

namespace penumbra::cli {

std::string takeOption(Args& args, const std::string& name, const std::string& fallback) {
  const auto it = std::find(args.begin(), args.end(), name);
  if (it == args.end() || it + 1 == args.end()) return fallback;
  std::string value = *(it + 1);
  args.erase(it, it + 2);
  return value;
}

bool takeFlag(Args& args, const std::string& name) {
  const auto it = std::find(args.begin(), args.end(), name);
  if (it == args.end()) return false;
  args.erase(it);
  return true;
}

std::string dataDir() {
  if (const char* env = std::getenv("PENUMBRA_TEST_DATA"); env && *env) return env;
  return std::string(PENUMBRA_SOURCE_DIR) + "/../shared/data";
}

}  // namespace penumbra::cli
