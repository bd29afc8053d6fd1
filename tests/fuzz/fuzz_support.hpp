#pragma once
// Shared by the libFuzzer harnesses (docs/fuzzing.md): a scratch folder for readers that take a
// path, the split of one input into several files, and the exception policy.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace penumbra::fuzz {

/// A folder of this process, in /dev/shm when it exists (every input is written to a file,
/// since the app's readers take paths; RAM avoids disk traffic at thousands of files a second),
/// removed at a normal exit (a crash leaves it behind).
inline const std::filesystem::path& scratchDir() {
  // Never destroyed: the exit handler below runs after the destructors of function-local
  // statics constructed before it was registered, so it must not use one.
  static const std::filesystem::path* const dir = [] {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path base = fs::is_directory("/dev/shm", ec) ? fs::path("/dev/shm")
                                                          : fs::temp_directory_path();
    auto* d = new fs::path(base / ("penumbra-fuzz-" + std::to_string(::getpid())));
    fs::create_directories(*d);
    return d;
  }();
  static const bool cleanup = [] {
    std::atexit([] {
      std::error_code e;
      std::filesystem::remove_all(*dir, e);
    });
    return true;
  }();
  (void)cleanup;
  return *dir;
}

/// Writes `bytes` to `name` in the scratch folder and returns the path.
inline std::string writeInput(const std::string& name, std::string_view bytes) {
  const std::string path = (scratchDir() / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz harness: cannot write %s\n", path.c_str());
    std::abort();
  }
  return path;
}

/// Separates the files of one input (harnesses that read several files, e.g. the slices of a
/// CT series). An input without it is one file.
inline constexpr std::string_view kNextFile = "\n--penumbra-fuzz-next-file--\n";

inline std::vector<std::string_view> splitFiles(const std::uint8_t* data, std::size_t size,
                                                std::size_t maxFiles) {
  std::string_view all(reinterpret_cast<const char*>(data), size);
  std::vector<std::string_view> files;
  while (files.size() + 1 < maxFiles) {
    const std::size_t at = all.find(kNextFile);
    if (at == std::string_view::npos) break;
    files.push_back(all.substr(0, at));
    all.remove_prefix(at + kNextFile.size());
  }
  files.push_back(all);
  return files;
}

/// Runs a reader the way the app does: penumbra::Error and any other std::exception become a
/// message for the user (gui/shell and penumbra-cli catch std::exception), so only crashes,
/// sanitizer reports, leaks, timeouts and out-of-memory count as findings. With
/// PENUMBRA_FUZZ_STRICT=1 an exception that is not a penumbra::Error aborts: the readers
/// document Error(Io/Format/...) and nothing else.
template <class F>
void runReader(F&& read) {
  static const bool strict = [] {
    const char* s = std::getenv("PENUMBRA_FUZZ_STRICT");
    return s && *s == '1';
  }();
  try {
    read();
  } catch (const Error&) {
  } catch (const std::exception& e) {
    if (strict) {
      std::fprintf(stderr, "fuzz harness: a reader threw a non-penumbra exception: %s\n", e.what());
      std::abort();
    }
  }
}

/// A property the readers promise (e.g. a round trip); aborts with `what` so libFuzzer keeps
/// the input.
inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz harness: property violated: %s\n", what);
    std::abort();
  }
}

}  // namespace penumbra::fuzz
