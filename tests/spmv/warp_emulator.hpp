#pragma once
// A CPU emulation of one CUDA warp, for running the warp algorithms of csr_spmv_segmented_steps
// (engines/spmv/segmented_steps_warp.hpp) and csr_spmv_sliced_offset8
// (engines/spmv/sliced_offset8_warp.hpp) in the CPU tests. The 32 lanes are fibers of one thread
// (fiber_switch.hpp) that take turns: a lane runs until its next warp-wide operation (shuffle,
// ballot, any, reduce, __syncwarp), then hands over to the next lane, as the lanes of a warp
// meet there. (Lanes as 32 threads with a condition-variable barrier took ~6 ms per block of 256
// entries on the two-core CI machine, mostly in futex calls; fibers are several times faster.)
// - Lanes that reach different warp-wide operations, or leave while others wait at one (a
//   divergent full-mask intrinsic, undefined on the GPU), abort the emulation with a message.
// - cp.async is emulated as it can behave: a copy lands only when its lane waits for its group,
//   and the destination is poisoned when the copy is issued, so reading a stage too early reads
//   garbage instead of passing by luck.
// - Gathers of x are bounds-checked: a wrong column is counted, not read. So are the streaming
//   loads of the sliced_offset8 algorithm, against the arrays registered in Shared::streams.
// The arithmetic is the kernel's (std::fma, the same additions in the same order), so the GPU
// must give the emulation's result bit for bit.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <vector>

#include "fiber_switch.hpp"
#include "spmv/half_float.hpp"
#include "spmv/segmented_steps_warp.hpp"
#include "spmv/sliced_offset8_warp.hpp"

namespace penumbra::spmv::test {

/// Runs body(lane) for the 32 lanes as fibers that switch at every barrier(kind).
class LaneFibers {
 public:
  explicit LaneFibers(std::function<void(int)> body) : body_(std::move(body)) {}

  void run() {
    for (int l = 0; l < 32; ++l) {
      stacks_[std::size_t(l)].resize(1 << 18);
      fiberPrepare(lanes_[std::size_t(l)], stacks_[std::size_t(l)].data(),
                   stacks_[std::size_t(l)].size(), &LaneFibers::entry);
    }
    self() = this;
    fiberSwitch(main_, lanes_[0]);
  }
  /// Called by lane l at a warp-wide operation of kind `kind`; returns when all 32 lanes are there.
  void barrier(int l, int kind) {
    kinds_[std::size_t(l)] = kind;
    if (l == 31) {
      for (int k = 0; k < 32; ++k)
        if (done_[std::size_t(k)] || kinds_[std::size_t(k)] != kind)
          fail("lanes diverged at a warp-wide operation");
      fiberSwitch(lanes_[31], lanes_[0]);
    } else {
      fiberSwitch(lanes_[std::size_t(l)], lanes_[std::size_t(l) + 1]);
    }
  }

 private:
  static LaneFibers*& self() {
    static thread_local LaneFibers* p = nullptr;
    return p;
  }
  static void entry() {
    LaneFibers& f = *self();
    const int l = f.started_++;
    f.body_(l);
    f.done_[std::size_t(l)] = true;
    if (l < 31) fiberSwitch(f.lanes_[std::size_t(l)], f.lanes_[std::size_t(l) + 1]);
    for (int k = 0; k < 32; ++k)
      if (!f.done_[std::size_t(k)]) fail("a lane left while others wait at a warp-wide operation");
    FiberContext finished;  // lane 31's, never resumed
    fiberSwitch(finished, f.main_);
    fail("a finished lane was resumed");
  }
  [[noreturn]] static void fail(const char* why) {
    std::fprintf(stderr, "warp emulator: %s\n", why);
    std::abort();
  }

