#pragma once
/// SpMV dose engine (issue 5): d = D w and g = D^T r with D in fp16 CSR (HalfCsr) and all
/// vectors in double, bitwise reproducible on every backend (fixed accumulation order, no
/// floating-point atomics). D^T is stored as its own CSR so the transposed product is a plain
/// row-wise product too.
///
/// Check, then run: estimateDeviceBytes() (half_csr.hpp) sizes the GPU copy before anything is
/// built; SpmvEngine refuses a matrix that does not fit the device (OutOfMemory, with the size)
/// before allocating, and falls back to the CPU under Backend::Auto.
///
/// CPU reference: one double accumulator per row, entries in storage order (left to right),
/// then the scale; rows split across threads (the order inside a row never depends on them).
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/kernel_profile.hpp"
#include "core/progress.hpp"
#include "spmv/cuda_spmv.hpp"
#include "spmv/device_half_csr.hpp"
#include "spmv/half_csr.hpp"

namespace penumbra::spmv {

/// y = A x on the CPU (the reference). x: A.cols, y: A.rows doubles.
void multiplyCpu(const HalfCsr& a, const double* x, double* y, int threads = 0);

enum class Product { D, Dt };  ///< d = D w, or g = D^T r

struct SpmvOptions {
  Backend backend = Backend::Auto;
  SpmvKernel kernel = SpmvKernel::BinnedDelta16;  ///< the GPU holds only the layout it reads
  bool withBaseline = false;  ///< keep the int32 indices for the paper's kernel on the GPU
  Delta16Config config;       ///< csr_spmv_binned_delta16
  StepCsrOptions steps;       ///< csr_spmv_segmented_steps (threads 0: cpuThreads)
  SlicedOffset8Options offset8;  ///< csr_spmv_sliced_offset8 (threads 0: cpuThreads)
  int cpuThreads = 0;         ///< 0: all hardware threads
};

class SpmvEngine {
public:
  /// Takes D, builds D^T (CPU, multi-threaded), validates both, and on CUDA uploads both after
  /// checking they fit. Cancel is checked between the stages.
  explicit SpmvEngine(HalfCsr d, const SpmvOptions& options = {}, const JobControl& job = {});
  /// Takes D already on the GPU (e.g. the proton engine's device build, ProtonDoseResult::
  /// deviceMatrix): D^T and both delta16 layouts are built on the device, nothing crosses the bus
  /// but the row offsets for the row bins. CUDA only (there is no host copy to fall back on):
  /// throws Unsupported without a GPU, OutOfMemory when the transpose does not fit. matrix(p)
  /// then holds only the sizes and the scale (hasHostMatrices() is false). options.kernel must
  /// be BinnedDelta16 (withBaseline keeps the int32 indices for WarpPerRow too).
  SpmvEngine(DeviceHalfCsr&& d, const SpmvOptions& options = {}, const JobControl& job = {});
  ~SpmvEngine();

  /// Wall time of each construction stage (transpose, layouts, uploads), in order.
  const std::vector<KernelProfile>& buildProfiles() const { return buildProfiles_; }
  /// False for an engine made from a device matrix: matrix(p) has no entries on the host.
  bool hasHostMatrices() const { return hostMatrices_; }
  Backend backend() const { return backend_; }
  const std::string& deviceName() const { return device_; }
  /// Why the engine is not on the GPU (empty when it is, or when the CPU was asked for).
  const std::string& message() const { return message_; }
  const HalfCsr& matrix(Product p) const { return p == Product::D ? d_ : dt_; }
  /// The GPU kernel that multiply() launches (with deviceMatrix(p)->apply for device vectors).
  SpmvKernel kernel() const { return options_.kernel; }
  /// The device copy of D or D^T; null on the CPU backend.
  const CudaSpmvMatrix* deviceMatrix(Product p) const;

  /// y = A x (A = D or D^T). Sizes are checked; y is resized.
  void multiply(Product p, const std::vector<double>& x, std::vector<double>& y) const;
  /// One product per x, one kernel launch each, cancel checked between launches (throws
  /// CancelledError; the products already done are in ys).
  void multiplyBatch(Product p, const std::vector<std::vector<double>>& xs,
                     std::vector<std::vector<double>>& ys, const JobControl& job = {}) const;

private:
  struct DeviceState;
  HalfCsr d_, dt_;
  bool hostMatrices_ = true;
  std::vector<KernelProfile> buildProfiles_;
  SpmvOptions options_;
  Backend backend_ = Backend::Cpu;
  std::string device_, message_;
  std::unique_ptr<DeviceState> gpu_;
};

}  // namespace penumbra::spmv
