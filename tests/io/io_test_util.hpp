#pragma once
// Helpers shared by the importer tests.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/structure.hpp"
#include "dicom/dicom_import.hpp"

namespace penumbra::test {

/// A fresh empty folder under the system temp dir, removed when the object dies.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("penumbra-io-" + tag + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string str() const { return path_.string(); }
  std::string sub(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::size_t maskCount(const Mask& m) {
  std::size_t n = 0;
  for (auto v : m.data) n += v != 0;
  return n;
}

inline bool anyContains(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v)
    if (s.find(needle) != std::string::npos) return true;
  return false;
}

inline std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

/// The whole file as bytes ("" when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

/// Standard output of a shell command (for external validators such as dciodvfy).
inline std::string runCommand(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  char buf[512];
  while (pipe && fgets(buf, sizeof buf, pipe.get())) out += buf;
  return out;
}

}  // namespace penumbra::test
