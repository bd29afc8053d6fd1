// Fuzz target: the DICOM CT import, as the app opens a folder: scanDicomFiles() on the input's
// files (headers, grouping into series), the DICOM doctor report, then importPatient() of
// every CT series found (slice headers, series geometry and sorting, pixel decoding including
// RLE/JPEG/JPEG-LS, rescale to HU, interpolation of missing slices). One input is one file, or
// up to four files separated by fuzz::kNextFile so that seeds of several slices reach the
// series-geometry checks.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "dicom/dicom_import.hpp"
#include "fuzz_support.hpp"

using namespace penumbra;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = fuzz::splitFiles(data, size, 4);
  std::vector<std::string> files;
  for (std::size_t i = 0; i < parts.size(); ++i)
    files.push_back(fuzz::writeInput("CT" + std::to_string(i) + ".dcm", parts[i]));
  fuzz::runReader([&] {
    const io::DicomScan scan = io::scanDicomFiles(files);
    (void)io::dicomDoctorReport(scan);
    for (const auto& series : scan.series)
      if (series.modality == "CT") (void)io::importPatient(scan, series.key);
  });
  return 0;
}
