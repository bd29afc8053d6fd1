// Fuzz target: case files (File > Open Case, penumbra-cli --case): readCaseFile() on the input.
// A case it accepts must be writable, and formatCaseFile is a fixed point of one
// parse/format round trip (case_file.hpp: "parse(format(c)) == c exactly"), so that opening and
// saving a case never changes it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "case/case_file.hpp"
#include "fuzz_support.hpp"

using namespace penumbra;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file =
      fuzz::writeInput("case.json", {reinterpret_cast<const char*>(data), size});
  io::CaseFile c;
  bool read = false;
  fuzz::runReader([&] {
    c = io::readCaseFile(file);
    read = true;
  });
  if (!read) return 0;
  std::string text, again;
  try {
    text = io::formatCaseFile(c);
    again = io::formatCaseFile(io::parseCaseFile(text));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    fuzz::require(false, "a case that was read can be formatted and read back");
  }
  fuzz::require(text == again,
                "formatCaseFile(parseCaseFile(formatCaseFile(c))) == formatCaseFile(c)");
  return 0;
}
