// core/voxel_memory: the pool behind Volume<T>::data. Large blocks are reused by size, locked
// once through the installed hooks and unlocked only when the pool frees them; small volumes
// bypass the pool; the volume's values behave as with std::vector.
#include "core/voxel_memory.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "core/volume.hpp"

namespace penumbra {
namespace {

/// Fake page locking that records what the pool asks for; restores "no hooks" when done.
struct RecordingHooks {
  static inline std::vector<void*> locked, unlocked;
  static inline bool refuse = false;
  RecordingHooks() {
    locked.clear();
    unlocked.clear();
    refuse = false;
    voxel_memory::LockHooks h;
    h.lock = [](void* p, std::size_t bytes) {
      if (refuse) return false;
      EXPECT_EQ(bytes % (std::size_t(2) << 20), 0u) << "whole 2 MiB pages are locked";
      locked.push_back(p);
      return true;
    };
    h.unlock = [](void* p) { unlocked.push_back(p); };
    voxel_memory::installLockHooks(h);
  }
  ~RecordingHooks() {
    voxel_memory::trim(0);
    voxel_memory::installLockHooks({});
  }
};

Grid cube(int i, int j, int k) {
  Grid g;
  g.dims = {i, j, k};
  return g;
}

constexpr std::size_t kBig = (std::size_t(8) << 20) / sizeof(float) + 1000;  // just above 8 MiB

TEST(VoxelMemory, AFreedBlockIsReusedForTheNextVolumeOfItsSize) {
  voxel_memory::trim(0);
  const std::size_t mapped0 = voxel_memory::stats().mapped;
  const float* first = nullptr;
  {
    VoxelVector<float> a(kBig, 1.5f);
    first = a.data();
    EXPECT_EQ(voxel_memory::stats().liveBlocks, 1u);
  }
  EXPECT_EQ(voxel_memory::stats().idleBlocks, 1u);
  VoxelVector<float> b(kBig, 2.0f);
  EXPECT_EQ(b.data(), first) << "the idle block of the same size is handed out again";
  EXPECT_EQ(voxel_memory::stats().mapped, mapped0 + 1) << "no second block mapped";
  EXPECT_TRUE(std::all_of(b.begin(), b.end(), [](float v) { return v == 2.0f; }));
  // A size that rounds to another 2 MiB multiple gets another block.
  VoxelVector<float> c(kBig + (std::size_t(4) << 20), 0.0f);
  EXPECT_NE(c.data(), first);
  EXPECT_EQ(voxel_memory::stats().mapped, mapped0 + 2);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c.data()) % (std::size_t(2) << 20), 0u)
      << "blocks start on a 2 MiB boundary (huge pages)";
}

TEST(VoxelMemory, SmallVolumesBypassThePool) {
  voxel_memory::trim(0);
  const voxel_memory::PoolStats s0 = voxel_memory::stats();
  {
    Volume<float> v(cube(64, 64, 64), 3.0f);  // 1 MiB
    EXPECT_FALSE(voxel_memory::lockBlock(v.data.data()));
    EXPECT_EQ(voxel_memory::stats().liveBlocks, s0.liveBlocks);
  }
  EXPECT_EQ(voxel_memory::stats().idleBlocks, 0u);
}

TEST(VoxelMemory, ABlockIsLockedOnceAndUnlockedOnlyWhenThePoolFreesIt) {
  voxel_memory::trim(0);
  RecordingHooks hooks;
  void* block = nullptr;
  for (int call = 0; call < 3; ++call) {  // a GPU result per call, dropped by the caller
    VoxelVector<float> result(kBig);
    EXPECT_TRUE(voxel_memory::lockBlock(result.data()));
    EXPECT_TRUE(voxel_memory::lockBlock(result.data())) << "already locked";
    if (call == 0) block = result.data();
    EXPECT_EQ(result.data(), block);
  }
  EXPECT_EQ(RecordingHooks::locked.size(), 1u) << "one lock for three results";
  EXPECT_TRUE(RecordingHooks::unlocked.empty()) << "the idle block stays locked";
  EXPECT_EQ(voxel_memory::stats().lockedBlocks, 1u);
  EXPECT_GT(voxel_memory::trim(0), 8u << 20);
  ASSERT_EQ(RecordingHooks::unlocked.size(), 1u);
  EXPECT_EQ(RecordingHooks::unlocked[0], block) << "unlocked before it is unmapped";
  EXPECT_EQ(voxel_memory::stats().idleBlocks, 0u);
}

