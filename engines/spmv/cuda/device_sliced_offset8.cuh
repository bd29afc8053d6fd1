#pragma once
// A SlicedOffset8 resident on the GPU, the input of csr_spmv_sliced_offset8: the arrays of
// sliced_offset8.hpp in RAII device buffers, the per-task sums of rows cut between tasks, and the
// kernel's view of them. The host SlicedOffset8 is not kept (it is as large as the device copy).
#include "core/cuda/device_buffer.cuh"
#include "spmv/sliced_offset8.hpp"
#include "spmv/sliced_offset8_warp.hpp"

namespace penumbra::spmv::cuda {

class DeviceSlicedOffset8 {
  template <typename T>
  using DeviceBuffer = ::penumbra::cuda::DeviceBuffer<T>;

 public:
  explicit DeviceSlicedOffset8(const SlicedOffset8& s)
      : chunksPerTask_(s.chunksPerTask),
        offsetBits_(s.offsetBits),
        taskGroupRows_(s.taskGroupRows),
        rowBuffer_(s.rowBuffer != 0),
        segmentedSlices_(s.segmentedSlices),
        bytes_(slicedOffset8Bytes(s)),
        deviceBytes_(slicedOffset8DeviceBytes(s)) {
    put(values_, s.values);
    put(offsetsLo_, s.offsetsLo);
    put(offsets16_, s.offsets16);
    put(offsetsHi_, s.offsetsHi);
    put(headers_, s.headers);
    if (s.segmentedChunks > 0) put(segs_, s.segs);
    put(taskOrder_, s.taskOrder);
    put(nonEmptyRow_, s.nonEmptyRow);
    put(tasks_, s.tasks);
    put(splitRows_, s.splitRows);
    put(emptyRuns_, s.emptyRuns);
    if (!s.tasks.empty()) partials_.allocate(2 * s.tasks.size());
    view_.values = values_.get();
    view_.offsetsLo = offsetsLo_.get();
    view_.headers = headers_.get();
    view_.segs = segs_.get();
    view_.taskOrder = taskOrder_.get();
    view_.nonEmptyRow = nonEmptyRow_.get();
    view_.tasks = tasks_.get();
    view_.emptyRuns = emptyRuns_.get();
    view_.splitRows = splitRows_.get();
    view_.partials = partials_.get();
    setOffset8Counts(view_, s);
  }

  const Offset8KernelView& view() const { return view_; }
  int offsetBits() const { return offsetBits_; }
  /// The offsets beyond the low bytes on the device (the kernel's `high`): offsets16 at 16 bits,
  /// offsetsHi at 12; null at 8.
  const void* high() const {
    return offsetBits_ == 16   ? static_cast<const void*>(offsets16_.get())
           : offsetBits_ == 12 ? static_cast<const void*>(offsetsHi_.get())
                               : nullptr;
  }
  int chunksPerTask() const { return chunksPerTask_; }
  bool rowBuffer() const { return rowBuffer_; }
  int taskGroupRows() const { return taskGroupRows_; }
  std::int64_t segmentedSlices() const { return segmentedSlices_; }
  const SlicedOffset8Bytes& bytes() const { return bytes_; }
  double deviceBytes() const { return deviceBytes_; }

 private:
  template <typename T>
  static void put(DeviceBuffer<T>& b, const std::vector<T>& host) {
    if (!host.empty()) b.upload(host);
  }
  int chunksPerTask_, offsetBits_, taskGroupRows_;
  bool rowBuffer_;
  std::int64_t segmentedSlices_;
  SlicedOffset8Bytes bytes_;
  double deviceBytes_;
  DeviceBuffer<std::uint16_t> values_;
  DeviceBuffer<std::uint8_t> offsetsLo_;
  DeviceBuffer<std::uint16_t> offsets16_;
  DeviceBuffer<std::uint32_t> offsetsHi_, headers_, segs_, taskOrder_;
  DeviceBuffer<std::int32_t> nonEmptyRow_;
  DeviceBuffer<Offset8Task> tasks_;
  DeviceBuffer<SplitRow> splitRows_;
  DeviceBuffer<EmptyRun> emptyRuns_;
  DeviceBuffer<double> partials_;
  Offset8KernelView view_;
};

}  // namespace penumbra::spmv::cuda
