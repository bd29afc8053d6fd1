// evaluateRobustness() (robustness.hpp): check, estimate, then every scenario dose from the
// proton engine, grouped by range value (one scaled SPR per group: the CUDA backend's cache
// uploads the SPR once per group and keeps it between the group's shifts), each reduced on a
// second host thread while the engine computes the next one.
#include "robust/robustness.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "core/cpu_stage.hpp"
#include "core/error.hpp"
#include "core/format.hpp"
#include "core/host_memory.hpp"
#include "core/parallel_for.hpp"
#include "robust/robust_reduce.hpp"

namespace penumbra::robust {

namespace {

const Grid& inputGrid(const proton::ProtonDoseRequest& p) {
  return p.spr ? p.spr->grid : p.ct->grid;
}

Grid doseGridOf(const proton::ProtonDoseRequest& p) {
  return p.doseGrid.empty() ? inputGrid(p) : p.doseGrid;
}

/// The scenarios as evaluated: the default set when none are given, the nominal first (moved
/// there, or added when missing).
std::vector<Scenario> resolveScenarios(const std::vector<Scenario>& given) {
  std::vector<Scenario> list = given.empty() ? makeScenarios() : given;
  const auto nominal = std::find_if(list.begin(), list.end(),
                                    [](const Scenario& s) { return s.isNominal(); });
  if (nominal == list.end()) {
    std::string name = "nominal";
    for (int i = 2; std::any_of(list.begin(), list.end(), [&](const Scenario& s) { return s.name == name; }); ++i)
      name = "nominal (" + std::to_string(i) + ")";
    list.insert(list.begin(), Scenario{name, 0, Vec3{}});
  } else {
    std::rotate(list.begin(), nominal, nominal + 1);
  }
  return list;
}

/// Scenario indices grouped by range value, groups in order of first appearance (the nominal's
/// group first), the list's order inside a group.
std::vector<int> evaluationOrder(const std::vector<Scenario>& list) {
  std::vector<double> groups;
  for (const Scenario& s : list)
    if (std::find(groups.begin(), groups.end(), s.rangeErrorPercent) == groups.end())
      groups.push_back(s.rangeErrorPercent);
  std::vector<int> order;
  for (double g : groups)
    for (std::size_t k = 0; k < list.size(); ++k)
      if (list[k].rangeErrorPercent == g) order.push_back(int(k));
  return order;
}

/// Reduces scenario doses on its own thread, in the order they are pushed; push() waits while
/// `depth` doses are queued, so at most depth + 2 doses exist (computing, queued, reducing).
class ReducerThread {
public:
  ReducerThread(detail::ScenarioReducer& reducer, JobControl job, std::size_t depth,
                std::vector<double>& reduceMs)
      : reducer_(reducer), job_(job), depth_(depth), reduceMs_(reduceMs),
        thread_([this] { run(); }) {}
  ~ReducerThread() {
    if (thread_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        abort_ = true;
      }
      cv_.notify_all();
      thread_.join();
    }
  }
  ReducerThread(const ReducerThread&) = delete;
  ReducerThread& operator=(const ReducerThread&) = delete;

  void push(int k, Volume<float>&& dose) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return queue_.size() < depth_ || error_; });
    if (error_) return;  // rethrown by rethrowIfFailed() / finish()
    queue_.push_back({k, std::move(dose)});
    cv_.notify_all();
  }
  void rethrowIfFailed() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_) std::rethrow_exception(error_);
  }
  /// Waits for every pushed dose to be reduced; rethrows the reducer's failure.
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    cv_.notify_all();
    thread_.join();
    if (error_) std::rethrow_exception(error_);
  }

