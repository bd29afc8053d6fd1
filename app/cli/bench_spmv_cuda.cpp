// GPU side of `penumbra-cli bench spmv`: event timing of one SpMV kernel (warm-ups, median of
// many, no allocation inside the timed loop), its check against the CPU reference (outputs
// poisoned with NaN first) and its bitwise repeat, and the cuSPARSE fp32 CSR yardstick
// (cusparseSpMV with each CSR algorithm, the fastest reported). cuSPARSE is used here only.
#include "bench_spmv.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "core/error.hpp"
#include "spmv/half_float.hpp"

#if PENUMBRA_HAVE_CUDA
#include <cuda_runtime.h>
#include <cusparse.h>

#include "core/cuda/cuda_check.cuh"
#endif

namespace penumbra::cli::spmvbench {

#if PENUMBRA_HAVE_CUDA

namespace {

#define BENCH_CUSPARSE(call)                                                                \
  do {                                                                                      \
    const cusparseStatus_t st_ = (call);                                                    \
    if (st_ != CUSPARSE_STATUS_SUCCESS)                                                     \
      throw Error(ErrorCode::Cuda, #call " failed", __FILE__, __LINE__, cusparseGetErrorString(st_)); \
  } while (0)

template <typename T>
struct Dev {  // minimal RAII for the bench's own arrays
  T* p = nullptr;
  explicit Dev(std::size_t n) { PENUMBRA_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T))); }
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
};

/// Median and min of `reps` timed calls after 3 warm-ups; every call timed by its own events.
template <typename F>
std::pair<double, double> timeEvents(F&& launch, int reps) {
  cudaEvent_t a, b;
  PENUMBRA_CUDA_CHECK(cudaEventCreate(&a));
  PENUMBRA_CUDA_CHECK(cudaEventCreate(&b));
  for (int w = 0; w < 3; ++w) launch();
  PENUMBRA_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    PENUMBRA_CUDA_CHECK(cudaEventRecord(a));
    launch();
    PENUMBRA_CUDA_CHECK(cudaEventRecord(b));
    PENUMBRA_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    PENUMBRA_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return {medianOf(ms), *std::min_element(ms.begin(), ms.end())};
}

}  // namespace

struct GpuVectors::Impl {
  Dev<double> x, y;
  std::int64_t rows, cols;
  Impl(std::int64_t r, std::int64_t c) : x(std::size_t(c)), y(std::size_t(r)), rows(r), cols(c) {}
};

GpuVectors::GpuVectors(const std::vector<double>& x, std::int64_t rows)
    : impl_(std::make_unique<Impl>(rows, std::int64_t(x.size()))) {
  PENUMBRA_CUDA_CHECK(cudaMemcpy(impl_->x.p, x.data(), x.size() * 8, cudaMemcpyHostToDevice));
}
GpuVectors::~GpuVectors() = default;

KernelRun runKernel(const spmv::CudaSpmvMatrix& m, spmv::SpmvKernel k, GpuVectors& v,
                    const std::vector<double>& ref, int reps) {
  KernelRun out;
  out.profile = m.describe(k);
  out.realBytes = m.realBytes(k);
  const std::size_t n = std::size_t(m.rows());
  std::vector<double> first(n), last(n);
  PENUMBRA_CUDA_CHECK(cudaMemset(v.impl_->y.p, 0xFF, n * 8));  // NaN poison
  m.apply(v.impl_->x.p, v.impl_->y.p, k);
  PENUMBRA_CUDA_CHECK(cudaMemcpy(first.data(), v.impl_->y.p, n * 8, cudaMemcpyDeviceToHost));
  const auto [med, mn] = timeEvents([&] { m.apply(v.impl_->x.p, v.impl_->y.p, k); }, reps);
  PENUMBRA_CUDA_CHECK(cudaMemcpy(last.data(), v.impl_->y.p, n * 8, cudaMemcpyDeviceToHost));
  out.profile.medianMs = med;
  out.profile.minMs = mn;
  out.profile.repetitions = reps;
  out.bitwiseRepeat = std::memcmp(first.data(), last.data(), n * 8) == 0;
  out.relError = relativeError(first, ref);
  return out;
}