  std::function<void(int)> body_;
  FiberContext main_{};
  std::array<FiberContext, 32> lanes_{};
  std::array<std::vector<char>, 32> stacks_;
  std::array<int, 32> kinds_{};
  std::array<bool, 32> done_{};
  int started_ = 0;
};

class EmulatedWarp {
 public:
  struct Shared {
    LaneFibers* fibers = nullptr;
    std::array<std::array<std::uint64_t, 32>, 2> slots{};
    std::vector<unsigned char> stages =
        std::vector<unsigned char>(segmented_steps::kStages * segmented_steps::kStageBytes);
    std::size_t xSize = 0;
    std::int64_t badColumns = 0;
    /// Arrays that loadStream may read (begin, bytes); reads outside are counted in
    /// badColumns and return zeros.
    std::vector<std::pair<const unsigned char*, std::size_t>> streams;
    /// The warp's row buffer of sliced_offset8 (shared memory on the GPU), poisoned: a slot read
    /// before it is written makes a NaN that the tests see.
    std::vector<double> rowBuffer =
        std::vector<double>(sliced_offset8::kRowSlots * sliced_offset8::kRowStride, std::nan(""));
  };

  EmulatedWarp(Shared& s, int lane) : s_(s), lane_(lane) {}

  int lane() const { return lane_; }
  std::uint32_t shfl(std::uint32_t v, int src) { return std::uint32_t(exchange(v, src & 31, 1)); }
  std::int32_t shfl(std::int32_t v, int src) {
    return std::int32_t(std::uint32_t(exchange(std::uint32_t(v), src & 31, 1)));
  }
  std::uint32_t shflUp(std::uint32_t v, int d) {
    return std::uint32_t(exchange(v, lane_ >= d ? lane_ - d : lane_, 2));
  }
  double shflUp(double v, int d) {
    return bitsToDouble(exchange(doubleBits(v), lane_ >= d ? lane_ - d : lane_, 3));
  }
  double shflXor(double v, int m) { return bitsToDouble(exchange(doubleBits(v), lane_ ^ m, 4)); }
  std::uint32_t ballot(bool p) {
    std::uint32_t b = 0;
    all(p ? 1 : 0, 5, [&](int l, std::uint64_t v) { b |= std::uint32_t(v) << l; });
    return b;
  }
  bool any(bool p) { return ballot(p) != 0; }
  std::uint32_t reduceOr(std::uint32_t v) {
    std::uint32_t r = 0;
    all(v, 6, [&](int, std::uint64_t x) { r |= std::uint32_t(x); });
    return r;
  }
  void syncwarp() { s_.fibers->barrier(lane_, 7); }
  double* rowBuffer() { return s_.rowBuffer.data(); }
  unsigned char* stage(int s) {
    return s_.stages.data() + std::size_t(s) * segmented_steps::kStageBytes;
  }
  void copyAsync16(unsigned char* dst, const void* src) {
    std::memset(dst, 0xA5, 16);
    open_.push_back({dst, src});
  }
  void commit() {
    groups_.push_back(std::move(open_));
    open_.clear();
  }
  void waitAllButNewest() {
    while (groups_.size() > std::size_t(segmented_steps::kStages - 1)) {
      for (const Copy& c : groups_.front()) std::memcpy(c.dst, c.src, 16);
      groups_.pop_front();
    }
  }
  template <std::size_t N>
  void readStage(const unsigned char* p, std::uint32_t (&w)[N]) {
    std::memcpy(w, p, sizeof w);
  }
  void readStage(const unsigned char* p, std::uint32_t& w) { std::memcpy(&w, p, sizeof w); }
  double gatherX(const double* x, std::uint32_t col) {
    if (col >= s_.xSize) {
      ++s_.badColumns;
      return 0.0;
    }
    return x[col];
  }
  static double halfToDouble(std::uint16_t h) { return double(halfBitsToFloat(h)); }
  static void halvesToDouble(std::uint32_t w, double& lo, double& hi) {
    lo = halfToDouble(std::uint16_t(w & 0xFFFFu));
    hi = halfToDouble(std::uint16_t(w >> 16));
  }

