// The helper threads the GPU backends make their next result's host memory on: results and
// exceptions come back through the futures, tasks run beside the caller (not on it), several at
// once, and a pool that ends runs every task it was given first.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/helper_threads.hpp"

namespace penumbra {
namespace {

TEST(HelperThreads, ResultsAndExceptionsComeBackThroughTheFutures) {
  HelperThreads pool(2);
  std::vector<std::future<int>> squares;
  for (int i = 0; i < 20; ++i) squares.push_back(pool.submit([i] { return i * i; }));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(squares[std::size_t(i)].get(), i * i);
  auto failing = pool.submit([]() -> int { throw std::runtime_error("no memory for the result"); });
  try {
    (void)failing.get();
    FAIL() << "the task's exception did not reach its future";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "no memory for the result");
  }
  // The pool still works after a task threw.
  EXPECT_EQ(pool.submit([] { return 7; }).get(), 7);
}

TEST(HelperThreads, TasksRunBesideTheCallerAndSeveralAtOnce) {
  HelperThreads pool(3);
  const std::thread::id caller = std::this_thread::get_id();
  // Three tasks that each wait until all three have started: they finish only if they run at
  // the same time on three threads.
  std::atomic<int> started{0};
  std::vector<std::future<std::thread::id>> ids;
  for (int t = 0; t < 3; ++t)
    ids.push_back(pool.submit([&started] {
      ++started;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (started.load() < 3 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
      return std::this_thread::get_id();
    }));
  std::vector<std::thread::id> seen;
  for (auto& f : ids) seen.push_back(f.get());
  EXPECT_EQ(started.load(), 3);
  for (const auto& id : seen) EXPECT_NE(id, caller);
  EXPECT_NE(seen[0], seen[1]);
  EXPECT_NE(seen[0], seen[2]);
  EXPECT_NE(seen[1], seen[2]);
}

TEST(HelperThreads, APoolThatEndsRunsEveryTaskItWasGivenFirst) {
  std::vector<std::future<int>> results;
  std::atomic<int> ran{0};
  {
    HelperThreads pool(1);
    // The first task holds the only thread while the others queue behind it.
    results.push_back(pool.submit([&ran] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      return ++ran;
    }));
    for (int i = 0; i < 5; ++i) results.push_back(pool.submit([&ran] { return ++ran; }));
  }  // the destructor returns only when the queue is empty
  EXPECT_EQ(ran.load(), 6);
  for (auto& f : results) {
    ASSERT_EQ(f.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    EXPECT_GE(f.get(), 1);
  }
}

TEST(HelperThreads, TheSharedPoolIsOneObject) {
  EXPECT_EQ(&HelperThreads::shared(), &HelperThreads::shared());
  EXPECT_EQ(HelperThreads::shared().submit([] { return 41 + 1; }).get(), 42);
}

}  // namespace
}  // namespace penumbra
