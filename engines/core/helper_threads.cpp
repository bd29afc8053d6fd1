#include "core/helper_threads.hpp"

namespace penumbra {

HelperThreads& HelperThreads::shared() {
  static HelperThreads pool(4);
  return pool;
}

HelperThreads::HelperThreads(int threads) {
  for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { run(); });
}

HelperThreads::~HelperThreads() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void HelperThreads::run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every task given has run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();  // a packaged_task: an exception goes to its future
  }
}

}  // namespace penumbra
