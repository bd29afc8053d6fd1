#pragma once
// Minimal work-queue parallel loop for the CPU references (proton, photon): items are handed
// out one at a time through an atomic counter (items are tiles x depth chunks of very uneven
// cost: beyond the Bragg peak or outside the spots they cost nothing), the first exception stops
// the others and is rethrown on the caller's thread, and a cancel request is polled between
// items.
#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/progress.hpp"

namespace penumbra {

/// Threads of a CPU run: `requested` when positive, else the hardware's thread count.
inline int resolveThreads(int requested) {
  if (requested > 0) return requested;
  // Asked once: glibc reads /sys/devices/system/cpu/online on every call (5-36 us on this
  // development machine, 2026-11-27), which a warm GPU call of 2-3 ms pays on its host side.
  static const int hw = std::max(1, int(std::thread::hardware_concurrency()));
  return hw;
}

/// Calls fn(item, threadIndex) for item in [0, n) on up to `threads` threads.
template <typename F>
void parallelFor(std::size_t n, int threads, const JobControl& job, F&& fn) {
  const int nt = int(std::min<std::size_t>(std::size_t(std::max(1, threads)), std::max<std::size_t>(n, 1)));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  std::mutex failureMutex;
  auto work = [&](int t) {
    try {
      for (std::size_t i; !stop.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < n;) {
        if (job.cancelled()) {
          stop = true;
          break;
        }
        fn(i, t);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(failureMutex);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < nt; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
  job.checkCancel();
}

}  // namespace penumbra