TEST(VoxelMemory, ARefusedLockLeavesThePoolConsistent) {
  voxel_memory::trim(0);
  RecordingHooks hooks;
  RecordingHooks::refuse = true;
  VoxelVector<float> v(kBig, 1.0f);
  EXPECT_FALSE(voxel_memory::lockBlock(v.data()));
  EXPECT_EQ(voxel_memory::stats().lockedBlocks, 0u);
  RecordingHooks::refuse = false;
  EXPECT_TRUE(voxel_memory::lockBlock(v.data())) << "a later try may succeed";
}

TEST(VoxelMemory, IdleBlocksBeyondTheCapAreFreedOldestFirst) {
  voxel_memory::trim(0);
  RecordingHooks hooks;
  std::vector<VoxelVector<float>> volumes;
  std::set<const float*> all;
  for (std::size_t i = 0; i < voxel_memory::kIdleBlocksCap + 3; ++i) {
    volumes.emplace_back(kBig, float(i));
    all.insert(volumes.back().data());
    ASSERT_TRUE(voxel_memory::lockBlock(volumes.back().data()));
  }
  EXPECT_EQ(all.size(), voxel_memory::kIdleBlocksCap + 3) << "live blocks are distinct";
  const float* oldest = volumes.front().data();
  volumes.clear();  // freed in order: the first is the oldest idle block
  EXPECT_EQ(voxel_memory::stats().idleBlocks, voxel_memory::kIdleBlocksCap);
  ASSERT_EQ(RecordingHooks::unlocked.size(), 3u);
  EXPECT_EQ(RecordingHooks::unlocked[0], oldest);
}

TEST(VoxelMemory, LockedMemoryStaysBelowItsCap) {
  voxel_memory::trim(0);
  RecordingHooks hooks;
  // Untouched blocks (allocate, not a vector: no zero fill), so no RAM is used.
  const std::size_t gib = std::size_t(1) << 30;
  const std::size_t fit = voxel_memory::kLockedBytesCap / gib;
  std::vector<void*> blocks;
  for (std::size_t i = 0; i <= fit; ++i) blocks.push_back(voxel_memory::allocate(gib));
  for (std::size_t i = 0; i < fit; ++i) EXPECT_TRUE(voxel_memory::lockBlock(blocks[i])) << i;
  EXPECT_EQ(voxel_memory::stats().lockedBytes, fit * gib);
  EXPECT_FALSE(voxel_memory::lockBlock(blocks[fit])) << "past the cap: refused, not locked";
  EXPECT_EQ(RecordingHooks::locked.size(), fit);
  voxel_memory::deallocate(blocks[0], gib);  // idle and still locked
  EXPECT_TRUE(voxel_memory::lockBlock(blocks[fit])) << "the idle locked block makes room";
  ASSERT_EQ(RecordingHooks::unlocked.size(), 1u);
  EXPECT_EQ(RecordingHooks::unlocked[0], blocks[0]);
  EXPECT_EQ(voxel_memory::stats().lockedBytes, fit * gib);
  for (std::size_t i = 1; i <= fit; ++i) voxel_memory::deallocate(blocks[i], gib);
  voxel_memory::trim(0);
  EXPECT_EQ(voxel_memory::stats().lockedBytes, 0u);
}

TEST(VoxelMemory, VolumesCopyAndMoveAsBefore) {
  Volume<float> a(cube(128, 128, 130), 0.0f);  // 8.1 MiB
  for (std::size_t i = 0; i < a.data.size(); ++i) a.data[i] = float(i % 977);
  Volume<float> b = a;
  EXPECT_NE(b.data.data(), a.data.data());
  EXPECT_TRUE(std::equal(a.data.begin(), a.data.end(), b.data.begin()));
  const float* p = b.data.data();
  Volume<float> c = std::move(b);
  EXPECT_EQ(c.data.data(), p) << "a move keeps the block";
  c.data.push_back(1.0f);  // growth reallocates through the pool and keeps the values
  EXPECT_EQ(c.data.back(), 1.0f);
  EXPECT_EQ(c.data[976], 976.0f);
}

}  // namespace
}  // namespace penumbra
