// The projected L-BFGS loop on the GPU: the vector operations of projected_lbfgs.hpp on device
// vectors. Weights, doses, residuals, gradients and the L-BFGS pairs live on the device for the
// whole run; the products are the SpMV engine's device matrices on this file's stream; every
// scalar the loop needs (f, dots, norms) is a deterministic two-stage tree reduction (fixed
// grid, fixed order) read back through page-locked memory. The same inputs give the same
// iterates on every run; against the host loop the sums differ in rounding only (order).
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_buffer.cuh"
#include "core/cuda/stream_event.cuh"
#include "optimise/cuda/objective_device.cuh"
#include "optimise/projected_lbfgs.hpp"

namespace penumbra::optimise::detail {

namespace {

constexpr int kThreads = kReduceThreads;
constexpr int kMaxBlocks = 240;

int blocksFor(std::int64_t n) {
  return int(std::max<std::int64_t>(1, std::min<std::int64_t>(kMaxBlocks, (n + kThreads - 1) / kThreads)));
}

// ---- reductions: block sums (or maxima) in a fixed order, then one block over the partials --
template <bool kMax>
__device__ double combine(double a, double b) {
  return kMax ? fmax(a, b) : a + b;
}

template <bool kMax>
__device__ double blockReduce(double v, double* shared) {
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) shared[threadIdx.x] = combine<kMax>(shared[threadIdx.x], shared[threadIdx.x + s]);
    __syncthreads();
  }
  return shared[0];
}

/// F: double operator()(i) (may also write element i of an output).
template <bool kMax, class F>
__global__ void __launch_bounds__(kThreads) reduceBlocks(F f, std::int64_t n, double* partials) {
  __shared__ double shared[kThreads];
  double acc = kMax ? -INFINITY : 0.0;
  for (std::int64_t i = std::int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * kThreads)
    acc = combine<kMax>(acc, f(i));
  const double s = blockReduce<kMax>(acc, shared);
  if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

template <bool kMax>
__global__ void __launch_bounds__(kThreads) reducePartials(const double* partials, int count, double* out) {
  __shared__ double shared[kThreads];
  double acc = kMax ? -INFINITY : 0.0;
  for (int i = threadIdx.x; i < count; i += kThreads) acc = combine<kMax>(acc, partials[i]);
  const double s = blockReduce<kMax>(acc, shared);
  if (threadIdx.x == 0) *out = s;
}

struct DotF {
  const double *a, *b;
  __device__ double operator()(std::int64_t i) const { return a[i] * b[i]; }
};
struct AbsF {
  const double* x;
  __device__ double operator()(std::int64_t i) const { return fabs(x[i]); }
};
struct ValueF {
  const double* x;
  __device__ double operator()(std::int64_t i) const { return x[i]; }
};
struct ProjectedGradientF {
  const double *w, *g;
  __device__ double operator()(std::int64_t i) const { return fabs(fmax(0.0, w[i] - g[i]) - w[i]); }
};
struct TrialStepF {
  const double *w, *p, *g;
  double* wt;
  double alpha;
  __device__ double operator()(std::int64_t i) const {
    const double v = fmax(0.0, w[i] + alpha * p[i]);
    wt[i] = v;
    return g[i] * (v - w[i]);
  }
};

// ---- element-wise -----------------------------------------------------------------------------
struct Axpy {  // y = a x + y; scale: x null, y = a y; scaled: y = a x; difference: y = x - z
  enum Kind { kAxpy, kScale, kScaled, kDifference, kMasked, kFreeSet };
};

__global__ void elementwise(int kind, std::int64_t n, double a, const double* x, const double* z,
                            double* y, const std::uint8_t* mask, std::uint8_t* maskOut) {
  const std::int64_t i = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  switch (kind) {
    case Axpy::kAxpy: y[i] += a * x[i]; break;
    case Axpy::kScale: y[i] *= a; break;
    case Axpy::kScaled: y[i] = a * x[i]; break;
    case Axpy::kDifference: y[i] = x[i] - z[i]; break;
    case Axpy::kMasked: y[i] = mask[i] ? a * x[i] : 0.0; break;
    case Axpy::kFreeSet: maskOut[i] = !(x[i] <= 0 && z[i] > 0); break;
  }
}

// ---- objective (objective_device.cuh) ---------------------------------------------------------
/// A term's phi and dphi at dose d, and whether it is active there (its curvature counts),
/// exactly as PlanObjective::evaluate and ::curvature decide.
__device__ bool termValue(int type, double level, double d, double& phi, double& dphi) {
  phi = 0;
  dphi = 0;
  if (type == int(TermType::MeanDose)) {
    phi = d;
    dphi = 1;
    return false;  // linear: no curvature
  }
  const bool active = type == int(TermType::Uniform) || (type == int(TermType::MinDose) && d < level) ||
                      (type == int(TermType::MaxDose) && d > level);
  if (active) {
    phi = (d - level) * (d - level);
    dphi = 2 * (d - level);
  }
  return active;
}

__global__ void __launch_bounds__(kThreads)
    residualKernel(const DeviceTerm* terms, const std::int32_t* unionVoxels, const std::int32_t* ptr,
                   const std::int32_t* termIds, std::int64_t count, const double* dose, double* r) {
  const std::int64_t u = std::int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (u >= count) return;
  const std::int32_t v = unionVoxels[u];
  const double d = dose[v];
  double acc = 0;
  for (int k = ptr[u]; k < ptr[u + 1]; ++k) {
    const DeviceTerm& t = terms[termIds[k]];
    double phi, dphi;
    termValue(t.type, t.level, d, phi, dphi);
    acc += t.c * dphi;
  }
  r[v] = acc;
}

/// Block (b, t) sums term t's phi (q null) or its active q^2 (curvature) over a fixed stride.
__global__ void __launch_bounds__(kThreads)
    termSumsKernel(const DeviceTerm* terms, const std::int32_t* voxels, const double* dose,
                   const double* q, double* partials) {
  __shared__ double shared[kThreads];
  const DeviceTerm t = terms[blockIdx.y];
  double acc = 0;
  for (std::int64_t i = t.begin + std::int64_t(blockIdx.x) * kThreads + threadIdx.x; i < t.end;
       i += std::int64_t(kTermBlocks) * kThreads) {
    const std::int32_t v = voxels[i];
    double phi, dphi;
    const bool active = termValue(t.type, t.level, dose[v], phi, dphi);
    if (!q)
      acc += phi;
    else if (active)
      acc += q[v] * q[v];
  }
  const double s = blockReduce<false>(acc, shared);
  if (threadIdx.x == 0) partials[blockIdx.y * kTermBlocks + blockIdx.x] = s;
}

/// One thread: the terms in order, each its blocks in order (the CPU's f += c sum).
__global__ void termTotalKernel(const DeviceTerm* terms, int termCount, const double* partials,
                                bool curvature, double* out) {
  double total = 0;
  for (int t = 0; t < termCount; ++t) {
    if (curvature && terms[t].type == int(TermType::MeanDose)) continue;
    double sum = 0;
    for (int b = 0; b < kTermBlocks; ++b) sum += partials[t * kTermBlocks + b];
    total += (curvature ? terms[t].curvCoef : terms[t].c) * sum;
  }
  *out = total;
}

}  // namespace

