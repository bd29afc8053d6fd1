// The proton engine's GPU cache slot and releaseProtonGpuCache() (proton_gpu_cache.hpp), built
// with and without CUDA: without it the slot simply stays empty.
#include "proton/proton_gpu_cache.hpp"

#include <atomic>

#include "proton/proton_dose.hpp"

namespace penumbra::proton {

namespace detail {

GpuCacheSlot& gpuCacheSlot() {
  static GpuCacheSlot slot;
  return slot;
}

double gpuCacheBytes() {
  GpuCacheSlot& slot = gpuCacheSlot();
  const std::lock_guard<std::mutex> lock(slot.mutex);
  return slot.workspace ? double(slot.deviceBytes) : 0.0;
}

namespace {
std::atomic<bool> perBeamAllowed{true};
}  // namespace

void setPerBeamBuffersForTests(bool allowed) { perBeamAllowed = allowed; }
bool perBeamBuffersAllowed() { return perBeamAllowed; }

}  // namespace detail

void releaseProtonGpuCache() {
  std::shared_ptr<void> old;
  {
    detail::GpuCacheSlot& slot = detail::gpuCacheSlot();
    const std::lock_guard<std::mutex> lock(slot.mutex);
    old = std::move(slot.workspace);
    slot.deviceBytes = 0;
    ++slot.generation;  // a run that holds the workspace now drops it instead of putting it back
  }
  old.reset();  // frees device and page-locked memory outside the lock
}

}  // namespace penumbra::proton
