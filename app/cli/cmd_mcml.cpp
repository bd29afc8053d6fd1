// penumbra-cli mcml FILE.mci: runs every run of an MCML input file and writes the .mco files it
// names (relative to the .mci's folder, as mcml does relative to its working directory).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli_commands.hpp"
#include "core/error.hpp"
#include "mcml/mcml_files.hpp"

namespace penumbra::cli {

int cmdMcml(Args args) {
  const Backend backend = parseBackend(takeOption(args, "--backend", "auto"));
  const std::string tally = takeOption(args, "--tally", "fixed64");
  const std::string seed = takeOption(args, "--seed", "1");
  const std::string batches = takeOption(args, "--batches", "10");
  const std::string packets = takeOption(args, "--packets");
  if (args.size() != 1) {
    std::cerr << "usage: penumbra-cli mcml FILE.mci [--backend cpu|cuda|auto] [--tally METHOD]\n"
                 "                          [--seed N] [--batches N] [--packets N]\n";
    return 2;
  }
  const std::filesystem::path mci = args[0];
  std::vector<io::MciRun> runs = io::readMciFile(mci.string());
  for (std::size_t k = 0; k < runs.size(); ++k) {
    io::MciRun& run = runs[k];
    run.config.backend = backend;
    run.config.tally = mcml::parseTallyMethod(tally);
    run.config.seed = std::stoull(seed);
    run.config.batches = std::stoi(batches);
    if (!packets.empty()) run.config.packets = std::stoull(packets);
    const auto t0 = std::chrono::steady_clock::now();
    const mcml::McmlResult r = mcml::runMcml(run.medium, run.config);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