/// The device's vector operations for runProjectedLbfgs (see projected_lbfgs.hpp).
class CudaOps {
 public:
  using Vec = penumbra::cuda::DeviceBuffer<double>;
  using Mask = penumbra::cuda::DeviceBuffer<std::uint8_t>;

  CudaOps(const spmv::SpmvEngine& engine, const PlanObjective& objective)
      : engine_(engine), objective_(objective), n_(std::size_t(engine.matrix(spmv::Product::D).cols)),
        m_(std::size_t(engine.matrix(spmv::Product::D).rows)) {
    partials_.allocate(kMaxBlocks);
    scalarDevice_.allocate(1);
    PENUMBRA_CUDA_CHECK(cudaMallocHost(&scalarHost_, sizeof(double)));
  }
  ~CudaOps() { cudaFreeHost(scalarHost_); }
  CudaOps(const CudaOps&) = delete;
  CudaOps& operator=(const CudaOps&) = delete;

  Vec spots() const { return Vec(n_); }
  Vec doses() {
    Vec v(m_);
    PENUMBRA_CUDA_CHECK(cudaMemsetAsync(v.get(), 0, m_ * sizeof(double), stream_.s));
    return v;
  }
  Mask mask() const { return Mask(n_); }
  void upload(const std::vector<double>& h, Vec& v) {
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(v.get(), h.data(), h.size() * sizeof(double), cudaMemcpyHostToDevice, stream_.s));
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream_.s));
  }
  void download(const Vec& v, std::vector<double>& h) {
    h.resize(v.size());
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(h.data(), v.get(), v.size() * sizeof(double), cudaMemcpyDeviceToHost, stream_.s));
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream_.s));
  }
  void dose(const Vec& w, Vec& d) {
    engine_.deviceMatrix(spmv::Product::D)->apply(w.get(), d.get(), engine_.kernel(), stream_.s);
  }
  void gradient(const Vec& r, Vec& g) {
    engine_.deviceMatrix(spmv::Product::Dt)->apply(r.get(), g.get(), engine_.kernel(), stream_.s);
  }
  double evaluate(const Vec& d, Vec* r) {
    if (r && objective_.unionCount > 0) {
      const int blocks = int((objective_.unionCount + kThreads - 1) / kThreads);
      residualKernel<<<blocks, kThreads, 0, stream_.s>>>(
          terms(), objective_.unionVoxels.get(), objective_.unionPtr.get(), objective_.unionTerms.get(),
          objective_.unionCount, d.get(), r->get());
      PENUMBRA_CUDA_CHECK_LAUNCH("residualKernel");
    }
    return termTotal(d, nullptr);
  }
  double curvature(const Vec& d, const Vec& q) { return termTotal(d, &q); }
  double dot(const Vec& a, const Vec& b) { return reduce<false>(DotF{a.get(), b.get()}, a.size()); }
  double maxAbs(const Vec& x) { return std::max(0.0, reduce<true>(AbsF{x.get()}, x.size())); }
  double maxValue(const Vec& x) { return reduce<true>(ValueF{x.get()}, x.size()); }
  double projectedGradientNorm(const Vec& w, const Vec& g) {
    return std::max(0.0, reduce<true>(ProjectedGradientF{w.get(), g.get()}, w.size()));
  }
  double trialStep(const Vec& w, const Vec& p, double alpha, const Vec& g, Vec& wt) {
    return reduce<false>(TrialStepF{w.get(), p.get(), g.get(), wt.get(), alpha}, w.size());
  }
  void axpy(double a, const Vec& x, Vec& y) { launch(Axpy::kAxpy, y.size(), a, x.get(), nullptr, y.get()); }
  void scale(double a, Vec& x) { launch(Axpy::kScale, x.size(), a, nullptr, nullptr, x.get()); }
  void scaled(double a, const Vec& x, Vec& y) { launch(Axpy::kScaled, x.size(), a, x.get(), nullptr, y.get()); }
  void difference(const Vec& a, const Vec& b, Vec& out) {
    launch(Axpy::kDifference, a.size(), 0, a.get(), b.get(), out.get());
  }
  void freeSet(const Vec& w, const Vec& g, Mask& free) {
    launch(Axpy::kFreeSet, w.size(), 0, w.get(), g.get(), nullptr, nullptr, free.get());
  }
  void masked(const Vec& x, const Mask& free, double sign, Vec& y) {
    launch(Axpy::kMasked, x.size(), sign, x.get(), nullptr, y.get(), free.get());
  }

 private:
  const DeviceTerm* terms() const { return reinterpret_cast<const DeviceTerm*>(objective_.terms.get()); }

  void launch(int kind, std::size_t n, double a, const double* x, const double* z, double* y,
              const std::uint8_t* mask = nullptr, std::uint8_t* maskOut = nullptr) {
    if (n == 0) return;
    const int blocks = int((n + kThreads - 1) / kThreads);
    elementwise<<<blocks, kThreads, 0, stream_.s>>>(kind, std::int64_t(n), a, x, z, y, mask, maskOut);
    PENUMBRA_CUDA_CHECK_LAUNCH("elementwise");
  }

  template <bool kMax, class F>
  double reduce(F f, std::size_t n) {
    const int blocks = blocksFor(std::int64_t(n));
    reduceBlocks<kMax><<<blocks, kThreads, 0, stream_.s>>>(f, std::int64_t(n), partials_.get());
    PENUMBRA_CUDA_CHECK_LAUNCH("reduceBlocks");
    reducePartials<kMax><<<1, kThreads, 0, stream_.s>>>(partials_.get(), blocks, scalarDevice_.get());
    PENUMBRA_CUDA_CHECK_LAUNCH("reducePartials");
    return readScalar();
  }

  double termTotal(const Vec& d, const Vec* q) {
    if (objective_.termCount == 0) return 0;
    termSumsKernel<<<dim3(kTermBlocks, objective_.termCount), kThreads, 0, stream_.s>>>(
        terms(), objective_.voxels.get(), d.get(), q ? q->get() : nullptr, objective_.partials.get());
    PENUMBRA_CUDA_CHECK_LAUNCH("termSumsKernel");
    termTotalKernel<<<1, 1, 0, stream_.s>>>(terms(), objective_.termCount, objective_.partials.get(),
                                           q != nullptr, scalarDevice_.get());
    PENUMBRA_CUDA_CHECK_LAUNCH("termTotalKernel");
    return readScalar();
  }

  double readScalar() {
    PENUMBRA_CUDA_CHECK(cudaMemcpyAsync(scalarHost_, scalarDevice_.get(), sizeof(double),
                                        cudaMemcpyDeviceToHost, stream_.s));
    PENUMBRA_CUDA_CHECK(cudaStreamSynchronize(stream_.s));
    return *scalarHost_;
  }

  const spmv::SpmvEngine& engine_;
  DeviceObjective objective_;
  std::size_t n_, m_;
  penumbra::cuda::Stream stream_;
  penumbra::cuda::DeviceBuffer<double> partials_, scalarDevice_;
  double* scalarHost_ = nullptr;
};

void optimiseOnGpu(const spmv::SpmvEngine& engine, const PlanObjective& objective,
                   const std::vector<double>& w0, const OptimiserOptions& options,
                   const JobControl& job, const IterationCallback& onIteration,
                   OptimiseResult& result) {
  PENUMBRA_REQUIRE(engine.deviceMatrix(spmv::Product::D) && engine.deviceMatrix(spmv::Product::Dt),
                   InvalidArgument, "optimise: the SpMV engine is not on the GPU");
  PENUMBRA_REQUIRE(engine.matrix(spmv::Product::D).rows < std::numeric_limits<std::int32_t>::max(),
                   InvalidArgument, "optimise: the GPU loop takes at most 2^31 dose voxels");
  CudaOps ops(engine, objective);
  runProjectedLbfgs(ops, w0, options, job, onIteration, result);
}

}  // namespace penumbra::optimise::detail
