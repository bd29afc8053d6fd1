#include "core/error.hpp"

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

static std::string composeWhat(ErrorCode code, const std::string& message, const char* file,
                               int line, const std::string& detail) {
  // Built with append() rather than operator+ chains: GCC 12 flags those with a false
  // -Wrestrict warning.
  std::string what(toString(code));
  what.append(": ").append(message);
  if (!detail.empty()) what.append(" (").append(detail).append(")");
  if (file && *file) what.append(" [").append(file).append(":").append(std::to_string(line)).append("]");
  return what;
}

Error::Error(ErrorCode code, std::string message, const char* file, int line, std::string detail)
    : std::runtime_error(composeWhat(code, message, file, line, detail)),
      code_(code),
      message_(std::move(message)),
      file_(file ? file : ""),
      line_(line),
      detail_(std::move(detail)) {}

}  // namespace penumbra
