#include "proton/proton_tables.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "core/error.hpp"
#include "proton/physics/bragg_kleeman.hpp"

namespace penumbra::proton {

ProtonMachine::ProtonMachine(BeamModel beam, std::shared_ptr<const DepthDoseModel> depthDose,
                             double iddStepMm, HighlandParameters mcs)
    : beam_(std::move(beam)), depthDose_(std::move(depthDose)), iddStepMm_(iddStepMm), mcs_(mcs) {
  PENUMBRA_REQUIRE(iddStepMm_ > 0 && iddStepMm_ <= 2, InvalidArgument,
                   "depth-dose table step must be in (0, 2] mm");
  PENUMBRA_REQUIRE(!beam_.entries().empty(), InvalidArgument, "beam model has no energies");
  if (!depthDose_) {
    // Copy the beam model into the callable: the machine may be moved.
    const BeamModel copy = beam_;
    depthDose_ = std::make_shared<BortfeldDepthDoseModel>(
        BortfeldParameters{}, [copy](double e) { return copy.energySpreadMeV(e); });
  }
}

std::shared_ptr<ProtonMachine> ProtonMachine::generic() {
  static std::once_flag once;
  static std::shared_ptr<ProtonMachine> machine;
  std::call_once(once, [] {
    machine = std::make_shared<ProtonMachine>(
        BeamModel::load(resourceDir() + "/beam/generic_pbs_beam_model.csv"));
  });
  return machine;
}

std::shared_ptr<const LayerTable> ProtonMachine::build(double energyMeV) const {
  PENUMBRA_REQUIRE(energyMeV >= beam_.minEnergyMeV() && energyMeV <= beam_.maxEnergyMeV(),
                   InvalidArgument,
                   "energy " + std::to_string(energyMeV) + " MeV is outside the beam model (" +
                       std::to_string(beam_.minEnergyMeV()) + "-" +
                       std::to_string(beam_.maxEnergyMeV()) + " MeV)");
  auto t = std::make_shared<LayerTable>();
  t->energyMeV = energyMeV;
  t->dzMm = iddStepMm_;
  t->sigmaAirMm = beam_.spotSigmaMm(energyMeV);
  // Beyond R0 + 2 cm the straggled curve is below 1e-6 of its peak for every energy of the
  // model (range spread sigma < 4 mm): a dose of 0 there is exact to float precision.
  const double zMaxCm = rangeCm(energyMeV) + 2.0;
  const DepthDoseTable idd = depthDose_->tabulate(energyMeV, iddStepMm_ / 10.0, zMaxCm);
  t->idd = idd.values();
  t->r80Mm = 10.0 * idd.distalDepthCm(0.8);
  t->energyDepositedMeV = idd.integral();
  // sigma_MCS is smooth (no peak): tabulated every 1 mm (each point is a quadrature, ~10 us)
  // and interpolated linearly onto the fine grid; the interpolation error is < 0.01 mm.
  const double coarseMm = 1.0;
  const std::size_t nCoarse =
      std::size_t(std::ceil(double(t->idd.size() - 1) * iddStepMm_ / coarseMm)) + 2;
  const std::vector<double> mcs = tabulateSigmaMcsMm(energyMeV, coarseMm / 10.0, nCoarse, mcs_);
  t->sigmaMm.resize(t->idd.size());
  for (std::size_t i = 0; i < t->idd.size(); ++i) {
    const double x = double(i) * iddStepMm_ / coarseMm;
    const std::size_t j = std::min(std::size_t(x), nCoarse - 2);
    const double f = x - double(j);
    const double s = mcs[j] + f * (mcs[j + 1] - mcs[j]);
    t->sigmaMm[i] = totalSigmaMm(t->sigmaAirMm, s);
    t->sigmaMaxMm = std::max(t->sigmaMaxMm, t->sigmaMm[i]);
  }
  return t;
}

std::shared_ptr<const LayerTable> ProtonMachine::table(double energyMeV) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = cache_.find(energyMeV);
    if (it != cache_.end()) return it->second;
  }
  auto t = build(energyMeV);  // outside the lock: other energies can build meanwhile
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.emplace(energyMeV, std::move(t)).first->second;
}

void ProtonMachine::prepare(const std::vector<double>& energiesMeV, int threads) const {
  std::vector<double> missing;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (double e : energiesMeV)
      if (!cache_.count(e) && std::find(missing.begin(), missing.end(), e) == missing.end())
        missing.push_back(e);
  }
  if (missing.empty()) return;
  const int hw = std::max(1, int(std::thread::hardware_concurrency()));
  const int n = std::min<int>(threads > 0 ? threads : hw, int(missing.size()));
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failureMutex;
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < missing.size();) {
      try {
        table(missing[i]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failureMutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& th : pool) th.join();
  if (failure) std::rethrow_exception(failure);
}

double ProtonMachine::maxSigmaMm(double energyMeV) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = maxSigma_.find(energyMeV);
    if (it != maxSigma_.end()) return it->second;
  }
  PENUMBRA_REQUIRE(energyMeV >= beam_.minEnergyMeV() && energyMeV <= beam_.maxEnergyMeV(),
                   InvalidArgument,
                   "energy " + std::to_string(energyMeV) + " MeV is outside the beam model");
  const double s = totalSigmaMm(beam_.spotSigmaMm(energyMeV),
                                sigmaMcsMm(energyMeV, rangeCm(energyMeV), mcs_));
  std::lock_guard<std::mutex> lock(mutex_);
  return maxSigma_.emplace(energyMeV, s).first->second;
}

std::size_t ProtonMachine::cachedCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.size();
}

}  // namespace penumbra::proton
