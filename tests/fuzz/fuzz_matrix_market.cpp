// Fuzz target: Matrix Market (.mtx) import of dose-deposition matrices: readMatrixMarket() on
// the input; a matrix it accepts must be a valid fp16 CSR and must survive the documented
// round trip (writeMatrixMarket, then readMatrixMarket gives back the same bits).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_support.hpp"
#include "matrix/matrix_io.hpp"

using namespace penumbra;

namespace {
bool sameBits(const spmv::HalfCsr& a, const spmv::HalfCsr& b) {
  return a.rows == b.rows && a.cols == b.cols && a.rowPtr == b.rowPtr && a.colIdx == b.colIdx &&
         a.values == b.values && std::memcmp(&a.scale, &b.scale, sizeof a.scale) == 0;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file =
      fuzz::writeInput("input.mtx", {reinterpret_cast<const char*>(data), size});
  io::MatrixImport in;
  bool read = false;
  fuzz::runReader([&] {
    in = io::readMatrixMarket(file);
    read = true;
  });
  if (!read) return 0;
  try {
    in.matrix.validate();
  } catch (const std::exception&) {
    fuzz::require(false, "readMatrixMarket returned a matrix that fails HalfCsr::validate()");
  }
  const std::string copy = (fuzz::scratchDir() / "copy.mtx").string();
  io::writeMatrixMarket(in.matrix, copy);
  fuzz::require(sameBits(io::readMatrixMarket(copy).matrix, in.matrix),
                "writeMatrixMarket + readMatrixMarket gives back the same bits");
  return 0;
}
