// SpmvEngine (validate, transpose, choose the backend, refuse what does not fit, dispatch) and
// the CPU reference product.
#include "spmv/spmv.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "core/error.hpp"
#include "spmv/half_float.hpp"

namespace penumbra::spmv {

const char* kernelName(SpmvKernel k) {
  switch (k) {
    case SpmvKernel::WarpPerRow:
      return "csr_spmv_warp_per_row";
    case SpmvKernel::SegmentedSteps:
      return "csr_spmv_segmented_steps";
    case SpmvKernel::SlicedOffset8:
      return "csr_spmv_sliced_offset8";
    case SpmvKernel::BinnedDelta16:
      break;
  }
  return "csr_spmv_binned_delta16";
}

SpmvLayouts layoutsFor(SpmvKernel k, bool withBaseline) {
  SpmvLayouts l;
  l.baseline = withBaseline || k == SpmvKernel::WarpPerRow;
  l.delta16 = k == SpmvKernel::BinnedDelta16;
  l.steps = k == SpmvKernel::SegmentedSteps;
  l.offset8 = k == SpmvKernel::SlicedOffset8;
  return l;
}

std::string Delta16Config::name() const {
  char b[64];
  std::snprintf(b, sizeof b, "v%du%ds%dt%lld%s", entriesPerLoad, loadsInFlight, lanesPerRow,
                (long long)longThreshold, minBlocksPerSm == 6 ? "b6" : "");
  return b;
}

void multiplyCpu(const HalfCsr& a, const double* x, double* y, int threads) {
  // Rows are dealt out in chunks through an atomic counter (row lengths range from 0 to tens of
  // thousands); each row is summed by one thread, left to right, so the result does not depend
  // on the thread count or on the schedule. Chunks of at most 4096 rows and at least 8 per
  // thread: with a fixed 4096, prostate-1's D^T (5090 rows) ran on 2 of 16 threads (226 ms).
  const int nt = std::max(1, threads > 0 ? threads : int(std::thread::hardware_concurrency()));
  const std::int64_t kChunk = std::clamp<std::int64_t>(a.rows / (8 * std::int64_t(nt)), 1, 4096);
  std::atomic<std::int64_t> next{0};
  auto work = [&] {
    for (std::int64_t c; (c = next.fetch_add(kChunk)) < a.rows;) {
      const std::int64_t end = std::min(a.rows, c + kChunk);
      for (std::int64_t r = c; r < end; ++r) {
        double s = 0;
        for (std::int64_t e = a.rowPtr[std::size_t(r)]; e < a.rowPtr[std::size_t(r) + 1]; ++e)
          s += double(halfBitsToFloat(a.values[std::size_t(e)])) * x[a.colIdx[std::size_t(e)]];
        y[r] = s * a.scale;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < nt && std::int64_t(t) * kChunk < a.rows; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
}

struct SpmvEngine::DeviceState {
  std::unique_ptr<CudaSpmvMatrix> d, dt;
};

SpmvEngine::SpmvEngine(HalfCsr d, const SpmvOptions& options, const JobControl& job)
    : d_(std::move(d)), options_(options) {
  d_.validate();
  job.report(0.0, "transposing the dose matrix");
  dt_ = transpose(d_, options.cpuThreads);
  job.checkCancel();
  const BackendChoice choice = selectBackend(options.backend);
  backend_ = choice.backend;
  message_ = choice.message;
  if (backend_ == Backend::Cpu) {
    device_ = "cpu";
    return;
  }
  device_ = choice.device->name;
  const SpmvLayouts layouts = layoutsFor(options.kernel, options.withBaseline);
  const SpmvMemoryEstimate est = estimateBeforeEncoding(d_.rows, d_.cols, d_.nnz(), layouts);
  refuseIfTooBig(d_.rows, d_.cols, d_.nnz(), est, double(choice.device->freeMemoryBytes), device_);
  gpu_ = std::make_unique<DeviceState>();
  job.report(0.3, "uploading D");
  StepCsrOptions steps = options.steps;
  if (steps.threads == 0) steps.threads = options.cpuThreads;
  SlicedOffset8Options offset8 = options.offset8;
  if (offset8.threads == 0) offset8.threads = options.cpuThreads;
  gpu_->d = std::make_unique<CudaSpmvMatrix>(d_, layouts, options.config, steps, options.cpuThreads,
                                             offset8);
  job.checkCancel();
  job.report(0.6, "uploading D^T");
  gpu_->dt = std::make_unique<CudaSpmvMatrix>(dt_, layouts, options.config, steps,
                                              options.cpuThreads, offset8);
  job.report(1.0, "ready");
}

SpmvEngine::SpmvEngine(DeviceHalfCsr&& d, const SpmvOptions& options, const JobControl& job)
    : hostMatrices_(false), options_(options) {
  PENUMBRA_REQUIRE(options.kernel == SpmvKernel::BinnedDelta16, InvalidArgument,
                   std::string("SpMV: a matrix built on the GPU runs csr_spmv_binned_delta16, not ") +
                       kernelName(options.kernel));
  PENUMBRA_REQUIRE(options.backend != Backend::Cpu, InvalidArgument,
                   "SpMV: a matrix on the GPU cannot run on the CPU backend (no host copy)");
  const BackendChoice choice = selectBackend(Backend::Cuda);
  PENUMBRA_REQUIRE(choice.backend == Backend::Cuda, Unsupported,
                   "SpMV: a matrix on the GPU needs the GPU: " + choice.message);
  backend_ = Backend::Cuda;
  device_ = choice.device->name;
  for (HalfCsr* m : {&d_, &dt_}) m->scale = d.scale;
  d_.rows = dt_.cols = d.rows;
  d_.cols = dt_.rows = d.cols;
  auto stage = [this, t0 = std::chrono::steady_clock::now()](const char* name) mutable {
    const auto now = std::chrono::steady_clock::now();
    KernelProfile p;
    p.kernel = name;
    p.variant = "on-device";
    p.backend = "cuda";
    p.device = device_;
    p.repetitions = 1;
    p.medianMs = p.minMs = std::chrono::duration<double, std::milli>(now - t0).count();
    buildProfiles_.push_back(p);
    t0 = now;
  };
  job.report(0.0, "transposing the dose matrix on the GPU");
  DeviceHalfCsr t = transposeOnDevice(d);
  stage("spmv_transpose");
  job.checkCancel();
  gpu_ = std::make_unique<DeviceState>();
  job.report(0.5, "column layout of D");
  gpu_->d = std::make_unique<CudaSpmvMatrix>(std::move(d), options.withBaseline, options.config);
  stage("spmv_layout_d");
  job.report(0.75, "column layout of D^T");
  gpu_->dt = std::make_unique<CudaSpmvMatrix>(std::move(t), options.withBaseline, options.config);
  stage("spmv_layout_dt");
  job.report(1.0, "ready");
}

SpmvEngine::~SpmvEngine() = default;

const CudaSpmvMatrix* SpmvEngine::deviceMatrix(Product p) const {
  if (!gpu_) return nullptr;
  return p == Product::D ? gpu_->d.get() : gpu_->dt.get();
}

void SpmvEngine::multiply(Product p, const std::vector<double>& x, std::vector<double>& y) const {
  const HalfCsr& a = matrix(p);  // sizes (and, on the CPU backend, the entries)
  PENUMBRA_REQUIRE(std::int64_t(x.size()) == a.cols, InvalidArgument,
                   std::string("SpMV: ") + (p == Product::D ? "w" : "r") + " has " +
                       std::to_string(x.size()) + " entries, the matrix " + std::to_string(a.cols) +
                       " columns");
  y.resize(std::size_t(a.rows));
  if (backend_ == Backend::Cuda)
    deviceMatrix(p)->applyHost(x.data(), y.data(), options_.kernel);
  else
    multiplyCpu(a, x.data(), y.data(), options_.cpuThreads);
}

void SpmvEngine::multiplyBatch(Product p, const std::vector<std::vector<double>>& xs,
                               std::vector<std::vector<double>>& ys, const JobControl& job) const {
  ys.resize(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    job.checkCancel();  // between launches: a product of liver-1 takes ~ms, so cancel lands fast
    multiply(p, xs[i], ys[i]);
    job.report(double(i + 1) / double(xs.size()), "SpMV");
  }
}

}  // namespace penumbra::spmv
