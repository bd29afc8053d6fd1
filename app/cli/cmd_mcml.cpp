// penumbra-cli mcml FILE.mci: runs every run of an MCML input file and writes the .mco files it
// names (relative to the .mci's folder, as mcml does relative to its working directory; the
// reader refuses names that would leave it).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli_commands.hpp"
#include "core/error.hpp"
#include "mcml/mcml_files.hpp"

namespace penumbra::cli {

int cmdMcml(Args args) {
  // Every option is checked before the file is read or anything runs.
  OptionParser options("mcml", std::move(args));
  const Backend backend = parseBackendOption(options.text("--backend", "auto"));
  const std::string tallyText = options.text("--tally", "fixed64");
  const std::uint64_t seed = options.count("--seed", 1, 0, UINT64_MAX);
  const int batches = options.integer("--batches", 10);
  const std::uint64_t packets = options.count("--packets", 0, 1, INT64_MAX);  // 0: the file's
  const double maxCpuHours = options.number("--max-cpu-hours", 24);
  PENUMBRA_REQUIRE(
      maxCpuHours >= 0, InvalidArgument,
      "--max-cpu-hours: must be >= 0 (0: no limit), got " + std::to_string(maxCpuHours));
  mcml::TallyMethod tally{};
  try {
    tally = mcml::parseTallyMethod(tallyText);
  } catch (const Error& e) {
    throw Error(e.code(), "--tally: " + e.message(), e.file().c_str(), e.line());
  }
  if (options.rest().size() != 1) {
    for (const std::string& a : options.rest())
      if (a.size() > 1 && a[0] == '-') {  // an unknown option, or one without its value
        std::cerr << "penumbra-cli mcml: unexpected argument '" << a << "'\n" << usageOf("mcml");
        return 2;
      }
    std::cerr << usageOf("mcml");
    return 2;
  }
  const std::filesystem::path mci = options.rest().front();
  std::vector<io::MciRun> runs = io::readMciFile(mci.string());
  for (std::size_t k = 0; k < runs.size(); ++k) {
    io::MciRun& run = runs[k];
    run.config.backend = backend;
    run.config.tally = tally;
    run.config.seed = seed;
    run.config.batches = batches;
    run.config.maxCpuSeconds = maxCpuHours * 3600;
    if (packets) run.config.packets = packets;
    const auto t0 = std::chrono::steady_clock::now();
    mcml::McmlResult r;
    try {
      r = mcml::runMcml(run.medium, run.config);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::Unsupported) throw;
      // A CPU run refused as too long: say how to lift the limit from here.
      throw Error(e.code(), e.message() + " (penumbra-cli mcml: --max-cpu-hours H, 0: no limit)",
                  e.file().c_str(), e.line());
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const std::string& m : r.messages) std::printf("note: %s\n", m.c_str());
    const std::filesystem::path out = mci.parent_path() / run.outputFile;
    io::writeMcoFile(out.string(), run, r, secs);
    std::printf("run %zu/%zu: %llu packets on %s (%s, tally %s) in %.3f s\n", k + 1, runs.size(),
                static_cast<unsigned long long>(run.config.packets), toString(r.backend),
                r.device.c_str(), mcml::toString(r.tally), secs);
    std::printf("  Rsp %.6f  Rd %.6f +- %.6f  A %.6f +- %.6f  Tt %.6f +- %.6f\n", r.Rsp, r.Rd,
                r.RdErr, r.A, r.AErr, r.Tt, r.TtErr);
    std::printf("  energy: Rsp+Rd+A+Tt-1-roulette = %.3g; wrote %s\n", r.energyBalance(),
                out.string().c_str());
  }
  return 0;
}

}  // namespace penumbra::cli