private:
  struct Item {
    int k;
    Volume<float> dose;
  };
  void run() {
    try {
      reducer_.prepare();  // while the engine computes the nominal
      for (;;) {
        Item item;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          cv_.wait(lock, [&] { return abort_ || closed_ || !queue_.empty(); });
          if (abort_ || queue_.empty()) return;
          item = std::move(queue_.front());
          queue_.pop_front();
        }
        cv_.notify_all();
        const auto t0 = std::chrono::steady_clock::now();
        reducer_.add(item.k, std::move(item.dose), job_);
        reduceMs_[std::size_t(item.k)] = msSince(t0);
        item.dose = Volume<float>();  // released here, not in the engine's thread
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      error_ = std::current_exception();
      cv_.notify_all();
    }
  }

  detail::ScenarioReducer& reducer_;
  JobControl job_;
  std::size_t depth_;
  std::vector<double>& reduceMs_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Item> queue_;
  bool closed_ = false, abort_ = false;
  std::exception_ptr error_;
  std::thread thread_;  // last: starts after every member above exists
};

void label(DoseVolume& d, const std::string& what, const RobustnessResult& r,
           const std::string& parameters) {
  d.unit = "Gy";
  d.label = "robust " + what + " (" + std::to_string(r.scenarios.size()) + " scenarios, " +
            toString(r.backend) + ")";
  d.engine = "proton pencil beam, robustness evaluation";
  d.backend = toString(r.backend);
  d.parameters = parameters;
  d.computeSeconds = r.elapsedMs / 1000;
}

}  // namespace

void validate(const RobustnessRequest& request) {
  proton::validate(request.plan);
  const Grid grid = doseGridOf(request.plan);
  PENUMBRA_REQUIRE(std::isfinite(request.binWidthGy), InvalidArgument,
                   "robustness: the DVH bin width is not finite");
  PENUMBRA_REQUIRE(
      std::isfinite(request.doseScale) && request.doseScale > 0 && request.doseScale <= 1e4,
      InvalidArgument,
      "robustness: dose scale " + formatG(request.doseScale) +
          " is outside (0, 10000] (it multiplies every dose, e.g. by the fractions)");
  std::set<std::string> names;
  for (const Scenario& s : request.scenarios) {
    PENUMBRA_REQUIRE(!s.name.empty(), InvalidArgument, "robustness: a scenario has no name");
    PENUMBRA_REQUIRE(names.insert(s.name).second, InvalidArgument,
                     "robustness: two scenarios are named '" + s.name + "'");
    PENUMBRA_REQUIRE(std::isfinite(s.rangeErrorPercent) && std::fabs(s.rangeErrorPercent) < 50,
                     InvalidArgument,
                     "robustness: scenario '" + s.name + "' has range error " +
                         formatG(s.rangeErrorPercent) + " % outside (-50, 50) %");
    PENUMBRA_REQUIRE(std::isfinite(s.shiftMm.x) && std::isfinite(s.shiftMm.y) &&
                         std::isfinite(s.shiftMm.z) && norm(s.shiftMm) <= 100,
                     InvalidArgument,
                     "robustness: scenario '" + s.name +
                         "' has a non-finite shift or one longer than 100 mm");
  }
  for (const RobustStructure& s : request.structures) {
    const std::string who = "robustness: structure '" + s.name + "'";
    PENUMBRA_REQUIRE(s.mask, InvalidArgument, who + " has no mask");
    PENUMBRA_REQUIRE(s.mask->data.size() == s.mask->grid.voxelCount(), InvalidArgument,
                     who + ": its mask's data do not match its grid");
    PENUMBRA_REQUIRE(s.mask->grid.dims == grid.dims && s.mask->grid.sameGeometry(grid),
                     InvalidArgument,
                     who + ": its mask (" + std::to_string(s.mask->grid.dims[0]) + "x" +
                         std::to_string(s.mask->grid.dims[1]) + "x" +
                         std::to_string(s.mask->grid.dims[2]) +
                         ") is not on the dose grid (" + std::to_string(grid.dims[0]) + "x" +
                         std::to_string(grid.dims[1]) + "x" + std::to_string(grid.dims[2]) +
                         "): rasterise it there first");
    for (double limit : {s.minGy, s.maxGy, s.meanGy})
      PENUMBRA_REQUIRE(!std::isinf(limit), InvalidArgument,
                       who + ": a limit is infinite (NaN means: no limit)");
  }
}

