#pragma once
/// Toolkit-free progress and cancel for long computations. Engines report progress and poll
/// the token between kernel launches / work batches; the GUI adapts these to its job system.
/// No Qt here: engines must stay usable from the CLI and the tests.
#include <atomic>
#include <string_view>

#include "core/error.hpp"

namespace penumbra {

class CancelToken {
public:
  void requestCancel() noexcept { cancelled_.store(true, std::memory_order_relaxed); }
  bool isCancelled() const noexcept { return cancelled_.load(std::memory_order_relaxed); }
  void reset() noexcept { cancelled_.store(false, std::memory_order_relaxed); }

private:
  std::atomic<bool> cancelled_{false};
};

/// Receives progress from an engine or importer. Called on the worker thread; implementations
/// must be thread-safe with respect to whatever reads them (the GUI queues to its own thread).
class ProgressSink {
public:
  virtual ~ProgressSink() = default;
  /// fraction in [0, 1]; stage is a short user-facing description ("reading slices").
  virtual void report(double fraction, std::string_view stage) = 0;
};

/// What a job hands to an engine: both members may be null.
struct JobControl {
  ProgressSink* progress = nullptr;
  const CancelToken* cancel = nullptr;

  void report(double fraction, std::string_view stage) const {
    if (progress) progress->report(fraction, stage);
  }
  bool cancelled() const { return cancel && cancel->isCancelled(); }
  /// Throws CancelledError when the user asked to cancel.
  void checkCancel(const char* file = __builtin_FILE(), int line = __builtin_LINE()) const {
    if (cancelled()) throw CancelledError(file, line);
  }
};

}  // namespace penumbra
