#pragma once
// A few persistent threads for host work that runs beside the GPU: the GPU backends make the
// host memory of their next result (64 MiB filled and page-locked, milliseconds) on them while
// the current call runs.
//
// Why not std::async: it starts a thread per call, and on the GPU machine starting one cost
// 50-80 us (gamma on box4-256, one H100, 2026-11-26: the host reached its first GPU call 0.10-0.15
// ms after entry with two std::async calls before it, 0.03 ms without), inside a call that takes
// 2.7 ms in all. Handing a task to a waiting thread costs a lock and a notify.
//
// Tasks must not wait for other tasks of the pool (a full pool would deadlock). The pool runs
// every task it was given before its threads end (at process exit), so a future taken from it is
// always fulfilled.
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace penumbra {

class HelperThreads {
public:
  /// The process's pool (4 threads, started on first use).
  static HelperThreads& shared();

  explicit HelperThreads(int threads);
  ~HelperThreads();
  HelperThreads(const HelperThreads&) = delete;
  HelperThreads& operator=(const HelperThreads&) = delete;

  /// Runs f() on one of the threads; its result (or exception) arrives through the future.
  template <typename F>
  auto submit(F&& f) -> std::future<std::invoke_result_t<std::decay_t<F>>> {
    using R = std::invoke_result_t<std::decay_t<F>>;
    // std::function needs a copyable callable; the task is move-only.
    auto task = std::make_shared<std::packaged_task<R()>>(std::forward<F>(f));
    std::future<R> result = task->get_future();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace_back([task] { (*task)(); });
    }
    wake_.notify_one();
    return result;
  }

private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace penumbra
