// Fuzz target: the binary fp16 CSR format (.pcsr): readBinaryCsr() on the input; a matrix it
// accepts must be a valid CSR, and writing it back must give the same bytes.
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>

#include "fuzz_support.hpp"
#include "matrix/matrix_io.hpp"

using namespace penumbra;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string file = fuzz::writeInput("input.pcsr", input);
  spmv::HalfCsr m;
  bool read = false;
  fuzz::runReader([&] {
    m = io::readBinaryCsr(file);
    read = true;
  });
  if (!read) return 0;
  try {
    m.validate();
  } catch (const std::exception&) {
    fuzz::require(false, "readBinaryCsr returned a matrix that fails HalfCsr::validate()");
  }
  // The header's reserved word is not kept; everything else must come back byte for byte.
  const std::string copy = (fuzz::scratchDir() / "copy.pcsr").string();
  io::writeBinaryCsr(m, copy);
  std::ifstream back(copy, std::ios::binary);
  std::string written{std::istreambuf_iterator<char>(back), {}};
  fuzz::require(written.size() == input.size(), "writeBinaryCsr writes as many bytes as it read");
  written.replace(60, 4, input, 60, 4);
  fuzz::require(written == input, "writeBinaryCsr gives back the bytes readBinaryCsr accepted");
  return 0;
}
