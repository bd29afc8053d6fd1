#pragma once
// Running the built penumbra-cli from a test: its exit status and output, a scratch folder, and
// small text helpers. PENUMBRA_CLI is the executable's path (tests/cli/CMakeLists.txt).
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

namespace penumbra::test_cli {

namespace fs = std::filesystem;

struct CliRun {
  int status = -1;     ///< exit status; 128 + signal when killed
  std::string output;  ///< stdout and stderr together
};

/// Seconds a run may take before it is killed. The sanitizer build is several times slower: its
/// brain-case compare with a PDF report took 67 s alone and over 120 s beside another test
/// under ctest -j 2 on the two-core CI machine (2026-11-27), so it gets five times the limit.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr int kCliTimeoutS = 600;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr int kCliTimeoutS = 600;
#else
inline constexpr int kCliTimeoutS = 120;
#endif
#else
inline constexpr int kCliTimeoutS = 120;
#endif

/// Runs `prefix penumbra-cli args` through the shell in `dir`; prefix may set limits ("ulimit").
/// A run that does not end within kCliTimeoutS is killed (status 124): a refusal that regressed
/// into a real 10^12-packet run must not hang the suite.
inline CliRun runCli(const std::string& args, const std::string& dir = ".",
                     const std::string& prefix = "") {
  const std::string cmd = "cd '" + dir + "' && " + prefix + " timeout " +
                          std::to_string(kCliTimeoutS) + " '" + PENUMBRA_CLI + "' " + args + " 2>&1";
  CliRun r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe)) r.output += buf;
  const int st = pclose(pipe);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
  return r;
}

inline bool contains(const std::string& text, const std::string& needle) {
  return text.find(needle) != std::string::npos;
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("penumbra-cli-" + std::to_string(std::random_device{}()));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::string sub(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_))
      names.push_back(e.path().filename().string());
    return names;
  }

 private:
  fs::path path_;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

}  // namespace penumbra::test_cli
