#pragma once
/// A HalfCsr held in GPU memory: the same three arrays (64-bit row offsets, 32-bit ascending
/// columns, fp16 values) and scale, owned by this move-only handle. A producer on the GPU (the
/// proton engine's dose-matrix build) hands it to SpmvEngine, which transposes it and builds its
/// kernels' layouts on the device: the matrix never crosses the bus (issue 14: for hn-2field at
/// 1 mm, 8.9 GB that took 1.7 s to download and longer to transpose and plan on the host).
/// Plain C++: the device buffers live behind `data` (spmv/cuda/device_half_csr.cuh); without
/// CUDA every operation but the empty handle throws Unsupported.
#include <cstdint>
#include <memory>

#include "spmv/half_csr.hpp"

namespace penumbra::spmv {

struct DeviceHalfCsrData;  ///< device buffers (spmv/cuda/device_half_csr.cuh)

class DeviceHalfCsr {
public:
  DeviceHalfCsr();
  ~DeviceHalfCsr();
  DeviceHalfCsr(DeviceHalfCsr&&) noexcept;
  DeviceHalfCsr& operator=(DeviceHalfCsr&&) noexcept;

  std::int64_t rows = 0, cols = 0, nnz = 0;
  double scale = 1;
  std::unique_ptr<DeviceHalfCsrData> data;

  /// Copies a host matrix to the GPU (tests; validates it first).
  static DeviceHalfCsr upload(const HalfCsr& m);
  /// Copies it back (tests and checks).
  HalfCsr download() const;
  std::size_t deviceBytes() const;
};

/// D^T of a device matrix, built on the device: the same matrix as transpose(HalfCsr) (entries of
/// each new row in ascending old-row order), by a stable radix sort of the entries on their
/// column. Needs 18 B per entry of free device memory while it runs (24 B beyond 65536 columns) (refused with
/// OutOfMemory, sizes in the message, before anything is allocated).
DeviceHalfCsr transposeOnDevice(const DeviceHalfCsr& m);

}  // namespace penumbra::spmv
