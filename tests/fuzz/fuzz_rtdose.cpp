// Fuzz target: RT Dose import (File > Import RT Dose): readRtDose() on the input file: header,
// geometry (orientation, GridFrameOffsetVector in both forms), 16/32-bit and signed pixels,
// DoseGridScaling, compressed and big-endian transfer syntaxes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "dicom/rt_dose_reader.hpp"
#include "fuzz_support.hpp"

using namespace penumbra;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string file = fuzz::writeInput("RD.dcm", {reinterpret_cast<const char*>(data), size});
  fuzz::runReader([&] {
    const io::RtDoseImport dose = io::readRtDose(file);
    // An import that says ok holds a dose on a grid of the size it claims.
    if (dose.ok())
      fuzz::require(dose.dose.dose.data.size() == dose.dose.grid().voxelCount(),
                    "readRtDose: voxel count matches the grid");
  });
  return 0;
}
