#pragma once
// Where tests find ../shared/data: the PENUMBRA_TEST_DATA environment variable, else
// <source dir>/../shared/data. Tests that need it skip with a message when it is absent.
#include <cstdlib>
#include <filesystem>
#include <string>

namespace penumbra::test {

inline std::string testDataDir() {
  if (const char* env = std::getenv("PENUMBRA_TEST_DATA"); env && *env) return env;
  return std::string(PENUMBRA_SOURCE_DIR) + "/../shared/data";
}

inline std::string dataPath(const std::string& rel) { return testDataDir() + "/" + rel; }

inline bool haveData(const std::string& rel) {
  return std::filesystem::exists(dataPath(rel));
}

}  // namespace penumbra::test

/// Skips the current GoogleTest when a data file or folder is absent.
#define PENUMBRA_REQUIRE_DATA(rel)                                                       \
  do {                                                                                   \
    if (!::penumbra::test::haveData(rel))                                                \
      GTEST_SKIP() << "test data not found: " << ::penumbra::test::dataPath(rel)         \
                   << " (set PENUMBRA_TEST_DATA)";                                       \
  } while (0)
