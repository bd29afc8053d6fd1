// Per-scenario dose-deposition matrices (robust_matrices.hpp): the memory rule, its refusal
// message, and the build loop over the scenarios.
#include "robust/robust_matrices.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>

#include "core/error.hpp"
#include "core/format.hpp"
#include "core/host_memory.hpp"

namespace penumbra::robust {

namespace {

using Clock = std::chrono::steady_clock;

// Range scenarios that reach deeper touch more voxels than the nominal plan: 3.5 % more depth
// is at most ~3.5 % more entries per spot, so the nominal count is padded by 5 %.
constexpr double kEntryMargin = 1.05;
// proton::workspaceBytes counts every voxel of a cylinder of the cut-off radius along each
// spot's whole depth range; the matrix keeps 1/1.45 to 1/2.0 of that (measured: BOXPHANTOM at 8
// and 6 mm 1.45 and 1.68, hn-2field at 4 and 2 mm 1.82 and 2.0). Taken at face value it refused
// hn-2field's 21 matrices at 2 mm on an 80 GB GPU, which hold them; 0.6 makes the first check a
// best guess (0.87-1.2 of the truth) and the exact check after the first matrix the guard.
constexpr double kEntryCalibration = 0.6;
// Dose-sized vectors the robust optimiser holds per scenario (projected_lbfgs.hpp: d, r, dt, rt,
// q, bestScale's two, and the curvature's residuals), and spot-sized ones in all (w, g, p, wt, gt
// and 2 x 10 L-BFGS pairs).
constexpr double kDoseVectors = 8, kSpotVectors = 26;

const Grid& inputGrid(const proton::ProtonDoseRequest& r) {
  return r.spr ? r.spr->grid : r.ct->grid;
}

spmv::SpmvLayouts layoutsOf(const spmv::SpmvOptions& o) {
  spmv::SpmvLayouts l;
  l.baseline = o.withBaseline || o.kernel == spmv::SpmvKernel::WarpPerRow;
  l.delta16 = o.kernel == spmv::SpmvKernel::BinnedDelta16;
  l.steps = o.kernel == spmv::SpmvKernel::SegmentedSteps;
  l.offset8 = o.kernel == spmv::SpmvKernel::SlicedOffset8;
  return l;
}

// Host and device bytes of one scenario's matrices with `entries` entries. A device-resident
// set keeps no host copy of D or D^T: only the optimiser's dose vectors.
double hostPerScenario(const ScenarioMatrixEstimate& e, double entries) {
  const double matrices = e.deviceResident ? 0.0
                                           : spmv::csrBytes(e.rows, std::int64_t(entries)) +
                                                 spmv::csrBytes(e.cols, std::int64_t(entries));
  return matrices + kDoseVectors * 8.0 * double(e.rows);
}

// Fills the byte totals of `e` from its entry count and one build's working memory.
void computeBytes(ScenarioMatrixEstimate& e, const spmv::SpmvOptions& spmvOptions) {
  const double S = double(e.scenarios);
  e.hostBytes = S * hostPerScenario(e, e.entriesPerScenario) + kSpotVectors * 8.0 * double(e.cols) +
                e.buildHostBytes;
  e.deviceBytes = 0;
  if (e.onDevice)
    e.deviceBytes =
        S * spmv::estimateDeviceBytes(e.rows, e.cols, std::int64_t(e.entriesPerScenario),
                                      layoutsOf(spmvOptions))
                .total() +
        e.buildDeviceBytes;
}

std::string gib(double bytes) { return formatBytes(bytes); }

/// The progress of one scenario's build mapped onto the whole set.
class ScenarioProgress : public ProgressSink {
 public:
  ScenarioProgress(const JobControl& outer, std::size_t k, std::size_t n)
      : outer_(outer), k_(k), n_(n) {}
  void report(double fraction, std::string_view stage) override {
    outer_.report((double(k_) + std::clamp(fraction, 0.0, 1.0)) / double(n_),
                  "scenario matrix " + std::to_string(k_ + 1) + " of " + std::to_string(n_) + ": " +
                      std::string(stage));
  }

