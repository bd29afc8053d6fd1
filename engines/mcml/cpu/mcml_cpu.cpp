// CPU reference of MCML: double precision, one packet at a time per thread, tallies in double.
// Threads take contiguous packet ranges and their tallies are summed in thread order, so a
// given (seed, packets, threads) is reproducible; the random stream of a packet depends only
// on (seed, packet index), not on the thread that runs it.
#include <algorithm>
#include <chrono>
#include <thread>

#include "mcml/mcml.hpp"
#include "mcml/mcml_setup.hpp"

namespace penumbra::mcml {

namespace {

void tracePackets(const TransportSetup<double>& s, std::uint64_t first, std::uint64_t count,
                  McmlTally& t) {
  Photon<double> p{};
  for (std::uint64_t k = 0; k < count; ++k) {
    launchPhoton(s, first + k, p);
    while (p.alive) {
      const StepEvent<double> ev = mcmlStep(s, p);
      t.rouletteGain += ev.rouletteGain;
      switch (ev.kind) {
        case EventKind::Absorb: t.A_rz[std::size_t(ev.index)] += ev.weight; break;
        case EventKind::Reflect: t.Rd_ra[std::size_t(ev.index)] += ev.weight; break;
        case EventKind::Transmit: t.Tt_ra[std::size_t(ev.index)] += ev.weight; break;
        case EventKind::None: break;
      }
    }
  }
}

}  // namespace

void runBatchCpu(const LayeredMedium& m, const McmlConfig& c, std::uint64_t first,
                 std::uint64_t count, McmlTally& out) {
  const TransportSetup<double> s = makeSetup<double>(m, c);
  out.resize(c);
  unsigned threads = c.cpuThreads > 0 ? unsigned(c.cpuThreads)
                                      : std::max(1u, std::thread::hardware_concurrency());
  threads = unsigned(std::min<std::uint64_t>(threads, std::max<std::uint64_t>(count / 64, 1)));
  if (threads <= 1) {
    tracePackets(s, first, count, out);
    return;
  }
  std::vector<McmlTally> parts(threads);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    parts[t].resize(c);
    const std::uint64_t b = first + count * t / threads, e = first + count * (t + 1) / threads;
    pool.emplace_back([&s, &parts, t, b, e] { tracePackets(s, b, e - b, parts[t]); });
  }
  for (auto& th : pool) th.join();
  for (const McmlTally& p : parts) {
    for (std::size_t i = 0; i < out.A_rz.size(); ++i) out.A_rz[i] += p.A_rz[i];
    for (std::size_t i = 0; i < out.Rd_ra.size(); ++i) out.Rd_ra[i] += p.Rd_ra[i];
    for (std::size_t i = 0; i < out.Tt_ra.size(); ++i) out.Tt_ra[i] += p.Tt_ra[i];
    out.rouletteGain += p.rouletteGain;
  }
}

double estimateCpuSeconds(const LayeredMedium& m, const McmlConfig& c) {
  validate(m, c);
  const TransportSetup<double> s = makeSetup<double>(m, c);
  // ~0.1 s of transport at most, however long one packet lives (mua = 0 in a thick layer).
  constexpr std::uint64_t kPilotPackets = 1000, kPilotSteps = 2000000;
  const std::uint64_t pilot = std::min<std::uint64_t>(c.packets, kPilotPackets);
  std::uint64_t steps = 0, finished = 0;
  Photon<double> p{};
  const auto t0 = std::chrono::steady_clock::now();
  for (std::uint64_t k = 0; k < pilot && steps < kPilotSteps; ++k) {
    launchPhoton(s, k, p);
    while (p.alive && steps < kPilotSteps) {
      (void)mcmlStep(s, p);
      ++steps;
    }
    ++finished;  // cut off by the budget or not: counted, so the estimate is a lower bound
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const unsigned threads =
      c.cpuThreads > 0 ? unsigned(c.cpuThreads) : std::max(1u, std::thread::hardware_concurrency());
  return seconds / double(std::max<std::uint64_t>(finished, 1)) * double(c.packets) /
         double(threads);
}

}  // namespace penumbra::mcml
