#pragma once
/// Where the CUDA backend of the proton engine keeps its cache between calls (proton_dose.hpp,
/// "GPU cache across calls"). Held here, type-erased, so that releaseProtonGpuCache() links
/// without CUDA; the workspace itself is cuda/proton_workspace.cuh. Not public API.
///
/// A run marks the slot in use and takes the workspace out under the mutex (exclusive use; a
/// concurrent run finds it in use and works with a private workspace that it frees at the end),
/// and puts it back at the end of a successful run unless releaseProtonGpuCache() bumped the
/// generation meanwhile. A run that throws (cancel, error) never puts it back: it is freed.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace penumbra::proton::detail {

struct GpuCacheSlot {
  std::mutex mutex;
  std::shared_ptr<void> workspace;  ///< idle workspace of cuda/proton_dose_cuda.cu, or null
  std::size_t deviceBytes = 0;      ///< GPU memory that idle workspace holds
  std::uint64_t generation = 0;
  bool inUse = false;  ///< a run holds the workspace
};
GpuCacheSlot& gpuCacheSlot();
/// GPU memory held by the idle cache (a run reuses it, so it counts as free for the run).
double gpuCacheBytes();

/// Whether a CUDA run may give every beam buffers of its own (when they fit). Off, every run
/// takes the low-memory way (one shared set, nothing kept per beam): a hook so that the tests
/// reach that path on a GPU with plenty of memory. On by default.
void setPerBeamBuffersForTests(bool allowed);
bool perBeamBuffersAllowed();

}  // namespace penumbra::proton::detail