RobustnessEstimate workspaceBytes(const RobustnessRequest& request) {
  validate(request);
  const proton::WorkspaceEstimate engine = proton::workspaceBytes(request.plan);
  const Grid grid = doseGridOf(request.plan);
  const double n = double(grid.voxelCount()), inputVoxels = double(inputGrid(request.plan).voxelCount());
  const std::vector<Scenario> list = resolveScenarios(request.scenarios);
  const double threads = double(resolveThreads(request.plan.params.cpuThreads));
  const double S = double(request.structures.size()), K = double(list.size());
  const bool cpu = request.plan.backend == Backend::Cpu;
  // Kept: nominal, minimum, maximum, sum (becomes the mean), worst case, spread. In flight
  // beyond the engine's output: one dose queued, one being reduced.
  const double kept = 6 * 4 * n, inFlight = 2 * 4 * n;
  // One scaled SPR per range value, all made while the nominal group runs.
  std::vector<double> rangeValues;
  for (const Scenario& sc : list)
    if (sc.rangeErrorPercent != 0 &&
        std::find(rangeValues.begin(), rangeValues.end(), sc.rangeErrorPercent) == rangeValues.end())
      rangeValues.push_back(sc.rangeErrorPercent);
  const double spr = double(rangeValues.size()) * 4 * inputVoxels;
  // Mask runs (12 B each; two per row is generous for anatomy), default-width histograms per
  // thread (4-byte counts) and per scenario (8-byte counts).
  const double rows = double(grid.dims[1]) * double(grid.dims[2]);
  const double bins = 8 * 500 + 65;
  const double tables = S * (2 * rows * 12 + threads * bins * 4 + K * bins * 8);
  const double engineHost = cpu ? double(engine.hostBytes) : 4 * n;
  RobustnessEstimate e;
  e.hostBytes = std::size_t(std::min(kept + inFlight + spr + tables + engineHost, 1.8e19));
  e.deviceBytes = cpu ? 0 : engine.deviceBytes;
  std::ostringstream s;
  s << list.size() << " scenarios; host: 6 result volumes " << formatBytes(kept)
    << ", 2 scenario doses in flight " << formatBytes(inFlight) << ", " << rangeValues.size()
    << " scaled SPR "
    << formatBytes(spr) << ", mask runs and histograms " << formatBytes(tables)
    << ", proton engine " << formatBytes(engineHost) << "; engine per scenario: "
    << engine.breakdown;
  e.breakdown = s.str();
  return e;
}