KernelRun runCusparse(const spmv::HalfCsr& a, const spmv::CudaSpmvMatrix& m,
                      const std::vector<double>& x, const std::vector<double>& ref, int reps) {
  PENUMBRA_REQUIRE(m.deviceColIdx() || a.nnz() == 0, Internal, "cuSPARSE needs the int32 indices");
  PENUMBRA_REQUIRE(a.nnz() < INT32_MAX, Unsupported, "cuSPARSE yardstick: nnz >= 2^31");
  // fp32 copies of the fp16 values (exact) and 32-bit row offsets, converted on all cores.
  std::vector<float> vals(std::size_t(a.nnz()));
  std::vector<std::int32_t> rowPtr(a.rowPtr.begin(), a.rowPtr.end());
  {
    const int nt = std::max(1, int(std::thread::hardware_concurrency()));
    std::vector<std::thread> pool;
    for (int t = 0; t < nt; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t e = vals.size() * t / nt; e < vals.size() * (t + 1) / nt; ++e)
          vals[e] = spmv::halfBitsToFloat(a.values[e]) * float(a.scale);
      });
    for (auto& th : pool) th.join();
  }
  std::vector<float> xf(x.begin(), x.end());
  Dev<float> dVals(vals.size()), dX(xf.size()), dY(std::size_t(a.rows));
  Dev<std::int32_t> dRow(rowPtr.size());
  PENUMBRA_CUDA_CHECK(cudaMemcpy(dVals.p, vals.data(), vals.size() * 4, cudaMemcpyHostToDevice));
  PENUMBRA_CUDA_CHECK(cudaMemcpy(dRow.p, rowPtr.data(), rowPtr.size() * 4, cudaMemcpyHostToDevice));
  PENUMBRA_CUDA_CHECK(cudaMemcpy(dX.p, xf.data(), xf.size() * 4, cudaMemcpyHostToDevice));
  cusparseHandle_t h;
  BENCH_CUSPARSE(cusparseCreate(&h));
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t X, Y;
  BENCH_CUSPARSE(cusparseCreateCsr(&A, a.rows, a.cols, a.nnz(), dRow.p, const_cast<std::int32_t*>(m.deviceColIdx()),
                                   dVals.p, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  BENCH_CUSPARSE(cusparseCreateDnVec(&X, a.cols, dX.p, CUDA_R_32F));
  BENCH_CUSPARSE(cusparseCreateDnVec(&Y, a.rows, dY.p, CUDA_R_32F));
  const float one = 1.f, zero = 0.f;
  KernelRun best;
  best.profile.medianMs = 1e30;
  for (auto [alg, name] : {std::pair{CUSPARSE_SPMV_CSR_ALG1, "alg1"}, std::pair{CUSPARSE_SPMV_CSR_ALG2, "alg2"}}) {
    std::size_t bytes = 0;
    BENCH_CUSPARSE(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_32F, alg, &bytes));
    Dev<char> buf(bytes);
    BENCH_CUSPARSE(cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_32F, alg, buf.p));
    PENUMBRA_CUDA_CHECK(cudaMemset(dY.p, 0xFF, std::size_t(a.rows) * 4));
    const auto launch = [&] {
      BENCH_CUSPARSE(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, CUDA_R_32F, alg, buf.p));
    };
    launch();
    std::vector<float> yf(std::size_t(a.rows));
    PENUMBRA_CUDA_CHECK(cudaMemcpy(yf.data(), dY.p, yf.size() * 4, cudaMemcpyDeviceToHost));
    const auto [med, mn] = timeEvents(launch, reps);
    if (med < best.profile.medianMs) {
      best.profile.medianMs = med;
      best.profile.minMs = mn;
      best.profile.variant = std::string("fp32-") + name;
      best.relError = relativeError(std::vector<double>(yf.begin(), yf.end()), ref);
      std::vector<float> again(yf.size());
      PENUMBRA_CUDA_CHECK(cudaMemcpy(again.data(), dY.p, again.size() * 4, cudaMemcpyDeviceToHost));
      best.bitwiseRepeat = std::memcmp(again.data(), yf.data(), yf.size() * 4) == 0;
    }
  }
  cusparseDestroySpMat(A);
  cusparseDestroyDnVec(X);
  cusparseDestroyDnVec(Y);
  cusparseDestroy(h);
  best.profile.kernel = "cusparseSpMV_csr";
  best.profile.backend = "cuda";
  best.profile.device = m.describe(spmv::SpmvKernel::WarpPerRow).device;
  best.profile.repetitions = reps;
  // Same byte model as the fp16 kernels (6 B per entry), so the GB/s columns compare times;
  // cuSPARSE really moves 8 B per entry (fp32 values).
  best.profile.bytes = 6.0 * double(a.nnz()) + 12.0 * double(a.rows) + 8.0 * double(a.cols);
  best.profile.flops = 2.0 * double(a.nnz());
  // What it really moves: fp32 values and int32 columns, int32 offsets, fp32 y and x.
  best.realBytes = 8.0 * double(a.nnz()) + 4.0 * double(a.rows + 1) + 4.0 * double(a.rows + a.cols);
  return best;
}

#else  // no CUDA in this build

struct GpuVectors::Impl {};
GpuVectors::GpuVectors(const std::vector<double>&, std::int64_t) {
  PENUMBRA_THROW(Unsupported, "bench spmv: no CUDA in this build");
}
GpuVectors::~GpuVectors() = default;
KernelRun runKernel(const spmv::CudaSpmvMatrix&, spmv::SpmvKernel, GpuVectors&, const std::vector<double>&, int) {
  PENUMBRA_THROW(Unsupported, "bench spmv: no CUDA in this build");
}
KernelRun runCusparse(const spmv::HalfCsr&, const spmv::CudaSpmvMatrix&, const std::vector<double>&,
                      const std::vector<double>&, int) {
  PENUMBRA_THROW(Unsupported, "bench spmv: no CUDA in this build");
}

#endif

double relativeError(const std::vector<double>& a, const std::vector<double>& ref) {
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    scale = std::max(scale, std::fabs(ref[i]));
    const double d = std::fabs(a[i] - ref[i]);
    worst = std::isfinite(a[i]) ? std::max(worst, d) : INFINITY;
  }
  return scale > 0 ? worst / scale : worst;
}

}  // namespace penumbra::cli::spmvbench