 private:
  const JobControl& outer_;
  std::size_t k_, n_;
};

}  // namespace

std::string ScenarioMatrixEstimate::describe() const {
  std::string s = std::to_string(scenarios) + " scenario matrices of " + std::to_string(rows) +
                  " voxels x " + std::to_string(cols) + " spots (" +
                  formatNumber("%.3g", entriesPerScenario) + " entries each, dose grid " +
                  formatNumber("%.3g", doseSpacingMm) + " mm): host " + gib(hostBytes) + " of " +
                  gib(hostLimitBytes) + " available";
  if (onDevice)
    s += ", GPU " + gib(deviceBytes) + " of " + gib(deviceLimitBytes) + " free on " + device;
  return s;
}

ScenarioMatrixEstimate estimateScenarioMatrices(const proton::ProtonDoseRequest& plan,
                                                std::size_t scenarios,
                                                const ScenarioMatrixOptions& options) {
  PENUMBRA_REQUIRE(scenarios > 0, InvalidArgument, "scenario matrices: no scenarios");
  proton::ProtonDoseRequest req = plan;
  req.params.computeDoseMatrix = true;
  const proton::WorkspaceEstimate one = proton::workspaceBytes(req);  // validates the plan
  const Grid& dg = plan.doseGrid.empty() ? inputGrid(plan) : plan.doseGrid;

  ScenarioMatrixEstimate e;
  e.scenarios = scenarios;
  e.rows = std::int64_t(dg.voxelCount());
  e.cols = std::int64_t(proton::totalSpotCount(plan.beams));
  e.doseSpacingMm = std::max({dg.spacing.x, dg.spacing.y, dg.spacing.z});
  e.entriesPerScenario = kEntryMargin * kEntryCalibration * double(one.matrixEntries);
  e.buildHostBytes = double(one.hostBytes);
  const double ram = double(physicalMemoryBytes());
  e.hostLimitBytes =
      options.hostLimitBytes > 0 ? options.hostLimitBytes : (ram > 0 ? 0.9 * ram : 1e300);

  if (options.spmv.backend != Backend::Cpu) {
    const BackendChoice choice = selectBackend(options.spmv.backend);
    if (choice.backend == Backend::Cuda && choice.device) {
      e.onDevice = true;
      e.device = choice.device->name;
      e.deviceLimitBytes = options.deviceLimitBytes > 0
                               ? options.deviceLimitBytes
                               : 0.95 * double(choice.device->freeMemoryBytes);
      // A GPU build holds its working arrays and the CSR on the device until it is downloaded.
      if (selectBackend(plan.backend).backend == Backend::Cuda)
        e.buildDeviceBytes = double(one.deviceBytes) + 6.0 * e.entriesPerScenario;
    }
  }
  computeBytes(e, options.spmv);
  // Auto: products on the CPU rather than a refusal when only the GPU is too small (the
  // estimate says what the build will do, so a caller's refuseIfTooBig agrees with the build).
  if (options.spmv.backend == Backend::Auto && e.onDevice &&
      !(e.deviceBytes <= e.deviceLimitBytes)) {
    e.fallback = "the scenario matrices need " + gib(e.deviceBytes) + " of GPU memory, " +
                 gib(e.deviceLimitBytes) + " free on " + e.device + ": the products run on the CPU";
    e.onDevice = false;
    e.deviceBytes = e.buildDeviceBytes = 0;
  }
  // Built and multiplied on the GPU: each matrix stays there (no host copy, no host transpose),
  // so the host holds only vectors and one build's host side.
  e.deviceResident = !options.keepHostMatrices && e.onDevice &&
                     options.spmv.backend != Backend::Cpu &&
                     options.spmv.kernel == spmv::SpmvKernel::BinnedDelta16 &&
                     selectBackend(plan.backend).backend == Backend::Cuda;
  if (e.deviceResident) {
    req.params.doseMatrixOnDevice = true;
    e.buildHostBytes = double(proton::workspaceBytes(req).hostBytes);
    computeBytes(e, options.spmv);
  }
  return e;
}

void refuseIfTooBig(const ScenarioMatrixEstimate& e) {
  const bool hostOver = !(e.hostBytes <= e.hostLimitBytes);  // NaN is refused too
  const bool deviceOver = e.onDevice && !(e.deviceBytes <= e.deviceLimitBytes);
  if (!hostOver && !deviceOver) return;
  const double need = hostOver ? e.hostBytes : e.deviceBytes;
  const double limit = hostOver ? e.hostLimitBytes : e.deviceLimitBytes;
  const double fixed =
      hostOver ? e.buildHostBytes + kSpotVectors * 8.0 * double(e.cols) : e.buildDeviceBytes;
  const double perScenario = (need - fixed) / double(e.scenarios);
  const double fit = perScenario > 0 ? std::floor((limit - fixed) / perScenario) : 0;
  // Matrix entries and dose voxels both scale with 1 / spacing^3 (the spots stay): the grid
  // that fits is the current one coarsened by the cube root of the excess, in 0.5 mm steps.
  const double coarser =
      std::ceil(2.0 * e.doseSpacingMm * std::cbrt(need / std::max(limit, 1.0)) * 1.02) / 2.0;
  std::string m = std::to_string(e.scenarios) + " scenario matrices need " + gib(need) + " of " +
                  (hostOver ? "host memory, " + gib(limit) + " available"
                            : "GPU memory, " + gib(limit) + " free on " + e.device) +
                  " (" + formatNumber("%.3g", e.entriesPerScenario) + " entries" +
                  (e.measured ? ", from the first matrix," : "") + " and " + gib(perScenario) +
                  " per scenario at a " + formatNumber("%.3g", e.doseSpacingMm) +
                  " mm dose grid): use ";
  if (fit >= 1 && fit < double(e.scenarios))
    m += "at most " + formatNumber("%.0f", fit) + " scenarios or ";
  else
    m += "fewer scenarios or ";
  m += "a dose grid of >= " + formatNumber("%.3g mm", std::max(coarser, e.doseSpacingMm + 0.5));
  if (!hostOver) m += ", or the CPU for the products";
  PENUMBRA_THROW(OutOfMemory, m);
}

std::vector<const spmv::SpmvEngine*> ScenarioMatrices::engines() const {
  std::vector<const spmv::SpmvEngine*> out;
  for (const auto& e : spmv) out.push_back(e.get());
  return out;
}

ScenarioMatrices buildScenarioMatrices(const proton::ProtonDoseRequest& plan,
                                       const std::vector<Scenario>& scenarios,
                                       const ScenarioMatrixOptions& options,
                                       const JobControl& job) {
  PENUMBRA_REQUIRE(!scenarios.empty(), InvalidArgument, "scenario matrices: no scenarios");
  const auto start = Clock::now();
  auto msSince = [](Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  };
  ScenarioMatrices out;
  out.scenarios = scenarios;
  ScenarioMatrixOptions opt = options;
  const ScenarioMatrixEstimate est = estimateScenarioMatrices(plan, scenarios.size(), opt);
  if (!est.fallback.empty()) {
    out.messages.push_back(est.fallback);
    opt.spmv.backend = Backend::Cpu;
  }
  refuseIfTooBig(est);
  out.estimate = est;

  out.deviceResident = est.deviceResident;  // the estimate decides, so that it counts right
  // One scaled SPR per range value, shared by that value's shift scenarios.
  std::map<double, std::shared_ptr<const Volume<float>>> scaled;
  const std::size_t S = scenarios.size();
  for (std::size_t k = 0; k < S; ++k) {
    job.checkCancel();
    const auto t0 = Clock::now();
    const Scenario& s = scenarios[k];
    std::shared_ptr<const Volume<float>> spr;
    if (s.rangeErrorPercent != 0) {
      auto it = scaled.find(s.rangeErrorPercent);
      if (it == scaled.end())
        it = scaled.emplace(s.rangeErrorPercent, scaledStoppingPower(plan, s.rangeErrorPercent))
                 .first;
      spr = it->second;
    }
    proton::ProtonDoseRequest req = applyScenario(plan, s, spr);
    req.params.computeDoseMatrix = true;
    req.params.doseMatrixOnDevice = out.deviceResident;
    ScenarioProgress sink(job, k, S);
    const JobControl sub{job.progress ? &sink : nullptr, job.cancel};
    proton::ProtonDoseResult built = proton::computeProtonDose(req, sub);
    out.buildBackend = built.backend;
    for (const std::string& m : built.messages) out.messages.push_back(s.name + ": " + m);
    PENUMBRA_REQUIRE(built.matrix || built.deviceMatrix, Internal,
                     "scenario matrices: the proton engine returned no matrix");
    const std::int64_t nnz = built.deviceMatrix ? built.deviceMatrix->nnz : built.matrix->nnz();
    out.entries.push_back(nnz);
    if (k == 0 && S > 1) {
      // Check again with the true size, before the other S - 1 are built.
      ScenarioMatrixEstimate measured = est;
      measured.entriesPerScenario = kEntryMargin * double(nnz);
      measured.measured = true;
      computeBytes(measured, opt.spmv);
      refuseIfTooBig(measured);
    }
    if (built.deviceMatrix)
      out.spmv.push_back(std::make_unique<spmv::SpmvEngine>(std::move(*built.deviceMatrix), opt.spmv, sub));
    else
      out.spmv.push_back(std::make_unique<spmv::SpmvEngine>(
          std::move(static_cast<spmv::HalfCsr&>(*built.matrix)), opt.spmv, sub));
    const spmv::SpmvEngine& e = *out.spmv.back();
    out.spmvBackend = e.backend();
    out.device = e.deviceName();
    if (k == 0 && !e.message().empty()) out.messages.push_back(e.message());
    out.buildMs.push_back(msSince(t0));
  }
  job.report(1.0, "scenario matrices built");
  out.elapsedMs = msSince(start);
  return out;
}

}  // namespace penumbra::robust
