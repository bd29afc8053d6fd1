#pragma once
// RAII CUDA streams and events, and the per-kernel-kind launch timing of the engines' CUDA
// backends (photon and proton dose): destroyed on every path, exceptions included.
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <vector>

#include "core/cuda/cuda_check.cuh"

namespace penumbra::cuda {

/// A non-blocking stream (no implicit synchronisation with the legacy default stream).
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { PENUMBRA_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { PENUMBRA_CUDA_CHECK(cudaEventCreate(&e)); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

/// Event pairs around the launches of one kernel kind; totalMs() sums them over the launches
/// once the stream has been synchronised. reset() forgets the launches but keeps the events, so
/// that an engine that holds its LaunchTimes between calls creates no event on a warm call
/// (80 creates and destroys cost 50-100 us on the GPU machine's host).
struct LaunchTimes {
  std::vector<std::unique_ptr<Event>> start, stop;
  std::size_t used = 0;
  void begin(cudaStream_t s) {
    if (used == start.size()) {
      start.push_back(std::make_unique<Event>());
      stop.push_back(std::make_unique<Event>());
    }
    PENUMBRA_CUDA_CHECK(cudaEventRecord(start[used]->e, s));
    ++used;
  }
  void end(cudaStream_t s) { PENUMBRA_CUDA_CHECK(cudaEventRecord(stop[used - 1]->e, s)); }
  void reset() { used = 0; }
  double totalMs() const {
    double ms = 0;
    for (std::size_t i = 0; i < used; ++i) {
      float t = 0;
      PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&t, start[i]->e, stop[i]->e));
      ms += t;
    }
    return ms;
  }
  int launches() const { return int(used); }
};

/// Events handed out in order and kept for the next call (reset()), for the same reason.
struct EventPool {
  std::vector<std::unique_ptr<Event>> events;
  std::size_t used = 0;
  cudaEvent_t next() {
    if (used == events.size()) events.push_back(std::make_unique<Event>());
    return events[used++]->e;
  }
  void reset() { used = 0; }
};

}  // namespace penumbra::cuda
