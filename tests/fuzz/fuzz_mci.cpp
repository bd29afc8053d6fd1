// Fuzz target: the MCML .mci reader (Tools > Light dose > Open .mci, penumbra-cli mcml):
// readMciFile() on the input, then what the app does with a run before starting it: the
// engine's validate(), workspaceBytes() and the specular reflectance (no packets are run).
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_support.hpp"
#include "mcml/mcml_files.hpp"

using namespace penumbra;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file =
      fuzz::writeInput("input.mci", {reinterpret_cast<const char*>(data), size});
  fuzz::runReader([&] {
    const auto runs = io::readMciFile(file);
    for (const io::MciRun& run : runs) {
      fuzz::runReader([&] {
        mcml::validate(run.medium, run.config);
        (void)mcml::workspaceBytes(run.config);
        (void)mcml::specularReflectance(run.medium);
      });
    }
    (void)io::formatMci(runs);
  });
  return 0;
}
