#include "core/voxel_memory.hpp"

#include <sys/mman.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace penumbra::voxel_memory {
namespace {

constexpr std::size_t kHuge = std::size_t(2) << 20;

std::size_t roundUp(std::size_t bytes) { return (bytes + kHuge - 1) / kHuge * kHuge; }

struct Block {
  void* base = nullptr;
  std::size_t bytes = 0;  ///< mapped size, a multiple of 2 MiB
  bool locked = false;
};

/// Mapped 2 MiB-aligned and marked for huge pages (32 faults instead of 16384 for 64 MiB).
void* mapBlock(std::size_t bytes) {
  void* raw =
      mmap(nullptr, bytes + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto r = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t a = (r + kHuge - 1) & ~(kHuge - 1);
  if (a > r) munmap(raw, a - r);
  if (const std::size_t tail = r + bytes + kHuge - (a + bytes); tail > 0)
    munmap(reinterpret_cast<void*>(a + bytes), tail);
  void* p = reinterpret_cast<void*>(a);
  (void)madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without transparent huge pages, 4 KiB pages
  return p;
}

struct Pool {
  std::mutex m;
  LockHooks hooks;
  std::unordered_map<const void*, Block> live;
  std::deque<Block> idle;  ///< oldest first
  std::size_t idleBytes = 0, lockedBytes = 0, mapped = 0;

  /// Removes idle blocks beyond the limits (oldest first), to be freed outside the lock.
  std::vector<Block> takeExcess(std::size_t keepBytes, std::size_t keepBlocks) {
    std::vector<Block> out;
    while (!idle.empty() && (idleBytes > keepBytes || idle.size() > keepBlocks)) {
      out.push_back(idle.front());
      idleBytes -= idle.front().bytes;
      if (idle.front().locked) lockedBytes -= idle.front().bytes;
      idle.pop_front();
    }
    return out;
  }

  /// Removes idle locked blocks (oldest first) until `more` locked bytes fit under the cap.
  std::vector<Block> takeLockedFor(std::size_t more) {
    std::vector<Block> out;
    for (auto it = idle.begin(); it != idle.end() && lockedBytes + more > kLockedBytesCap;) {
      if (!it->locked) {
        ++it;
        continue;
      }
      out.push_back(*it);
      idleBytes -= it->bytes;
      lockedBytes -= it->bytes;
      it = idle.erase(it);
    }
    return out;
  }
};

/// Never destroyed: volumes in static objects are freed into it during exit.
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

void release(const std::vector<Block>& blocks, const LockHooks& hooks) {
  for (const Block& b : blocks) {
    if (b.locked && hooks.unlock) hooks.unlock(b.base);
    munmap(b.base, b.bytes);
  }
}

}  // namespace

void* allocate(std::size_t bytes) {
  if (bytes < kPooledFrom) return ::operator new(bytes);
  const std::size_t want = roundUp(bytes);
  Pool& P = pool();
  {
    std::lock_guard<std::mutex> lock(P.m);
    // The most recently freed block of the same size: its pages are the likeliest in cache.
    for (auto it = P.idle.rbegin(); it != P.idle.rend(); ++it) {
      if (it->bytes != want) continue;
      const Block b = *it;
      P.idle.erase(std::next(it).base());
      P.idleBytes -= b.bytes;
      P.live.emplace(b.base, b);
      return b.base;
    }
  }
  Block b;
  b.base = mapBlock(want);
  b.bytes = want;
  std::lock_guard<std::mutex> lock(P.m);
  ++P.mapped;
  P.live.emplace(b.base, b);
  return b.base;
}

void deallocate(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (bytes < kPooledFrom) {
    ::operator delete(p);
    return;
  }
  Pool& P = pool();
  std::vector<Block> excess;
  LockHooks hooks;
  {
    std::lock_guard<std::mutex> lock(P.m);
    const auto it = P.live.find(p);
    if (it == P.live.end()) return;  // not ours: cannot happen through VoxelAllocator
    P.idle.push_back(it->second);
    P.idleBytes += it->second.bytes;
    P.live.erase(it);
    excess = P.takeExcess(kIdleBytesCap, kIdleBlocksCap);
    hooks = P.hooks;
  }
  release(excess, hooks);
}

void installLockHooks(LockHooks hooks) {
  std::lock_guard<std::mutex> lock(pool().m);
  pool().hooks = hooks;
}

bool lockBlock(const void* p) {
  Pool& P = pool();
  Block b;
  LockHooks hooks;
  std::vector<Block> freed;
  bool fits = false;
  {
    std::lock_guard<std::mutex> lock(P.m);
    const auto it = P.live.find(p);
    if (it == P.live.end() || !P.hooks.lock) return false;
    if (it->second.locked) return true;
    b = it->second;
    hooks = P.hooks;
    freed = P.takeLockedFor(b.bytes);
    fits = P.lockedBytes + b.bytes <= kLockedBytesCap;
    if (fits)
      P.lockedBytes += b.bytes;  // reserved before the lock, so that threads cannot overshoot
  }
  release(freed, hooks);
  if (!fits) return false;
  // Outside the pool's lock (3-4 ms for 64 MiB): the caller owns the block, nobody frees it now.
  const bool locked = hooks.lock(b.base, b.bytes);
  std::lock_guard<std::mutex> lock(P.m);
  if (!locked) {
    P.lockedBytes -= b.bytes;
    return false;
  }
  const auto it = P.live.find(p);
  if (it != P.live.end()) it->second.locked = true;
  return true;
}

std::size_t trim(std::size_t keepBytes) {
  Pool& P = pool();
  std::vector<Block> excess;
  LockHooks hooks;
  {
    std::lock_guard<std::mutex> lock(P.m);
    excess = P.takeExcess(keepBytes, keepBytes ? kIdleBlocksCap : 0);
    hooks = P.hooks;
  }
  release(excess, hooks);
  std::size_t freed = 0;
  for (const Block& b : excess) freed += b.bytes;
  return freed;
}

PoolStats stats() {
  Pool& P = pool();
  std::lock_guard<std::mutex> lock(P.m);
  PoolStats s;
  s.liveBlocks = P.live.size();
  s.idleBlocks = P.idle.size();
  s.idleBytes = P.idleBytes;
  s.mapped = P.mapped;
  s.lockedBytes = P.lockedBytes;
  for (const auto& [p, b] : P.live) s.lockedBlocks += b.locked ? 1 : 0;
  for (const Block& b : P.idle) s.lockedBlocks += b.locked ? 1 : 0;
  return s;
}

}  // namespace penumbra::voxel_memory
