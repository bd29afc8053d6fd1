#include "core/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace penumbra {

const char* toString(ErrorCode code) {
  switch (code) {
    case ErrorCode::InvalidArgument: return "invalid argument";
    case ErrorCode::Io: return "I/O error";
    case ErrorCode::Format: return "format error";
    case ErrorCode::Unsupported: return "unsupported";
    case ErrorCode::OutOfMemory: return "out of memory";
    case ErrorCode::Cuda: return "CUDA error";
    case ErrorCode::Cancelled: return "cancelled";
    case ErrorCode::Internal: return "internal error";
  }
  return "error";
}

// what() is shown to users (GUI dialogs, penumbra-cli), so it carries no source location.
static std::string composeWhat(ErrorCode code, const std::string& message,
                               const std::string& detail) {
  // Built with append() rather than operator+ chains: GCC 12 flags those with a false
  // -Wrestrict warning.
  std::string what(toString(code));
  what.append(": ").append(message);
  if (!detail.empty()) what.append(" (").append(detail).append(")");
  return what;
}

Error::Error(ErrorCode code, std::string message, const char* file, int line, std::string detail)
    : std::runtime_error(composeWhat(code, message, detail)),
      code_(code),
      message_(std::move(message)),
      file_(file ? file : ""),
      line_(line),
      detail_(std::move(detail)) {
  // The debug channel: where it was thrown, on stderr, only when asked for.
  if (const char* debug = std::getenv("PENUMBRA_DEBUG");
      debug && *debug && std::string_view(debug) != "0" && !file_.empty())
    std::fprintf(stderr, "penumbra debug: %s [thrown at %s:%d]\n", what(), file_.c_str(), line_);
}

}  // namespace penumbra
