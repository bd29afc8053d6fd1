#pragma once
// A StepCsr resident on the GPU, the input of csr_spmv_segmented_steps: the arrays of
// step_csr.hpp in RAII device buffers, the per-task sums of rows cut between tasks, and the
// kernel's view of them. The host StepCsr is not kept (it is as large as the device copy).
#include "core/cuda/device_buffer.cuh"
#include "spmv/segmented_steps_warp.hpp"
#include "spmv/step_csr.hpp"

namespace penumbra::spmv::cuda {

class DeviceStepCsr {
  template <typename T>
  using DeviceBuffer = ::penumbra::cuda::DeviceBuffer<T>;

 public:
  DeviceStepCsr(const StepCsr& s, int lanesPerGroup)
      : stepBits_(s.stepBits),
        lanesPerGroup_(lanesPerGroup),
        taskGroups_(s.taskGroups),
        bytes_(stepCsrBytes(s)),
        deviceBytes_(stepCsrDeviceBytes(s)) {
    put(values_, s.values);
    put(steps_, s.steps);
    put(escapes_, s.escapes);
    put(rowFirstGroup_, s.rowFirstGroup);
    put(rowFirstCol_, s.rowFirstCol);
    put(rowIndex_, s.rowIndex);
    put(tasks_, s.tasks);
    put(splitRows_, s.splitRows);
    put(emptyRuns_, s.emptyRuns);
    if (!s.tasks.empty()) partials_.allocate(2 * s.tasks.size());
    view_.values = values_.get();
    view_.steps = steps_.get();
    view_.escapes = escapes_.get();
    view_.rowFirstGroup = rowFirstGroup_.get();
    view_.rowFirstCol = rowFirstCol_.get();
    view_.rowIndex = rowIndex_.get();
    view_.tasks = tasks_.get();
    view_.emptyRuns = emptyRuns_.get();
    view_.splitRows = splitRows_.get();
    view_.partials = partials_.get();
    setStepCounts(view_, s);
  }

  const StepKernelView& view() const { return view_; }
  int stepBits() const { return stepBits_; }
  int lanesPerGroup() const { return lanesPerGroup_; }
  std::int64_t taskGroups() const { return taskGroups_; }
  const StepCsrBytes& bytes() const { return bytes_; }
  double deviceBytes() const { return deviceBytes_; }

 private:
  template <typename T>
  static void put(DeviceBuffer<T>& b, const std::vector<T>& host) {
    if (!host.empty()) b.upload(host);
  }
  int stepBits_, lanesPerGroup_;
  std::int64_t taskGroups_;
  StepCsrBytes bytes_;
  double deviceBytes_;
  DeviceBuffer<std::uint16_t> values_;
  DeviceBuffer<std::uint8_t> steps_;
  DeviceBuffer<std::uint32_t> escapes_, rowFirstGroup_, rowFirstCol_;
  DeviceBuffer<std::int32_t> rowIndex_;
  DeviceBuffer<StepTask> tasks_;
  DeviceBuffer<SplitRow> splitRows_;
  DeviceBuffer<EmptyRun> emptyRuns_;
  DeviceBuffer<double> partials_;
  StepKernelView view_;
};

}  // namespace penumbra::spmv::cuda
