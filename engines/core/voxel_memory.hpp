#pragma once
/// Memory for voxel data (Volume<T>::data). Volumes from 8 MiB on live in blocks of a
/// process-wide pool that keeps a freed block for the next volume of the same size, so that
///  - a new result volume reuses pages that are already mapped (a fresh 64 MiB volume costs
///    10-30 ms of page faults on the GPU machine), and
///  - a GPU backend page-locks a block once (lockBlock) and downloads into it by DMA on every
///    later call, the block staying locked while the caller owns the volume and while the pool
///    keeps it; it is unlocked only when the pool frees it (trim, or more idle than its cap).
/// Before, each result was locked before the download and unlocked before it was returned:
/// 1.1-1.5 ms of cudaHostUnregister per 64 MiB on every call's critical path (design.md 20).
/// Smaller volumes use the global operator new, as std::allocator does.
#include <cstddef>
#include <new>
#include <vector>

namespace penumbra {
namespace voxel_memory {

/// Volumes of at least this many bytes come from the pool.
inline constexpr std::size_t kPooledFrom = std::size_t(8) << 20;
/// The pool frees idle blocks beyond these (oldest first).
inline constexpr std::size_t kIdleBytesCap = std::size_t(1) << 30;
inline constexpr std::size_t kIdleBlocksCap = 8;
/// Page-locked memory (live and idle blocks together) stays below this: past it lockBlock()
/// first frees idle locked blocks, then refuses (the result then downloads through pageable
/// memory), so that a session holding many GPU results does not pin gigabytes of RAM.
inline constexpr std::size_t kLockedBytesCap = std::size_t(4) << 30;

void* allocate(std::size_t bytes);  ///< throws std::bad_alloc
void deallocate(void* p, std::size_t bytes) noexcept;

/// How a GPU layer page-locks memory; installed once by core/cuda, absent in CPU-only builds.
struct LockHooks {
  bool (*lock)(void* p, std::size_t bytes) = nullptr;  ///< true when the range is now locked
  void (*unlock)(void* p) = nullptr;
};
void installLockHooks(LockHooks hooks);

/// Page-locks the pooled block that begins at p (the data() of a pooled volume). True when the
/// block is locked (now or already); false for memory below kPooledFrom, without hooks, past
/// kLockedBytesCap, or when the lock failed (the caller then transfers through pageable memory).
bool lockBlock(const void* p);

/// Frees idle blocks (unlocking them first) until at most keepBytes stay idle. Returns the bytes
/// freed. Called when a patient closes, and by the pool itself past its caps.
std::size_t trim(std::size_t keepBytes = 0);

struct PoolStats {
  std::size_t liveBlocks = 0, idleBlocks = 0, idleBytes = 0, lockedBlocks = 0;
  std::size_t lockedBytes = 0;  ///< of the locked blocks, live and idle
  std::size_t mapped = 0;       ///< blocks mapped from the system since the start
};
PoolStats stats();

}  // namespace voxel_memory

/// std::allocator's behaviour, with the pool above for large blocks.
template <typename T>
struct VoxelAllocator {
  using value_type = T;
  VoxelAllocator() noexcept = default;
  template <typename U>
  VoxelAllocator(const VoxelAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n > std::size_t(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(voxel_memory::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { voxel_memory::deallocate(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const VoxelAllocator<U>&) const noexcept {
    return true;
  }
  template <typename U>
  bool operator!=(const VoxelAllocator<U>&) const noexcept {
    return false;
  }
};

/// The storage of every Volume<T>.
template <typename T>
using VoxelVector = std::vector<T, VoxelAllocator<T>>;

}  // namespace penumbra