  // Streaming loads of sliced_offset8_warp.hpp (on the GPU: ld.global.nc.L1::no_allocate).
  void loadStream(const std::uint16_t* p, std::uint32_t (&w)[4]) { read(p, w, sizeof w); }
  void loadStream(const std::uint8_t* p, std::uint32_t (&w)[2]) { read(p, w, sizeof w); }
  std::uint32_t loadStream(const std::uint32_t* p) {
    std::uint32_t w = 0;
    read(p, &w, sizeof w);
    return w;
  }

 private:
  void read(const void* p, void* out, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (const auto& [begin, bytes] : s_.streams)
      if (b >= begin && b + n <= begin + bytes) {
        std::memcpy(out, b, n);
        return;
      }
    ++s_.badColumns;
    std::memset(out, 0, n);
  }
  struct Copy {
    unsigned char* dst;
    const void* src;
  };
  static std::uint64_t doubleBits(double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
  }
  static double bitsToDouble(std::uint64_t u) {
    double d;
    std::memcpy(&d, &u, 8);
    return d;
  }
  // Slots alternate between two banks: a lane writes a bank again only after the next warp-wide
  // operation, which every lane reaches after reading it.
  std::uint64_t exchange(std::uint64_t mine, int src, int kind) {
    auto& bank = s_.slots[std::size_t(parity_)];
    parity_ ^= 1;
    bank[std::size_t(lane_)] = mine;
    s_.fibers->barrier(lane_, kind);
    return bank[std::size_t(src)];
  }
  template <typename F>
  void all(std::uint64_t mine, int kind, F&& fn) {
    auto& bank = s_.slots[std::size_t(parity_)];
    parity_ ^= 1;
    bank[std::size_t(lane_)] = mine;
    s_.fibers->barrier(lane_, kind);
    for (int l = 0; l < 32; ++l) fn(l, bank[std::size_t(l)]);
  }

