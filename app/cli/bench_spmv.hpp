#pragma once
// Pieces of `penumbra-cli bench spmv` (bench_spmv.cpp: cases and table; bench_spmv_cuda.cpp:
// timing, checks and the cuSPARSE yardstick).
#include <memory>
#include <vector>

#include "core/kernel_profile.hpp"
#include "spmv/cuda_spmv.hpp"
#include "spmv/half_csr.hpp"

namespace penumbra::cli::spmvbench {

struct KernelRun {
  KernelProfile profile;     ///< timing (median/min over reps) and the traffic model
  bool bitwiseRepeat = false;///< last timed output == first output, bit for bit
  double relError = 0;       ///< max |gpu - cpu| / max |cpu|
  double realBytes = 0;      ///< bytes the kernel really moves (CudaSpmvMatrix::realBytes)
};

/// x uploaded once and a y on the device, reused by every kernel of a case.
class GpuVectors {
public:
  GpuVectors(const std::vector<double>& x, std::int64_t rows);
  ~GpuVectors();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

KernelRun runKernel(const spmv::CudaSpmvMatrix& m, spmv::SpmvKernel k, GpuVectors& v,
                    const std::vector<double>& ref, int reps);
KernelRun runCusparse(const spmv::HalfCsr& a, const spmv::CudaSpmvMatrix& m,
                      const std::vector<double>& x, const std::vector<double>& ref, int reps);
double relativeError(const std::vector<double>& a, const std::vector<double>& ref);

}  // namespace penumbra::cli::spmvbench
