#pragma once
// Shared by the case-file tests: the Format message of a document, and a refused write that
// throws InvalidArgument naming the bad value and leaves the existing file as it was, with no
// temporary beside it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "case/case_file.hpp"
#include "core/error.hpp"

namespace penumbra::test {

/// The Format message of parsing `doc`, or "" when it parses.
inline std::string formatError(const nlohmann::json& doc) {
  try {
    io::parseCaseFile(doc.dump());
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::Format) << e.message();
    return e.message();
  }
  return "";
}

/// `path` holds "previous" and is the only file in `dir` before the call.
inline void expectRefusedWriteKeepsFile(const std::function<void()>& write,
                                        const std::string& expected,
                                        const std::filesystem::path& path,
                                        const std::filesystem::path& dir) {
  try {
    write();
    ADD_FAILURE() << "written: " << expected;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_NE(e.message().find(expected), std::string::npos) << e.message();
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "previous");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
}

}  // namespace penumbra::test