RobustnessResult evaluateRobustness(const RobustnessRequest& request, const JobControl& job) {
  const auto start = std::chrono::steady_clock::now();
  const RobustnessEstimate est = workspaceBytes(request);  // validates
  refuseIfHostMemoryExceeded(double(est.hostBytes), "robustness evaluation", est.breakdown);
  job.checkCancel();

  RobustnessResult result;
  result.scenarios = resolveScenarios(request.scenarios);
  const int n = int(result.scenarios.size());
  const std::vector<int> order = evaluationOrder(result.scenarios);
  const Grid grid = doseGridOf(request.plan);
  const int threads = resolveThreads(request.plan.params.cpuThreads);
  detail::ScenarioReducer reducer(grid, request.structures, n, request.binWidthGy,
                                  request.doseScale, threads);
  std::vector<double> computeMs(std::size_t(n), 0.0), reduceMs(std::size_t(n), 0.0);
  double sprMs = 0;  // summed over the helper threads
  std::mutex sprMutex;
  std::set<std::string> seenMessages;
  {
    // One dose queued at most: the engine is the slower stage on both backends (a GPU scenario
    // dose takes several ms, its reduction a few), so a deeper queue would only hold memory.
    ReducerThread reducing(reducer, JobControl{nullptr, job.cancel}, 1, reduceMs);
    // The scaled SPR of every range value is made on helper threads from the start, while the
    // engine computes the nominal group; each is let go when its group is done.
    std::vector<double> rangeValues;
    std::vector<std::future<std::shared_ptr<const Volume<float>>>> pending;
    for (int k : order) {
      const double r = result.scenarios[std::size_t(k)].rangeErrorPercent;
      if (r == 0 || std::find(rangeValues.begin(), rangeValues.end(), r) != rangeValues.end())
        continue;
      rangeValues.push_back(r);
      pending.push_back(std::async(std::launch::async, [&request, r, &sprMs, &sprMutex] {
        const auto t0 = std::chrono::steady_clock::now();
        std::shared_ptr<const Volume<float>> v = scaledStoppingPower(request.plan, r);
        std::lock_guard<std::mutex> lock(sprMutex);
        sprMs += msSince(t0);
        return v;
      }));
    }
    std::shared_ptr<const Volume<float>> scaled;
    double scaledFor = 0;
    for (int i = 0; i < n; ++i) {
      job.checkCancel();
      reducing.rethrowIfFailed();
      const Scenario& s = result.scenarios[std::size_t(order[std::size_t(i)])];
      if (s.rangeErrorPercent != 0 && (!scaled || scaledFor != s.rangeErrorPercent)) {
        scaled = nullptr;  // the previous group's volume goes before the next is taken
        const std::size_t g = std::size_t(
            std::find(rangeValues.begin(), rangeValues.end(), s.rangeErrorPercent) - rangeValues.begin());
        scaled = pending[g].get();
        scaledFor = s.rangeErrorPercent;
      }
      SubRangeProgress progress(job, double(i) / n, double(i + 1) / n,
                                "robustness: scenario " + std::to_string(i + 1) + " of " +
                                    std::to_string(n) + " (" + s.name + ")");
      progress.report(0, "");
      const auto t0 = std::chrono::steady_clock::now();
      proton::ProtonDoseResult dose = proton::computeProtonDose(
          applyScenario(request.plan, s, s.rangeErrorPercent != 0 ? scaled : nullptr),
          JobControl{&progress, job.cancel});
      computeMs[std::size_t(order[std::size_t(i)])] = msSince(t0);
      for (const std::string& m : dose.messages)
        if (seenMessages.insert(m).second) result.messages.push_back(m);
      if (i == 0) {
        result.backend = dose.backend;
        result.device = dose.device;
        result.profiles = dose.profiles;  // the nominal's kernels and host stages
      }
      reducing.push(order[std::size_t(i)], std::move(dose.dose));
    }
    reducing.finish();
  }
  job.report(1.0, "robustness: DVH bands and table");
  const auto tFinish = std::chrono::steady_clock::now();
  reducer.finish(result, JobControl{nullptr, job.cancel});
  for (const std::string& m : reducer.messages()) result.messages.push_back(m);
  for (std::size_t s = 0; s < request.structures.size(); ++s) {
    result.structures[s].name = request.structures[s].name;
    result.structures[s].kind = request.structures[s].kind;
  }
  result.table = detail::robustnessTable(result, request.structures);
  const double finishMs = msSince(tFinish);

  result.scenarioMs.resize(std::size_t(n));
  double computeTotal = 0, reduceTotal = 0;
  for (std::size_t k = 0; k < std::size_t(n); ++k) {
    result.scenarioMs[k] = computeMs[k] + reduceMs[k];
    computeTotal += computeMs[k];
    reduceTotal += reduceMs[k];
  }
  result.profiles.push_back(hostStageProfile("robust_scaled_spr", "one per range value, overlapped", sprMs));
  result.profiles.push_back(
      hostStageProfile("robust_scenario_doses", std::to_string(n) + " proton doses", computeTotal));
  result.profiles.push_back(cpuProfile("robust_reduce", "min/max/sum + mask histograms (overlapped)",
                                       reduceTotal, threads));
  result.profiles.push_back(cpuProfile("robust_finish", "mean, spread, worst case, DVHs, bands, table",
                                       finishMs, threads));
  result.elapsedMs = msSince(start);
  std::ostringstream p;
  p << "scenarios=" << n << "\nbinWidthGy=" << reducer.binWidthGy()
    << "\ndoseScale=" << request.doseScale << "\n";
  label(result.nominal, "nominal", result, p.str());
  label(result.worstCase, "worst case", result, p.str());
  label(result.spread, "spread", result, p.str());
  label(result.minimum, "minimum", result, p.str());
  label(result.maximum, "maximum", result, p.str());
  label(result.mean, "mean", result, p.str());
  return result;
}

}  // namespace penumbra::robust