  Shared& s_;
  int lane_;
  int parity_ = 0;
  std::vector<Copy> open_;
  std::deque<std::vector<Copy>> groups_;
};

/// The view of the kernel on host arrays.
inline StepKernelView hostView(const StepCsr& s, std::vector<double>& partials) {
  StepKernelView v;
  v.values = s.values.data();
  v.steps = s.steps.data();
  v.escapes = s.escapes.data();
  v.rowFirstGroup = s.rowFirstGroup.data();
  v.rowFirstCol = s.rowFirstCol.data();
  v.rowIndex = s.rowIndex.data();
  v.tasks = s.tasks.data();
  v.emptyRuns = s.emptyRuns.data();
  v.splitRows = s.splitRows.data();
  partials.assign(2 * s.tasks.size(), std::nan(""));
  v.partials = partials.data();
  setStepCounts(v, s);
  return v;
}

/// y = A x by csr_spmv_segmented_steps' algorithm (lanesPerGroup 1 or 2), every task and empty run
/// by one emulated warp, then the split rows; y is poisoned with NaN first. Returns the number of
/// out-of-range gathers.
inline std::int64_t emulateSegmentedSteps(const StepCsr& s, const double* x, double* y,
                                          int lanesPerGroup = 1) {
  std::fill(y, y + s.rows, std::nan(""));
  std::vector<double> partials;
  const StepKernelView v = hostView(s, partials);
  EmulatedWarp::Shared shared;
  shared.xSize = std::size_t(s.cols);
  LaneFibers fibers([&](int l) {
    EmulatedWarp w(shared, l);
    for (std::uint32_t t = 0; t < v.nTasks; ++t) {
      if (s.stepBits == 4 && lanesPerGroup == 1)
        segmented_steps::runTask<4, 1>(w, v, t, x, y);
      else if (s.stepBits == 8 && lanesPerGroup == 1)
        segmented_steps::runTask<8, 1>(w, v, t, x, y);
      else if (s.stepBits == 4)
        segmented_steps::runTask<4, 2>(w, v, t, x, y);
      else
        segmented_steps::runTask<8, 2>(w, v, t, x, y);
    }
    for (std::uint32_t i = 0; i < v.nEmpty; ++i) segmented_steps::writeEmptyRun(w, v, i, y);
  });
  shared.fibers = &fibers;
  fibers.run();
  for (std::uint32_t i = 0; i < v.nSplit; ++i) segmented_steps::finishSplitRow(v, i, y);
  return shared.badColumns;
}

/// The view of csr_spmv_sliced_offset8 on host arrays (partials poisoned with NaN).
inline Offset8KernelView hostView(const SlicedOffset8& s, std::vector<double>& partials) {
  Offset8KernelView v;
  v.values = s.values.data();
  v.offsetsLo = s.offsetsLo.data();
  v.headers = s.headers.data();
  v.segs = s.segmentedChunks > 0 ? s.segs.data() : nullptr;
  v.taskOrder = s.taskOrder.empty() ? nullptr : s.taskOrder.data();
  v.nonEmptyRow = s.nonEmptyRow.data();
  v.tasks = s.tasks.data();
  v.emptyRuns = s.emptyRuns.data();
  v.splitRows = s.splitRows.data();
  partials.assign(2 * s.tasks.size(), std::nan(""));
  v.partials = partials.data();
  setOffset8Counts(v, s);
  return v;
}

/// y = A x by csr_spmv_sliced_offset8's algorithm: every task and empty run by one emulated warp,
/// then the split rows; y is poisoned with NaN first. Returns the number of out-of-range gathers
/// and stream loads.
inline std::int64_t emulateSlicedOffset8(const SlicedOffset8& s, const double* x, double* y) {
  std::fill(y, y + s.rows, std::nan(""));
  std::vector<double> partials;
  const Offset8KernelView v = hostView(s, partials);
  EmulatedWarp::Shared shared;
  shared.xSize = std::size_t(s.cols);
  auto stream = [&](const auto& vec) {
    shared.streams.push_back({reinterpret_cast<const unsigned char*>(vec.data()),
                              vec.size() * sizeof(vec[0])});
  };
  stream(s.values);
  stream(s.offsetsLo);
  if (!s.offsets16.empty()) stream(s.offsets16);
  if (!s.offsetsHi.empty()) stream(s.offsetsHi);
  stream(s.headers);
  stream(s.segs);
  LaneFibers fibers([&](int l) {
    EmulatedWarp w(shared, l);
    for (std::uint32_t t = 0; t < v.nTasks; ++t) {
      if (s.rowBuffer && s.offsetBits == 8)
        sliced_offset8::runTaskOf<8, true>(w, v, t, x, y, nullptr);
      else if (s.rowBuffer && s.offsetBits == 12)
        sliced_offset8::runTaskOf<12, true>(w, v, t, x, y, s.offsetsHi.data());
      else if (s.rowBuffer)
        sliced_offset8::runTaskOf<16, true>(w, v, t, x, y, s.offsets16.data());
      else if (s.offsetBits == 16)
        sliced_offset8::runTaskOf<16>(w, v, t, x, y, s.offsets16.data());
      else if (s.offsetBits == 12)
        sliced_offset8::runTaskOf<12>(w, v, t, x, y, s.offsetsHi.data());
      else
        sliced_offset8::runTaskOf<8>(w, v, t, x, y, nullptr);
    }
    for (std::uint32_t i = 0; i < v.nEmpty; ++i) sliced_offset8::writeEmptyRun(w, v, i, y);
  });
  shared.fibers = &fibers;
  fibers.run();
  for (std::uint32_t i = 0; i < v.nSplit; ++i) sliced_offset8::finishSplitRow(v, i, y);
  return shared.badColumns;
}

}  // namespace penumbra::spmv::test
