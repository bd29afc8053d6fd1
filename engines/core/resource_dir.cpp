#include "core/resource_dir.hpp"

#include <cstdlib>

#ifndef PENUMBRA_RESOURCE_DIR
#define PENUMBRA_RESOURCE_DIR "resources"
#endif

namespace penumbra {

std::string resourceDir() {
  if (const char* env = std::getenv("PENUMBRA_RESOURCES"); env && *env) return env;
  return PENUMBRA_RESOURCE_DIR;
}

}  // namespace penumbra
