#pragma once
/// Typed errors for every layer below the GUI. An engine or importer never calls exit():
/// it throws penumbra::Error, which carries what went wrong, where it was detected (source
/// file and line), and for CUDA failures the runtime's error string, so the GUI can show a
/// message and keep running. what() is for users and holds no source location; file() and
/// line() are for debugging, and with the environment variable PENUMBRA_DEBUG set (not "0")
/// every Error is also written to stderr with them when it is thrown.
#include <stdexcept>
#include <string>

namespace penumbra {

enum class ErrorCode {
  InvalidArgument,  ///< the request itself is inconsistent (bad size, bad parameter)
  Io,               ///< a file could not be read or written
  Format,           ///< a file was read but its content is malformed
  Unsupported,      ///< valid input that this version refuses (e.g. gantry tilt)
  OutOfMemory,      ///< host or device memory does not suffice; message carries sizes
  Cuda,             ///< a CUDA runtime call or kernel launch failed
  Cancelled,        ///< the user cancelled the job
  Internal          ///< a broken invariant: a bug in Penumbra
};

const char* toString(ErrorCode code);

class Error : public std::runtime_error {
public:
  Error(ErrorCode code, std::string message, const char* file = "", int line = 0,
        std::string detail = {});

  ErrorCode code() const noexcept { return code_; }
  /// The user-facing message without source location.
  const std::string& message() const noexcept { return message_; }
  const std::string& file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  /// Extra technical detail, e.g. the CUDA error string.
  const std::string& detail() const noexcept { return detail_; }

private:
  ErrorCode code_;
  std::string message_;
  std::string file_;
  int line_;
  std::string detail_;
};

/// Thrown by CancelToken::throwIfCancelled(); caught by job runners to end in state "cancelled".
class CancelledError : public Error {
public:
  CancelledError(const char* file, int line)
      : Error(ErrorCode::Cancelled, "cancelled by the user", file, line) {}
};

}  // namespace penumbra

#define PENUMBRA_THROW(code, msg) \
  throw ::penumbra::Error(::penumbra::ErrorCode::code, (msg), __FILE__, __LINE__)

#define PENUMBRA_REQUIRE(cond, code, msg) \
  do {                                    \
    if (!(cond)) PENUMBRA_THROW(code, msg); \
  } while (0)
